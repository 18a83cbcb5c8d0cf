#include "scabench/runtime/in_port.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scabench/runtime/component.hpp"

namespace scabench {

// The most calls from its connection's sender a port serves at once, unless
// configured. omniORB lends calls threads from a pool of at most 100 per
// process (maxServerThreadPoolSize), so no legitimate sender gets near it;
// but a connection's own dedicated thread is outside that pool, so a sender
// that opens many connections could put a thread per connection into the
// port. This caps it. Calls refused for another reason never take a slot:
// they are judged first, without waiting, so a stranger's flood cannot use
// up the slots the real sender needs.
constexpr int64_t kDefaultMaxCalls = 128;
// A bound on the setting, far above any sender's need, so that a typo cannot
// let a flood hold a hundred thousand ORB threads.
constexpr int64_t kMostMaxCalls = 100'000;

InPortBase::InPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  policy::declarePortProperties(owner_.properties(), name_, policy::Side::Provides);
  // Not a spec key: a bound on the ORB's threads in the port, the runtime's own choice.
  owner_.properties()
      .declare(name_ + ".max_calls", kDefaultMaxCalls,
               "calls from the connection's sender the port serves at once; one more is refused and counted")
      .within(1, kMostMaxCalls);
}

// The values were checked when they were configured (policy::check); what is
// left to check here is worker_resume against the depth.

bool InPortBase::resequencing() const { return owner_.properties().text(name_ + ".ordering") == "resequence"; }

std::size_t InPortBase::reorderCapacity() const {
  return std::size_t(owner_.properties().integer(name_ + ".reorder_capacity"));
}

std::chrono::microseconds InPortBase::reorderTimeout() const {
  const double ms = owner_.properties().real(name_ + ".reorder_timeout_ms");
  return std::chrono::microseconds(std::llround(ms * 1000));
}

std::vector<std::shared_ptr<InLink>> InPortBase::prepareChecks() {
  bulkioStreams_.reset();  // each start begins the port's stream anew
  const policy::Flow flow = policy::parseFlow(owner_.properties().text(name_ + ".flow"));
  flow_ = flow.kind;
  flowLow_ = int64_t(flow.low);
  flowHigh_ = int64_t(flow.high);
  credits_ = flow.credits;
  // Acknowledge a quarter window at a time: few signals, and the sender still
  // has three quarters of its window left while an acknowledgement travels.
  ackBatch_ = std::max<uint64_t>(1, credits_ / 4);
  packetLength_ = std::size_t(owner_.properties().integer(name_ + ".packet_length"));
  resequencing_ = resequencing();
  maxCalls_ = uint32_t(owner_.properties().integer(name_ + ".max_calls"));
  // The link window, per connection. A link sequence is ahead of the
  // connection's oldest unfinished one only by packets the port has taken
  // and not finished: in calls in progress (max_calls), held in the reorder
  // buffer (reorder_capacity), queued for the worker (its depth); and under
  // credits the sender has at most w unacknowledged. A sender whose own calls
  // overtake each other on the way (several threads sending on one port)
  // adds at most as many again: hence twice the sum. Beyond it nothing
  // legitimate arrives, and a number there is refused before it is filed,
  // acknowledged or waited for. (The worker queue is the port's, shared by
  // its connections: one connection may fill all of it.)
  const uint64_t window = 2 * (uint64_t(maxCalls_) + (resequencing_ ? reorderCapacity() : 0) + workerDepth() +
                               (flow_ == FlowKind::Credits ? credits_ : 0));
  std::vector<std::shared_ptr<InLink>> live;
  std::vector<std::pair<std::shared_ptr<InLink>, uint64_t>> usedUpMarkers;
  {
    std::lock_guard lock(linksMutex_);
    // Detached connections go now; a packet of theirs still queued keeps its
    // own reference. A port nobody attached to takes token 0, as it always
    // has: one implicit connection.
    std::erase_if(links_, [](const auto& link) { return link->detached.load(); });
    if (links_.empty() && required_) {
      // A BulkIO port is one connection, whoever pushes into it: numbered
      // as an attach would be, so that its records name it.
      const bool bulkio = protocol() == policy::Protocol::Bulkio;
      if (bulkio) numbers_.push_back(owner_.nextInConnection());
      links_.push_back(std::make_shared<InLink>(0, bulkio ? numbers_.back() : 0, true));
    }
    for (auto& link : links_) {
      // A connection keeps its window over a restart, as its sender goes on
      // numbering; one attached since the last start gets its own.
      if (!link->window) link->window = std::make_unique<LinkWindow>(window);
      // Re-armed: each start begins a new stream on every connection. A
      // marker that came through but did not end its stream (a packet
      // before it never came) has used its number up.
      link->pending.store(false);
      if (const int64_t marker = link->eosLink.exchange(-1); marker >= 0) usedUpMarkers.emplace_back(link, marker);
      live.push_back(link);
    }
    std::lock_guard eos(eosMutex_);
    for (auto& link : links_) link->ended = 0;
    rounds_ = 0;
  }
  for (auto& [link, marker] : usedUpMarkers) finished(*link, marker);
  return live;
}

