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
  bool push(T item) {
    std::unique_lock lock(mutex_);
    if (!closed_ && items_.size() >= capacity_) {
      ++blockedPushers_;
      notFull_.wait(lock, [&] { return closed_ || items_.size() <= resumeAt_; });
      --blockedPushers_;
    }
    if (closed_) return false;
    items_.push_back(std::move(item));
    if (items_.size() > deepest_) deepest_ = items_.size();
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
    // Several ORB threads may be blocked (one-way into a thread pool); they
    // all may push now, and take the free slots in the order they wake.
    if (blockedPushers_ > 0 && items_.size() <= resumeAt_) notFull_.notify_all();
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
  mutable std::mutex mutex_;
  std::condition_variable notFull_, notEmpty_;
  std::deque<T> items_;
  std::size_t deepest_ = 0;
  bool closed_ = false;
};

}  // namespace scabench
