// Uses (output) data ports: the sending half of a connection's policy.
//
// Its properties are the spec's policy keys for this side, declared from the
// policy table (policy_schema.hpp: names, defaults, checks) as `<port>.<key>`:
//   <port>.call              "twoway" or "oneway": which Sender hands a packet
//                            to the ORB (senders.hpp), and so when the caller
//   <port>.sync              gets control back: "none", "transport", "server"
//                            or "target", for one-way calls only.
//   <port>.flow              "none", "watermarks(lo, hi)" or "credits(w)": the
//                            sender's side of flow control (flow.hpp). It
//                            must match the receiving port's.
// and the runtime's own, not spec keys:
//   <port>.sync_none_depth   packets the sync=none client queue holds before
//                            the caller blocks (default 1024).
//   <port>.transport         "orb" (CORBA calls, the default) or "shm": the
//                            packets go through a ring of shared memory made
//                            at connect (shm_ring.hpp) and CORBA carries only
//                            the connection's control. The runner sets it
//                            from the run's transport for hops between its
//                            own hosts (python/scabench/model/transport.py).
//   <port>.shm_bytes         the ring's data area: the most bytes of samples
//                            in flight, and the largest packet.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cf.hh"
#include "scabench/core/clock.hpp"
#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/message_limit.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/senders.hpp"

namespace scabench {

// Named only: OutPortBase reaches its owner out of line (out_port.cpp).
class Component;

class OutPortBase : public virtual POA_CF::Port {
 public:
  OutPortBase(Component& owner, std::string name);
  ~OutPortBase() override = default;
  const std::string& name() const { return name_; }
  CORBA::Object_ptr reference();

  virtual bool connected() const = 0;
  // The owning component stops (CF::Resource::stop) or starts again: a
  // packet waiting for credits or a resume is refused at once (and counted
  // unsent), and none waits until the next start. Without flow control no
  // wait is the sender's own to end.
  void halt();
  void resume();
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
  bool sharedMemory() const;
  std::size_t ringBytes() const;

  // Flow control: the gate exists when the connection's flow is not none.
  bool openGate();
  scabench::FlowControl_ptr gateReference();
  // A fresh connection token: random, never 0 (a receiving port with no
  // sender attached takes 0).
  static uint64_t drawToken();
  // Waits for the gate and draws the packet's link sequence from `next`;
  // empty if the wait was ended by a stop or a disconnect: the packet is
  // not sent, and counted unsent in the record header.
  std::optional<uint64_t> admit(std::atomic<uint64_t>& next);
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

  bool connected() const override { return link_.load() != nullptr; }

  // Pushes one packet with this connection's policy. Without a connection
  // the packet goes nowhere: that is how a last stage ends a pipeline.
  // Throws the CORBA exception if the peer cannot be reached, PacketTooLarge
  // (unsent) if the packet does not fit in a message.
  void push(const PacketHeader& header, const T* samples, std::size_t count) {
    if (const std::shared_ptr<Link> link = link_.load()) pushOn(*link, header, samples, count);
  }

  // Uses up a link sequence without sending: a packet lost on purpose, for
  // testing what the receiver does about a gap.
  void dropNext() {
    if (gate_)
      (void)gate_->issue(nextLink_);  // the receiver will skip it, and may acknowledge it
    else
      nextLink_.fetch_add(1, std::memory_order_relaxed);
  }

  void sendEndOfStream(uint32_t streamId, uint64_t count) override {
    const std::shared_ptr<Link> link = link_.load();
    if (!link) return;
    PacketHeader h{};
    h.stream_id = streamId;
    h.sequence_number = count;
    h.send_time_ns = uint64_t(monotonicNs());
    h.end_of_stream = true;
    pushOn(*link, h, nullptr, 0);
    link->sender->flush();
  }

