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
//   <port>.fanout            "sequential", "parallel" or "drop": how a packet
//   <port>.fanout_depth      reaches the port's connections (below).
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
//
// Connections (fan-out). A uses port takes any number of connections, each
// with its own id (connectPort; an id already connected is an OccupiedPort,
// disconnectPort of an unknown one an InvalidPort). Each is a connection of
// its own, as the receiving port sees it: its token, its link sequence
// space, its flow gate, its sender (and ring), its end of stream and its
// counts (connectionCounts). All share the port's properties, read when the
// connection is made. How push() reaches them is the port's fanout:
//   sequential  each connection in connect order, on the caller's thread,
//               which waits for each as its call says: a blocked consumer
//               stalls them all (as REDHAWK's BulkIO does).
//   parallel    each connection has a queue of fanout_depth packets and a
//               sender thread that drains it with the connection's call;
//               push() returns once every queue took the packet, so a slow
//               consumer holds back the others only once its queue is full.
//   drop        as parallel, but a full queue drops the packet for that
//               connection only (counted); the others get it.
// The port is a REDHAWK QueryablePort: `connections` answers the live ones,
// in connect order, each its id and the port it sends to; and a BulkIO
// UsesPortStatisticsProvider: `statistics` answers each live connection's
// traffic (PortTraffic).
//
// Protocol. A connection speaks BulkIO (bulkio_port.hpp) when the peer is a
// BULKIO::data<T> port, found at connectPort from its repository id
// (_is_a), and scabench's own otherwise; a port whose protocol is "bulkio"
// refuses a peer that is not a BulkIO port, and any port refuses a BulkIO
// connection under what BulkIO cannot carry (policy::protocolConflict, and
// transport shm). A BulkIO connection is not attached: BulkIO has no token.
// End of stream goes to each connection after what its queue holds, and
// announces the packets that connection carried in the stream. With one
// connection, sequential is the port as it always was.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cf.hh"
#include "scabench/core/bounded_queue.hpp"
#include "scabench/core/clock.hpp"
#include "scabench/core/thread_name.hpp"
#include "scabench/runtime/bulkio_port.hpp"
#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/message_limit.hpp"
#include "scabench/runtime/port_traffic.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/senders.hpp"

namespace scabench {

// Named only: OutPortBase reaches its owner out of line (out_port.cpp).
class Component;

enum class Fanout { Sequential, Parallel, Drop };

// One connection's counts, as `<name>.connections.json` writes them.
struct UsesConnectionCounts {
  std::string port, connectionId, fanout, protocol;
  uint64_t sent = 0;       // data packets handed to the connection's sender
  uint64_t dropped = 0;    // fanout drop: packets its full queue did not take
  uint64_t unsent = 0;     // given up: a stop or a disconnect while it waited, a failed send
  uint64_t queuePeak = 0;  // parallel, drop: most packets its queue held
  uint64_t blockedNs = 0;  // time the port's caller waited on it: its sends (sequential), its full queue (parallel)
};

class OutPortBase : public virtual POA_BULKIO::UsesPortStatisticsProvider {
 public:
  OutPortBase(Component& owner, std::string name);
  ~OutPortBase() override = default;
  const std::string& name() const { return name_; }
  CORBA::Object_ptr reference();

  bool connected() const;
  // The owning component stops (CF::Resource::stop) or starts again: on
  // every connection, a packet waiting for credits or a resume is refused at
  // once (and counted unsent), and none waits until the next start. Without
  // flow control no wait is the sender's own to end.
  void halt();
  // Also points every connection's gauges (credits outstanding, ring depth)
  // at the component's record header, which exists from the first start.
  void resume();
  // Sends end of stream on every connection, announcing `count` packets less
  // those the connection dropped in the stream, then waits until every
  // packet has left this process.
  virtual void sendEndOfStream(uint32_t streamId, uint64_t count) = 0;
  // Ends every connection's sender thread: before the component's members go.
  virtual void shutSenders() = 0;
  // Every connection made since the port was, in connect order, with its counts.
  std::vector<UsesConnectionCounts> connectionCounts() const;

