// Puts a connection's packets back in the order their sender stamped them
// (the paper's section 5.1 remedy for one-way messaging), with bounded memory.
//
// Packets carry a per-connection link sequence number, 0, 1, 2, ... offer()
// files each under its number; one releaser thread hands them on strictly in
// that order. A gap is waited for at most `timeout`, counted from the moment
// the oldest waiting packet arrived; then the missing numbers are skipped and
// counted. A packet that turns up after its number was skipped is "late", one
// whose number was already released or is already held is a "duplicate";
// both are dropped and counted.
//
// Memory: at most `capacity` packets are held. A packet that would go beyond
// it blocks its caller until the releaser makes room, unless it fills a gap
// (its number is below the highest held): refusing those could hold back the
// very packet the releaser waits for.
//
// Window: a number at or beyond next + `window` (next: the number the
// releaser waits for) is refused at once, before any wait, and counted. No
// sender that keeps to its connection gets that far ahead (the port picks the
// window: in_port.cpp), and one such number, filed, would make the releaser
// skip every number up to it after the timeout and drop the real packets as
// late. Gap fillers are below the highest held number, so inside the window.
//
// No CORBA here: the port (in_port.hpp) decides what a release does.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace scabench {

struct ResequencerStats {
  uint64_t released = 0;
  uint64_t skipped = 0;     // numbers given up on after the timeout
  uint64_t late = 0;        // arrived after their number was skipped
  uint64_t duplicates = 0;  // arrived twice
  uint64_t refused = 0;     // beyond the window: never filed, never waited on
  uint64_t peakHeld = 0;    // the most packets held at once
};

template <class Item>
class Resequencer {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Offer { Accepted, Late, Duplicate, Refused, Closed };

  // How far ahead a legitimate number can be depends on the callers (how
  // many can wait for room), which the buffer does not know: without a
  // `window` it refuses nothing; the port always gives one. `first` is the
  // number it waits for first: 0 on a new connection, where the connection
  // stands when a port restarts.
  Resequencer(std::size_t capacity, std::chrono::microseconds timeout,
              uint64_t window = std::numeric_limits<uint64_t>::max(), uint64_t first = 0)
      : capacity_(capacity), timeout_(timeout), window_(window), next_(first) {
    if (capacity < 1) throw std::invalid_argument("reorder buffer capacity must be >= 1");
    if (window_ < capacity_) throw std::invalid_argument("the reorder window must be at least the capacity");
  }

  // Files `item` under `number`. `onAccept` runs under the lock just before
  // the item is filed, so a caller can stamp it (e.g. claim a record slot) in
  // the order acceptance happens.
  Offer offer(uint64_t number, Item item, const std::function<void(Item&)>& onAccept = {}) {
    std::unique_lock lock(mutex_);
    if (number >= next_ && number - next_ >= window_) {
      ++stats_.refused;
      return Offer::Refused;
    }
    room_.wait(lock, [&] {
      return closed_ || held_.size() < capacity_ || number < next_ ||
             (!held_.empty() && number < held_.rbegin()->first);
    });
    if (closed_) return Offer::Closed;
    if (number < next_) {
      if (wasSkipped(number)) {
        ++stats_.late;
        return Offer::Late;
      }
      ++stats_.duplicates;
      return Offer::Duplicate;
    }
    if (held_.count(number)) {
      ++stats_.duplicates;
      return Offer::Duplicate;
    }
    if (onAccept) onAccept(item);
    held_.emplace(number, Entry{std::move(item), Clock::now()});
    if (held_.size() > stats_.peakHeld) stats_.peakHeld = held_.size();
    ready_.notify_one();
    return Offer::Accepted;
  }

  // Who feeds the buffer may wait to be asked (the shared-memory ring's
  // receiving thread puts its wake-up off while feederMayWait()):
  // `runningLow` is called, outside the lock, whenever next() hands on an
  // item and `low` or fewer are left that it can hand on next (the run from
  // the number it waits for: packets behind a gap do not count), before it
  // waits, and once more shortly before it skips a gap. Set before the
  // releaser runs.
  void setRunningLow(std::size_t low, std::function<void()> runningLow) {
    std::lock_guard lock(mutex_);
    low_ = low;
    runningLow_ = std::move(runningLow);
  }

