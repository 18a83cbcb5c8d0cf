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

InPortBase::InPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  policy::declarePortProperties(owner_.properties(), name_, policy::Side::Provides);
  // Not a spec key: a bound on the ORB's threads in the port, the runtime's own choice.
  owner_.properties().declare(name_ + ".max_calls", kDefaultMaxCalls,
                              "calls from the connection's sender the port serves at once; one more is refused "
                              "and counted",
                              [](const PropertyValue& v) {
                                const int64_t n = std::get<int64_t>(v);
                                if (n < 1 || n > 100'000) throw std::invalid_argument("must be in [1, 100000]");
                              });
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

void InPortBase::prepareChecks() {
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
  if (!links_) {
    // The link window. A link sequence is ahead of the oldest unfinished one
    // only by packets the port has taken and not finished: in calls in
    // progress (max_calls), held in the reorder buffer (reorder_capacity),
    // queued for the worker (its depth); and under credits the sender has
    // at most w unacknowledged. A sender whose own calls overtake each other
    // on the way (several threads sending on one port) adds at most as many
    // again: hence twice the sum. Beyond it nothing legitimate arrives, and a
    // number there is refused before it is filed, acknowledged or waited for.
    const uint64_t inPort = uint64_t(maxCalls_) + (resequencing_ ? reorderCapacity() : 0) + workerDepth() +
                            (flow_ == FlowKind::Credits ? credits_ : 0);
    links_ = std::make_unique<LinkWindow>(2 * inPort);
  }
}

void InPortBase::attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr flow) {
  // Once the component has started, the launcher has connected everything:
  // a later attach could only take the connection from its sender.
  if (running()) {
    refuse(Refusal::Sender);
    throw CF::Port::OccupiedPort();
  }
  token_.store(token);
  if (!CORBA::is_nil(flow)) rememberSender(flow);
}

// What a port takes. Every check below is a comparison or a bitmap lookup:
// none allocates or waits, so a refused call leaves at once and holds no ORB
// thread. The content is judged first (length, link window), then the
// sender, so that a bad packet counts the same whoever sent it; a stranger's
// well-formed packet is refused as Sender.
bool InPortBase::takePacket(const PacketHeader& h, std::size_t samples) {
  const LinkWindow::Place place = links_->place(h.link_sequence);
  const bool own = h.connection_token == token_.load(std::memory_order_relaxed);
  if (packetLength_ != 0 && samples != packetLength_) {
    refuse(Refusal::Length);
    if (own) usedUp(h.link_sequence, place);
    return false;
  }
  if (place == LinkWindow::Place::Ahead) {
    refuse(Refusal::Sequence);
    return false;
  }
  if (!own) {
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

// End of stream counts only if it is the connection's own, the first, and in
// the window; it then fires once every link sequence before it is finished
// (endOfStreamArrived), so nothing the sender sent before it is cut off.
bool InPortBase::takeEndOfStream(const PacketHeader& h) {
  const bool own = h.connection_token == token_.load(std::memory_order_relaxed);
  if (!own || links_->place(h.link_sequence) != LinkWindow::Place::Inside || eosTaken_.exchange(true)) {
    refuse(Refusal::EndOfStream);
    return false;
  }
  return true;
}

bool InPortBase::enterCall(const PacketHeader& h) {
  // End of stream always gets in: there is one per connection (a second is
  // refused), so it cannot flood, and losing it would stall the run.
  if (calls_.fetch_add(1, std::memory_order_relaxed) < maxCalls_ || h.end_of_stream) return true;
  calls_.fetch_sub(1, std::memory_order_relaxed);
  refuse(Refusal::Threads);
  usedUp(h.link_sequence, links_->place(h.link_sequence));
  return false;
}

void InPortBase::usedUp(uint64_t link, LinkWindow::Place place) {
  if (!resequencing_ && place == LinkWindow::Place::Inside) finished(link);
}

void InPortBase::rememberSender(scabench::FlowControl_ptr sender) {
  // Open the connection back to the sender now, while nothing runs: the first
  // signal would otherwise pay for it, milliseconds in which a flooding sender
  // goes on sending.
  try {
    (void)sender->_non_existent();
  } catch (const CORBA::Exception&) {
  }
  std::lock_guard lock(flowMutex_);
  sender_ = scabench::FlowControl::_duplicate(sender);
}

void InPortBase::refuse(Refusal why) {
  refused_[std::size_t(why)].fetch_add(1, std::memory_order_relaxed);
  owner_.countRefusal(why);
}

void InPortBase::held(int64_t delta) {
  // Every packet passes here twice: the count and its peak are lock-free; the
  // lock is only for the watermarks' suspend/resume decision.
  const int64_t now = heldNow_.fetch_add(delta, std::memory_order_relaxed) + delta;
  RecordLog::raise(owner_.records().header().heldPeak, uint64_t(std::max<int64_t>(now, 0)));
  if (flow_ != FlowKind::Watermarks) return;
  bool suspend = false;
  uint64_t epoch = 0;
  scabench::FlowControl_var to;
  {
    std::lock_guard lock(flowMutex_);
    if (CORBA::is_nil(sender_)) return;
    const int64_t level = heldNow_.load(std::memory_order_relaxed);
    if (!suspended_ && level >= flowHigh_) {
      suspended_ = suspend = true;
      owner_.records().header().suspends.fetch_add(1);
    } else if (suspended_ && level <= flowLow_) {
      suspended_ = false;
    } else {
      return;
    }
    epoch = ++epoch_;
    to = scabench::FlowControl::_duplicate(sender_);
  }
  try {
    to->setSuspended(suspend, epoch);  // outside the lock: a oneway may still block on the socket
  } catch (const CORBA::Exception&) {
    // The sender is gone; the run's end or failure is reported elsewhere.
  }
}

void InPortBase::finished(uint64_t firstLink, uint64_t count) {
  const uint64_t prefix = links_->finish(firstLink, count);
  checkEndOfStream(prefix);
  if (flow_ != FlowKind::Credits) return;
  scabench::FlowControl_var to;
  {
    std::lock_guard lock(flowMutex_);
    if (prefix < lastAck_ + ackBatch_ || CORBA::is_nil(sender_)) return;
    lastAck_ = prefix;
    to = scabench::FlowControl::_duplicate(sender_);
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

void InPortBase::endOfStreamArrived(uint64_t link) {
  eosLink_.store(int64_t(link));
  checkEndOfStream(links_->prefix());
}

void InPortBase::checkEndOfStream(uint64_t prefix) {
  // One-way packets may overtake the end-of-stream marker; it only counts once
  // every link sequence before it is finished (processed, or given up on).
  const int64_t link = eosLink_.load();
  if (link >= 0 && prefix >= uint64_t(link) && !endFired_.exchange(true))
    guarded([this] { owner_.inPortReachedEndOfStream(); });
}

}  // namespace scabench
