#include "scabench/runtime/in_port.hpp"

#include <algorithm>
#include <stdexcept>

#include "scabench/runtime/component.hpp"

namespace scabench {

InPortBase::InPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  owner_.properties().declare(name_ + ".worker_depth", int64_t{0},
                              "0: the ORB thread processes the packet; d > 0: a worker thread does, "
                              "behind a queue of d packets that blocks the caller when full");
  owner_.properties().declare(name_ + ".worker_resume", int64_t{-1},
                              "a caller blocked on the full worker queue resumes once it holds this many "
                              "packets (0 <= r < d); -1: half the depth");
  owner_.properties().declare(name_ + ".dispatch", std::string("orb"),
                              "orb: the host ORB's threading; single: a SINGLE_THREAD_MODEL POA");
  owner_.properties().declare(name_ + ".ordering", std::string("arrival"),
                              "arrival: as the ORB delivers; resequence: back in the sender's link order");
  owner_.properties().declare(name_ + ".reorder_capacity", int64_t{64}, "packets the reorder buffer holds");
  owner_.properties().declare(name_ + ".reorder_timeout_us", int64_t{50000},
                              "how long a gap in the link order is waited for before it is skipped");
  owner_.properties().declare(name_ + ".flow", std::string("none"), "flow control: none, watermarks or credits");
  owner_.properties().declare(name_ + ".flow_low", int64_t{0}, "watermarks: resume the sender at this many held");
  owner_.properties().declare(name_ + ".flow_high", int64_t{0}, "watermarks: suspend the sender at this many held");
  owner_.properties().declare(name_ + ".credits", int64_t{0}, "credits: packets the sender may have unacknowledged");
}

bool InPortBase::resequencing() const {
  const std::string& o = owner_.properties().text(name_ + ".ordering");
  if (o == "resequence") return true;
  if (o == "arrival") return false;
  throw std::invalid_argument(name_ + ".ordering '" + o + "' is not one of: arrival, resequence");
}

std::size_t InPortBase::reorderCapacity() const {
  const int64_t c = owner_.properties().integer(name_ + ".reorder_capacity");
  if (c < 1) throw std::invalid_argument(name_ + ".reorder_capacity must be >= 1");
  return std::size_t(c);
}

std::chrono::microseconds InPortBase::reorderTimeout() const {
  const int64_t t = owner_.properties().integer(name_ + ".reorder_timeout_us");
  if (t < 0) throw std::invalid_argument(name_ + ".reorder_timeout_us must be >= 0");
  return std::chrono::microseconds(t);
}

void InPortBase::prepareFlow() {
  flow_ = parseFlowKind(owner_.properties().text(name_ + ".flow"));
  flowLow_ = owner_.properties().integer(name_ + ".flow_low");
  flowHigh_ = owner_.properties().integer(name_ + ".flow_high");
  const int64_t credits = owner_.properties().integer(name_ + ".credits");
  if (flow_ == FlowKind::Watermarks && !(0 <= flowLow_ && flowLow_ < flowHigh_))
    throw std::invalid_argument(name_ + ": watermarks need 0 <= flow_low < flow_high");
  if (flow_ == FlowKind::Credits && credits < 1) throw std::invalid_argument(name_ + ".credits must be >= 1");
  credits_ = uint64_t(std::max<int64_t>(credits, 0));
  // Acknowledge a quarter window at a time: few signals, and the sender still
  // has three quarters of its window left while an acknowledgement travels.
  ackBatch_ = std::max<uint64_t>(1, credits_ / 4);
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
  if (flow_ != FlowKind::Credits) return;
  const uint64_t prefix = acks_.finish(firstLink, count);
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

void InPortBase::packetsSkipped(uint64_t count) {
  delivered_.fetch_add(count);
  checkEndOfStream();
}

void InPortBase::publishReorderStats(const ResequencerStats& stats) {
  RecordFileHeader& h = owner_.records().header();
  RecordLog::raise(h.reorderPeak, stats.peakHeld);
  h.skipped.fetch_add(stats.skipped);
  h.late.fetch_add(stats.late);
  h.duplicates.fetch_add(stats.duplicates);
}

std::size_t InPortBase::workerDepth() const {
  const int64_t d = owner_.properties().integer(name_ + ".worker_depth");
  if (d < 0) throw std::invalid_argument(name_ + ".worker_depth must be >= 0");
  return std::size_t(d);
}

std::size_t InPortBase::workerResume(std::size_t depth) const {
  const int64_t r = owner_.properties().integer(name_ + ".worker_resume");
  if (r == -1) return depth / 2;
  if (r < 0 || std::size_t(r) >= depth)
    throw std::invalid_argument(name_ + ".worker_resume must be -1 (half the depth) or in [0, " +
                                std::to_string(depth) + ")");
  return std::size_t(r);
}

bool InPortBase::singleThreadDispatch() const {
  const std::string& d = owner_.properties().text(name_ + ".dispatch");
  if (d == "single") return true;
  if (d == "orb") return false;
  throw std::invalid_argument(name_ + ".dispatch '" + d + "' is not one of: orb, single");
}

RecordLog& InPortBase::records() { return owner_.records(); }

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

void InPortBase::endOfStreamArrived(uint64_t announcedCount) {
  announced_.store(int64_t(announcedCount));
  checkEndOfStream();
}

void InPortBase::packetDelivered() {
  delivered_.fetch_add(1);
  checkEndOfStream();
}

void InPortBase::checkEndOfStream() {
  const int64_t announced = announced_.load();
  // One-way packets may overtake the end-of-stream marker; it only counts once
  // every packet it announced has been delivered.
  if (announced >= 0 && delivered_.load() >= uint64_t(announced) && !endFired_.exchange(true))
    guarded([this] { owner_.inPortReachedEndOfStream(); });
}

}  // namespace scabench
