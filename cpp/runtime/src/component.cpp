#include "scabench/runtime/component.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

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

void Component::initialize() {}

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
    throw CF::Resource::StartError(1, describeException(ex).c_str());
  } catch (const std::exception& ex) {
    undo();
    throw CF::Resource::StartError(1, ex.what());
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
  try {
    onStop();
  } catch (const CORBA::Exception& ex) {
    failure = describeException(ex);
  } catch (const std::exception& ex) {
    failure = ex.what();
  }
  // What the ports had taken before is finished: a packet a two-way caller
  // saw queued was promised processing.
  for (auto& p : inPorts_) p->stopWorker();
  writeConnectionCounts();
  if (!failure.empty()) throw CF::Resource::StopError(1, failure.c_str());
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
                             {"sent", c.sent},
                             {"dropped", c.dropped},
                             {"unsent", c.unsent},
                             {"queue_peak", c.queuePeak},
                             {"blocked_ns", c.blockedNs}});
  doc["provides"] = nlohmann::ordered_json::array();
  for (auto& p : inPorts_)
    for (const uint32_t number : p->connectionNumbers())
      doc["provides"].push_back({{"port", p->name()}, {"number", number}});
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
