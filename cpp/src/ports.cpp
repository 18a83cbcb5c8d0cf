#include <stdexcept>

#include "scabench/component.hpp"

namespace scabench {

CallKind parseCallKind(const std::string& text) {
  if (text == "twoway") return CallKind::Twoway;
  if (text == "oneway") return CallKind::Oneway;
  throw std::invalid_argument("call '" + text + "' is not one of: twoway, oneway");
}

SyncScope parseSyncScope(const std::string& text) {
  if (text == "none") return SyncScope::None;
  if (text == "transport") return SyncScope::Transport;
  if (text == "server") return SyncScope::Server;
  if (text == "target") return SyncScope::Target;
  throw std::invalid_argument("sync '" + text + "' is not one of: none, transport, server, target");
}

std::string describeException(const CORBA::Exception& ex) {
  std::string text = ex._name();
  if (auto* sys = CORBA::SystemException::_downcast(&ex)) {
    if (const char* minor = sys->NP_minorString()) text += std::string(" (") + minor + ")";
  }
  return text;
}

// ---------------------------------------------------------------- InPortBase

InPortBase::InPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  owner_.properties().declare(name_ + ".worker_depth", int64_t{0},
                              "0: the ORB thread processes the packet; d > 0: a worker thread does, "
                              "behind a queue of d packets that blocks the caller when full");
  owner_.properties().declare(name_ + ".dispatch", std::string("orb"),
                              "orb: the host ORB's threading; single: a SINGLE_THREAD_MODEL POA");
}

std::size_t InPortBase::workerDepth() const {
  const int64_t d = owner_.properties().integer(name_ + ".worker_depth");
  if (d < 0) throw std::invalid_argument(name_ + ".worker_depth must be >= 0");
  return std::size_t(d);
}

bool InPortBase::singleThreadDispatch() const {
  const std::string& d = owner_.properties().text(name_ + ".dispatch");
  if (d == "single") return true;
  if (d == "orb") return false;
  throw std::invalid_argument(name_ + ".dispatch '" + d + "' is not one of: orb, single");
}

CORBA::Object_ptr InPortBase::reference() {
  if (CORBA::is_nil(ref_)) {
    PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(singleThreadDispatch()));
    PortableServer::ObjectId_var id = poa->activate_object(servant());
    ref_ = poa->id_to_reference(id);
  }
  return CORBA::Object::_duplicate(ref_);
}

void InPortBase::guarded(const std::function<void()>& body) {
  try {
    body();
  } catch (const CORBA::Exception& ex) {
    owner_.fail("port " + name_ + ": forwarding failed: " + describeException(ex));
  } catch (const std::exception& ex) {
    owner_.fail("port " + name_ + ": " + ex.what());
  }
}

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

// --------------------------------------------------------------- OutPortBase

OutPortBase::OutPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  owner_.properties().declare(name_ + ".call", std::string("twoway"), "twoway or oneway");
  owner_.properties().declare(name_ + ".sync", std::string("transport"),
                              "one-way sync scope: none, transport, server or target");
  owner_.properties().declare(name_ + ".sync_none_depth", int64_t{1024},
                              "packets the sync=none client queue holds before the caller blocks");
}

CORBA::Object_ptr OutPortBase::reference() {
  if (CORBA::is_nil(ref_)) {
    PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(false));
    PortableServer::ObjectId_var id = poa->activate_object(this);
    ref_ = poa->id_to_reference(id);
  }
  return CORBA::Object::_duplicate(ref_);
}

CallKind OutPortBase::callKind() const { return parseCallKind(owner_.properties().text(name_ + ".call")); }
SyncScope OutPortBase::syncScope() const { return parseSyncScope(owner_.properties().text(name_ + ".sync")); }
std::size_t OutPortBase::syncNoneDepth() const {
  const int64_t d = owner_.properties().integer(name_ + ".sync_none_depth");
  if (d < 1) throw std::invalid_argument(name_ + ".sync_none_depth must be >= 1");
  return std::size_t(d);
}

void OutPortBase::connectPort(CORBA::Object_ptr connection, const char* connectionId) {
  if (connected()) throw CF::Port::OccupiedPort();
  if (CORBA::is_nil(connection)) throw CF::Port::InvalidPort(1, "nil connection");
  try {
    attach(connection);
  } catch (const std::invalid_argument& ex) {
    throw CF::Port::InvalidPort(2, ex.what());
  }
  connectionId_ = connectionId;
}

void OutPortBase::disconnectPort(const char* connectionId) {
  if (!connected() || connectionId_ != connectionId)
    throw CF::Port::InvalidPort(3, (std::string("no connection '") + connectionId + "' on port " + name_).c_str());
  detach();
  connectionId_.clear();
}

}  // namespace scabench
