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
// Shared memory. A sender whose connection's transport is shm attaches with
// DataPort::attachSharedRing instead: the port maps the sender's ring
// (shm_ring.hpp) and its receiving threads call the same upcall as the ORB's
// threads do for pushPacket (two-way, or sync=target) and pushPacketOneway,
// so the checks, the worker, the reorder buffer, flow control and end of
// stream are the same whichever way a packet came. The port's dispatch says
// how many one-way packets of a connection may be in upcalls at once (pool:
// the ORB's 100 per connection, pool:N, serial and single: one), and single
// serialises every upcall of the host's single ports, as its POA does.
//
// Connections. Any number of uses ports may connect to one provides port
// (fan-in): each attaches with DataPort::attachSender, and is a connection of
// its own (InLink) with its own sequence space: its link window, its calls in
// progress, its reorder buffer, its credits or watermarks, and its end of
// stream. The port's end of stream comes once every connection's stream has
// ended. A port that nobody attached to takes token 0, as one connection,
// unless it is optional (Presence::Optional): then it takes no part in the
// component's end of stream. Connections are numbered per component, across
// all its provides ports, in attach order (Component::nextInConnection):
// the number each packet record carries.
//
// Peers are judged before the port does anything with a packet (in_port.cpp,
// "What a port takes"): every packet passes a few checks that neither
// allocate nor wait, and what fails them is dropped and counted by reason in
// the record header (Refusal): a length other than packet_length, a link
// sequence outside its connection's window, a token of no connection, an end
// of stream that is not the connection's own and in sequence, a call beyond
// max_calls. docs/trust-model.md says what this defends and what not.
//
// BulkIO. A port whose protocol is "bulkio" is served by a BULKIO::data<T>
// servant instead (its repository id is what getPort answers): each BulkIO
// call becomes a packet header as above and takes the same path
// (bulkio_port.hpp says how), as one connection of the port's, made at the
// first start, that any sender may push into.
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
#include "scabench/core/thread_name.hpp"
#include "scabench/runtime/bulkio_port.hpp"
#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/latency_histogram.hpp"
#include "scabench/runtime/link_window.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/port_traffic.hpp"
#include "scabench/runtime/port_types.hpp"
#include "scabench/runtime/resequencer.hpp"
#include "scabench/runtime/shm_fields.hpp"
#include "scabench/runtime/shm_ring.hpp"

namespace scabench {

// The owning component is only named here: the port reaches it through
// InPortBase's out-of-line members (in_port.cpp), so this header does not
// need component.hpp, which includes it.
class Component;

// One connection into a provides port: its sender's token and flow-control
// servant, and where its stream stands. Shared (std::shared_ptr): a packet
// in a queue keeps its connection alive after a detach.
struct InLink {
  InLink(uint64_t token, uint32_t number, bool implicit = false) : token(token), number(number), implicit(implicit) {}
  const uint64_t token;
  const uint32_t number;               // attach order in the component: recorded with each packet (recordFlags)
  const bool implicit;                 // a port nobody attached to: token 0
  scabench::FlowControl_var sender;    // nil without flow control; set before start
  std::unique_ptr<LinkWindow> window;  // made at the first start after the attach
  std::atomic<bool> detached{false};   // the sender detached: its packets are refused
  std::atomic<uint32_t> calls{0};      // its calls in progress
  std::atomic<int64_t> held{0};        // its packets in the port (watermarks)
  // End of stream. pending: one was taken for the stream under way (a second
  // is refused); eosLink: its link sequence once it has come through the
  // port's queues, -1 before; ended: streams ended on it since start.
  std::atomic<bool> pending{false};
  std::atomic<int64_t> eosLink{-1};
  std::atomic<uint32_t> eosStream{0};  // the stream id its end of stream carried

  uint64_t ended = 0;  // under InPortBase::eosMutex_
  // Flow signals to its sender, under InPortBase::flowMutex_.
  bool suspended = false;
  uint64_t epoch = 0, lastAck = 0;
  // The port's per-connection part that depends on the element type (a
  // reorder buffer): owned by the port for its whole life, replaced at start.
  std::atomic<void*> typed{nullptr};
};

class InPortBase {
 public:
  InPortBase(Component& owner, std::string name);
  virtual ~InPortBase() = default;
  const std::string& name() const { return name_; }