 protected:
  void attach(CORBA::Object_ptr connection) override {
    typename Traits::Ref_var ref = Traits::Ref::_narrow(connection);
    if (CORBA::is_nil(ref))
      throw CF::Port::InvalidPort(1, (std::string("not a ") + Traits::name + " data port").c_str());
    token_ = drawToken();
    // A new connection is a new sequence space: its link sequences start at
    // 0, as the receiver's window and a new flow gate's credits do. (Going
    // on from an earlier connection's count left a credits sender waiting
    // for acknowledgements of numbers its new receiver never saw.)
    nextLink_.store(0);
    scabench::FlowControl_var flow = openGate() ? gateReference() : scabench::FlowControl::_nil();
    auto link = std::make_shared<Link>();
    if (sharedMemory()) {
      // The ring first, then the attach that hands it over: the receiver
      // maps it before it returns, and its name goes once both have it.
      link->ring = std::make_shared<shm::RingSender>(ringBytes(), sizeof(T));
      ref->attachSharedRing(token_, flow, link->ring->name().c_str());
      link->ring->attached();
      link->sender = makeRingSender<T>(link->ring, callKind(), syncScope(), syncNoneDepth());
    } else {
      link->sender = makeSender<T>(ref, callKind(), syncScope(), syncNoneDepth());
      ref->attachSender(token_, flow);  // throws: not connected after all
    }
    link_.store(std::move(link));
    peer_ = ref._retn();
  }
  void detach() override {
    closeGate();
    // The connection leaves the port at once, but a send or a flush under
    // way on the component's thread holds it (push takes its own reference),
    // so the sender and the ring stay until the last of them returns.
    // (Freed here, a send waiting in the ring woke on unmapped memory.)
    const std::shared_ptr<Link> link = link_.exchange(nullptr);
    if (link) {
      link->detached.store(true);
      link->sender->flush();
    }
    // The receiver forgets the connection, so that it does not wait for its
    // end of stream; a receiver that is gone has nothing to forget. Its ring
    // closed, a send still waiting on it ends (RingClosed).
    try {
      if (!CORBA::is_nil(peer_)) peer_->detachSender(token_);
    } catch (const CORBA::Exception&) {
    }
    peer_ = Traits::Ref::_nil();
  }

 private:
  // One connection's sending side, shared by the port and every send in
  // progress on it.
  struct Link {
    std::unique_ptr<Sender<T>> sender;
    std::shared_ptr<shm::RingSender> ring;  // transport shm: the connection's ring
    std::atomic<bool> detached{false};      // disconnectPort took it from the port
  };

  void pushOn(Link& link, const PacketHeader& header, const T* samples, std::size_t count) {
    checkPacketFits(name_, count, sizeof(T), Traits::name);  // throws PacketTooLarge (message_limit.hpp)
    if (link.ring) checkRingFits(name_, count, sizeof(T), Traits::name, link.ring->capacity());
    PacketHeader h = header;
    h.connection_token = token_;
    // Atomic: a component served by a thread pool pushes from several ORB
    // threads at once, and the receiver takes each link number only once.
    // With flow control the gate draws it, once the packet may go.
    if (!gate_) {
      h.link_sequence = nextLink_.fetch_add(1, std::memory_order_relaxed);
    } else if (h.end_of_stream) {
      h.link_sequence = gate_->issue(nextLink_);  // it carries no data and must not wait for credits
    } else if (const auto linkSequence = admit(nextLink_)) {
      h.link_sequence = *linkSequence;
    } else {
      return;  // stopped or disconnected while it waited: not sent, counted
    }
    // A borrowed view: no copy, the ORB marshals straight from the caller's buffer.
    const auto length = static_cast<CORBA::ULong>(count);
    typename Traits::Seq view(length, length, const_cast<T*>(samples), false);
    try {
      link.sender->send(h, view);
    } catch (const shm::RingClosed&) {
      // This port's own disconnect closed the ring under the send: the
      // connection ended as asked, which is no failure of the sender's.
      if (!link.detached.load()) throw;
    }
  }

  // Loaded by every send, swapped by connectPort and disconnectPort on an ORB thread.
  std::atomic<std::shared_ptr<Link>> link_;
  typename Traits::Ref_var peer_;
  std::atomic<uint64_t> nextLink_{0};
  uint64_t token_ = 0;
};

}  // namespace scabench
