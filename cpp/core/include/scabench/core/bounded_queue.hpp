// A bounded FIFO that blocks producers when full and consumers when empty.
//
// It is the worker thread's inbox (a full queue blocks the ORB thread and so
// the two-way caller: the paper's implicit flow control) and the client-side
// queue behind SYNC_NONE.
//
// A producer blocked on a full queue resumes once the queue has drained to a
// resume level (a low watermark). At capacity - 1 it resumes at the first
// free slot, so behind a busy consumer every push waits for a pop and every
// packet costs a wake-up and a switch; with a lower mark the producer sleeps
// once and then pushes a burst, while the consumer still has that many items
// of work queued. Measured on exp6 (docs/architecture.md, "Worker queue").
// The level is the queue's own (the constructor's) unless a push names one:
// the in-port picks it per call, by how the packet came in (policy_schema.hpp,
// worker_resume = "auto").
//
// It is also each connection's queue of a uses port whose fanout is parallel
// or drop (out_port.hpp).
//
// It lives in core, not with the ports in runtime: it knows nothing of CORBA
// or of packets, several runtime pieces use it (the in-port's worker queue, the
// sync=none sender, the fan-out queues), and it is tested on its own without an ORB.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace scabench {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : BoundedQueue(capacity, capacity == 0 ? 0 : capacity - 1) {}

  BoundedQueue(std::size_t capacity, std::size_t resumeAt) : capacity_(capacity), resumeAt_(resumeAt) {
    if (capacity == 0) throw std::invalid_argument("queue capacity must be at least 1");
    checkResumeLevel(resumeAt);
  }

  // Blocks while the queue is full, and then until it has drained to the
  // resume level. Returns false if the queue was closed.
  //
  // Blocked producers wait in line, in the order they blocked. Once the queue
  // has drained to the level of the first in line, they are let in one at a
  // time, each letting in the next, until the queue is full again; the rest
  // wait for the next drain. One-way calls into a thread pool can block
  // several ORB threads here; letting them all go at once would make them race
  // for the free slots and reorder the packets they hold, on top of whatever
  // the pool did.
  bool push(T item) { return push(std::move(item), resumeAt_); }

  // As push(item), resuming at `resumeAt` (< capacity) if this call blocks.
  bool push(T item, std::size_t resumeAt) {
    std::unique_lock lock(mutex_);
    if (!closed_ && (items_.size() + admitted_ >= capacity_ || !waiting_.empty())) {
      checkResumeLevel(resumeAt);
      Waiter self(resumeAt);
      waiting_.push_back(&self);
      self.wake.wait(lock, [&] { return closed_ || self.admitted; });
      if (!self.admitted) {
        std::erase(waiting_, &self);
        return false;
      }
      --admitted_;
    }
    if (closed_) return false;
    items_.push_back(std::move(item));
    published();
    count(+1);
    if (items_.size() > deepest_) deepest_ = items_.size();
    if (items_.size() + admitted_ >= capacity_)
      refilling_ = false;
    else if (refilling_)
      admitNext();
    notEmpty_.notify_one();
    return true;
  }

  // Queues the item only if that needs no wait: false if the queue is full
  // (or producers wait in line for it), or closed. The drop fan-out's push
  // (out_port.hpp).
  bool tryPush(T item) {
    std::lock_guard lock(mutex_);
    if (closed_ || items_.size() + admitted_ >= capacity_ || !waiting_.empty()) return false;
    items_.push_back(std::move(item));
    published();
    count(+1);
    if (items_.size() > deepest_) deepest_ = items_.size();
    if (items_.size() >= capacity_) refilling_ = false;
    notEmpty_.notify_one();
    return true;
  }

  // Blocks while the queue is empty. Returns nothing once closed and drained.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    notEmpty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    published();
    count(-1);
    if (!refilling_ && !waiting_.empty() && items_.size() <= waiting_.front()->resumeAt) {
      refilling_ = true;
      admitNext();
    }
    return item;
  }

  // Wakes every waiter; pending items can still be popped.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    notEmpty_.notify_all();
    for (Waiter* w : waiting_) w->wake.notify_one();
  }

  // Keeps `gauge` at the queue's size, by adding each change to it (several
  // queues may add to one gauge: a component's ports). Set before any push.
  // Under the queue's lock, so the gauge never goes below what the queues hold.
  void countInto(std::atomic<int64_t>* gauge) { gauge_ = gauge; }

  std::size_t capacity() const { return capacity_; }
  std::size_t resumeAt() const { return resumeAt_; }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  // The item count as the last push or pop left it, read without the lock:
  // a gauge for a watcher or for a hot path that must not contend with the
  // queue's users (a port's statistics), a moment old at worst.
  std::size_t fill() const { return fill_.load(std::memory_order_relaxed); }
  // Producers inside push() that have not yet queued their item.
  std::size_t blockedPushers() const {
    std::lock_guard lock(mutex_);
    return waiting_.size() + admitted_;
  }
  std::size_t deepest() const {
    std::lock_guard lock(mutex_);
    return deepest_;
  }

 private:
  struct Waiter {
    explicit Waiter(std::size_t level) : resumeAt(level) {}
    const std::size_t resumeAt;
    std::condition_variable wake;
    bool admitted = false;
  };

  void checkResumeLevel(std::size_t resumeAt) const {
    if (resumeAt >= capacity_) throw std::invalid_argument("the resume level must be below the capacity");
  }

  // The count for fill(): a plain store, under the lock the change took.
  void published() { fill_.store(items_.size(), std::memory_order_relaxed); }

  // Lets the first producer in line go, if its slot is free. Under the lock.
  void admitNext() {
    if (waiting_.empty() || items_.size() + admitted_ >= capacity_) return;
    Waiter* next = waiting_.front();
    waiting_.pop_front();
    next->admitted = true;
    ++admitted_;
    next->wake.notify_one();
  }

  void count(int64_t delta) {
    if (gauge_) gauge_->fetch_add(delta, std::memory_order_relaxed);
  }

  const std::size_t capacity_;
  const std::size_t resumeAt_;
  std::atomic<int64_t>* gauge_ = nullptr;
  std::deque<Waiter*> waiting_;  // blocked producers, in the order they blocked
  std::size_t admitted_ = 0;     // let in, slot kept for them, not yet queued
  bool refilling_ = false;       // drained to a resume level: producers go in, until full
  mutable std::mutex mutex_;
  std::condition_variable notEmpty_;
  std::deque<T> items_;
  std::atomic<std::size_t> fill_{0};  // items_.size(), published for fill()
  std::size_t deepest_ = 0;
  bool closed_ = false;
};

}  // namespace scabench