  // Activates the port's servant (once) and returns its reference.
  CORBA::Object_ptr reference();
  virtual void startWorker() = 0;
  virtual void stopWorker() = 0;
  // Closes every shared-memory connection and waits for its receiving
  // threads: before the component goes (their upcalls reach it).
  void shutRings();

  // Presence::Optional (component.hpp): unconnected, the port takes no part
  // in the component's end of stream.
  void setRequired(bool required) { required_ = required; }
  bool required() const { return required_; }
  // Whether the port's end of stream counts towards the component's: it is
  // required, or something is attached to it. Settled at start.
  bool takesPart() const;
  // The numbers of the connections attached to it since it was made, in
  // attach order (the component's `<name>.connections.json`).
  std::vector<uint32_t> connectionNumbers() const;

  // What this port refused from peers, by reason.
  uint64_t refusals(Refusal why) const { return refused_[std::size_t(why)].load(); }

  // What the port speaks: its `protocol` (read at getPort and at start; it
  // cannot change while the component runs).
  policy::Protocol protocol() const;
  // Every call into the port, counted (BulkIO's statistics).
  const PortTraffic& traffic() const { return traffic_; }
  // BulkIO: the streams pushed into the port, its state and statistics.
  bulkio::Streams& bulkioStreams() { return bulkioStreams_; }
  // BULKIO's pushSRI: ignored while stopped, as a packet would be refused
  // (a stream opened then could never close: EOS is refused too).
  void bulkioPushSRI(const BULKIO::StreamSRI& sri);
  BULKIO::PortUsageType bulkioState() const;
  BULKIO::PortStatistics bulkioStatistics() const;

 protected:
  virtual PortableServer::Servant servant() = 0;
  // The worker queue's packets and depth now ({0, 0} without a worker):
  // read without a lock (BoundedQueue::fill), so that every call may read it.
  virtual std::pair<std::size_t, std::size_t> queueFill() const = 0;
  // Counts one call the port took (the component running) of `elements`
  // samples of `bitsPerElement` bits, arrived at `arrivedNs`: the time the
  // packet's record gets, read once per call. A call refused because the
  // component is stopped is counted as refused only.
  void countCall(std::size_t elements, std::size_t bitsPerElement, int64_t arrivedNs);
  // Counts a data packet the port took into its latency so far (send to
  // arrival, on the arrival time countCall had), if it carries a send time:
  // a BulkIO T that was none leaves it uncounted, as does an end of stream.
  void countLatency(const PacketHeader& h, int64_t arrivedNs) {
    if (!h.end_of_stream && h.send_time_ns != bulkio::kNoSendTime) latency_.add(arrivedNs - int64_t(h.send_time_ns));
  }
  // BulkIO: the next link sequence of the port's one connection.
  uint64_t nextBulkioLink() { return bulkioNextLink_.fetch_add(1, std::memory_order_relaxed); }
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
  // At start: reads the flow setting, the packet length, the call limit (all
  // checked when they were configured); gives every connection attached
  // since the last start its link window; re-arms end of stream. Returns the
  // live connections.
  std::vector<std::shared_ptr<InLink>> prepareChecks();

  // DataPort::attachSender / detachSender.
  void attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow);
  void detachSender(CORBA::ULongLong token);
  // DataPort::attachSharedRing: the ring mapped by openRing, then as attachSender.
  void attachSharedRing(CORBA::ULongLong token, scabench::FlowControl_ptr flow, const char* ring);
  // Maps a sender's ring and starts its receiving threads, which call the
  // port's upcall (InPort<T>). Throws std::invalid_argument.
  virtual std::unique_ptr<shm::RingReceiver> openRing(uint64_t token, const std::string& name,
                                                      uint32_t onewayConcurrency, std::recursive_mutex* serialize) = 0;
  // The ring feeding the connection of `token`, if it has one (valid until shutRings()).
  shm::RingReceiver* ringOf(uint64_t token);
  // Undoes every ring's put-off wake-up (RingReceiver::poke): at a stop,
  // once no releaser is left to ask.
  void wakeRings();
  // Read at start (prepareChecks), by the thread that starts the port.
  FlowKind flowKind() const { return flow_; }
  // Held around every upcall of a single-dispatch port once a ring feeds it
  // (null otherwise): the ring's threads and the ORB's take turns, as the
  // single-thread POA's callers do.
  std::recursive_mutex* upcallLock() const { return upcallLock_.load(std::memory_order_acquire); }
  uint32_t maxCallsSetting() const;