std::shared_ptr<InLink> InPortBase::linkOf(uint64_t token) const {
  std::lock_guard lock(linksMutex_);
  for (const auto& link : links_)
    if (link->token == token && link->window && !link->detached.load(std::memory_order_relaxed)) return link;
  return nullptr;
}

bool InPortBase::takesPart() const {
  std::lock_guard lock(linksMutex_);
  return required_ || !links_.empty();
}

std::vector<uint32_t> InPortBase::connectionNumbers() const {
  std::lock_guard lock(linksMutex_);
  return numbers_;
}

void InPortBase::attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow) {
  // While the component runs, its connections are set: a new one could only
  // be a stranger's, whose stream would never end and so would hold back the
  // port's end of stream. Stopped (before the first start, or after a stop),
  // each attach is one more connection (fan-in).
  if (running()) {
    refuse(Refusal::Sender);
    throw CF::Port::OccupiedPort();
  }
  scabench::FlowControl_var sender;
  if (!CORBA::is_nil(flow)) {
    // Open the connection back to the sender now, while nothing runs: the
    // first signal would otherwise pay for it, milliseconds in which a
    // flooding sender goes on sending.
    try {
      (void)flow->_non_existent();
    } catch (const CORBA::Exception&) {
    }
    sender = scabench::FlowControl::_duplicate(flow);
  }
  std::lock_guard lock(linksMutex_);
  // A token attached again replaces its connection (a new stream space); the
  // implicit connection of a port nobody attached to goes once someone does.
  std::erase_if(links_, [&](const auto& l) { return l->token == token || l->implicit; });
  numbers_.push_back(owner_.nextInConnection());
  links_.push_back(std::make_shared<InLink>(token, numbers_.back()));
  links_.back()->sender = sender._retn();
}

void InPortBase::detachSender(CORBA::ULongLong token) {
  // Only the sender knows its token, so only it can end its connection; at
  // any time, as SCA's disconnectPort may come at any time. Its packets are
  // refused from then on, and the port no longer waits for its end of stream.
  const std::shared_ptr<InLink> link = linkOf(token);
  if (!link || link->implicit) {
    refuse(Refusal::Sender);
    return;
  }
  link->detached.store(true);
  closeRing(token);
  if (running()) checkRound();
}

namespace {

// The lock a host's single-dispatch ports' upcalls hold once a ring feeds
// one: the host serves them all from one SINGLE_THREAD_MODEL POA, so their
// upcalls never overlap, whichever port (createPortPoa, component.hpp).
// Recursive: a collocated chain of single ports calls on, on the same thread.
std::recursive_mutex& singleThreadLock() {
  static std::recursive_mutex lock;
  return lock;
}

// One-way calls of one connection that the ORB would serve at once under
// this dispatch: pool, omniORB's default of 100 per connection
// (maxServerThreadPerConnection); pool:N, N; serial and single, one.
uint32_t onewayCallsAtOnce(const std::string& dispatch) {
  const policy::Key& key = policy::key("dispatch");
  const policy::FormMatch m = policy::matchForm(key, dispatch);
  const std::string& form = key.forms[m.form];
  if (form == "pool") return 100;
  if (form == "pool:N") return uint32_t(m.args.at("N"));
  return 1;
}

}  // namespace

