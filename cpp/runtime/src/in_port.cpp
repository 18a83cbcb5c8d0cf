#include "scabench/runtime/in_port.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scabench/runtime/component.hpp"

namespace scabench {

InPortBase::InPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  policy::declarePortProperties(owner_.properties(), name_, policy::Side::Provides);
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

void InPortBase::prepareFlow() {
  const policy::Flow flow = policy::parseFlow(owner_.properties().text(name_ + ".flow"));
  flow_ = flow.kind;
  flowLow_ = int64_t(flow.low);
  flowHigh_ = int64_t(flow.high);
  credits_ = flow.credits;
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
