// Which link sequences a receiving port has finished with, over a bounded
// window: the contiguous prefix of finished numbers, and one bit for each
// number of the `window` after it.
//
// The port asks where an arriving number falls before it does anything with
// the packet. A number at or beyond prefix + window is Ahead: no legitimate
// sender gets there (in_port.cpp says why, for the window the port picks),
// so the port refuses it without allocating for it or waiting on it. A
// number below the prefix, or inside the window and already finished, is
// Behind: the packet was seen before. The rest are Inside.
//
// finish() marks numbers done (processed, or skipped by the reorder buffer)
// and moves the prefix over every number finished in a row: what credits
// acknowledge, and what end of stream waits for. Numbers outside the window
// are ignored, so memory is the bitmap allocated here and nothing more, and
// a skip of a long range costs at most `window` steps.
//
// No CORBA here; one mutex, taken twice per packet by the port.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace scabench {

class LinkWindow {
 public:
  enum class Place { Behind, Inside, Ahead };

  explicit LinkWindow(uint64_t window) : window_(window), bits_((window + 63) / 64, 0) {
    if (window < 1) throw std::invalid_argument("a link window must hold at least one number");
  }

  uint64_t window() const { return window_; }

  Place place(uint64_t n) const {
    std::lock_guard lock(mutex_);
    if (n < prefix_) return Place::Behind;
    if (n - prefix_ >= window_) return Place::Ahead;
    return test(n) ? Place::Behind : Place::Inside;
  }

  // Marks [first, first + count) finished, as far as it lies in the window;
  // returns the new prefix (every number below it is finished).
  uint64_t finish(uint64_t first, uint64_t count = 1) {
    std::lock_guard lock(mutex_);
    const uint64_t from = std::max(first, prefix_);
    const uint64_t end = std::min(saturatedAdd(first, count), saturatedAdd(prefix_, window_));
    for (uint64_t n = from; n < end; ++n) set(n);
    while (test(prefix_)) {
      clear(prefix_);
      ++prefix_;
    }
    return prefix_;
  }

  uint64_t prefix() const {
    std::lock_guard lock(mutex_);
    return prefix_;
  }

 private:
  static uint64_t saturatedAdd(uint64_t a, uint64_t b) {
    return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
  }
  // The bit of number n: a ring over the window, so bits never move.
  uint64_t slot(uint64_t n) const { return n % (bits_.size() * 64); }
  bool test(uint64_t n) const { return (bits_[slot(n) / 64] >> (slot(n) % 64)) & 1u; }
  void set(uint64_t n) { bits_[slot(n) / 64] |= uint64_t{1} << (slot(n) % 64); }
  void clear(uint64_t n) { bits_[slot(n) / 64] &= ~(uint64_t{1} << (slot(n) % 64)); }

  const uint64_t window_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> bits_;  // bit of n: finished; only numbers in [prefix_, prefix_ + window_) are set
  uint64_t prefix_ = 0;
};

}  // namespace scabench
