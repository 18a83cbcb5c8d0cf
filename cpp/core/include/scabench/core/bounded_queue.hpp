// A bounded FIFO that blocks producers when full and consumers when empty.
//
// It is the worker thread's inbox (a full queue blocks the ORB thread and so
// the two-way caller: the paper's implicit flow control) and the client-side
// queue behind SYNC_NONE.
//
// A producer blocked on a full queue resumes once the queue has drained to
// `resumeAt` items (a low watermark). With resumeAt = capacity - 1 it resumes
// at the first free slot, so behind a busy consumer every push waits for a
// pop and every packet costs a wake-up and a switch; with a lower mark the
// producer sleeps once and then pushes a burst, while the consumer still has
// resumeAt items of work queued. Measured on exp6 (docs/architecture.md,
// "Worker queue").
//
// It lives in core, not with the ports in runtime: it knows nothing of CORBA
// or of packets, two runtime pieces use it (the in-port's worker queue and the
// sync=none sender), and it is tested on its own without an ORB.
#pragma once

#include <condition_variable>
#include <cstddef>
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
    if (resumeAt >= capacity) throw std::invalid_argument("the resume level must be below the capacity");
  }

  // Blocks while the queue is full, and then until it has drained to the
  // resume level. Returns false if the queue was closed.
  //
  // Once the queue has drained, the blocked producers are let in one at a
  // time, each waking the next, until the queue is full again. One-way calls
  // into a thread pool can block several ORB threads here; waking them all at
  // once would let them race for the free slots and reorder the packets they
  // hold, on top of whatever the pool did. One by one, they go in the order
  // the condition variable wakes them, as with resuming at the first slot.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    if (!closed_ && (items_.size() >= capacity_ || blockedPushers_ > 0)) {
      ++blockedPushers_;
      notFull_.wait(lock, [&] { return closed_ || (refilling_ && items_.size() < capacity_); });
      --blockedPushers_;
    }
    if (closed_) return false;
    items_.push_back(std::move(item));
    if (items_.size() > deepest_) deepest_ = items_.size();
    if (items_.size() >= capacity_)
      refilling_ = false;
    else if (refilling_ && blockedPushers_ > 0)
      notFull_.notify_one();
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
    if (blockedPushers_ > 0 && !refilling_ && items_.size() <= resumeAt_) {
      refilling_ = true;
      notFull_.notify_one();
    }
    return item;
  }

  // Wakes every waiter; pending items can still be popped.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    notEmpty_.notify_all();
    notFull_.notify_all();
  }

  std::size_t capacity() const { return capacity_; }
  std::size_t resumeAt() const { return resumeAt_; }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  std::size_t blockedPushers() const {
    std::lock_guard lock(mutex_);
    return blockedPushers_;
  }
  std::size_t deepest() const {
    std::lock_guard lock(mutex_);
    return deepest_;
  }

 private:
  const std::size_t capacity_;
  const std::size_t resumeAt_;
  std::size_t blockedPushers_ = 0;
  bool refilling_ = false;  // drained to resumeAt_: blocked producers may go in, until full
  mutable std::mutex mutex_;
  std::condition_variable notFull_, notEmpty_;
  std::deque<T> items_;
  std::size_t deepest_ = 0;
  bool closed_ = false;
};

}  // namespace scabench