  // CF::Port
  void connectPort(CORBA::Object_ptr connection, const char* connectionId) override;
  void disconnectPort(const char* connectionId) override;
  // ExtendedCF::QueryablePort
  ExtendedCF::UsesConnectionSequence* connections() override;
  // BULKIO::UsesPortStatisticsProvider
  BULKIO::UsesPortStatisticsSequence* statistics() override;

 protected:
  // What every connection has, whatever the element type. Shared: the port
  // holds it while connected, a send in progress for as long as it runs, and
  // the port's history (its counts) for good.
  struct Connection {
    std::string id;
    CORBA::Object_var peer;  // the port connectPort was given
    Fanout fanout = Fanout::Sequential;
    uint64_t token = 0;
    // Its own sequence space: link sequences start at 0, as the receiver's
    // window and a new flow gate's credits do.
    std::atomic<uint64_t> nextLink{0};
    // Flow control's gate, null without. Activated in the port POA, and
    // never deleted: a late acknowledgement may still reach it.
    FlowGate* gate = nullptr;
    std::shared_ptr<shm::RingSender> ring;  // transport shm: the connection's ring
    std::atomic<bool> detached{false};      // disconnectPort took it from the port
    std::atomic<uint64_t> sent{0}, dropped{0}, unsent{0}, queuePeak{0}, blockedNs{0};
    std::atomic<uint64_t> droppedInStream{0};  // since its last end of stream
    policy::Protocol protocol = policy::Protocol::Scabench;
    PortTraffic traffic;  // its calls that carried data
  };

  // Points the connection's gauges at the component's record header (resume).
  void countGauges(Connection& c);
  // Narrows to the port's data interface, builds the connection's sender
  // and attaches; throws CF::Port::InvalidPort if the object is not a data
  // port of this type. Under connectMutex_.
  virtual std::shared_ptr<Connection> attach(CORBA::Object_ptr connection, const std::string& id) = 0;
  // Takes the connection from the port, lets its queue go, tells the
  // receiver. Under connectMutex_.
  virtual void detach(const std::shared_ptr<Connection>& connection) = 0;
  CallKind callKind() const;
  SyncScope syncScope() const;
  std::size_t syncNoneDepth() const;
  bool sharedMemory() const;
  policy::Protocol protocol() const;
  // What the connection speaks with `peer` (the class comment); throws
  // CF::Port::InvalidPort for a peer or a policy the protocol refuses.
  policy::Protocol protocolWith(CORBA::Object_ptr peer, const char* bulkioRepid, const char* typeName) const;
  std::size_t ringBytes() const;
  Fanout fanout() const;
  std::size_t fanoutDepth() const;

  // Flow control: a new gate for a connection whose flow is not none (null
  // for none), and its reference.
  FlowGate* openGate();
  scabench::FlowControl_ptr gateReference(FlowGate* gate);
  // A fresh connection token: random, never 0 (a receiving port with no
  // sender attached takes 0).
  static uint64_t drawToken();
  // Waits for the connection's gate and draws the packet's link sequence;
  // empty if the wait was ended by a stop or a disconnect: the packet is
  // not sent, and counted unsent in the record header and the connection.
  std::optional<uint64_t> admit(Connection& connection);
  // A packet given up on a connection: counted in both places.
  void countUnsent(Connection& connection);
  // A failure on a sender thread, which has no caller to throw to.
  void failFromSender(const std::string& what);
  static const char* fanoutName(Fanout f);

  Component& owner_;
  const std::string name_;
  // connectPort and disconnectPort come on any ORB thread: one at a time.
  // halt() and resume() read the connections under it too.
  mutable std::mutex connectMutex_;
  std::vector<std::shared_ptr<Connection>> live_;     // connected, in connect order
  std::vector<std::shared_ptr<Connection>> history_;  // every one ever made, for the counts

