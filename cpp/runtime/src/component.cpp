#include "scabench/runtime/component.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "scabench/runtime/cf_errors.hpp"

namespace scabench {

std::string describeException(const CORBA::Exception& ex) {
  std::string text = ex._name();
  if (auto* sys = CORBA::SystemException::_downcast(&ex)) {
    if (const char* minor = sys->NP_minorString()) text += std::string(" (") + minor + ")";
  }
  return text;
}

PortableServer::POA_ptr createPortPoa(PortableServer::POA_ptr root, bool singleThread) {
  CORBA::PolicyList policies;
  policies.length(1);
  if (singleThread)
    policies[0] = root->create_thread_policy(PortableServer::SINGLE_THREAD_MODEL);
  else
    policies[0] = omniPolicy::create_local_shortcut_policy(omniPolicy::LOCAL_CALLS_SHORTCUT);
  PortableServer::POAManager_var manager = root->the_POAManager();
  return root->create_POA(singleThread ? "ports-single-thread" : "ports", manager, policies);
}

// ----------------------------------------------------------------- Component

Component::Component(const ComponentContext& ctx) : ctx_(ctx) {
  properties_
      .declare("record_capacity", PropertyType::ULong, int64_t{1'000'000},
               "packet records preallocated for the run (read at the first start)")
      .within(1, UINT32_MAX);
}

Component::~Component() {
  // A shared-memory connection's threads and a fan-out's sender threads
  // call into the ports and the records: they end before any member goes.
  for (auto& p : inPorts_) p->shutRings();
  for (auto& p : outPorts_) p->shutSenders();
}

char* Component::identifier() {
  return CORBA::string_dup((ctx_.identifier.empty() ? ctx_.name : ctx_.identifier).c_str());
}

CORBA::Boolean Component::started() { return running(); }

char* Component::softwareProfile() { return CORBA::string_dup(ctx_.softwareProfile.c_str()); }

void Component::initializeProperties(const CF::Properties& props) {
  std::lock_guard lock(lifecycle_);
  // Initial values come once, before initialize(): later ones are configure's.
  if (propertiesInitialized_ || initialized_) throw CF::PropertyEmitter::AlreadyInitialized();
  {
    std::lock_guard values(propertiesMutex_);
    properties_.configure(props, running());  // a tool may have started it without initialize()
  }
  propertiesInitialized_ = true;
}

// No listener is ever registered: a component sends no property events
// (docs/reference/cf.md), so a caller learns that at once, not by silence.
char* Component::registerPropertyListener(CORBA::Object_ptr, const CF::StringSequence&, CORBA::Float) {
  throw CORBA::NO_IMPLEMENT(0, CORBA::COMPLETED_NO);
}

void Component::unregisterPropertyListener(const char*) { throw CF::InvalidIdentifier(); }

CF::PortSet::PortInfoSequence* Component::getPortSet() {
  CF::PortSet::PortInfoSequence_var all = new CF::PortSet::PortInfoSequence;
  const auto declarations = portDeclarations();
  all->length(CORBA::ULong(declarations.size()));
  for (CORBA::ULong i = 0; i < all->length(); ++i) {
    const auto& d = declarations[i];
    all[i].obj_ptr = getPort(d.name.c_str());
    all[i].name = d.name.c_str();
    // The interface the port speaks: its protocol's (getPort answers the same).
    const bool bulkio = properties_.text(d.name + ".protocol") == policy::protocolName(policy::Protocol::Bulkio);
    all[i].repid = (bulkio ? d.bulkioRepid : d.repid).c_str();
    all[i].description = d.description.c_str();
    all[i].direction = d.provides ? CF::PortSet::DIRECTION_PROVIDES : CF::PortSet::DIRECTION_USES;
  }
  return all._retn();
}

// Logging. A component has one logger, named as the component, at INFO: it
// writes its events (errors, ends of stream, statistics) and nothing else,
// and keeps no log records. So the records asked for are none, INFO is the
// only level it can be set to, and it takes no logging configuration.
CF::LogEventSequence* Component::retrieve_records(CORBA::ULong& howMany, CORBA::ULong) {
  howMany = 0;
  return new CF::LogEventSequence;
}
CF::LogEventSequence* Component::retrieve_records_by_date(CORBA::ULong& howMany, CORBA::ULongLong) {
  howMany = 0;
  return new CF::LogEventSequence;
}
CF::LogEventSequence* Component::retrieve_records_from_date(CORBA::ULong& howMany, CORBA::ULongLong) {
  howMany = 0;
  return new CF::LogEventSequence;
}
CF::LogLevel Component::log_level() { return CF::LogLevels::INFO; }
void Component::log_level(CF::LogLevel level) {
  if (level != CF::LogLevels::INFO) throw CORBA::NO_IMPLEMENT(0, CORBA::COMPLETED_NO);
}
CF::LogLevel Component::getLogLevel(const char* loggerId) {
  if (ctx_.name != loggerId) throw CF::UnknownIdentifier();
  return CF::LogLevels::INFO;
}
void Component::setLogLevel(const char* loggerId, CF::LogLevel level) {
  if (ctx_.name != loggerId) throw CF::UnknownIdentifier();
  log_level(level);
}
CF::StringSequence* Component::getNamedLoggers() {
  auto* names = new CF::StringSequence;
  names->length(1);
  (*names)[0] = ctx_.name.c_str();
  return names;
}
void Component::resetLog() {}  // it is at its only level already
char* Component::getLogConfig() { return CORBA::string_dup(""); }
void Component::setLogConfig(const char*) { throw CORBA::NO_IMPLEMENT(0, CORBA::COMPLETED_NO); }
void Component::setLogConfigURL(const char*) { throw CORBA::NO_IMPLEMENT(0, CORBA::COMPLETED_NO); }

void Component::initialize() {
  std::lock_guard lock(lifecycle_);
  initialized_ = true;
}

void Component::releaseObject() {
  try {
    stop();
  } catch (...) {
  }
  ctx_.host->componentReleased(ctx_.name);
}

void Component::runTest(CORBA::ULong, CF::Properties&) { throw CF::TestableObject::UnknownTest(); }

void Component::configure(const CF::Properties& props) {
  std::lock_guard lock(lifecycle_);
  const bool started = running();
  {
    std::lock_guard values(propertiesMutex_);
    properties_.configure(props, started);
  }
  if (started) onConfigure();
}

void Component::query(CF::Properties& props) {
  // Not the lifecycle lock: a stop may hold it while it waits for the
  // component's threads to finish a send, and query must answer meanwhile.
  std::lock_guard values(propertiesMutex_);
  properties_.query(props);
}

CORBA::Object_ptr Component::getPort(const char* name) {
  try {
    for (auto& p : inPorts_)
      if (p->name() == name) return p->reference();
    for (auto& p : outPorts_)
      if (p->name() == name) return p->reference();
  } catch (const std::invalid_argument& ex) {
    // A port property with a bad value; the launcher reports it.
    fail(ex.what());
    throw CF::PortSupplier::UnknownPort();
  }
  throw CF::PortSupplier::UnknownPort();
}

void Component::start() {
  std::lock_guard lock(lifecycle_);
  if (running()) return;
  auto undo = [this] {
    // Back to stopped: nothing was taken (the ports take packets only once
    // running), so the workers have nothing to finish.
    for (auto& p : inPorts_) p->stopWorker();
  };
  try {
    if (!records_) {
      records_ = std::make_unique<RecordLog>(ctx_.recordDir + "/" + ctx_.name + ".rec",
                                             uint64_t(properties_.integer("record_capacity")));
      recording_.store(true, std::memory_order_seq_cst);
      for (std::size_t i = 0; i < kRefusalReasons; ++i)
        records_->header().refused[i].fetch_add(earlyRefusals_[i].exchange(0));
    }
    inPortsAtEnd_.store(0);  // re-armed: each start's stream ends anew
    stopRequested_.store(false, std::memory_order_seq_cst);
    for (auto& p : outPorts_) p->resume();
    for (auto& p : inPorts_) p->startWorker();
    inPortsTakingPart_ = int(std::count_if(inPorts_.begin(), inPorts_.end(), [](auto& p) { return p->takesPart(); }));
    onStart();
  } catch (const CF::Resource::StartError&) {
    undo();
    throw;
  } catch (const CORBA::Exception& ex) {
    undo();
    throw CF::Resource::StartError(cfErrorNumber(ex), describeException(ex).c_str());
  } catch (const std::exception& ex) {
    undo();
    throw CF::Resource::StartError(cfErrorNumber(ex), ex.what());
  }
  // The ports take packets from here on, their checks and the component ready.
  running_.store(true, std::memory_order_seq_cst);
}

void Component::stop() {
  std::lock_guard lock(lifecycle_);
  if (!running()) return;
  running_.store(false, std::memory_order_seq_cst);       // the ports refuse from here on
  stopRequested_.store(true, std::memory_order_seq_cst);  // before the halt: a source gives up one packet at most
  // A packet waiting for credits or a resume waits on the receiver, which
  // may never answer: it is given up (counted unsent), so that the sending
  // threads that onStop() and stopWorker() wait for can finish.
  for (auto& p : outPorts_) p->halt();
  std::string failure;
  CF::ErrorNumberType number = CF::CF_NOTSET;
  try {
    onStop();
  } catch (const CORBA::Exception& ex) {
    failure = describeException(ex);
    number = cfErrorNumber(ex);
  } catch (const std::exception& ex) {
    failure = ex.what();
    number = cfErrorNumber(ex);
  }
  // What the ports had taken before is finished: a packet a two-way caller
  // saw queued was promised processing.
  for (auto& p : inPorts_) p->stopWorker();
  writeConnectionCounts();
  if (!failure.empty()) throw CF::Resource::StopError(number, failure.c_str());
}

RecordLog& Component::records() {
  if (!records_) throw std::logic_error("component " + ctx_.name + " received data before start()");
  return *records_;
}

void Component::countRefusal(Refusal why) {
  const auto i = std::size_t(why);
  if (recording_.load(std::memory_order_seq_cst)) {
    records_->header().refused[i].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  earlyRefusals_[i].fetch_add(1);
  // start() may have made the header and moved the early counts between the
  // check above and this add: then move this one too.
  if (recording_.load(std::memory_order_seq_cst))
    records_->header().refused[i].fetch_add(earlyRefusals_[i].exchange(0));
}

void Component::fail(const std::string& message) {
  if (failed_.exchange(true)) return;
  ctx_.host->notify("error " + ctx_.name + " " + message);
}

void Component::inPortReachedEndOfStream(const std::string& port, uint32_t streamId) {
  onInPortEndOfStream(port, streamId);
  // Per stream: once every in-port has ended one, the component's stream
  // ends, and the count goes on for the next (start() re-arms it).
  const int ports = inPortsTakingPart_;
  if (inPortsAtEnd_.fetch_add(1) + 1 != ports) return;
  inPortsAtEnd_.fetch_sub(ports);
  // Every packet of the stream is done before its end counts (the ports
  // wait for each link sequence before the marker), so the completed
  // count's growth since the last end is this stream's packets.
  const uint64_t completed = records_ ? records_->completedCount() : 0;
  packetsInStream_.store(completed - streamBegan_);
  streamBegan_ = completed;
  endedStreamId_.store(streamId);
  onEndOfStream();
}

std::vector<std::string> Component::providesPorts() const {
  std::vector<std::string> names;
  for (auto& p : inPorts_) names.push_back(p->name());
  return names;
}

std::vector<std::string> Component::usesPorts() const {
  std::vector<std::string> names;
  for (auto& p : outPorts_) names.push_back(p->name());
  return names;
}

std::vector<PortDeclaration> Component::portDeclarations() const {
  std::vector<PortDeclaration> all = inDeclarations_;
  all.insert(all.end(), outDeclarations_.begin(), outDeclarations_.end());
  return all;
}

bool Component::anyOutPortConnected() const {
  for (auto& p : outPorts_)
    if (p->connected()) return true;
  return false;
}

void Component::onEndOfStream() {
  // A pass-through component emits what it received, in the stream it received.
  endStream(packetsInStream(), endedStreamId());
}

void Component::endStream(uint64_t count, uint32_t streamId) {
  for (auto& p : outPorts_) p->sendEndOfStream(streamId, count);
  writeConnectionCounts();
  if (!anyOutPortConnected()) ctx_.host->notify("eos " + ctx_.name + " " + std::to_string(count));
}

void Component::writeConnectionCounts() {
  nlohmann::ordered_json doc;
  doc["uses"] = nlohmann::ordered_json::array();
  for (auto& p : outPorts_)
    for (const auto& c : p->connectionCounts())
      doc["uses"].push_back({{"port", c.port},
                             {"connection_id", c.connectionId},
                             {"fanout", c.fanout},
                             {"protocol", c.protocol},
                             {"sent", c.sent},
                             {"dropped", c.dropped},
                             {"unsent", c.unsent},
                             {"queue_peak", c.queuePeak},
                             {"blocked_ns", c.blockedNs}});
  doc["provides"] = nlohmann::ordered_json::array();
  for (auto& p : inPorts_)
    for (const uint32_t number : p->connectionNumbers()) {
      nlohmann::ordered_json entry = {
          {"port", p->name()}, {"number", number}, {"protocol", policy::protocolName(p->protocol())}};
      // BulkIO carries no sequence number: order is judged by T (bulkio_port.hpp).
      if (p->protocol() == policy::Protocol::Bulkio) {
        entry["t_backwards"] = p->bulkioStreams().backwards();
        entry["t_invalid"] = p->bulkioStreams().invalidTimes();
      }
      doc["provides"].push_back(entry);
    }
  const std::string path = ctx_.recordDir + "/" + ctx_.name + ".connections.json";
  const std::string temp = path + ".tmp";
  std::lock_guard lock(countsFile_);
  {
    std::ofstream out(temp, std::ios::trunc);
    out << doc.dump(2) << "\n";
    out.flush();
    if (!out) {
      fail("cannot write " + temp);
      return;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename " + temp + " to " + path);
}

}  // namespace scabench
