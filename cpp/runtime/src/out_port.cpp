#include "scabench/runtime/out_port.hpp"

#include <stdexcept>

#include "scabench/runtime/component.hpp"

namespace scabench {

OutPortBase::OutPortBase(Component& owner, std::string name) : owner_(owner), name_(std::move(name)) {
  owner_.properties().declare(name_ + ".call", std::string("twoway"), "twoway or oneway");
  owner_.properties().declare(name_ + ".sync", std::string("transport"),
                              "one-way sync scope: none, transport, server or target");
  owner_.properties().declare(name_ + ".sync_none_depth", int64_t{1024},
                              "packets the sync=none client queue holds before the caller blocks");
  owner_.properties().declare(name_ + ".flow", std::string("none"), "flow control: none, watermarks or credits");
  owner_.properties().declare(name_ + ".credits", int64_t{0}, "credits: packets that may be unacknowledged");
}

bool OutPortBase::openGate() {
  const FlowKind flow = parseFlowKind(owner_.properties().text(name_ + ".flow"));
  if (flow == FlowKind::None) return false;
  const int64_t credits = owner_.properties().integer(name_ + ".credits");
  if (flow == FlowKind::Credits && credits < 1) throw std::invalid_argument(name_ + ".credits must be >= 1");
  // An earlier gate may still be active in the POA: let it go rather than delete a live servant.
  (void)gate_.release();
  gate_ = std::make_unique<FlowGate>(flow == FlowKind::Credits ? uint64_t(credits) : 0);
  return true;
}

scabench::FlowControl_ptr OutPortBase::gateReference() {
  PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(false));
  PortableServer::ObjectId_var id = poa->activate_object(gate_.get());
  CORBA::Object_var obj = poa->id_to_reference(id);
  return scabench::FlowControl::_narrow(obj);
}

bool OutPortBase::admit(uint64_t linkSequence) {
  const uint64_t before = gate_->stalls();
  const bool ok = gate_->admit(linkSequence);
  if (gate_->stalls() != before) owner_.records().header().sendStalls.fetch_add(1);
  return ok;
}

void OutPortBase::closeGate() {
  if (gate_) gate_->close();
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
