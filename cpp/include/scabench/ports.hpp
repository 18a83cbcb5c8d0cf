// Provides (input) and uses (output) data ports.
//
// The receiving half of a connection's policy lives in InPort:
//   <port>.worker_depth  0: the ORB thread runs the handler (and forwards).
//                        d: the ORB thread only queues the packet (blocking
//                           while d packets wait) and one worker thread per
//                           port runs the handler: the paper's section 5.2.
//   <port>.worker_resume r: a caller blocked on the full queue resumes once
//                           r packets are left (-1: d / 2); bounded_queue.hpp.
//   <port>.dispatch      "orb": the ORB's own threading, set per host process
//                        (pool, pool:n, serial); "single": the port is served
//                        by a POA with the SINGLE_THREAD_MODEL policy.
//   <port>.ordering      "arrival": packets go on as the ORB delivers them;
//                        "resequence": a reorder buffer (resequencer.hpp) of
//                        <port>.reorder_capacity packets puts them back in the
//                        sender's link order, skipping a gap after
//                        <port>.reorder_timeout_us; a releaser thread hands
//                        them on (to the worker queue, or to the handler).
//   <port>.flow          none | watermarks (<port>.flow_low / flow_high) |
//                        credits (<port>.credits): flow.hpp.
// The sending half lives in OutPort (<port>.call, <port>.sync; messaging.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scabench/bounded_queue.hpp"
#include "scabench/clock.hpp"
#include "scabench/flow.hpp"
#include "scabench/messaging.hpp"
#include "scabench/resequencer.hpp"
#include "scabench/port_types.hpp"

namespace scabench {

class Component;

// Names a CORBA system exception the way an operator can act on it.
std::string describeException(const CORBA::Exception& ex);

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
  std::size_t workerDepth() const;
  std::size_t workerResume(std::size_t depth) const;
  bool singleThreadDispatch() const;
  bool resequencing() const;
  std::size_t reorderCapacity() const;
  std::chrono::microseconds reorderTimeout() const;
  // Reads and checks the flow settings; called when the port starts.
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

  void pushPacket(const PacketHeader& h, const typename Traits::Seq& data) override { upcall(h, data); }
  void pushPacketOneway(const PacketHeader& h, const typename Traits::Seq& data) override { upcall(h, data); }
  void syncMarker() override {}
  void attachFlowControl(scabench::FlowControl_ptr sender) override { rememberSender(sender); }

  void startWorker() override {
    prepareFlow();
    const std::size_t depth = workerDepth();
    if (depth > 0 && !worker_.joinable()) {
      queue_ = std::make_unique<BoundedQueue<Queued>>(depth, workerResume(depth));
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
  };

  void upcall(const PacketHeader& h, const typename Traits::Seq& data);
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

class OutPortBase : public virtual POA_CF::Port {
 public:
  OutPortBase(Component& owner, std::string name);
  ~OutPortBase() override = default;
  const std::string& name() const { return name_; }
  CORBA::Object_ptr reference();

  virtual bool connected() const = 0;
  // Sends end of stream, announcing `count` packets, then waits until every
  // packet has left this process.
  virtual void sendEndOfStream(uint32_t streamId, uint64_t count) = 0;

  // CF::Port
  void connectPort(CORBA::Object_ptr connection, const char* connectionId) override;
  void disconnectPort(const char* connectionId) override;

 protected:
  // Narrows to the port's data interface and builds its sender; throws
  // CF::Port::InvalidPort if the object is not a data port of this type.
  virtual void attach(CORBA::Object_ptr connection) = 0;
  virtual void detach() = 0;
  CallKind callKind() const;
  SyncScope syncScope() const;
  std::size_t syncNoneDepth() const;

  // Flow control: the gate exists when the connection's flow is not none.
  bool openGate();
  scabench::FlowControl_ptr gateReference();
  bool admit(uint64_t linkSequence);
  void closeGate();
  std::unique_ptr<FlowGate> gate_;

  Component& owner_;
  const std::string name_;

 private:
  std::string connectionId_;
  CORBA::Object_var ref_;
};

template <class T>
class OutPort final : public OutPortBase {
 public:
  using Traits = PortTraits<T>;
  OutPort(Component& owner, const std::string& name) : OutPortBase(owner, name) {}

  bool connected() const override { return sender_ != nullptr; }

  // Pushes one packet with this connection's policy. Without a connection
  // the packet goes nowhere: that is how a last stage ends a pipeline.
  // Throws the CORBA exception if the peer cannot be reached.
  void push(const PacketHeader& header, const T* samples, std::size_t count) {
    if (!sender_) return;
    PacketHeader h = header;
    h.link_sequence = nextLink_;
    // End of stream always goes: it carries no data and must not wait for credits.
    if (!h.end_of_stream && gate_ && !admit(nextLink_)) return;
    ++nextLink_;
    // A borrowed view: no copy, the ORB marshals straight from the caller's buffer.
    const auto length = static_cast<CORBA::ULong>(count);
    typename Traits::Seq view(length, length, const_cast<T*>(samples), false);
    sender_->send(h, view);
  }

  // Uses up a link sequence without sending: a packet lost on purpose, for
  // testing what the receiver does about a gap.
  void dropNext() { ++nextLink_; }

  void sendEndOfStream(uint32_t streamId, uint64_t count) override {
    if (!sender_) return;
    PacketHeader h{};
    h.stream_id = streamId;
    h.sequence_number = count;
    h.send_time_ns = uint64_t(monotonicNs());
    h.end_of_stream = true;
    push(h, nullptr, 0);
    sender_->flush();
  }

 protected:
  void attach(CORBA::Object_ptr connection) override {
    typename Traits::Ref_var ref = Traits::Ref::_narrow(connection);
    if (CORBA::is_nil(ref)) throw CF::Port::InvalidPort(1, (std::string("not a ") + Traits::name + " data port").c_str());
    sender_ = makeSender<T>(ref, callKind(), syncScope(), syncNoneDepth());
    if (openGate()) ref->attachFlowControl(gateReference());
  }
  void detach() override {
    closeGate();
    if (sender_) sender_->flush();
    sender_.reset();
  }

 private:
  std::unique_ptr<Sender<T>> sender_;
  uint64_t nextLink_ = 0;
};

}  // namespace scabench
