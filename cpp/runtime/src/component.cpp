#include "scabench/runtime/component.hpp"

#include <stdexcept>

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
  properties_.declare("record_capacity", int64_t{1'000'000}, "packet records preallocated for the run");
}

Component::~Component() = default;

char* Component::identifier() { return CORBA::string_dup(ctx_.name.c_str()); }

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
  if (started_) throw CF::PropertySet::InvalidConfiguration("cannot configure a started component", props);
  properties_.configure(props);
}

void Component::query(CF::Properties& props) { properties_.query(props); }

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
  if (started_) return;
  try {
    const int64_t capacity = properties_.integer("record_capacity");
    if (capacity < 1) throw std::invalid_argument("record_capacity must be >= 1");
    records_ = std::make_unique<RecordLog>(ctx_.recordDir + "/" + ctx_.name + ".rec", uint64_t(capacity));
    inPortsAtEnd_.store(0);
    for (auto& p : inPorts_) p->startWorker();
    // The ports take packets from here on, their checks ready.
    recording_.store(true, std::memory_order_seq_cst);
    for (std::size_t i = 0; i < kRefusalReasons; ++i)
      records_->header().refused[i].fetch_add(earlyRefusals_[i].exchange(0));
    started_ = true;
    onStart();
  } catch (const std::exception& ex) {
    throw CF::Resource::StartError(1, ex.what());
  }
}

void Component::stop() {
  if (!started_) return;
  started_ = false;
  onStop();
  for (auto& p : inPorts_) p->stopWorker();
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

void Component::inPortReachedEndOfStream() {
  // Per stream: once every in-port has ended one, the component's stream
  // ends, and the count goes on for the next (start() re-arms it).
  const int ports = int(inPorts_.size());
  if (inPortsAtEnd_.fetch_add(1) + 1 != ports) return;
  inPortsAtEnd_.fetch_sub(ports);
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

bool Component::anyOutPortConnected() const {
  for (auto& p : outPorts_)
    if (p->connected()) return true;
  return false;
}

void Component::onEndOfStream() {
  // A pass-through component emits what it received.
  uint64_t count = records_ ? records_->completedCount() : 0;
  endStream(count);
}

void Component::endStream(uint64_t count) {
  for (auto& p : outPorts_) p->sendEndOfStream(0, count);
  if (!anyOutPortConnected()) ctx_.host->notify("eos " + ctx_.name + " " + std::to_string(count));
}

}  // namespace scabench