  // The connection a packet names by its token; null if none.
  std::shared_ptr<InLink> linkOf(uint64_t token) const;
  // Where a stranger's link sequence falls: Ahead if beyond every connection's window.
  LinkWindow::Place strangerPlace(uint64_t n) const;
  // The checks, in the upcall, before anything else. True: the packet is the
  // connection's and the port goes on with it; false: it was refused (and
  // counted) or, a duplicate of a finished packet, dropped.
  bool takePacket(InLink* link, const PacketHeader& h, std::size_t samples);
  bool takeEndOfStream(InLink* link, const PacketHeader& h);
  // Takes a slot among the connection's calls in progress; false (refused,
  // counted) if max_calls are in progress. leaveCall() gives it back.
  bool enterCall(InLink& link, const PacketHeader& h);
  static void leaveCall(InLink& link) { link.calls.fetch_sub(1, std::memory_order_relaxed); }
  void refuse(Refusal why);

  // Flow accounting, per connection. held(+1) when a packet enters the port,
  // held(-1) when it is done with (processed or dropped): drives the
  // watermarks. finished() marks link sequences done (processed, or given
  // up on): drives the credits and the end of stream.
  void held(InLink& link, int64_t delta);
  void finished(InLink& link, uint64_t firstLink, uint64_t count = 1);
  void publishReorderStats(const ResequencerStats& stats);
  // The packets its reorder buffers hold now: the port's own count (its
  // statistics' reorder_held) and the component's gauge, changed together.
  void reorderHeld(int64_t delta) {
    reorderHeld_.fetch_add(delta, std::memory_order_relaxed);
    RecordLog::add(records().header().reorderHeld, delta);
  }

  // End of stream, the connection's own, with link sequence `eosLink`, has
  // come through the port: it ends the connection's stream once every link
  // sequence before it is finished.
  void endOfStreamArrived(InLink& link, uint64_t eosLink);
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
  void checkEndOfStream(InLink& link, uint64_t prefix);
  // Fires the port's end of stream for every round in which each live
  // connection has ended a stream.
  void checkRound();
  // A packet of the connection's own that was refused: its link sequence is
  // used up, so that the stream goes on past it (a reorder buffer skips it
  // after its timeout instead).
  void usedUp(InLink& link, uint64_t n, LinkWindow::Place place);
  void failed(const CORBA::Exception& ex);
  void failed(const std::exception& ex);
  CORBA::Object_var ref_;
  bool required_ = true;

  // The connections: changed only while the component is stopped (attach,
  // and the pruning of detached ones at start), read by every packet's
  // lookup. One attached while a start is under way has no window until the
  // next start, and takes no part until then.
  mutable std::mutex linksMutex_;
  std::vector<std::shared_ptr<InLink>> links_;
  std::vector<uint32_t> numbers_;  // every attach's number, in order

  std::size_t packetLength_ = 0;  // 0: any
  bool resequencing_ = false;
  uint32_t maxCalls_ = 1;
  std::array<std::atomic<uint64_t>, kRefusalReasons> refused_{};
  std::mutex eosMutex_;
  uint64_t rounds_ = 0;           // the port's ends of stream since start (under eosMutex_)
  uint32_t lastEndedStream_ = 0;  // the stream id of the connection that ended last (under eosMutex_)

  std::array<std::size_t, 2> resume_{};  // two-way, one-way
  FlowKind flow_ = FlowKind::None;
  int64_t flowLow_ = 0, flowHigh_ = 0;
  uint64_t credits_ = 0, ackBatch_ = 1;
  std::mutex flowMutex_;
  std::atomic<int64_t> heldNow_{0};      // the whole port's, for its peak
  std::atomic<int64_t> reorderHeld_{0};  // in its reorder buffers now (reorderHeld())

