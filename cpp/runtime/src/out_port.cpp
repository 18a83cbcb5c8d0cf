#include "scabench/runtime/out_port.hpp"

#include <algorithm>
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

FlowGate* OutPortBase::openGate() {
  const policy::Flow flow = policy::parseFlow(owner_.properties().text(name_ + ".flow"));
  if (flow.kind == FlowKind::None) return nullptr;
  return new FlowGate(flow.kind == FlowKind::Credits ? flow.credits : 0,
                      [this] { owner_.countRefusal(Refusal::Credit); });
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

scabench::FlowControl_ptr OutPortBase::gateReference(FlowGate* gate) {
  PortableServer::POA_var poa = PortableServer::POA::_duplicate(owner_.host().portPoa(false));
  PortableServer::ObjectId_var id = poa->activate_object(gate);
  CORBA::Object_var obj = poa->id_to_reference(id);
  return scabench::FlowControl::_narrow(obj);
}

std::optional<uint64_t> OutPortBase::admit(Connection& connection) {
  RecordFileHeader& header = owner_.records().header();
  const std::optional<uint64_t> link =
      connection.gate->admit(connection.nextLink, [&header] { header.sendStalls.fetch_add(1); });
  if (!link) countUnsent(connection);
  return link;
}

void OutPortBase::countUnsent(Connection& connection) {
  owner_.records().header().unsent.fetch_add(1);
  connection.unsent.fetch_add(1, std::memory_order_relaxed);
}

void OutPortBase::failFromSender(const std::string& what) { owner_.fail("port " + name_ + ", " + what); }

bool OutPortBase::connected() const {
  std::lock_guard lock(connectMutex_);
  return !live_.empty();
}

void OutPortBase::halt() {
  std::lock_guard lock(connectMutex_);
  for (const auto& c : live_)
    if (c->gate) c->gate->halt();
}

void OutPortBase::resume() {
  std::lock_guard lock(connectMutex_);
  for (const auto& c : live_) {
    if (c->gate) c->gate->resume();
    countGauges(*c);
  }
}

void OutPortBase::countGauges(Connection& c) {
  RecordFileHeader& h = owner_.records().header();
  if (c.gate) c.gate->countInto(&h.creditsOutstanding);
  if (c.ring) c.ring->countInto(&h.ringDepth);
}

std::vector<UsesConnectionCounts> OutPortBase::connectionCounts() const {
  std::lock_guard lock(connectMutex_);
  std::vector<UsesConnectionCounts> all;
  for (const auto& c : history_)
    all.push_back({name_, c->id, fanoutName(c->fanout), policy::protocolName(c->protocol), c->sent.load(),
                   c->dropped.load(), c->unsent.load(), c->queuePeak.load(), c->blockedNs.load()});
  return all;
}

const char* OutPortBase::fanoutName(Fanout f) {
  return f == Fanout::Parallel ? "parallel" : f == Fanout::Drop ? "drop" : "sequential";
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
policy::Protocol OutPortBase::protocol() const {
  return policy::parseProtocol(owner_.properties().text(name_ + ".protocol"));
}

policy::Protocol OutPortBase::protocolWith(CORBA::Object_ptr peer, const char* bulkioRepid,
                                           const char* typeName) const {
  // One call to the peer: a scabench port is no BulkIO port, so "scabench"
  // is the answer wherever the peer is not one.
  const bool bulkioPeer = peer->_is_a(bulkioRepid);
  if (protocol() == policy::Protocol::Bulkio && !bulkioPeer)
    throw CF::Port::InvalidPort(1, ("port " + name_ + " has protocol bulkio, and the peer is not a BULKIO data" +
                                    std::string(typeName) + " port (" + bulkioRepid + ")")
                                       .c_str());
  if (!bulkioPeer) return policy::Protocol::Scabench;
  PropertyBag& p = owner_.properties();
  std::string refused = policy::protocolConflict(
      policy::Protocol::Bulkio, {{"call", p.text(name_ + ".call")}, {"flow", p.text(name_ + ".flow")}});
  if (refused.empty() && sharedMemory())
    refused = "transport = 'shm' cannot go with protocol = 'bulkio': BulkIO's packets travel in CORBA calls";
  if (!refused.empty()) throw CF::Port::InvalidPort(2, ("port " + name_ + ": " + refused).c_str());
  return policy::Protocol::Bulkio;
}
std::size_t OutPortBase::ringBytes() const { return std::size_t(owner_.properties().integer(name_ + ".shm_bytes")); }
Fanout OutPortBase::fanout() const {
  const std::string f = owner_.properties().text(name_ + ".fanout");
  return f == "parallel" ? Fanout::Parallel : f == "drop" ? Fanout::Drop : Fanout::Sequential;
}
std::size_t OutPortBase::fanoutDepth() const {
  return std::size_t(owner_.properties().integer(name_ + ".fanout_depth"));
}

void OutPortBase::connectPort(CORBA::Object_ptr connection, const char* connectionId) {
  std::lock_guard lock(connectMutex_);
  for (const auto& c : live_)
    if (c->id == connectionId) throw CF::Port::OccupiedPort();
  if (CORBA::is_nil(connection)) throw CF::Port::InvalidPort(1, "nil connection");
  std::shared_ptr<Connection> made;
  try {
    made = attach(connection, connectionId);
  } catch (const std::exception& ex) {
    // A bad property, or a shared-memory ring the system would not make or
    // whose receiver is gone already.
    throw CF::Port::InvalidPort(2, ex.what());
  }
  made->peer = CORBA::Object::_duplicate(connection);
  if (owner_.running()) countGauges(*made);  // else at the next start (resume)
  live_.push_back(made);
  history_.push_back(std::move(made));
}

ExtendedCF::UsesConnectionSequence* OutPortBase::connections() {
  std::lock_guard lock(connectMutex_);
  auto* all = new ExtendedCF::UsesConnectionSequence;
  all->length(CORBA::ULong(live_.size()));
  for (CORBA::ULong i = 0; i < all->length(); ++i) {
    (*all)[i].connectionId = live_[i]->id.c_str();
    (*all)[i].port = CORBA::Object::_duplicate(live_[i]->peer);
  }
  return all;
}

BULKIO::UsesPortStatisticsSequence* OutPortBase::statistics() {
  std::lock_guard lock(connectMutex_);
  auto* all = new BULKIO::UsesPortStatisticsSequence;
  all->length(CORBA::ULong(live_.size()));
  for (CORBA::ULong i = 0; i < all->length(); ++i) {
    (*all)[i].connectionId = live_[i]->id.c_str();
    // Beside BulkIO's figures, the connection's own depths now (scabench top):
    // the credits it has out (credits flow), the messages in its ring (shm).
    const Connection& c = *live_[i];
    std::map<std::string, uint64_t> extra = bulkio::processCounts();
    if (c.gate) extra["credits_outstanding"] = c.gate->outstanding();
    if (c.ring) extra["ring_depth"] = c.ring->depth();
    (*all)[i].statistics = bulkio::portStatistics(name_, c.traffic, {}, extra);
  }
  return all;
}

void OutPortBase::disconnectPort(const char* connectionId) {
  std::lock_guard lock(connectMutex_);
  const auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& c) { return c->id == connectionId; });
  if (it == live_.end())
    throw CF::Port::InvalidPort(3, (std::string("no connection '") + connectionId + "' on port " + name_).c_str());
  const std::shared_ptr<Connection> gone = *it;
  live_.erase(it);
  detach(gone);
}

}  // namespace scabench