void InPortBase::attachSharedRing(CORBA::ULongLong token, scabench::FlowControl_ptr flow, const char* ring) {
  if (running()) {
    refuse(Refusal::Sender);
    throw CF::Port::OccupiedPort();
  }
  const std::string dispatch = owner_.properties().text(name_ + ".dispatch");
  const bool single = policy::singleThreadDispatch(dispatch);
  std::unique_ptr<shm::RingReceiver> receiver;
  try {
    receiver = openRing(token, ring, onewayCallsAtOnce(dispatch), single ? &singleThreadLock() : nullptr);
  } catch (const std::exception& ex) {
    throw CF::Port::InvalidPort(4, ("port " + name_ + ": " + ex.what()).c_str());
  }
  if (single) upcallLock_.store(&singleThreadLock(), std::memory_order_release);
  attachSender(token, flow);
  std::lock_guard lock(ringsMutex_);
  for (auto& [t, r] : rings_)
    if (t == token) {  // the token attached again: its old ring goes with its old connection
      r->close();
      closedRings_.push_back(std::move(r));
      r = std::move(receiver);
      return;
    }
  rings_.emplace_back(token, std::move(receiver));
}

uint32_t InPortBase::maxCallsSetting() const { return uint32_t(owner_.properties().integer(name_ + ".max_calls")); }

shm::RingReceiver* InPortBase::ringOf(uint64_t token) {
  std::lock_guard lock(ringsMutex_);
  for (auto& [t, r] : rings_)
    if (t == token) return r.get();
  return nullptr;
}

void InPortBase::wakeRings() {
  std::lock_guard lock(ringsMutex_);
  for (auto& [t, r] : rings_) r->poke();
}

void InPortBase::closeRing(uint64_t token) {
  std::lock_guard lock(ringsMutex_);
  for (auto it = rings_.begin(); it != rings_.end(); ++it)
    if (it->first == token) {
      it->second->close();  // joined at shutRings: a thread may be in an upcall now
      closedRings_.push_back(std::move(it->second));
      rings_.erase(it);
      return;
    }
}

void InPortBase::shutRings() {
  std::vector<std::unique_ptr<shm::RingReceiver>> all;
  {
    std::lock_guard lock(ringsMutex_);
    for (auto& [t, r] : rings_) all.push_back(std::move(r));
    rings_.clear();
    for (auto& r : closedRings_) all.push_back(std::move(r));
    closedRings_.clear();
  }
  for (auto& r : all) r->close();
  // A receiving thread may be in an upcall waiting on the worker queue or a
  // reorder buffer: stopping them lets it go.
  stopWorker();
  all.clear();  // joins each ring's threads
}

// What a port takes. Every check below is a comparison or a bitmap lookup:
// none allocates or waits, so a refused call leaves at once and holds no ORB
// thread. The content is judged first (length, link window), then the
// sender, so that a bad packet counts the same whoever sent it; a stranger's
// well-formed packet is refused as Sender. A stranger has no window of its
// own: its number is out of sequence if it lies beyond every connection's.
bool InPortBase::takePacket(InLink* link, const PacketHeader& h, std::size_t samples) {
  const LinkWindow::Place place = link ? link->window->place(h.link_sequence) : strangerPlace(h.link_sequence);
  if (packetLength_ != 0 && samples != packetLength_) {
    refuse(Refusal::Length);
    if (link) usedUp(*link, h.link_sequence, place);
    return false;
  }
  if (place == LinkWindow::Place::Ahead) {
    refuse(Refusal::Sequence);
    return false;
  }
  if (!link) {
    refuse(Refusal::Sender);
    return false;
  }
  if (place == LinkWindow::Place::Behind && !resequencing_) {
    // Finished before: a duplicate, dropped and counted as a reorder buffer
    // does (which tells duplicates from late packets itself).
    owner_.records().header().duplicates.fetch_add(1);
    return false;
  }
  return true;
}

LinkWindow::Place InPortBase::strangerPlace(uint64_t n) const {
  std::lock_guard lock(linksMutex_);
  for (const auto& l : links_)
    if (l->window && l->window->place(n) != LinkWindow::Place::Ahead) return LinkWindow::Place::Inside;
  return LinkWindow::Place::Ahead;
}

// End of stream counts only if it is the connection's own, the first of its
// stream, and in its window; it then ends the connection's stream once every
// link sequence before it is finished (endOfStreamArrived), so nothing the
// sender sent before it is cut off.
bool InPortBase::takeEndOfStream(InLink* link, const PacketHeader& h) {
  if (!link || link->window->place(h.link_sequence) != LinkWindow::Place::Inside || link->pending.exchange(true)) {
    refuse(Refusal::EndOfStream);
    return false;
  }
  link->eosStream.store(h.stream_id);  // the stream it ends: the component's end of stream carries it on
  return true;
}

