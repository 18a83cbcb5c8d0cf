// A bounded FIFO that blocks producers when full and consumers when empty.
//
// It is the worker thread's inbox (a full queue blocks the ORB thread and so
// the two-way caller: the paper's implicit flow control) and the client-side
// queue behind SYNC_NONE.
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
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {
    if (capacity == 0) throw std::invalid_argument("queue capacity must be at least 1");
  }

  // Blocks while the queue is full. Returns false if the queue was closed.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    notFull_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
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
    notFull_.notify_one();
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
  std::size_t deepest() const {
    std::lock_guard lock(mutex_);
    return deepest_;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable notFull_, notEmpty_;
  std::deque<T> items_;
  std::size_t deepest_ = 0;
  bool closed_ = false;
};

}  // namespace scabench
