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
// FlowGate is the sender's servant of the FlowControl interface. The
// receiver's bookkeeping of which link sequences are done is LinkWindow
// (link_window.hpp).
//
// The gate believes only what its receiver could truthfully say. It knows
// which link sequences it has issued (admitted, or used up without waiting:
// a packet dropped on purpose, end of stream), and refuses, counts and
// ignores
//   - an acknowledgement beyond them: no receiver can have finished a packet
//     not yet sent, and taking it would grant credits past the window;
//   - a suspend signal whose epoch is beyond twice them: the receiver moves to
//     a new epoch at most twice per packet it takes (on entry, and when done),
//     and one bogus epoch far ahead would make every true signal after it
//     look stale and leave the sender suspended or running for good.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "scabench.hh"
#include "scabench/runtime/policy_schema.hpp"

namespace scabench {

// The sending side. admit() blocks the sending thread while the receiver has
// suspended it or while the credit window is used up: a wait only the
// receiver ends, unless the sender's own component is stopped (halt()) or
// its connection closed (close()), which end it at once.
class FlowGate final : public virtual POA_scabench::FlowControl {
 public:
  // `onRefused` is told of every signal refused (the port counts it); it runs
  // on the ORB thread that brought the signal, outside the gate's lock.
  explicit FlowGate(uint64_t credits, std::function<void()> onRefused = {})
      : credits_(credits), onRefused_(std::move(onRefused)) {}

  // Waits until the next packet may go, then draws its link sequence from
  // `next` and returns it. Empty, with nothing drawn, once closed or halted:
  // the packet is not sent, and the link sequences stay without a gap, so
  // the receiver's window, its acknowledgements and its end of stream go on
  // past it. Drawing under the gate's lock is what makes that so: a thread
  // waiting here holds no link sequence that a later one could overtake.
  // Halted, a packet that may go without waiting still goes: a stopping
  // component's worker finishes what it had taken, as far as the receiver
  // lets it.
  // `onStall` runs as a wait begins (the port counts it then, so that a
  // wait in progress shows).
  template <class OnStall>
  std::optional<uint64_t> admit(std::atomic<uint64_t>& next, OnStall&& onStall) {
    std::unique_lock lock(mutex_);
    auto mayGo = [&] { return !suspended_ && (credits_ == 0 || next.load() < acked_ + credits_); };
    if (!closed_ && !halted_ && !mayGo()) {
      ++stalls_;
      onStall();
      changed_.wait(lock, [&] { return closed_ || halted_ || mayGo(); });
    }
    if (closed_ || !mayGo()) return std::nullopt;
    return draw(lock, next);
  }
  std::optional<uint64_t> admit(std::atomic<uint64_t>& next) {
    return admit(next, [] {});
  }
  // Draws a link sequence without waiting (end of stream, a packet dropped
  // on purpose): the receiver may finish it, so it may be acknowledged.
  uint64_t issue(std::atomic<uint64_t>& next) {
    std::unique_lock lock(mutex_);
    return draw(lock, next);
  }
  // The connection is gone (disconnectPort): every wait ends, for good, and
  // its credits leave the gauge (countInto): nothing will be sent on them.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
    recount();
  }
  // Keeps `gauge` (the component's creditsOutstanding, record_log.hpp) added
  // to by this connection's credits outstanding, as they change: one
  // relaxed add under the lock the change already holds. Several gates add
  // to one gauge. Until called, or after close(), the gate adds nothing.
  void countInto(std::atomic<int64_t>* gauge) {
    std::lock_guard lock(mutex_);
    if (gauge == gauge_) return;
    if (gauge_) gauge_->fetch_add(-counted_, std::memory_order_relaxed);
    gauge_ = gauge;
    counted_ = 0;
    recount();
  }
  // Packets sent (link sequences issued) and not yet acknowledged, under
  // credits; 0 without (nothing is acknowledged then).
  uint64_t outstanding() const {
    std::lock_guard lock(mutex_);
    return outstandingLocked();
  }
  // The sending component stops (CF::Resource::stop): every wait ends now,
  // refused, and none begins until resume() (its next start).
  void halt() {
    std::lock_guard lock(mutex_);
    halted_ = true;
    changed_.notify_all();
  }
  void resume() {
    std::lock_guard lock(mutex_);
    halted_ = false;
  }
  uint64_t stalls() const {
    std::lock_guard lock(mutex_);
    return stalls_;
  }
  uint64_t refused() const {
    std::lock_guard lock(mutex_);
    return refused_;
  }

  // FlowControl
  void acknowledge(CORBA::ULongLong upTo) override {
    {
      std::lock_guard lock(mutex_);
      if (upTo <= issued_) {
        if (upTo > acked_) {  // an older acknowledgement, overtaken, changes nothing
          acked_ = upTo;
          changed_.notify_all();
          recount();
        }
        return;
      }
      ++refused_;
    }
    if (onRefused_) onRefused_();
  }
  void setSuspended(CORBA::Boolean suspended, CORBA::ULongLong epoch) override {
    {
      std::lock_guard lock(mutex_);
      if (epoch <= issued_ || epoch - issued_ <= issued_) {  // epoch <= 2 * issued, without overflow
        if (epoch <= epoch_) return;                         // an older signal overtaken by a newer one
        epoch_ = epoch;
        suspended_ = suspended;
        changed_.notify_all();
        return;
      }
      ++refused_;
    }
    if (onRefused_) onRefused_();
  }

 private:
  uint64_t draw(std::unique_lock<std::mutex>&, std::atomic<uint64_t>& next) {
    const uint64_t linkSequence = next.fetch_add(1);
    if (linkSequence >= issued_) issued_ = linkSequence + 1;
    recount();
    return linkSequence;
  }
  uint64_t outstandingLocked() const { return credits_ == 0 || issued_ < acked_ ? 0 : issued_ - acked_; }
  // Under mutex_: brings the gauge to this gate's outstanding credits.
  void recount() {
    if (!gauge_) return;
    const int64_t now = closed_ ? 0 : int64_t(outstandingLocked());
    if (now != counted_) gauge_->fetch_add(now - counted_, std::memory_order_relaxed);
    counted_ = now;
  }

  const uint64_t credits_;
  const std::function<void()> onRefused_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t acked_ = 0;
  uint64_t issued_ = 0;  // every link sequence below it has been issued
  uint64_t epoch_ = 0;
  uint64_t stalls_ = 0;
  uint64_t refused_ = 0;
  bool suspended_ = false;
  bool closed_ = false;
  bool halted_ = false;
  std::atomic<int64_t>* gauge_ = nullptr;  // countInto
  int64_t counted_ = 0;                    // what this gate has added to it
};

}  // namespace scabench
