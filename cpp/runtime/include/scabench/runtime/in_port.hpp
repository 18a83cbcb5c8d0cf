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
//   <port>.packet_length     samples every packet must have; 0: any.
// and one of the runtime's own, not a spec key:
//   <port>.max_calls         calls from the connection's sender the port
//                            serves at once (default 128); one more is refused.
// The sending half lives in OutPort (out_port.hpp).
//
// Peers are judged before the port does anything with a packet (in_port.cpp,
// "What a port takes"): every packet passes a few checks that neither
// allocate nor wait, and what fails them is dropped and counted by reason in
// the record header (Refusal): a length other than packet_length, a link
// sequence outside the port's window, a token other than the connection's,
// an end of stream that is not the connection's own and in sequence, a call
// beyond max_calls. docs/trust-model.md says what this defends and what not.
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
#include "scabench/runtime/link_window.hpp"
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

  // What this port refused from peers, by reason.
  uint64_t refusals(Refusal why) const { return refused_[std::size_t(why)].load(); }

 protected:
  virtual PortableServer::Servant servant() = 0;
  // The owner's packet records (Component::records()).
  RecordLog& records();
  // Whether the owner runs (Component::running()): packets are taken only then.
  bool running() const;
  std::size_t workerDepth() const;
  // Reads worker_resume for a queue of `depth`: the level for each call type.
  void prepareResume(std::size_t depth);
  std::size_t resumeLevel(CallKind call) const { return resume_[call == CallKind::Oneway]; }
  bool singleThreadDispatch() const;
  bool resequencing() const;
  std::size_t reorderCapacity() const;
  std::chrono::microseconds reorderTimeout() const;
  // Reads the flow setting, the packet length, the call limit and the link
  // window (checked when they were configured); called when the port starts.
  void prepareChecks();
  // The link window (in_port.cpp says how wide, and why).
  uint64_t linkWindow() const { return links_->window(); }

  // DataPort::attachSender: the connection's token and flow-control sender.
  void attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow);

  // The checks, in the upcall, before anything else. True: the packet is the
  // connection's and the port goes on with it; false: it was refused (and
  // counted) or, a duplicate of a finished packet, dropped.
  bool takePacket(const PacketHeader& h, std::size_t samples);
  bool takeEndOfStream(const PacketHeader& h);
  // Takes a slot among the calls in progress; false (refused, counted) if
  // max_calls are in progress. leaveCall() gives it back.
  bool enterCall(const PacketHeader& h);
  void leaveCall() { calls_.fetch_sub(1, std::memory_order_relaxed); }
  void refuse(Refusal why);

  // Flow accounting. held(+1) when a packet enters the port, held(-1) when
  // it is done with (processed or dropped): drives the watermarks. finished()
  // marks link sequences done (processed, or given up on): drives the
  // credits and the end of stream.
  void held(int64_t delta);
  void finished(uint64_t firstLink, uint64_t count = 1);
  void publishReorderStats(const ResequencerStats& stats);

  // End of stream, the connection's own, with link sequence `link`: fires
  // once every link sequence before it is finished.
  void endOfStreamArrived(uint64_t link);
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
  void checkEndOfStream(uint64_t prefix);
  // A packet of the connection's own that was refused: its link sequence is
  // used up, so that the stream goes on past it (a reorder buffer skips it
  // after its timeout instead).
  void usedUp(uint64_t link, LinkWindow::Place place);
  void rememberSender(scabench::FlowControl_ptr sender);
  void failed(const CORBA::Exception& ex);
  void failed(const std::exception& ex);
  CORBA::Object_var ref_;
  std::atomic<uint64_t> token_{0};     // the connection's; 0 until a sender attaches
  std::unique_ptr<LinkWindow> links_;  // made at start, when the window is known
  std::size_t packetLength_ = 0;       // 0: any
  bool resequencing_ = false;
  uint32_t maxCalls_ = 1;
  std::atomic<uint32_t> calls_{0};
  std::array<std::atomic<uint64_t>, kRefusalReasons> refused_{};
  std::atomic<bool> eosTaken_{false};
  std::atomic<int64_t> eosLink_{-1};
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
  void attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow) override {
    InPortBase::attachSender(token, flow);
  }

  void startWorker() override {
    prepareChecks();
    const std::size_t depth = workerDepth();
    if (depth > 0 && !worker_.joinable()) {
      prepareResume(depth);
      queue_ = std::make_unique<BoundedQueue<Queued>>(depth);
      worker_ = std::thread([this] { workerLoop(); });
    }
    if (resequencing() && !releaser_.joinable()) {
      resequencer_ = std::make_unique<Resequencer<Queued>>(reorderCapacity(), reorderTimeout(), linkWindow());
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
    Queued(const PacketHeader& h, typename Traits::Seq s, uint64_t sl, CallKind c)
        : header(h), samples(handOver(s)), slot(sl), call(c) {}
    // The reorder buffer and the worker queue move a packet several times:
    // each move hands the samples' buffer over (port_types.hpp, handOver).
    Queued(Queued&& o) : header(o.header), samples(handOver(o.samples)), slot(o.slot), call(o.call) {}
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
  // Nothing is taken before start: the launcher starts receivers before their
  // senders, so such a packet is not the connection's (and there are no
  // records to write yet). Nor after stop: a stopped component neither
  // processes nor forwards.
  if (!running()) return refuse(Refusal::Sender);
  if (h.end_of_stream ? !takeEndOfStream(h) : !takePacket(h, data.length())) return;
  if (!enterCall(h)) return;
  // "Server threads" count the calls the port took: a refused call is over
  // in microseconds and does none of the stage's work.
  RecordLog& log = records();
  log.enterUpcall();
  struct Leave {
    InPort& port;
    RecordLog& log;
    ~Leave() {
      log.leaveUpcall();
      port.leaveCall();
    }
  } leave{*this, log};
  if (resequencer_) {
    // File it under its link number; the releaser hands it on in order. The
    // record slot is claimed on acceptance, so dropped duplicates leave none.
    Queued item{h, h.end_of_stream ? typename Traits::Seq() : takeSamples(data), 0, call};
    const auto offer = resequencer_->offer(h.link_sequence, std::move(item), [&](Queued& q) {
      if (q.header.end_of_stream) return;
      q.slot = log.arrive(h.sequence_number, monotonicNs());
      held(+1);
    });
    if (offer == Resequencer<Queued>::Offer::Refused) refuse(Refusal::Sequence);
  } else if (h.end_of_stream) {
    if (queue_)
      enqueue(Queued{h, {}, 0, call});
    else
      endOfStreamArrived(h.link_sequence);
  } else {
    const uint64_t slot = log.arrive(h.sequence_number, monotonicNs());
    held(+1);
    if (queue_)
      enqueue(Queued{h, takeSamples(data), slot, call});
    else
      process(h, data.get_buffer(), data.length(), slot);
  }
}

template <class T>
void InPort<T>::releaserLoop() {
  // Link sequences given up on count as finished: for credits and for the end of stream.
  auto skipped = [this](uint64_t first, uint64_t count) { finished(first, count); };
  while (auto item = resequencer_->next(skipped)) release(std::move(*item));
}

template <class T>
void InPort<T>::release(Queued&& item) {
  if (queue_) {
    enqueue(std::move(item));  // at the level of the call that brought it in
  } else if (item.header.end_of_stream) {
    endOfStreamArrived(item.header.link_sequence);
  } else {
    process(item.header, item.samples.get_buffer(), item.samples.length(), item.slot);
  }
}

// The worker keeps the samples past the upcall. A remote call's sequence owns
// the buffer the ORB unmarshalled into: adopt it instead of copying. A
// collocated call lends the caller's own buffer, which must be copied.
template <class T>
typename PortTraits<T>::Seq InPort<T>::takeSamples(const typename Traits::Seq& data) {
  return handOver(const_cast<typename Traits::Seq&>(data));  // `data` is left empty if it was ours
}

template <class T>
void InPort<T>::process(const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot) {
  guarded([&] { handler_(PacketView<T>{h, samples, count}); });
  records().done(slot, monotonicNs());
  held(-1);
  finished(h.link_sequence);
}

template <class T>
void InPort<T>::workerLoop() {
  while (auto item = queue_->pop()) {
    if (item->header.end_of_stream)
      endOfStreamArrived(item->header.link_sequence);
    else
      process(item->header, item->samples.get_buffer(), item->samples.length(), item->slot);
  }
}

}  // namespace scabench