  // Shared-memory connections by token; a detached or replaced one is closed
  // and kept until shutRings() joins its threads.
  std::mutex ringsMutex_;
  std::vector<std::pair<uint64_t, std::unique_ptr<shm::RingReceiver>>> rings_;
  std::vector<std::unique_ptr<shm::RingReceiver>> closedRings_;
  void closeRing(uint64_t token);
  std::atomic<std::recursive_mutex*> upcallLock_{nullptr};

  PortTraffic traffic_;
  LatencyHistogram latency_;
  bulkio::Streams bulkioStreams_;
  std::atomic<uint64_t> bulkioNextLink_{0};
};

template <class T>
class InPort final : public InPortBase, public virtual PortTraits<T>::Servant {
 public:
  using Traits = PortTraits<T>;
  using Handler = std::function<void(const PacketView<T>&)>;

  InPort(Component& owner, const std::string& name, Handler handler)
      : InPortBase(owner, name), handler_(std::move(handler)) {}
  ~InPort() override { shutRings(); }  // and the worker and releasers with them

  void pushPacket(const PacketHeader& h, const typename Traits::Seq& data) override {
    inTurn([&] { upcall(h, data, CallKind::Twoway); });
  }
  void pushPacketOneway(const PacketHeader& h, const typename Traits::Seq& data) override {
    inTurn([&] { upcall(h, data, CallKind::Oneway); });
  }
  void syncMarker() override {}
  // BULKIO::ProvidesPortStatisticsProvider, on every port (scabench.idl's DataPort).
  BULKIO::PortUsageType state() override { return bulkioState(); }
  BULKIO::PortStatistics* statistics() override { return new BULKIO::PortStatistics(bulkioStatistics()); }
  void attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow) override {
    InPortBase::attachSender(token, flow);
  }
  void attachSharedRing(CORBA::ULongLong token, scabench::FlowControl_ptr flow, const char* ring) override {
    InPortBase::attachSharedRing(token, flow, ring);
  }
  void detachSender(CORBA::ULongLong token) override { InPortBase::detachSender(token); }

  // BULKIO::data<T>::pushPacket (bulkio_port.hpp): the call as a packet
  // header, through the same upcall as scabench's own.
  void bulkioPush(const typename Traits::BulkioSeq& data, const BULKIO::PrecisionUTCTime& t, bool eos,
                  const char* streamID);

  std::unique_ptr<shm::RingReceiver> openRing(uint64_t token, const std::string& name, uint32_t onewayConcurrency,
                                              std::recursive_mutex* serialize) override {
    // The ring's threads take the same path as the ORB's, with the samples
    // lent from the ring until the upcall returns (a worker or a reorder
    // buffer copies them, as from a collocated caller).
    auto onPacket = [this](const shm::PacketFields& f, const void* samples, std::size_t bytes, bool twoway) {
      const PacketHeader h = headerOf(f);
      const auto n = CORBA::ULong(bytes / sizeof(T));
      const typename Traits::Seq view(n, n, static_cast<T*>(const_cast<void*>(samples)), false);
      upcall(h, view, twoway ? CallKind::Twoway : CallKind::Oneway);
    };
    return std::make_unique<shm::RingReceiver>(
        name, sizeof(T), onewayConcurrency, maxCallsSetting(), serialize, onPacket,
        [this](const std::string&) { refuse(Refusal::Sender); }, [this, token] { return releaserBusy(token); });
  }

  void startWorker() override {
    const std::vector<std::shared_ptr<InLink>> links = prepareChecks();
    const std::size_t depth = workerDepth();
    // A start without a worker (worker = 0, configured since the last
    // stop) hands packets to the handler: a queue an earlier start made is
    // closed, and a packet pushed into it would be lost.
    if (depth == 0) queue_.store(nullptr, std::memory_order_release);
    if (depth > 0 && !worker_.joinable()) {
      prepareResume(depth);
      auto queue = std::make_unique<BoundedQueue<Queued>>(depth);
      BoundedQueue<Queued>* worked = queue.get();
      worked->countInto(&records().header().workerQueued);
      queues_.push_back(std::move(queue));
      queue_.store(worked, std::memory_order_release);
      worker_ = std::thread([this, worked] {
        nameThisThread("sb-worker");
        workerLoop(*worked);
      });
    }
    if (resequencing() && reorders_.empty()) {
      // A reorder buffer per connection: each orders its own link sequences,
      // from where the connection stands.
      for (const auto& link : links) {
        auto r = std::make_unique<Reorder>(reorderCapacity(), reorderTimeout(), link->window->window(),
                                           link->window->prefix());
        link->typed.store(r.get());
        // A ring's receiving thread may put its wake-up off while this
        // buffer has work (releaserBusy), decided here once per start: not
        // with watermarks, whose count of held packets must see each packet
        // as it comes.
        shm::RingReceiver* ring = ringOf(link->token);
        if (ring && flowKind() != FlowKind::Watermarks) r->buffer.setRunningLow(kRingWakeLow, [ring] { ring->poke(); });
        r->releaser = std::thread([this, link, buffer = &r->buffer] {
          nameThisThread("sb-reorder");
          releaserLoop(link, *buffer);
        });
        reorders_.push_back(std::move(r));
      }
    }
  }
  void stopWorker() override {
    for (auto& r : reorders_) {
      r->buffer.close();
      r->releaser.join();
      publishReorderStats(r->buffer.stats());
      // Kept, closed: an upcall that got in just before the stop may still
      // hold it, and finds it refusing.
      retired_.push_back(std::move(r));
    }
    reorders_.clear();
    // No releaser is left to ask for more: a wake-up put off now would carry
    // into the next start, where nothing may ask.
    wakeRings();
    if (worker_.joinable()) {
      queue_.load(std::memory_order_acquire)->close();
      worker_.join();
    }
  }

 protected:
  PortableServer::Servant servant() override {
    if (protocol() == policy::Protocol::Bulkio) return &bulkioServant_;
    return this;
  }
  std::pair<std::size_t, std::size_t> queueFill() const override {
    const BoundedQueue<Queued>* queue = queue_.load(std::memory_order_acquire);
    if (!queue) return {0, 0};
    return {queue->fill(), queue->capacity()};
  }

 private:
  struct Queued {
    PacketHeader header;
    // The reorder buffer and the worker queue move a packet several times:
    // each move hands the samples' buffer over (port_types.hpp).
    MovableSeq<typename Traits::Seq> samples;
    uint64_t slot;
    CallKind call;  // how it came in: picks the worker queue's resume level
    std::shared_ptr<InLink> link;
  };
  struct Reorder {
    Reorder(std::size_t capacity, std::chrono::microseconds timeout, uint64_t window, uint64_t first)
        : buffer(capacity, timeout, window, first) {}
    Resequencer<Queued> buffer;
    std::thread releaser;
  };

  // Every call in (the ORB's or a ring's): refused while the component is
  // stopped, else counted and taken.
  void upcall(const PacketHeader& h, const typename Traits::Seq& data, CallKind call);
  // A call the port takes, arrived at `arrivedNs`: its checks, records and
  // hand-over (to the reorder buffer, the worker queue or the handler).
  void take(const PacketHeader& h, const typename Traits::Seq& data, CallKind call, int64_t arrivedNs);
  // Runs an upcall from the ORB in turn with the rings' threads where the
  // port needs it (upcallLock).
  template <class Body>
  void inTurn(Body&& body) {
    if (auto* lock = upcallLock()) {
      std::lock_guard one(*lock);
      body();
    } else {
      body();
    }
  }
  // Queues a packet for the worker; blocks while the queue is full.
  void enqueue(BoundedQueue<Queued>& queue, Queued&& item) {
    const std::size_t level = resumeLevel(item.call);
    queue.push(std::move(item), level);
  }
  static typename Traits::Seq takeSamples(const typename Traits::Seq& data);
  void process(InLink& link, const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot);
  void workerLoop(BoundedQueue<Queued>& queue);
  void releaserLoop(const std::shared_ptr<InLink>& link, Resequencer<Queued>& buffer);
  // Hands a packet on in order: to the worker queue, or to the handler.
  void release(Queued&& item);
  // Whether the connection's reorder buffer has more than kRingWakeLow
  // packets it can hand on one after another now (Resequencer::feederMayWait:
  // none behind a gap count): its releaser will ask the ring for more (poke)
  // before it runs out, so the ring's thread may put its wake-up off. Never
  // for a buffer not set up to ask (startWorker: no ring at the start, or
  // watermarks).
  bool releaserBusy(uint64_t token) const {
    const std::shared_ptr<InLink> link = linkOf(token);
    const auto* reorder = link ? static_cast<const Reorder*>(link->typed.load()) : nullptr;
    return reorder && reorder->buffer.feederMayWait();
  }
  // A reorder buffer fed by a ring asks for more at this many packets or
  // fewer: enough for its releaser to work on while the ring's thread wakes.
  static constexpr std::size_t kRingWakeLow = 2;

  Handler handler_;
  // The worker queue, made at a start with a worker and read by every call
  // and by watchers (queueFill) without a lock. A start with a worker makes
  // a new one; those it replaces are kept, closed, for the port's life
  // (queues_), so that a caller or a watcher that loaded one just before
  // never reads freed memory.
  std::atomic<BoundedQueue<Queued>*> queue_{nullptr};
  std::vector<std::unique_ptr<BoundedQueue<Queued>>> queues_;
  std::thread worker_;
  std::vector<std::unique_ptr<Reorder>> reorders_;
  std::vector<std::unique_ptr<Reorder>> retired_;  // closed at a stop
  bulkio::InServant<T, InPort<T>> bulkioServant_{*this};
};

