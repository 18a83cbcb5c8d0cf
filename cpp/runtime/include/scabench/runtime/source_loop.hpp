// The sending thread of a packet source (the producer, the STANAG 4285 data
// source), as SCA's start and stop mean it.
//
// start() sends the stream's packets from where the source last stopped, each
// at its slot of an absolute schedule (PacketSchedule: packet i at start +
// i * period, plus its dither); stop() lets the packet being sent finish,
// sends no more, and waits for the thread, so that a stopped source forwards
// nothing. The wait for a slot does not hold a stop: it is on a condition
// variable that stop() wakes, up to the last millisecond before the slot,
// which is slept on the absolute clock for the slot's precision (a period of
// an hour stopped at once, not in an hour; a send waiting for credits is the
// out-port's to end, out_port.hpp). A later start() goes on with the next
// packet, its slot counted from then. Once the last packet has gone the stream ends, once. A send that
// throws fails the component, naming the packet.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "scabench/core/clock.hpp"
#include "scabench/core/thread_name.hpp"
#include "scabench/runtime/component.hpp"

namespace scabench {

class SourceLoop {
 public:
  // Sends packet i, 0-based over the whole stream.
  using Send = std::function<void(uint64_t i)>;
  // Ends the stream of `count` packets (Component::endStream).
  using End = std::function<void(uint64_t count)>;

  // unit: what a packet is called in a failure ("packet", "frame").
  SourceLoop(Component& owner, std::string unit) : owner_(owner), unit_(std::move(unit)) {}
  ~SourceLoop() { stop(); }
  SourceLoop(const SourceLoop&) = delete;
  SourceLoop& operator=(const SourceLoop&) = delete;

  void start(uint64_t packets, int64_t periodNs, int64_t ditherNs, Send send, End end) {
    stop();
    stopping_.store(false);
    const uint64_t from = next_;
    // Packet `from` is due now; the ones after it keep their spacing and dither.
    const PacketSchedule schedule{monotonicNs() - int64_t(from) * periodNs, periodNs, ditherNs};
    thread_ = std::thread([=, this, send = std::move(send), end = std::move(end)] {
      nameThisThread("sb-source");
      run(schedule, packets, send, end);
    });
  }

  void stop() {
    {
      std::lock_guard lock(wakeMutex_);
      stopping_.store(true);
    }
    wake_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  // Waits for packet i's slot; false if stop() came first.
  bool waitForSlot(const PacketSchedule& schedule, uint64_t i) {
    if (schedule.periodNs > 0) {
      constexpr int64_t kPreciseNs = 1'000'000;  // slept on the clock, not on the condition variable
      const int64_t due = schedule.dueNs(i);
      if (due - monotonicNs() > kPreciseNs) {
        // steady_clock is CLOCK_MONOTONIC, monotonicNs()'s clock.
        const std::chrono::steady_clock::time_point wakeAt{std::chrono::nanoseconds(due - kPreciseNs)};
        std::unique_lock lock(wakeMutex_);
        wake_.wait_until(lock, wakeAt, [&] { return stopping_.load(); });
      }
      if (stopping_.load()) return false;
      sleepUntilNs(due);
    }
    return !stopping_.load();
  }

  void run(const PacketSchedule& schedule, uint64_t packets, const Send& send, const End& end) {
    try {
      for (; next_ < packets; ++next_) {
        // Its owner's stop, seen before the next packet: a packet the stop's
        // halt gave up is the only one given up.
        if (!waitForSlot(schedule, next_) || owner_.stopRequested()) return;
        send(next_);
      }
      if (!ended_ && !stopping_.load()) {
        ended_ = true;
        end(packets);
      }
    } catch (const CORBA::Exception& ex) {
      owner_.fail("send of " + unit_ + " " + std::to_string(next_) + " failed: " + describeException(ex));
    } catch (const std::exception& ex) {
      owner_.fail("send of " + unit_ + " " + std::to_string(next_) + " failed: " + ex.what());
    }
  }

  Component& owner_;
  const std::string unit_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex wakeMutex_;  // stopping_ is set under it, so a waiting thread cannot miss the notify
  std::condition_variable wake_;
  // Touched by the thread while it runs, by start() only once it has been joined.
  uint64_t next_ = 0;
  bool ended_ = false;
};

}  // namespace scabench
