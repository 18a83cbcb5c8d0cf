// Flow control between a sending and a receiving port (policy `flow`, parsed
// by policy::parseFlow):
//
//   none                no limit: one-way senders are paced only by the socket.
//   watermarks(lo, hi)  the receiver counts the packets it holds (in upcalls,
//                       its reorder buffer and its worker queue); at hi it tells
//                       the sender to suspend, at lo to resume. The paper's
//                       section 5.1.
//   credits(w)          the sender keeps at most w packets unacknowledged; the
//                       receiver acknowledges cumulatively, in batches, once
//                       packets have left its buffers. Unlike two-way + worker
//                       (one packet in flight per hop) this keeps w in flight,
//                       so a link's delay is paid once, not per packet.
//
// FlowGate is the sender's servant of the FlowControl interface; AckTracker
// is the receiver's bookkeeping of which link sequences are done.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "scabench.hh"
#include "scabench/runtime/policy_schema.hpp"

namespace scabench {

// The sending side. admit() blocks the sending thread while the receiver has
// suspended it or while the credit window is used up.
class FlowGate final : public virtual POA_scabench::FlowControl {
 public:
  explicit FlowGate(uint64_t credits) : credits_(credits) {}

  // Waits until the packet with this link sequence may go. False once closed.
  bool admit(uint64_t linkSequence) {
    std::unique_lock lock(mutex_);
    auto allowed = [&] { return closed_ || (!suspended_ && (credits_ == 0 || linkSequence < acked_ + credits_)); };
    if (!allowed()) {
      ++stalls_;
      changed_.wait(lock, allowed);
    }
    return !closed_;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  uint64_t stalls() const {
    std::lock_guard lock(mutex_);
    return stalls_;
  }

  // FlowControl
  void acknowledge(CORBA::ULongLong upTo) override {
    std::lock_guard lock(mutex_);
    if (upTo > acked_) {
      acked_ = upTo;
      changed_.notify_all();
    }
  }
  void setSuspended(CORBA::Boolean suspended, CORBA::ULongLong epoch) override {
    std::lock_guard lock(mutex_);
    if (epoch <= epoch_) return;  // an older signal overtaken by a newer one
    epoch_ = epoch;
    suspended_ = suspended;
    changed_.notify_all();
  }

 private:
  const uint64_t credits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t acked_ = 0;
  uint64_t epoch_ = 0;
  uint64_t stalls_ = 0;
  bool suspended_ = false;
  bool closed_ = false;
};

// The receiving side of credits: the contiguous prefix of finished link
// sequences, whatever order they finish in.
class AckTracker {
 public:
  // Marks [first, first + count) finished; returns the new prefix (every
  // link sequence below it is finished).
  uint64_t finish(uint64_t first, uint64_t count = 1) {
    std::lock_guard lock(mutex_);
    for (uint64_t n = first; n < first + count; ++n)
      if (n >= prefix_) ahead_.insert(n);
    while (!ahead_.empty() && *ahead_.begin() == prefix_) {
      ahead_.erase(ahead_.begin());
      ++prefix_;
    }
    return prefix_;
  }

 private:
  std::mutex mutex_;
  std::set<uint64_t> ahead_;
  uint64_t prefix_ = 0;
};

}  // namespace scabench