 private:
  CORBA::Object_var ref_;
};

template <class T>
class OutPort final : public OutPortBase {
 public:
  using Traits = PortTraits<T>;
  OutPort(Component& owner, const std::string& name) : OutPortBase(owner, name) {}
  ~OutPort() override { shutSenders(); }

  // Pushes one packet with this port's policy to every connection. Without
  // a connection the packet goes nowhere: that is how a last stage ends a
  // pipeline. Throws the CORBA exception if a peer cannot be reached
  // (sequential), PacketTooLarge (unsent) if the packet does not fit in a
  // message or in a connection's ring.
  void push(const PacketHeader& header, const T* samples, std::size_t count) {
    const std::shared_ptr<const Links> links = links_.load();
    if (!links || links->empty()) return;
    checkPacketFits(name_, count, sizeof(T), Traits::name);  // throws PacketTooLarge (message_limit.hpp)
    for (const auto& link : *links)
      if (link->ring) checkRingFits(name_, count, sizeof(T), Traits::name, link->ring->capacity());
    for (const auto& link : *links) {
      if (!link->queue) {
        const int64_t began = monotonicNs();
        sendOn(*link, header, samples, count);
        link->blockedNs.fetch_add(uint64_t(monotonicNs() - began), std::memory_order_relaxed);
        continue;
      }
      // A copy per connection, in a buffer the sequence owns: each queue
      // keeps its packet past the call, and the queue moves it for real.
      const auto length = static_cast<CORBA::ULong>(count);
      T* buffer = Traits::Seq::allocbuf(length);
      std::copy(samples, samples + count, buffer);
      enqueue(*link, Item{header, typename Traits::Seq(length, length, buffer, true), Item::Data, nullptr},
              link->fanout == Fanout::Drop);
    }
  }

  // Uses up a link sequence on every connection without sending: a packet
  // lost on purpose, for testing what the receiver does about a gap.
  void dropNext() {
    const std::shared_ptr<const Links> links = links_.load();
    if (!links) return;
    for (const auto& link : *links) {
      if (link->queue)
        enqueue(*link, Item{PacketHeader{}, typename Traits::Seq(), Item::Skip, nullptr}, false);
      else
        skipOn(*link);
    }
  }

  void sendEndOfStream(uint32_t streamId, uint64_t count) override {
    const std::shared_ptr<const Links> links = links_.load();
    if (!links) return;
    std::vector<std::future<void>> sent;
    for (const auto& link : *links) {
      PacketHeader h{};
      h.stream_id = streamId;
      const uint64_t dropped = link->droppedInStream.exchange(0);
      h.sequence_number = count >= dropped ? count - dropped : 0;  // the packets this connection carried
      h.send_time_ns = uint64_t(monotonicNs());
      h.end_of_stream = true;
      if (!link->queue) {
        sendOn(*link, h, nullptr, 0);
        link->sender->flush();
        continue;
      }
      // After what the queue holds; it must not be dropped, so the caller waits for room.
      auto done = std::make_shared<std::promise<void>>();
      sent.push_back(done->get_future());
      if (!enqueue(*link, Item{h, typename Traits::Seq(), Item::End, done}, false)) sent.pop_back();
    }
    for (auto& f : sent) f.wait();
  }

  void shutSenders() override {
    std::shared_ptr<const Links> links = links_.exchange(nullptr);
    if (!links) return;
    for (const auto& link : *links) stopThread(*link);
  }

