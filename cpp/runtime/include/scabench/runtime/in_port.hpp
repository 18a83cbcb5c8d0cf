// Provides (input) data ports: the receiving half of a connection's policy.
//
// Its properties are the spec's policy keys, declared from the policy table
// (policy_schema.hpp: names, defaults, checks) as `<port>.<key>`:
//   <port>.worker            0: the ORB thread runs the handler (and forwards).
//                            d: the ORB thread only queues the packet (blocking
//                            while d packets wait) and one worker thread per
//                            port runs the handler: the paper's section 5.2.
//   <port>.worker_resume     the level at which a caller blocked on the full
//                            queue resumes (bounded_queue.hpp): "auto" (d / 2
//                            for a pushPacket caller, d - 1 for a
//                            pushPacketOneway caller: the port tells them apart
//                            per call), "half" (d / 2), or "r" (0 <= r < d).
//   <port>.dispatch          "single": the port is served by a POA with the
//                            SINGLE_THREAD_MODEL policy. "pool", "pool:N",
//                            "serial": the ORB's own threading, set per host
//                            process by an ORB option, not by the port.
//   <port>.ordering          "arrival": packets go on as the ORB delivers them;
//                            "resequence": a reorder buffer (resequencer.hpp)
//                            of <port>.reorder_capacity packets puts them back
//                            in the sender's link order, skipping a gap after
//                            <port>.reorder_timeout_ms; a releaser thread hands
//                            them on (to the worker queue, or to the handler).
//   <port>.flow              "none", "watermarks(lo, hi)" or "credits(w)":
//                            the receiver's side of flow control (flow.hpp).
// The sending half lives in OutPort (out_port.hpp).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scabench/core/bounded_queue.hpp"
#include "scabench/core/clock.hpp"
#include "scabench/core/record_log.hpp"
#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/resequencer.hpp"

namespace scabench {

// The owning component is only named here: the port reaches it through
// InPortBase's out-of-line members (in_port.cpp), so this header does not
// need component.hpp, which includes it.
class Component;

class InPortBase {
 public:
  InPortBase(Component& owner, std::string name);
  virtual ~InPortBase() = default;
  const std::string& name() const { return name_; }

  // Activates the port's servant (once) and returns its reference.
  CORBA::Object_ptr reference();
  virtual void startWorker() = 0;
  virtual void stopWorker() = 0;

 protected:
  virtual PortableServer::Servant servant() = 0;
  // The owner's packet records (Component::records()).
  RecordLog& records();
  std::size_t workerDepth() const;
  // Reads worker_resume for a queue of `depth`: the level for each call type.
  void prepareResume(std::size_t depth);
  std::size_t resumeLevel(CallKind call) const { return resume_[call == CallKind::Oneway]; }
  bool singleThreadDispatch() const;
  bool resequencing() const;
  std::size_t reorderCapacity() const;
  std::chrono::microseconds reorderTimeout() const;
  // Reads the flow setting (checked when it was configured); called when the
  // port starts.
  void prepareFlow();

  // Flow accounting. held(+1) when a packet enters the port, held(-1) when
  // it is done with (processed or dropped): drives the watermarks. finished()
  // marks link sequences done: drives the credits.
  void held(int64_t delta);
  void finished(uint64_t firstLink, uint64_t count = 1);
  void rememberSender(scabench::FlowControl_ptr sender);
  // Link sequences given up on still count toward the end of stream.
  void packetsSkipped(uint64_t count);
  void publishReorderStats(const ResequencerStats& stats);

  // End of stream: the announced count arrived; fires once all delivered.
  void endOfStreamArrived(uint64_t announcedCount);
  void packetDelivered();
  // Runs `body`; a failure (e.g. the downstream peer died) fails the component.
  // A template, not a std::function: every packet passes here, and a
  // std::function of a capturing lambda would cost a heap allocation each.
  template <class Body>
  void guarded(Body&& body) {
    try {
      body();
    } catch (const CORBA::Exception& ex) {
      failed(ex);
    } catch (const std::exception& ex) {
      failed(ex);
    }
  }

  Component& owner_;
  const std::string name_;

 private:
  void checkEndOfStream();
  void failed(const CORBA::Exception& ex);
  void failed(const std::exception& ex);
  CORBA::Object_var ref_;
  std::atomic<int64_t> announced_{-1};
  std::atomic<uint64_t> delivered_{0};
  std::atomic<bool> endFired_{false};

  std::array<std::size_t, 2> resume_{};  // two-way, one-way
  FlowKind flow_ = FlowKind::None;
  int64_t flowLow_ = 0, flowHigh_ = 0;
  uint64_t credits_ = 0, ackBatch_ = 1;
  scabench::FlowControl_var sender_;
  std::mutex flowMutex_;
  std::atomic<int64_t> heldNow_{0};
  bool suspended_ = false;
  uint64_t epoch_ = 0, lastAck_ = 0;
  AckTracker acks_;
};

template <class T>
class InPort final : public InPortBase, public virtual PortTraits<T>::Servant {
 public:
  using Traits = PortTraits<T>;
  using Handler = std::function<void(const PacketView<T>&)>;

  InPort(Component& owner, const std::string& name, Handler handler)
      : InPortBase(owner, name), handler_(std::move(handler)) {}
  ~InPort() override { stopWorker(); }