// ---------------------------------------------------------- InPort<T> bodies

template <class T>
void InPort<T>::upcall(const PacketHeader& h, const typename Traits::Seq& data, CallKind call) {
  // Nothing is taken before start: the launcher starts receivers before their
  // senders, so such a packet is not the connection's (and there are no
  // records to write yet). Nor after stop: a stopped component neither
  // processes nor forwards.
  if (!running()) return refuse(Refusal::Sender);
  const int64_t now = monotonicNs();  // the call's one clock read: its count and its record
  countCall(data.length(), 8 * sizeof(T), now);
  take(h, data, call, now);
}

template <class T>
void InPort<T>::take(const PacketHeader& h, const typename Traits::Seq& data, CallKind call, int64_t arrivedNs) {
  const std::shared_ptr<InLink> link = linkOf(h.connection_token);
  if (h.end_of_stream ? !takeEndOfStream(link.get(), h) : !takePacket(link.get(), h, data.length())) return;
  if (!enterCall(*link, h)) return;
  countLatency(h, arrivedNs);
  // "Server threads" count the calls the port took: a refused call is over
  // in microseconds and does none of the stage's work.
  RecordLog& log = records();
  log.enterUpcall();
  struct Leave {
    InLink& link;
    RecordLog& log;
    ~Leave() {
      log.leaveUpcall();
      InPortBase::leaveCall(link);
    }
  } leave{*link, log};
  const uint32_t flags = recordFlags(link->number, h.stream_id);
  if (auto* reorder = static_cast<Reorder*>(link->typed.load())) {
    // File it under its link number; the releaser hands it on in order. The
    // record slot is claimed on acceptance, so dropped duplicates leave none.
    Queued item{h, h.end_of_stream ? typename Traits::Seq() : takeSamples(data), 0, call, link};
    const auto offer = reorder->buffer.offer(h.link_sequence, std::move(item), [&](Queued& q) {
      if (q.header.end_of_stream) return;
      q.slot = log.arrive(h.sequence_number, arrivedNs, flags);
      held(*link, +1);
      reorderHeld(+1);
    });
    if (offer == Resequencer<Queued>::Offer::Refused) refuse(Refusal::Sequence);
  } else if (h.end_of_stream) {
    if (auto* queue = queue_.load(std::memory_order_acquire))
      enqueue(*queue, Queued{h, {}, 0, call, link});
    else
      endOfStreamArrived(*link, h.link_sequence);
  } else {
    const uint64_t slot = log.arrive(h.sequence_number, arrivedNs, flags);
    held(*link, +1);
    if (auto* queue = queue_.load(std::memory_order_acquire))
      enqueue(*queue, Queued{h, takeSamples(data), slot, call, link});
    else
      process(*link, h, data.get_buffer(), data.length(), slot);
  }
}

