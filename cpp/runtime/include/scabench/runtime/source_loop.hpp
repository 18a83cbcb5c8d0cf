// The sending thread of a packet source (the producer, the STANAG 4285 data
// source), as SCA's start and stop mean it.
//
// start() sends the stream's packets from where the source last stopped, each
// at its slot of an absolute schedule (PacketSchedule: packet i at start +
// i * period, plus its dither); stop() lets the packet being sent finish,
// sends no more, and waits for the thread, so that a stopped source forwards
// nothing (a stop waits at most one period, the thread's sleep to the next
// slot). A later start() goes on with the next packet, its slot counted from
// then. Once the last packet has gone the stream ends, once. A send that
// throws fails the component, naming the packet.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "scabench/core/clock.hpp"
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
      run(schedule, packets, send, end);
    });
  }

  void stop() {
    stopping_.store(true);
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  }

 private:
  void run(const PacketSchedule& schedule, uint64_t packets, const Send& send, const End& end) {
    try {
      for (; next_ < packets; ++next_) {
        schedule.waitFor(next_);
        if (stopping_.load()) return;
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
  // Touched by the thread while it runs, by start() only once it has been joined.
  uint64_t next_ = 0;
  bool ended_ = false;
};

}  // namespace scabench