bool InPortBase::enterCall(InLink& link, const PacketHeader& h) {
  // End of stream always gets in: there is one per stream (a second is
  // refused), so it cannot flood, and losing it would stall the run.
  if (link.calls.fetch_add(1, std::memory_order_relaxed) < maxCalls_ || h.end_of_stream) return true;
  link.calls.fetch_sub(1, std::memory_order_relaxed);
  refuse(Refusal::Threads);
  usedUp(link, h.link_sequence, link.window->place(h.link_sequence));
  return false;
}

void InPortBase::usedUp(InLink& link, uint64_t n, LinkWindow::Place place) {
  if (!resequencing_ && place == LinkWindow::Place::Inside) finished(link, n);
}

void InPortBase::refuse(Refusal why) {
  refused_[std::size_t(why)].fetch_add(1, std::memory_order_relaxed);
  owner_.countRefusal(why);
}

void InPortBase::held(InLink& link, int64_t delta) {
  // Every packet passes here twice: the counts and the port's peak are
  // lock-free; the lock is only for the watermarks' suspend/resume decision.
  const int64_t now = heldNow_.fetch_add(delta, std::memory_order_relaxed) + delta;
  RecordLog::raise(owner_.records().header().heldPeak, uint64_t(std::max<int64_t>(now, 0)));
  link.held.fetch_add(delta, std::memory_order_relaxed);
  if (flow_ != FlowKind::Watermarks) return;
  bool suspend = false;
  uint64_t epoch = 0;
  scabench::FlowControl_var to;
  {
    // Each sender hears of its own connection's packets: one sender's burst
    // does not suspend the others.
    std::lock_guard lock(flowMutex_);
    if (CORBA::is_nil(link.sender)) return;
    const int64_t level = link.held.load(std::memory_order_relaxed);
    if (!link.suspended && level >= flowHigh_) {
      link.suspended = suspend = true;
      owner_.records().header().suspends.fetch_add(1);
    } else if (link.suspended && level <= flowLow_) {
      link.suspended = false;
    } else {
      return;
    }
    epoch = ++link.epoch;
    to = scabench::FlowControl::_duplicate(link.sender);
  }
  try {
    to->setSuspended(suspend, epoch);  // outside the lock: a oneway may still block on the socket
  } catch (const CORBA::Exception&) {
    // The sender is gone; the run's end or failure is reported elsewhere.
  }
}

void InPortBase::finished(InLink& link, uint64_t firstLink, uint64_t count) {
  const uint64_t prefix = link.window->finish(firstLink, count);
  checkEndOfStream(link, prefix);
  if (flow_ != FlowKind::Credits) return;
  scabench::FlowControl_var to;
  {
    std::lock_guard lock(flowMutex_);
    if (prefix < link.lastAck + ackBatch_ || CORBA::is_nil(link.sender)) return;
    link.lastAck = prefix;
    to = scabench::FlowControl::_duplicate(link.sender);
  }
  try {
    to->acknowledge(prefix);
  } catch (const CORBA::Exception&) {
  }
}

void InPortBase::publishReorderStats(const ResequencerStats& stats) {
  RecordFileHeader& h = owner_.records().header();
  RecordLog::raise(h.reorderPeak, stats.peakHeld);
  h.skipped.fetch_add(stats.skipped);
  h.late.fetch_add(stats.late);
  h.duplicates.fetch_add(stats.duplicates);
}

std::size_t InPortBase::workerDepth() const { return std::size_t(owner_.properties().integer(name_ + ".worker")); }

void InPortBase::prepareResume(std::size_t depth) {
  try {
    const policy::WorkerResume resume(owner_.properties().text(name_ + ".worker_resume"), depth);
    resume_ = {resume.levelFor(CallKind::Twoway), resume.levelFor(CallKind::Oneway)};
  } catch (const std::invalid_argument& ex) {
    throw std::invalid_argument(name_ + ": " + ex.what());
  }
}

bool InPortBase::singleThreadDispatch() const {
  return policy::singleThreadDispatch(owner_.properties().text(name_ + ".dispatch"));
}

RecordLog& InPortBase::records() { return owner_.records(); }

policy::Protocol InPortBase::protocol() const {
  return policy::parseProtocol(owner_.properties().text(name_ + ".protocol"));
}