template <class T>
void InPort<T>::bulkioPush(const typename Traits::BulkioSeq& data, const BULKIO::PrecisionUTCTime& t, bool eos,
                           const char* streamID) {
  // Refused before the streams hear of it: a stopped port opens no stream.
  if (!running()) return refuse(Refusal::Sender);
  // The call's one clock read: its count, its record's arrival, and the
  // bound T is judged against.
  const int64_t now = monotonicNs();
  countCall(data.length(), 8 * sizeof(T), now);
  const std::string name(streamID);
  if (data.length() > 0 || !eos) {
    // A T that is no send time leaves the packet without one: it is
    // delivered and counted, its latency and order not judged.
    const std::optional<int64_t> sent = bulkio::sendTime(t, now);
    const bulkio::Streams::Packet p = bulkioStreams().packet(name, sent);
    PacketHeader h{};
    h.stream_id = p.streamId;
    h.sequence_number = p.position;
    h.send_time_ns = sent ? uint64_t(*sent) : bulkio::kNoSendTime;
    h.end_of_stream = false;
    h.link_sequence = nextBulkioLink();
    h.connection_token = 0;
    // A remote call's buffer is handed over, a collocated caller's lent.
    const typename Traits::Seq samples =
        adoptSamples<typename Traits::Seq>(const_cast<typename Traits::BulkioSeq&>(data));
    inTurn([&] { take(h, samples, CallKind::Twoway, now); });
  }
  if (!eos) return;
  const bulkio::Streams::End end = bulkioStreams().end(name);
  if (!end.last) return;  // another stream is still open: the port's stream goes on
  // An end carries no samples to time: its T is not judged (BulkIO's own
  // ports end a stream at a disconnect with a T that is not set).
  PacketHeader h{};
  h.stream_id = end.streamId;
  h.send_time_ns = uint64_t(now);
  h.end_of_stream = true;
  h.link_sequence = nextBulkioLink();
  inTurn([&] { take(h, typename Traits::Seq(), CallKind::Twoway, now); });
}

