#include "scabench/runtime/out_port.hpp"

#include <mutex>
#include <random>
#include <stdexcept>

#include "scabench/runtime/component.hpp"

namespace scabench {

OutPortBase::OutPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  policy::declarePortProperties(owner_.properties(), name_, policy::Side::Uses);
  // Not a spec key: the sync=none queue's depth is the runtime's own choice.
  owner_.properties()
      .declare(name_ + ".sync_none_depth", int64_t{1024},
               "packets the sync=none client queue holds before the caller blocks")
      .within(1, INT64_MAX);
  // Not spec keys: the runner picks a connection's transport from the run's
  // (a ring needs both ends in processes of the runtime on this machine).
  owner_.properties()
      .declare(name_ + ".transport", std::string("orb"),
               "how the connection's packets travel: orb (CORBA calls) or shm (a shared-memory ring between the two "
               "processes; CORBA for control only)")
      .oneOf({"orb", "shm"});
  owner_.properties()
      .declare(name_ + ".shm_bytes", int64_t(shm::kDefaultDataBytes),
               "bytes of the shared-memory ring's data area (transport shm): the most sample bytes in flight on the "
               "connection, and the largest packet")
      .within(int64_t(shm::kMinDataBytes), int64_t(shm::kMaxDataBytes));
}

bool OutPortBase::openGate() {
  const policy::Flow flow = policy::parseFlow(owner_.properties().text(name_ + ".flow"));
  if (flow.kind == FlowKind::None) return false;
  // An earlier gate may still be active in the POA: let it go rather than delete a live servant.
  (void)gate_.release();
  gate_ = std::make_unique<FlowGate>(flow.kind == FlowKind::Credits ? flow.credits : 0,
                                     [this] { owner_.countRefusal(Refusal::Credit); });
  return true;
}

uint64_t OutPortBase::drawToken() {
  // The kernel's entropy (std::random_device reads it on Linux): the token
  // is what a stranger would have to guess, so not a seeded generator.
  static std::mutex mutex;
  static std::random_device device;
  std::lock_guard lock(mutex);
  uint64_t token = 0;
  while (token == 0) token = (uint64_t(device()) << 32) ^ uint64_t(device());
  return token;
}

scabench::FlowControl_ptr OutPortBase::gateReference() {
  PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(false));
  PortableServer::ObjectId_var id = poa->activate_object(gate_.get());
  CORBA::Object_var obj = poa->id_to_reference(id);
  return scabench::FlowControl::_narrow(obj);
}

std::optional<uint64_t> OutPortBase::admit(std::atomic<uint64_t>& next) {
  RecordFileHeader& header = owner_.records().header();
  const std::optional<uint64_t> link = gate_->admit(next, [&header] { header.sendStalls.fetch_add(1); });
  if (!link) header.unsent.fetch_add(1);
  return link;
}

void OutPortBase::closeGate() {
  if (gate_) gate_->close();
}

void OutPortBase::halt() {
  if (gate_) gate_->halt();
}

void OutPortBase::resume() {
  if (gate_) gate_->resume();
}

CORBA::Object_ptr OutPortBase::reference() {
  if (CORBA::is_nil(ref_)) {
    PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(false));
    PortableServer::ObjectId_var id = poa->activate_object(this);
    ref_ = poa->id_to_reference(id);
  }
  return CORBA::Object::_duplicate(ref_);
}

CallKind OutPortBase::callKind() const { return policy::parseCallKind(owner_.properties().text(name_ + ".call")); }
SyncScope OutPortBase::syncScope() const { return policy::parseSyncScope(owner_.properties().text(name_ + ".sync")); }
std::size_t OutPortBase::syncNoneDepth() const {
  return std::size_t(owner_.properties().integer(name_ + ".sync_none_depth"));
}
bool OutPortBase::sharedMemory() const { return owner_.properties().text(name_ + ".transport") == "shm"; }
std::size_t OutPortBase::ringBytes() const { return std::size_t(owner_.properties().integer(name_ + ".shm_bytes")); }

void OutPortBase::connectPort(CORBA::Object_ptr connection, const char* connectionId) {
  if (connected()) throw CF::Port::OccupiedPort();
  if (CORBA::is_nil(connection)) throw CF::Port::InvalidPort(1, "nil connection");
  try {
    attach(connection);
  } catch (const std::exception& ex) {
    // A bad property, or a shared-memory ring the system would not make or
    // whose receiver is gone already.
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