 protected:
  std::shared_ptr<Connection> attach(CORBA::Object_ptr connection, const std::string& id) override {
    auto link = std::make_shared<Link>();
    link->id = id;
    link->fanout = fanout();
    link->protocol = protocolWith(connection, Traits::bulkioRepid, Traits::name);
    if (link->protocol == policy::Protocol::Bulkio) {
      typename Traits::BulkioRef_var bulkio = Traits::BulkioRef::_narrow(connection);
      link->sender = std::make_unique<bulkio::Sender<T>>(bulkio);
    }
    typename Traits::Ref_var ref;
    if (!link->sender) {
      ref = Traits::Ref::_narrow(connection);
      if (CORBA::is_nil(ref))
        throw CF::Port::InvalidPort(1, (std::string("not a ") + Traits::name + " data port").c_str());
      link->token = drawToken();
      link->gate = openGate();
    }
    scabench::FlowControl_var flow = link->gate ? gateReference(link->gate) : scabench::FlowControl::_nil();
    if (link->sender) {
      // BulkIO: nothing to attach.
    } else if (sharedMemory()) {
      // The ring first, then the attach that hands it over: the receiver
      // maps it before it returns, and its name goes once both have it.
      link->ring = std::make_shared<shm::RingSender>(ringBytes(), sizeof(T));
      ref->attachSharedRing(link->token, flow, link->ring->name().c_str());
      link->ring->attached();
      link->sender = makeRingSender<T>(link->ring, callKind(), syncScope(), syncNoneDepth());
    } else {
      link->sender = makeSender<T>(ref, callKind(), syncScope(), syncNoneDepth());
      ref->attachSender(link->token, flow);  // throws: not connected after all
    }
    link->peer = ref._retn();
    if (link->fanout != Fanout::Sequential) {
      link->queue = std::make_unique<BoundedQueue<Item>>(fanoutDepth());
      Link* self = link.get();
      link->thread = std::thread([this, self] {
        nameThisThread("sb-fanout");
        drain(*self);
      });
    }
    auto links = std::make_shared<Links>(current());
    links->push_back(link);
    links_.store(std::move(links));
    return link;
  }

  void detach(const std::shared_ptr<Connection>& connection) override {
    const auto link = std::static_pointer_cast<Link>(connection);
    // The connection leaves the port at once, but a send or a flush under
    // way on the component's thread holds it (push takes its own reference),
    // so the sender and the ring stay until the last of them returns.
    // (Freed here, a send waiting in the ring woke on unmapped memory.)
    auto links = std::make_shared<Links>(current());
    std::erase(*links, link);
    links_.store(std::move(links));
    link->detached.store(true);
    if (link->gate) link->gate->close();
    // Its queue's packets are given up (counted unsent); a caller waiting
    // for room goes on.
    stopThread(*link);
    link->sender->flush();
    if (link->ring) link->ring->countInto(nullptr);  // its depth leaves the component's gauge
    try {
      link->sender->disconnected();
    } catch (const CORBA::Exception&) {  // a peer that is gone has no stream to end
    }
    // The receiver forgets the connection, so that it does not wait for its
    // end of stream; a receiver that is gone has nothing to forget. Its ring
    // closed, a send still waiting on it ends (RingClosed).
    try {
      if (!CORBA::is_nil(link->peer)) link->peer->detachSender(link->token);
    } catch (const CORBA::Exception&) {
    }
  }

 private:
  // What a connection's queue carries (parallel, drop): a packet, a link
  // sequence used up on purpose (dropNext), or its end of stream, whose
  // sending the caller waits for.
  struct Item {
    PacketHeader header;
    MovableSeq<typename Traits::Seq> data;
    enum Kind { Data, Skip, End } kind;
    std::shared_ptr<std::promise<void>> done;  // End: set once it has left this process
  };

  // One connection's sending side.
  struct Link : Connection {
    std::unique_ptr<Sender<T>> sender;
    typename Traits::Ref_var peer;
    std::unique_ptr<BoundedQueue<Item>> queue;  // parallel, drop
    std::thread thread;                         // parallel, drop: drains the queue
  };
  using Links = std::vector<std::shared_ptr<Link>>;

  Links current() const {
    const std::shared_ptr<const Links> links = links_.load();
    return links ? *links : Links{};
  }