template <class T>
void InPort<T>::releaserLoop(const std::shared_ptr<InLink>& link, Resequencer<Queued>& buffer) {
  // Link sequences given up on count as finished: for credits and for the end of stream.
  auto skipped = [&](uint64_t first, uint64_t count) { finished(*link, first, count); };
  while (auto item = buffer.next(skipped)) {
    if (!item->header.end_of_stream) reorderHeld(-1);  // counted as it was filed (upcall)
    release(std::move(*item));
  }
}

template <class T>
void InPort<T>::release(Queued&& item) {
  if (auto* queue = queue_.load(std::memory_order_acquire)) {
    // The releaser is one thread handing packets on in order: blocked on a
    // full queue, it resumes at the level a two-way caller gets (under
    // "auto": half the depth), whatever call brought the packet in, and then
    // refills a burst with one wake-up. The first free slot that "auto"
    // gives one-way callers keeps the ORB's pool threads from racing for the
    // slots and reordering; one thread cannot (docs/findings/handoff.md).
    queue->push(std::move(item), resumeLevel(CallKind::Twoway));
  } else if (item.header.end_of_stream) {
    endOfStreamArrived(*item.link, item.header.link_sequence);
  } else {
    process(*item.link, item.header, item.samples->get_buffer(), item.samples->length(), item.slot);
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
void InPort<T>::process(InLink& link, const PacketHeader& h, const T* samples, std::size_t count, uint64_t slot) {
  guarded([&] { handler_(PacketView<T>{h, samples, count}); });
  records().done(slot, monotonicNs());
  held(link, -1);
  finished(link, h.link_sequence);
}

template <class T>
void InPort<T>::workerLoop(BoundedQueue<Queued>& queue) {
  while (auto item = queue.pop()) {
    if (item->header.end_of_stream)
      endOfStreamArrived(*item->link, item->header.link_sequence);
    else
      process(*item->link, item->header, item->samples->get_buffer(), item->samples->length(), item->slot);
  }
}

}  // namespace scabench