  // Whether the feeder may put off handing over what it has: more than
  // `low` items are ready to be handed on one after another, from the
  // number next() waits for, so the releaser will ask (runningLow) before
  // it runs out. Items behind a gap do not count: the releaser cannot hand
  // them on, and the gap's item may be the very one the feeder would hold
  // back. False without setRunningLow. Decided under the lock next() hands
  // on under, so a feeder that decides "may wait" and then looks again here
  // (after saying it waits) cannot miss the runningLow call that follows.
  bool feederMayWait() const {
    std::lock_guard lock(mutex_);
    return runningLow_ && readyRun(low_ + 1) > low_;
  }

  // The releaser's loop: waits for the next item in order and returns it,
  // skipping gaps older than the timeout. `skipped(first, count)` is told
  // which numbers were given up on. Returns nothing once closed and drained.
  std::optional<Item> next(const std::function<void(uint64_t, uint64_t)>& skipped = {}) {
    std::unique_lock lock(mutex_);
    bool asked = false;  // runningLow was called since the last wait
    auto ask = [&] {
      asked = true;
      lock.unlock();
      runningLow_();
      lock.lock();
    };
    for (;;) {
      if (!held_.empty()) {
        auto head = held_.begin();
        if (head->first == next_) {
          Item item = std::move(head->second.item);
          held_.erase(head);
          ++next_;
          ++stats_.released;
          room_.notify_all();
          if (runningLow_ && readyRun(low_ + 1) <= low_) {
            lock.unlock();
            runningLow_();
          }
          return item;
        }
        const auto deadline = head->second.arrived + timeout_;
        if (closed_ || Clock::now() >= deadline) {
          const uint64_t first = next_, gap = head->first - next_;
          stats_.skipped += gap;
          skippedRanges_.emplace(first, head->first);
          next_ = head->first;
          if (skipped) {
            lock.unlock();
            skipped(first, gap);
            lock.lock();
          }
          continue;
        }
        if (runningLow_ && !asked) {
          ask();  // the gap may be in the feeder's hands: ask, then look again
          continue;
        }
        // A feeder is asked once more shortly before the gap is given up
        // on, and the item then has that long to come: whatever it held
        // back meanwhile is not skipped (and then dropped as late).
        const auto lastAsk = deadline - lastAskLead();
        ready_.wait_until(lock, runningLow_ && Clock::now() < lastAsk ? lastAsk : deadline);
        asked = false;
      } else if (closed_) {
        return std::nullopt;
      } else if (runningLow_ && !asked) {
        ask();
      } else {
        ready_.wait(lock);
        asked = false;
      }
    }
  }

  // No more offers; next() drains what is held (skipping gaps at once).
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
    room_.notify_all();
  }

  std::size_t held() const {
    std::lock_guard lock(mutex_);
    return held_.size();
  }
  ResequencerStats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct Entry {
    Item item;
    Clock::time_point arrived;
  };
  // How many items from next_ on can be handed on one after another, counted
  // up to `limit` (under the lock).
  std::size_t readyRun(std::size_t limit) const {
    std::size_t run = 0;
    for (auto it = held_.begin(); it != held_.end() && run < limit && it->first == next_ + run; ++it) ++run;
    return run;
  }
  // How long before a gap's deadline the feeder is asked the last time: a
  // quarter of the timeout, at most 5 ms (a woken thread's time to run on a
  // busy machine, and to file what it took).
  Clock::duration lastAskLead() const { return std::min<Clock::duration>(timeout_ / 4, std::chrono::milliseconds(5)); }
  bool wasSkipped(uint64_t number) const {
    auto it = skippedRanges_.upper_bound(number);
    if (it == skippedRanges_.begin()) return false;
    --it;
    return number >= it->first && number < it->second;
  }

  const std::size_t capacity_;
  const std::chrono::microseconds timeout_;
  const uint64_t window_;
  mutable std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::map<uint64_t, Entry> held_;
  std::map<uint64_t, uint64_t> skippedRanges_;  // [first, end) of each skipped gap
  uint64_t next_;
  bool closed_ = false;
  ResequencerStats stats_;
  std::size_t low_ = 0;
  std::function<void()> runningLow_;
};

}  // namespace scabench