  // Puts an item in the connection's queue; false if it did not go in
  // (dropped, or the connection is going), counted.
  bool enqueue(Link& link, Item item, bool dropIfFull) {
    const bool isData = item.kind == Item::Data;
    bool queued;
    if (dropIfFull) {
      queued = link.queue->tryPush(std::move(item));
      if (!queued && !link.detached.load()) {
        link.dropped.fetch_add(1, std::memory_order_relaxed);
        link.droppedInStream.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    } else {
      const int64_t began = monotonicNs();
      queued = link.queue->push(std::move(item));
      link.blockedNs.fetch_add(uint64_t(monotonicNs() - began), std::memory_order_relaxed);
    }
    if (!queued && isData) countUnsent(link);
    // Several threads may push (a pool-served component): the peak only rises.
    const uint64_t depth = link.queue->deepest();
    uint64_t peak = link.queuePeak.load(std::memory_order_relaxed);
    while (depth > peak && !link.queuePeak.compare_exchange_weak(peak, depth, std::memory_order_relaxed)) {
    }
    return queued;
  }

  // The connection's sender thread: its queue, in order, until closed.
  void drain(Link& link) {
    while (auto item = link.queue->pop()) {
      if (item->kind == Item::Skip) {
        skipOn(link);
        continue;
      }
      try {
        if (link.detached.load()) {
          if (item->kind == Item::Data) countUnsent(link);  // disconnected: given up
        } else if (item->kind == Item::Data) {
          sendOn(link, item->header, item->data->get_buffer(), item->data->length());
        } else {
          sendOn(link, item->header, nullptr, 0);
          link.sender->flush();
        }
      } catch (const CORBA::Exception& ex) {
        if (item->kind == Item::Data) countUnsent(link);
        failFromSender(std::string("connection ") + link.id + ": " + ex._name());
      } catch (const std::exception& ex) {
        if (item->kind == Item::Data) countUnsent(link);
        failFromSender("connection " + link.id + ": " + ex.what());
      }
      if (item->done) item->done->set_value();
    }
  }

  void stopThread(Link& link) {
    if (!link.queue) return;
    link.detached.store(true);  // what the queue still holds is given up
    link.queue->close();
    if (link.thread.joinable()) link.thread.join();
  }

  void skipOn(Link& link) {
    if (link.gate)
      (void)link.gate->issue(link.nextLink);  // the receiver will skip it, and may acknowledge it
    else
      link.nextLink.fetch_add(1, std::memory_order_relaxed);
  }

  // One packet (or end of stream) on one connection, as its call says.
  void sendOn(Link& link, const PacketHeader& header, const T* samples, std::size_t count) {
    PacketHeader h = header;
    h.connection_token = link.token;
    // Atomic: a component served by a thread pool pushes from several ORB
    // threads at once, and the receiver takes each link number only once.
    // With flow control the gate draws it, once the packet may go.
    if (!link.gate) {
      h.link_sequence = link.nextLink.fetch_add(1, std::memory_order_relaxed);
    } else if (h.end_of_stream) {
      h.link_sequence = link.gate->issue(link.nextLink);  // it carries no data and must not wait for credits
    } else if (const auto linkSequence = admit(link)) {
      h.link_sequence = *linkSequence;
    } else {
      return;  // stopped or disconnected while it waited: not sent, counted
    }
    // A borrowed view: no copy, the ORB marshals straight from the caller's buffer.
    const auto length = static_cast<CORBA::ULong>(count);
    typename Traits::Seq view(length, length, const_cast<T*>(samples), false);
    try {
      link.sender->send(h, view);
      if (!h.end_of_stream) {
        link.sent.fetch_add(1, std::memory_order_relaxed);
        link.traffic.count(count, 8 * sizeof(T), monotonicNs());
      }
    } catch (const shm::RingClosed&) {
      // This port's own disconnect closed the ring under the send: the
      // connection ended as asked, which is no failure of the sender's;
      // the packet it gave up is counted, as a queued one is.
      if (!link.detached.load()) throw;
      if (!h.end_of_stream) countUnsent(link);
    }
  }

  // Loaded by every send, replaced by connectPort and disconnectPort on an
  // ORB thread (under connectMutex_): the connected links, in connect order.
  std::atomic<std::shared_ptr<const Links>> links_;
};

}  // namespace scabench