void InPortBase::countCall(std::size_t elements, std::size_t bitsPerElement, int64_t arrivedNs) {
  const auto [queued, depth] = queueFill();
  traffic_.count(elements, bitsPerElement, arrivedNs, depth ? uint64_t(100 * queued / depth) : 0);
}

BULKIO::PortUsageType InPortBase::bulkioState() const {
  const auto [queued, depth] = queueFill();
  if (depth > 0 && queued >= depth) return BULKIO::BUSY;  // the next pushPacket would wait
  return bulkioStreams_.anyOpen() ? BULKIO::ACTIVE : BULKIO::IDLE;
}

BULKIO::PortStatistics InPortBase::bulkioStatistics() const {
  // Beside BulkIO's figures, keywords a watcher of scabench's ports reads
  // (scabench top): the packets its worker queue and its reorder buffers
  // hold now, what it refused from peers (all reasons together), the
  // latency so far, and its process's CPU and threads.
  uint64_t refused = 0;
  for (const auto& count : refused_) refused += count.load(std::memory_order_relaxed);
  std::map<std::string, uint64_t> extra = bulkio::processCounts();
  extra.insert({{"t_backwards", bulkioStreams_.backwards()},
                {"t_invalid", bulkioStreams_.invalidTimes()},
                {"queued", queueFill().first},
                {"reorder_held", uint64_t(std::max<int64_t>(reorderHeld_.load(std::memory_order_relaxed), 0))},
                {"refused", refused}});
  // The latency so far, send to arrival here: its quantiles at bin
  // resolution (the upper edge of their bin), worked out now, not per packet.
  const LatencyHistogram::Summary latency = latency_.summary();
  extra["latency_count"] = latency.count;
  if (latency.count > 0)
    extra.insert({{"latency_p50_ns", uint64_t(latency.p50Ns)},
                  {"latency_p99_ns", uint64_t(latency.p99Ns)},
                  {"latency_max_ns", uint64_t(latency.maxNs)}});
  return bulkio::portStatistics(name_, traffic_, bulkioStreams_.open(), extra);
}
void InPortBase::bulkioPushSRI(const BULKIO::StreamSRI& sri) {
  if (running()) bulkioStreams_.pushSRI(sri);
}

bool InPortBase::running() const { return owner_.running(); }

CORBA::Object_ptr InPortBase::reference() {
  if (CORBA::is_nil(ref_)) {
    PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(singleThreadDispatch()));
    PortableServer::ObjectId_var id = poa->activate_object(servant());
    ref_ = poa->id_to_reference(id);
  }
  return CORBA::Object::_duplicate(ref_);
}

void InPortBase::failed(const CORBA::Exception& ex) {
  owner_.fail("port " + name_ + ": forwarding failed: " + describeException(ex));
}

void InPortBase::failed(const std::exception& ex) { owner_.fail("port " + name_ + ": " + ex.what()); }

void InPortBase::endOfStreamArrived(InLink& link, uint64_t eosLink) {
  link.eosLink.store(int64_t(eosLink));
  checkEndOfStream(link, link.window->prefix());
}

void InPortBase::checkEndOfStream(InLink& link, uint64_t prefix) {
  // One-way packets may overtake the end-of-stream marker; it only counts once
  // every link sequence before it is finished (processed, or given up on).
  int64_t eos = link.eosLink.load();
  if (eos < 0 || prefix < uint64_t(eos) || !link.eosLink.compare_exchange_strong(eos, -1)) return;
  {
    std::lock_guard lock(eosMutex_);
    ++link.ended;
    lastEndedStream_ = link.eosStream.load();
  }
  // The connection's stream has ended, and its next may begin. The marker's
  // own number is finished too, so that the window (and the credits) move on
  // to the next stream's packets.
  link.pending.store(false);
  finished(link, uint64_t(eos));
  checkRound();
}

void InPortBase::checkRound() {
  // The port's stream ends once every connection's has: a round is over when
  // each live connection has ended one stream more than the rounds before.
  for (;;) {
    uint32_t streamId = 0;
    {
      std::lock_guard links(linksMutex_);
      std::lock_guard lock(eosMutex_);
      bool any = false, all = true;
      for (const auto& l : links_) {
        if (l->detached.load() || !l->window) continue;
        any = true;
        all = all && l->ended > rounds_;
      }
      if (!any || !all) return;
      ++rounds_;
      streamId = lastEndedStream_;
    }
    guarded([this, streamId] { owner_.inPortReachedEndOfStream(name_, streamId); });
  }
}

}  // namespace scabench