  void pushPacket(const PacketHeader& h, const typename Traits::Seq& data) override {
    upcall(h, data, CallKind::Twoway);
  }
  void pushPacketOneway(const PacketHeader& h, const typename Traits::Seq& data) override {
    upcall(h, data, CallKind::Oneway);
  }
  void syncMarker() override {}
  void attachFlowControl(scabench::FlowControl_ptr sender) override { rememberSender(sender); }

  void startWorker() override {
    prepareFlow();
    const std::size_t depth = workerDepth();
    if (depth > 0 && !worker_.joinable()) {
      prepareResume(depth);
      queue_ = std::make_unique<BoundedQueue<Queued>>(depth);
      worker_ = std::thread([this] { workerLoop(); });
    }
    if (resequencing() && !releaser_.joinable()) {
      resequencer_ = std::make_unique<Resequencer<Queued>>(reorderCapacity(), reorderTimeout());
      releaser_ = std::thread([this] { releaserLoop(); });
    }
  }
  void stopWorker() override {
    if (releaser_.joinable()) {
      resequencer_->close();
      releaser_.join();
      publishReorderStats(resequencer_->stats());
    }
    if (worker_.joinable()) {
      queue_->close();
      worker_.join();
    }
  }

 protected:
  PortableServer::Servant servant() override { return this; }

 private:
  struct Queued {
    PacketHeader header;
    typename Traits::Seq samples;
    uint64_t slot;
    CallKind call;  // how it came in: picks the worker queue's resume level
  };

  void upcall(const PacketHeader& h, const typename Traits::Seq& data, CallKind call);
  // Queues a packet for the worker; blocks while the queue is full.
  void enqueue(Queued&& item) {
    const std::size_t level = resumeLevel(item.call);
    queue_->push(std::move(item), level);
  }
  static typename Traits::Seq takeSamples(const typename Traits::Seq& data);
  void process(const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot);
  void workerLoop();
  void releaserLoop();
  // Hands a packet on in order: to the worker queue, or to the handler.
  void release(Queued&& item);

  Handler handler_;
  std::unique_ptr<BoundedQueue<Queued>> queue_;
  std::thread worker_;
  std::unique_ptr<Resequencer<Queued>> resequencer_;
  std::thread releaser_;
};

// ---------------------------------------------------------- InPort<T> bodies

template <class T>
void InPort<T>::upcall(const PacketHeader& h, const typename Traits::Seq& data, CallKind call) {
  RecordLog& log = records();
  log.enterUpcall();
  if (resequencer_) {
    // File it under its link number; the releaser hands it on in order. The
    // record slot is claimed on acceptance, so dropped duplicates leave none.
    Queued item{h, h.end_of_stream ? typename Traits::Seq() : takeSamples(data), 0, call};
    resequencer_->offer(h.link_sequence, std::move(item), [&](Queued& q) {
      if (q.header.end_of_stream) return;
      q.slot = log.arrive(h.sequence_number, monotonicNs());
      held(+1);
    });
  } else if (h.end_of_stream) {
    if (queue_)
      enqueue(Queued{h, {}, 0, call});
    else
      endOfStreamArrived(h.sequence_number);
  } else {
    const uint64_t slot = log.arrive(h.sequence_number, monotonicNs());
    held(+1);
    if (queue_)
      enqueue(Queued{h, takeSamples(data), slot, call});
    else
      process(h, data.get_buffer(), data.length(), slot);
  }
  log.leaveUpcall();
}

template <class T>
void InPort<T>::releaserLoop() {
  auto skipped = [this](uint64_t first, uint64_t count) {
    finished(first, count);
    packetsSkipped(count);
  };
  while (auto item = resequencer_->next(skipped)) release(std::move(*item));
}

template <class T>
void InPort<T>::release(Queued&& item) {
  if (queue_) {
    enqueue(std::move(item));  // at the level of the call that brought it in
  } else if (item.header.end_of_stream) {
    endOfStreamArrived(item.header.sequence_number);
  } else {
    process(item.header, item.samples.get_buffer(), item.samples.length(), item.slot);
  }
}

// The worker keeps the samples past the upcall. A remote call's sequence owns
// the buffer the ORB unmarshalled into: adopt it instead of copying. A
// collocated call lends the caller's own buffer, which must be copied.
template <class T>
typename PortTraits<T>::Seq InPort<T>::takeSamples(const typename Traits::Seq& data) {
  if (!data.release()) return typename Traits::Seq(data);
  auto& owned = const_cast<typename Traits::Seq&>(data);
  const CORBA::ULong length = owned.length(), maximum = owned.maximum();
  T* buffer = owned.get_buffer(true);  // orphan: `data` is left empty
  return typename Traits::Seq(maximum, length, buffer, true);
}

template <class T>
void InPort<T>::process(const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot) {
  guarded([&] { handler_(PacketView<T>{h, samples, count}); });
  records().done(slot, monotonicNs());
  held(-1);
  finished(h.link_sequence);
  packetDelivered();
}

template <class T>
void InPort<T>::workerLoop() {
  while (auto item = queue_->pop()) {
    if (item->header.end_of_stream)
      endOfStreamArrived(item->header.sequence_number);
    else
      process(item->header, item->samples.get_buffer(), item->samples.length(), item->slot);
  }
}

}  // namespace scabench
