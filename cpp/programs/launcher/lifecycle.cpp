// The SCA lifecycle of the run's components: the naming context, initialize,
// configure, connectPort, start, then stop and releaseObject.
#include "launcher/launcher.hpp"

namespace scabench::launch {

// The naming context of the waveform instance, made before any external
// program starts: its IOR is their NAMING_CONTEXT_IOR. In a domain shared
// with other runs ("shared"), the first instance number not bound
// (<name>_1, <name>_2, ...), as an SCA domain numbers an application's
// instances; the context goes at the end of the run (removeContext).
void Launcher::makeContext() {
  if (!plan_.naming) {
    for (const auto& h : hosts_)
      if (h.exec || !h.node.empty())
        throw RunFailure(h.components.front(), "component " + h.components.front() +
                                                   " binds its own name in the run's Naming Service (SCA "
                                                   "execute), and the assembly names none");
    return;
  }
  const std::string where = plan_.naming->corbaloc;
  const bool shared = plan_.naming->shared;
  const std::string first = plan_.naming->context;
  const std::string stem = first.substr(0, first.rfind('_'));
  try {
    CORBA::Object_var obj = orb_->string_to_object(where.c_str());
    omniORB::setClientCallTimeout(obj, 10000);  // a domain on another machine may be gone
    root_ = CosNaming::NamingContext::_narrow(obj);
    if (CORBA::is_nil(root_)) throw std::runtime_error("not a naming context");
    omniORB::setClientCallTimeout(root_, 10000);
    for (int instance = 1;; ++instance) {
      contextName_ = instance == 1 ? first : stem + "_" + std::to_string(instance);
      CosNaming::Name contextName;
      contextName.length(1);
      contextName[0].id = contextName_.c_str();
      try {
        context_ = root_->bind_new_context(contextName);
        madeContext_ = true;
        break;
      } catch (const CosNaming::NamingContext::AlreadyBound&) {
        if (shared && instance < 1000) continue;
        obj = root_->resolve(contextName);
        context_ = CosNaming::NamingContext::_narrow(obj);
        break;
      }
    }
    CORBA::String_var ior = orb_->object_to_string(context_);
    contextIor_ = ior.in();
  } catch (const CORBA::Exception& ex) {
    throw RunFailure("", "the Naming Service at " + where + " refused the run's context: " + describeException(ex));
  } catch (const std::runtime_error& ex) {
    throw RunFailure("", "the Naming Service at " + where + " refused the run's context: " + ex.what());
  }
}

// At the end, in a shared domain: the names the run's components left in
// its context (each component unbinds its own on release; a failed run
// leaves them), then the context. Each call bounded, each failure ignored.
void Launcher::removeContext() {
  if (!madeContext_ || !plan_.naming->shared) return;
  omniORB::setClientCallTimeout(context_, 2000);
  omniORB::setClientCallTimeout(root_, 2000);
  try {
    CosNaming::BindingList_var bindings;
    CosNaming::BindingIterator_var rest;
    context_->list(1000, bindings, rest);
    for (CORBA::ULong i = 0; i < bindings->length(); ++i) context_->unbind(bindings[i].binding_name);
    if (!CORBA::is_nil(rest)) rest->destroy();
    context_->destroy();
    CosNaming::Name contextName;
    contextName.length(1);
    contextName[0].id = contextName_.c_str();
    root_->unbind(contextName);
  } catch (...) {
  }
}

void Launcher::waitReady() {
  const std::size_t expected = componentCount_;
  const int64_t readyDeadline = scabench::monotonicNs() + int64_t(HOST_READY_S * 1e9);
  std::vector<std::pair<HostProc*, std::string>> binding;
  for (auto& h : hosts_)
    if (h.exec || !h.node.empty())
      for (const auto& c : h.components) binding.push_back({&h, c});
  while (iors_.size() < expected || !binding.empty()) {
    if (iors_.size() < expected && scabench::monotonicNs() > readyDeadline)
      throw RunFailure("", "hosts did not come up within 30 s");
    pumpEvents(50);
    for (auto it = binding.begin(); it != binding.end();) {
      if (resolveBound(*it->first, it->second))
        it = binding.erase(it);
      else
        ++it;
    }
  }
  for (const auto& [name, ior] : iors_) {
    CORBA::Object_var obj = orb_->string_to_object(ior.c_str());
    resources_[name] = CF::Resource::_narrow(obj);
  }
}

bool Launcher::resolveBound(const HostProc& h, const std::string& name) {
  CosNaming::Name n;
  n.length(1);
  n[0].id = name.c_str();
  const std::string what = h.exec ? h.argv.front() : "host " + h.name;
  const std::string where = h.node.empty() ? "" : " on node " + h.node;
  try {
    CORBA::Object_var obj = context_->resolve(n);
    CF::Resource_var res = CF::Resource::_narrow(obj);
    if (CORBA::is_nil(res))
      throw RunFailure(name, "component " + name + " (" + what + where + ") bound '" + name +
                                 "' to something that is not a CF::Resource");
    resources_[name] = res;
    return true;
  } catch (const CosNaming::NamingContext::NotFound&) {
    const double waited = double(scabench::monotonicNs() - h.spawnedNs) / 1e9;
    const double limit = h.exec ? h.bindTimeoutS : HOST_READY_S;
    if (waited > limit)
      throw RunFailure(name, "component " + name + " (" + what + where + ", pid " + std::to_string(h.pid) +
                                 ") did not bind its name '" + name + "' in the naming context within " +
                                 formatSeconds(limit) + stderrTail(h));
    return false;
  } catch (const CORBA::Exception& ex) {
    throw RunFailure(name,
                     "component " + name + ": the Naming Service failed while resolving it: " + describeException(ex));
  }
}

void Launcher::resolveRefs() {
  for (auto& [name, ext] : externals_) {
    if (ext.ref.empty()) continue;
    const std::string what = "component " + name + ": ref '" + ext.ref + "'";
    CORBA::Object_var obj;
    try {
      obj = orb_->string_to_object(ext.ref.c_str());
    } catch (const CORBA::Exception& ex) {
      throw RunFailure(name, what + " does not resolve: " + describeException(ex));
    }
    if (CORBA::is_nil(obj)) throw RunFailure(name, what + " resolves to a nil reference");
    omniORB::setClientCallTimeout(obj, REF_TIMEOUT_MS);
    bool isResource = false;
    try {
      isResource = obj->_is_a("IDL:CF/Resource:1.0");
    } catch (const CORBA::Exception& ex) {
      throw RunFailure(name, what + " does not answer: " + describeException(ex));
    }
    if (!isResource) throw RunFailure(name, what + " is not a CF::Resource");
    resources_[name] = CF::Resource::_narrow(obj);
  }
}

// Every port the connections use on an external component must be there,
// and be what they need, before anything is configured.
void Launcher::checkExternalPorts() {
  static const std::map<std::string, std::string> interfaces = {
      {"octet", "dataOctet"}, {"short", "dataShort"}, {"float", "dataFloat"}, {"double", "dataDouble"}};
  for (const auto& c : plan_.hops) {
    for (const scabench::launch::HopEnd* end : {&c.uses, &c.provides}) {
      const std::string name = end->component, port = end->port;
      auto ext = externals_.find(name);
      if (ext == externals_.end()) continue;
      const std::string who = "component " + name;
      CORBA::Object_var obj;
      try {
        obj = resources_[name]->getPort(port.c_str());
      } catch (const CF::PortSupplier::UnknownPort&) {
        throw RunFailure(name, who + " has no port '" + port + "' (connection " + c.id + ")");
      } catch (const CORBA::Exception& ex) {
        pumpEvents(50);  // its process died: say so instead
        throw RunFailure(name, who + ": getPort(" + port + ") failed: " + describeException(ex));
      }
      const bool uses = end == &c.uses;
      const std::string repoId =
          uses ? "IDL:CF/Port:1.0" : "IDL:scabench/" + interfaces.at(ext->second.sampleType) + ":1.0";
      // A provides port may speak BulkIO (a REDHAWK component's): the uses
      // port connected to it finds that at connectPort (docs/reference/bulkio.md).
      const std::string bulkioId = "IDL:BULKIO/" + interfaces.at(ext->second.sampleType) + ":1.0";
      bool ok = false;
      try {
        ok = !CORBA::is_nil(obj) && (obj->_is_a(repoId.c_str()) || (!uses && obj->_is_a(bulkioId.c_str())));
      } catch (const CORBA::Exception& ex) {
        throw RunFailure(name, who + ": its port '" + port + "' does not answer: " + describeException(ex));
      }
      if (!ok)
        throw RunFailure(name, who + ": its port '" + port + "' is not " +
                                   (uses ? "a uses port (CF::Port)"
                                         : "a scabench or BulkIO " + interfaces.at(ext->second.sampleType) + " port"));
    }
  }
}

void Launcher::initOrb() {
  int argc = 0;
  // A hung component must not hang the launcher: calls time out.
  // What it serves (the programs a plain node loads, plain_files.cpp) is for
  // this machine's processes alone: on loopback. A GPP reads a file in
  // blocks of its own largest message (REDHAWK's are often far above
  // omniORB's 2 MiB), and each answer must fit the launcher's.
  const char* options[][2] = {{"clientCallTimeOutPeriod", "30000"},
                              {"verifyObjectExistsAndType", "0"},
                              {"endPoint", "giop:tcp:127.0.0.1:"},
                              {"giopMaxMsgSize", "268435456"},
                              {nullptr, nullptr}};
  orb_ = CORBA::ORB_init(argc, nullptr, "omniORB4", options);
}

namespace {

// A sequence's values as the CORBA sequence of its element type, in an any.
template <class Seq, class Element>
CORBA::Any sequenceAny(const scabench::launch::SequenceValue& v) {
  Seq seq;
  seq.length(CORBA::ULong(v.values.size()));
  for (CORBA::ULong i = 0; i < seq.length(); ++i) {
    const auto& value = v.values[i];
    if constexpr (std::is_same_v<Element, const char*>)
      seq[i] = CORBA::string_dup(std::get<std::string>(value).c_str());
    else if constexpr (std::is_same_v<Element, CORBA::Boolean>)
      seq[i] = std::get<bool>(value);
    else if (auto d = std::get_if<double>(&value))
      seq[i] = Element(*d);
    else
      seq[i] = Element(std::get<int64_t>(value));
  }
  CORBA::Any any;
  any <<= seq;
  return any;
}

// A struct member as its PRF type's CORBA type: a REDHAWK component's
// generated code extracts `props["id"] >>= member` into that type, and the
// extraction fails on any other type code (plan.cpp has checked the type).
CORBA::Any typedAny(const scabench::launch::TypedValue& member) {
  CORBA::Any any;
  const std::string& t = member.type;
  const auto& v = member.value;
  auto number = [&]() -> double {
    if (auto d = std::get_if<double>(&v)) return *d;
    return double(std::get<int64_t>(v));
  };
  auto whole = [&]() { return std::get<int64_t>(v); };
  if (t == "boolean")
    any <<= CORBA::Any::from_boolean(std::get<bool>(v));
  else if (t == "string")
    any <<= std::get<std::string>(v).c_str();
  else if (t == "octet")
    any <<= CORBA::Any::from_octet(CORBA::Octet(whole()));
  else if (t == "short")
    any <<= CORBA::Short(whole());
  else if (t == "ushort")
    any <<= CORBA::UShort(whole());
  else if (t == "long")
    any <<= CORBA::Long(whole());
  else if (t == "ulong")
    any <<= CORBA::ULong(whole());
  else if (t == "longlong")
    any <<= CORBA::LongLong(whole());
  else if (t == "ulonglong")
    any <<= CORBA::ULongLong(whole());
  else if (t == "float")
    any <<= CORBA::Float(number());
  else
    any <<= CORBA::Double(number());
  return any;
}

}  // namespace

CORBA::Any Launcher::toAny(const scabench::launch::PropertyValue& v) {
  CORBA::Any any;
  if (auto b = std::get_if<bool>(&v))
    any <<= CORBA::Any::from_boolean(*b);
  else if (auto i = std::get_if<int64_t>(&v))
    any <<= CORBA::LongLong(*i);
  else if (auto d = std::get_if<double>(&v))
    any <<= CORBA::Double(*d);
  else if (auto s = std::get_if<std::string>(&v))
    any <<= s->c_str();
  else if (auto st = std::get_if<scabench::launch::StructValue>(&v)) {
    // A PRF struct, as REDHAWK puts one in an any: a CF::Properties of its
    // members, each member's value as a property of its own would go.
    CF::Properties members;
    members.length(CORBA::ULong(st->members.size()));
    CORBA::ULong i = 0;
    for (const auto& [id, member] : st->members) {
      members[i].id = id.c_str();
      if (auto one = std::get_if<scabench::launch::TypedValue>(&member))
        members[i].value = typedAny(*one);
      else
        members[i].value = toAny(std::get<scabench::launch::SequenceValue>(member));
      ++i;
    }
    any <<= members;
  } else {
    // A PRF simplesequence, as REDHAWK puts one in an any: the CORBA
    // sequence of its element type (plan.cpp has checked the type).
    const auto& seq = std::get<scabench::launch::SequenceValue>(v);
    const std::string& t = seq.type;
    if (t == "boolean") return sequenceAny<CORBA::BooleanSeq, CORBA::Boolean>(seq);
    if (t == "octet") return sequenceAny<CORBA::OctetSeq, CORBA::Octet>(seq);
    if (t == "short") return sequenceAny<CORBA::ShortSeq, CORBA::Short>(seq);
    if (t == "ushort") return sequenceAny<CORBA::UShortSeq, CORBA::UShort>(seq);
    if (t == "long") return sequenceAny<CORBA::LongSeq, CORBA::Long>(seq);
    if (t == "ulong") return sequenceAny<CORBA::ULongSeq, CORBA::ULong>(seq);
    if (t == "longlong") return sequenceAny<CORBA::LongLongSeq, CORBA::LongLong>(seq);
    if (t == "ulonglong") return sequenceAny<CORBA::ULongLongSeq, CORBA::ULongLong>(seq);
    if (t == "float") return sequenceAny<CORBA::FloatSeq, CORBA::Float>(seq);
    if (t == "double") return sequenceAny<CORBA::DoubleSeq, CORBA::Double>(seq);
    return sequenceAny<CORBA::StringSeq, const char*>(seq);
  }
  return any;
}

void Launcher::configureAll() {
  for (const auto& h : plan_.hosts)
    for (const auto& c : h.components) configure(c.name, c.properties);
  for (const auto& e : plan_.externals) configure(e.component.name, e.component.properties);
}

void Launcher::configure(const std::string& name, const scabench::launch::Properties& properties) {
  guardCall(name, "initialize/configure", [&] {
    resources_[name]->initialize();
    CF::Properties props;
    props.length(CORBA::ULong(properties.size()));
    CORBA::ULong i = 0;
    for (const auto& [id, value] : properties) {
      props[i].id = id.c_str();
      props[i].value = toAny(value);
      ++i;
    }
    resources_[name]->configure(props);
  });
  auto ext = externals_.find(name);
  if (ext != externals_.end()) ext->second.configured = true;
}

// The SCA way to find a waveform's components: a naming context for this
// waveform instance in the run's Naming Service, each component bound in
// it under its name. The launcher binds them (it holds every reference);
// an external program bound itself. An outside tool resolves them there
// (README, "Finding a run's components").
void Launcher::bindNames() {
  if (CORBA::is_nil(context_)) return;
  try {
    std::set<std::string> boundThemselves;
    for (const auto& h : hosts_)
      if (!h.node.empty()) boundThemselves.insert(h.components.begin(), h.components.end());
    for (const auto& [name, res] : resources_) {
      auto ext = externals_.find(name);
      if (ext != externals_.end() && ext->second.ref.empty()) continue;
      if (boundThemselves.count(name)) continue;
      CosNaming::Name n;
      n.length(1);
      n[0].id = name.c_str();
      context_->rebind(n, res);
    }
  } catch (const CORBA::Exception& ex) {
    throw RunFailure(
        "", "the Naming Service at " + plan_.naming->corbaloc + " refused the run's names: " + describeException(ex));
  }
}

// With "hold" in the assembly: once the stream has ended and been
// measured, say so on stdout ("held") and keep every component up, bound
// in the Naming Service, until stdin closes; then release as usual.
void Launcher::holdIfAsked() {
  if (!plan_.hold) return;
  std::cout << "held " << contextName_ << std::endl;  // the context, chosen here in a shared domain
  char buf[256];
  while (true) {
    if (interrupted) throw RunFailure("", "interrupted");
    pollfd p{0, POLLIN, 0};
    if (poll(&p, 1, 200) > 0 && read(0, buf, sizeof buf) <= 0) return;
    pumpEvents(0);  // a host that dies while held is still a failure
  }
}

void Launcher::connectAll() {
  // In the assembly's order, one at a time: a receiving component numbers
  // its connections, across its provides ports, in the order they attach
  // (several may feed one port), and each packet's record names its
  // connection by that number, which the analysis maps back to the
  // assembly's order (run/runner.py). A uses port in several hops takes one
  // connection per hop, each by the hop's id (fan-out): its properties, the
  // same for each hop, were configured once with the component's.
  for (const auto& c : plan_.hops) {
    const std::string &id = c.id, &uses = c.uses.component, &provides = c.provides.component;
    const std::string &usesPort = c.uses.port, &providesPort = c.provides.port;
    CORBA::Object_var target;
    guardCall(provides, "getPort(" + providesPort + ")",
              [&] { target = resources_[provides]->getPort(providesPort.c_str()); });
    guardCall(uses, "connectPort(" + usesPort + ")", [&] {
      CORBA::Object_var portObj = resources_[uses]->getPort(usesPort.c_str());
      CF::Port_var port = CF::Port::_narrow(portObj);
      if (CORBA::is_nil(port)) throw std::runtime_error("port " + usesPort + " is not a uses port");
      port->connectPort(target, id.c_str());
    });
  }
}

// In the plan's start order (an SCA application's: the assembly controller,
// then by startorder; the rest around them receivers first, run/plan.py), one
// at a time, each start returned before the next: a packet that reaches a
// component not yet started is refused by it and counted. When each start
// returned goes in the manifest's "lifecycle".
void Launcher::startAll() {
  for (const auto& name : plan_.startOrder) {
    guardCall(name, "start", [&] { resources_.at(name)->start(); });
    lifecycle_["started"].push_back({{"component", name}, {"at_ns", scabench::monotonicNs()}});
    auto ext = externals_.find(name);
    if (ext != externals_.end()) ext->second.startedByUs = true;
  }
}

// With "announce_start" in the assembly, tells whoever runs the launcher
// that the stream has started, with the hosts' pids, on one stdout line
// ("started PID ..."): the granularity lab measures a steady window of
// those processes from there (python/scabench/measure/window.py).
void Launcher::announceStart() {
  if (!plan_.announceStart) return;
  std::string line = "started";
  for (const auto& h : hosts_)
    if (h.node.empty()) line += " " + std::to_string(h.pid);  // this machine's processes
  std::cout << line << std::endl;
}

void Launcher::releaseAll() {
  // Stopped in reverse of the start order, as an SCA application stops its
  // components; then released.
  for (auto name = plan_.startOrder.rbegin(); name != plan_.startOrder.rend(); ++name) {
    guardCall(*name, "stop", [&] { resources_.at(*name)->stop(); });
    lifecycle_["stopped"].push_back({{"component", *name}, {"at_ns", scabench::monotonicNs()}});
  }
  for (const auto& [name, res] : resources_) {
    auto ext = externals_.find(name);
    if (ext != externals_.end() && !ext->second.release) {
      // Someone else's component, left running: only the run's connections go.
      disconnectUses(name);
      continue;
    }
    guardCall(name, "releaseObject", [&] {
      try {
        res->releaseObject();
      } catch (const CORBA::COMM_FAILURE&) {
        // A host ends once its last component is released, and its reply
        // can be lost as it goes: the call did what it asked. How the
        // host ended is checked below like every other's.
      } catch (const CORBA::TRANSIENT&) {
      }
    });
  }
  // Hosts exit once all their components are released; give them time to
  // report their resource usage, then make sure.
  const int64_t until = scabench::monotonicNs() + 10'000'000'000LL;
  while (scabench::monotonicNs() < until && !allExited()) pumpEvents(20, /*exitIsFailure=*/false);
  killAll();
}

void Launcher::disconnectUses(const std::string& name) {
  for (const auto& c : plan_.hops) {
    if (c.uses.component != name) continue;
    const std::string &port = c.uses.port, &id = c.id;
    guardCall(name, "disconnectPort(" + port + ")", [&] {
      CORBA::Object_var obj = resources_[name]->getPort(port.c_str());
      CF::Port_var p = CF::Port::_narrow(obj);
      if (!CORBA::is_nil(p)) p->disconnectPort(id.c_str());
    });
  }
}

// On a failure, the referenced components the run had taken in (configured):
// released if the run owns their end, else stopped if the run started them
// and cut from the run's connections; each call bounded, each failure
// ignored (the run has failed already). One the run never configured is
// left as it was found.
void Launcher::abandonRefs() {
  for (auto& [name, ext] : externals_) {
    if (ext.ref.empty() || !ext.configured || !resources_.count(name)) continue;
    CF::Resource_ptr res = resources_[name];
    omniORB::setClientCallTimeout(res, 2000);
    try {
      if (ext.release || ext.startedByUs) res->stop();
      if (ext.release) {
        res->releaseObject();
      } else {
        for (const auto& c : plan_.hops) {
          if (c.uses.component != name) continue;
          CORBA::Object_var obj = res->getPort(c.uses.port.c_str());
          CF::Port_var p = CF::Port::_narrow(obj);
          if (!CORBA::is_nil(p)) p->disconnectPort(c.id.c_str());
        }
      }
    } catch (...) {
    }
  }
}

}  // namespace scabench::launch
