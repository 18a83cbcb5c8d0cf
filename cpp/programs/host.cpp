// scabench-host: one process that hosts one or more components.
//
//   scabench-host --describe     prints every component kind, its ports and
//                                 properties, and the connection policy's
//                                 schema, as JSON (the spec checker's source)
//   scabench-host --host NAME --status-fd FD --record-dir DIR
//                 --component NAME:KIND:SAMPLE_TYPE [--component ...] [-ORB options]
//   scabench-host NAMING_CONTEXT_IOR IOR COMPONENT_IDENTIFIER ID NAME_BINDING NAME
//                 KIND KIND [SAMPLE_TYPE TYPE] [RECORD_DIR DIR] [EVENTS_FILE PATH] [PROFILE_NAME SPD]
//                 [-ORB options]
//   scabench-host NAMING_CONTEXT_IOR IOR COMPONENT_IDENTIFIER ID
//                 COMPONENT NAME:KIND[:TYPE] [COMPONENT ...] [RECORD_DIR DIR] [EVENTS_FILE PATH]
//                 [PROFILE_NAME SPD] [-ORB options]
//
// Every form takes `--library PATH` (repeatable): a component library
// (plugin) loaded first, whose kinds are then created, described and
// collocated like the built-in ones (registry.hpp). A library that cannot be
// loaded, registers no kind or takes a registered kind's name: one line,
// exit 2.
//
// The first form is how scabench-launch runs it: it creates the components,
// activates them, and tells the launcher their references on the status
// pipe ("ready NAME IOR"). The launcher then drives them through
// CF::Resource. When every component has been released the ORB shuts down
// and the host reports its resource usage ("rusage ...").
// Components placed in the same host call each other directly (collocation).
//
// The third form is the SCA execute protocol (exec parameters as name/value
// pairs), for any SCA launcher: one component of kind KIND, bound under NAME
// in the naming context given, unbound again once it is released, its
// CF::Resource::identifier the COMPONENT_IDENTIFIER given (required) and its
// softwareProfile the PROFILE_NAME (the SPD it was deployed from). The
// fourth is the same for several components in one process (a
// hostcollocation), each bound under its own name: how a launcher starts a
// host on a node (docs/architecture.md, "Placement on nodes"). Both write
// their packet records into RECORD_DIR (default: the working directory,
// which a node makes for each process) and their events on stdout, one line
// each, as the first form writes them on its status pipe ("eos NAME COUNT",
// "error NAME MESSAGE", "stat NAME KEY VALUE", and at the end "rusage ..."),
// or with EVENTS_FILE appended to that file instead: how a launcher started
// by a plain CF::ExecutableDevice of its own machine, which keeps no stdout
// for it, reads them (cpp/programs/launcher/plain_nodes.cpp).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <omniORB4/Naming.hh>

#include "scabench/core/usage.hpp"
#include "scabench/runtime/message_limit.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/registry.hpp"
#include "scabench/runtime/shm_ring.hpp"

namespace {

class Host final : public scabench::HostServices {
 public:
  Host(CORBA::ORB_ptr orb, PortableServer::POA_ptr root, int statusFd)
      : orb_(CORBA::ORB::_duplicate(orb)), root_(PortableServer::POA::_duplicate(root)), statusFd_(statusFd) {}

  void notify(const std::string& line) override {
    const std::string text = line + "\n";
    std::lock_guard lock(mutex_);
    // Every host shares the launcher's pipe. A write of under PIPE_BUF bytes
    // (4096; an IOR line is a few hundred) is atomic, so lines never mix.
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(statusFd_, p, left);
      if (n <= 0) return;  // the launcher is gone; the death signal follows
      p += n;
      left -= std::size_t(n);
    }
  }

  PortableServer::POA_ptr portPoa(bool singleThread) override {
    std::lock_guard lock(mutex_);
    PortableServer::POA_var& poa = singleThread ? single_ : shared_;
    if (CORBA::is_nil(poa)) poa = scabench::createPortPoa(root_, singleThread);
    return poa;
  }

  void componentReleased(const std::string& name) override {
    // First, outside the lock: a name bound in a naming context goes before
    // releaseObject returns, while the ORB can still make the call.
    if (onRelease_) onRelease_(name);
    std::lock_guard lock(mutex_);
    released_.insert(name);
    if (released_.size() == expected_) orb_->shutdown(false);
  }

  void expect(std::size_t count) { expected_ = count; }
  void onRelease(std::function<void(const std::string&)> f) { onRelease_ = std::move(f); }

 private:
  CORBA::ORB_var orb_;
  PortableServer::POA_var root_;
  PortableServer::POA_var shared_, single_;
  const int statusFd_;
  std::mutex mutex_;
  std::set<std::string> released_;
  std::size_t expected_ = 0;
  std::function<void(const std::string&)> onRelease_;
};

struct ComponentSpec {
  std::string name, kind, sampleType;
};

// The catalogue of component kinds, straight from their declarations, and
// the policy table the ports declare their properties from, so that spec
// validation never disagrees with the components.
// A component's properties as --describe publishes them: each one's default,
// type (how a spec writes it), corba_type (what configure converts to and
// query answers in), and what configure enforces: min and max where it has a
// range, values where it is one of some names.
nlohmann::json describeProperties(scabench::Component& c) {
  nlohmann::json props = nlohmann::json::object();
  for (const auto& [id, entry] : c.properties().entries()) {
    const auto& d = entry.declaration;
    nlohmann::json value;
    std::visit([&](const auto& v) { value = v; }, d.defaultValue);
    nlohmann::json p = {{"default", value},
                        {"type", scabench::valueKind(d.type)},
                        {"corba_type", scabench::idlName(d.type)},
                        {"while_started", d.configurable == scabench::Configurable::AnyTime},
                        {"description", d.description}};
    if (const auto range = scabench::PropertyBag::range(d)) p["min"] = range->min, p["max"] = range->max;
    if (!d.values.empty()) p["values"] = d.values;
    props[id] = p;
  }
  return props;
}

int describe(CORBA::ORB_ptr orb) {
  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
  Host host(orb, root, -1);
  nlohmann::json kinds = nlohmann::json::object();
  // Each kind's ports in declaration order, provides first (portDeclarations):
  // kinds sorts its keys, which would list a duplex's rx_in before its tx_in.
  std::map<std::string, nlohmann::ordered_json> portsOf;
  for (const auto& kind : scabench::registeredKinds()) {
    const auto types = scabench::sampleTypesOf(kind);
    // A range may depend on the sample type (samples per packet: fewer
    // doubles than octets fit in a message). A property whose range does
    // gets each type's under "by_sample_type", and the widest as its own.
    nlohmann::json props;
    // A port whose element type differs between the kind's instantiations
    // follows the run's sample type: its type is "sample".
    nlohmann::ordered_json& ports = portsOf[kind] = nlohmann::ordered_json::object();
    for (const auto& type : types) {
      scabench::Component* c = scabench::createComponent(kind, type, {"describe", "/tmp", &host});
      const nlohmann::json own = describeProperties(*c);
      if (props.is_null()) {
        kinds[kind] = {{"sample_types", types}, {"provides", c->providesPorts()}, {"uses", c->usesPorts()}};
        props = own;
        for (const auto& port : c->portDeclarations())
          ports[port.name] = {{"direction", port.provides ? "provides" : "uses"},
                              {"type", port.type},
                              {"required", port.required},
                              {"description", port.description}};
      }
      for (const auto& port : c->portDeclarations())
        if (ports[port.name]["type"] != port.type) ports[port.name]["type"] = "sample";
      for (auto& [id, p] : props.items()) {
        if (!p.contains("min") || !own.contains(id)) continue;
        p["by_sample_type"][type] = {{"min", own[id]["min"]}, {"max", own[id]["max"]}};
        if (own[id]["min"] < p["min"]) p["min"] = own[id]["min"];
        if (own[id]["max"] > p["max"]) p["max"] = own[id]["max"];
      }
      c->_remove_ref();
    }
    for (auto& [id, p] : props.items()) {
      if (!p.contains("by_sample_type")) continue;
      const auto& first = p["by_sample_type"].begin().value();
      bool same = true;
      for (const auto& [type, range] : p["by_sample_type"].items()) same = same && range == first;
      if (same) p.erase("by_sample_type");
    }
    kinds[kind]["properties"] = props;
    // Where a plugin's kind comes from, so that a spec's check can tell
    // its library's kinds from the built-in ones.
    if (const std::string library = scabench::libraryOf(kind); !library.empty()) kinds[kind]["library"] = library;
  }
  nlohmann::ordered_json out;
  out["kinds"] = nlohmann::ordered_json::parse(kinds.dump());
  for (auto& [kind, ports] : portsOf) out["kinds"][kind]["ports"] = std::move(ports);
  out["policy"] = scabench::policy::describe();
  // A shared-memory ring's memory besides its data area (the data area's
  // bounds are every uses port's shm_bytes, above).
  out["shm_ring"] = {{"overhead_bytes", scabench::shm::overheadBytes()}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

// The component's reference, for a tool that drives or probes it from
// outside the launcher (tests/python/system/test_hostile_peers.py). Owner-only, in
// the run's private directory: a reference is the right to call configure or
// releaseObject (docs/trust-model.md).
void writeReference(const std::string& path, const char* ior) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  const std::string text = std::string(ior) + "\n";
  const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
}

const scabench::Usage kUsage{
    "scabench-host",
    "usage: scabench-host [--library PATH ...] --describe\n"
    "       scabench-host [--library PATH ...] --host NAME --status-fd FD --record-dir DIR "
    "--component NAME:KIND:SAMPLE_TYPE [...] [-ORBoption value ...]\n"
    "       scabench-host [--library PATH ...] NAMING_CONTEXT_IOR IOR COMPONENT_IDENTIFIER ID NAME_BINDING NAME "
    "KIND KIND [SAMPLE_TYPE TYPE] [RECORD_DIR DIR] [EVENTS_FILE PATH] [PROFILE_NAME SPD] [-ORBoption value ...]\n"
    "       scabench-host [--library PATH ...] NAMING_CONTEXT_IOR IOR COMPONENT_IDENTIFIER ID "
    "COMPONENT NAME:KIND[:TYPE] [COMPONENT ...] [RECORD_DIR DIR] [EVENTS_FILE PATH] [PROFILE_NAME SPD] "
    "[-ORBoption value ...]\n"
    "Hosts scabench components: --describe prints the component kinds (ports, properties with their types)\n"
    "and the policy schema as JSON; the second form is how scabench-launch runs a host; the third is the\n"
    "SCA execute protocol, one component bound under NAME in the naming context IOR; the fourth, several\n"
    "components in one process, each bound under its NAME. The execute forms write the packet records in\n"
    "RECORD_DIR (default: the working directory) and their events on stdout (with EVENTS_FILE, appended\n"
    "to that file instead); PROFILE_NAME is what\n"
    "CF::Resource::softwareProfile answers. --library loads a\n"
    "component library (a plugin) whose kinds then join the built-in ones.\n"};

// Takes every `--library PATH` out of the arguments (any form may have
// them) and returns the paths; sets `missing` if one lacks its path.
std::vector<std::string> takeLibraries(int& argc, char** argv, bool& missing) {
  std::vector<std::string> libraries;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--library") {
      argv[kept++] = argv[i];
    } else if (i + 1 < argc) {
      libraries.push_back(argv[++i]);
    } else {
      missing = true;
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return libraries;
}

// Loads the component libraries; the first that fails, in one line.
std::string loadLibraries(const std::vector<std::string>& libraries) {
  for (const auto& library : libraries) {
    try {
      scabench::loadComponentLibrary(library);
    } catch (const std::exception& ex) {
      return std::string("--library: ") + ex.what();
    }
  }
  return "";
}

// The SCA execute protocol: the exec parameters arrive as name/value pairs.
struct ExecParameters {
  std::string namingContextIor, identifier, nameBinding, kind, sampleType = "double", recordDir = ".";
  std::string profileName;                // PROFILE_NAME: the SPD, CF::Resource::softwareProfile
  std::string eventsFile;                 // EVENTS_FILE: the events go there, appended, rather than to stdout
  std::vector<ComponentSpec> components;  // COMPONENT NAME:KIND[:TYPE], each
};

// What CF::Resource::identifier answers (SCA: the COMPONENT_IDENTIFIER the
// launcher gave, not the NAME_BINDING). A host of several components was
// given one identifier, "HOST:APPLICATION" as a launcher writes it: each
// component answers its own name in that application, "NAME:APPLICATION",
// so that no two instances answer the same.
std::string componentIdentifier(const ExecParameters& p, const std::string& name) {
  if (p.components.size() == 1 && !p.nameBinding.empty()) return p.identifier;
  const auto colon = p.identifier.find(':');
  return colon == std::string::npos ? name : name + p.identifier.substr(colon);
}

bool isExecForm(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "NAMING_CONTEXT_IOR") return true;
  return false;
}

std::string rusageLine(const std::string& who) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return std::to_string(double(tv.tv_sec) + tv.tv_usec / 1e6); };
  return "rusage " + who + " " + seconds(usage.ru_utime) + " " + seconds(usage.ru_stime) + " " +
         std::to_string(usage.ru_nvcsw) + " " + std::to_string(usage.ru_nivcsw) + " " + std::to_string(usage.ru_maxrss);
}

int runExec(CORBA::ORB_ptr orb, int argc, char** argv) {
  ExecParameters p;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) return kUsage.refuse("exec parameter " + key + " has no value");
    const std::string value = argv[i + 1];
    if (key == "NAMING_CONTEXT_IOR")
      p.namingContextIor = value;
    else if (key == "COMPONENT_IDENTIFIER")
      p.identifier = value;
    else if (key == "NAME_BINDING")
      p.nameBinding = value;
    else if (key == "KIND")
      p.kind = value;
    else if (key == "SAMPLE_TYPE")
      p.sampleType = value;
    else if (key == "RECORD_DIR")
      p.recordDir = value;
    else if (key == "PROFILE_NAME")
      p.profileName = value;
    else if (key == "EVENTS_FILE")
      p.eventsFile = value;
    else if (key == "COMPONENT") {
      const auto a = value.find(':');
      const auto b = a == std::string::npos ? a : value.find(':', a + 1);
      if (a == std::string::npos || a == 0 || a + 1 == value.size())
        return kUsage.refuse("COMPONENT " + value + ": use NAME:KIND or NAME:KIND:SAMPLE_TYPE");
      p.components.push_back({value.substr(0, a), value.substr(a + 1, b == std::string::npos ? b : b - a - 1),
                              b == std::string::npos ? "" : value.substr(b + 1)});
    }
    // Other exec parameters (DOM_PATH, LOGGING_CONFIG_URI, ...) are for launchers
    // that need them; this host does not.
  }
  if (p.namingContextIor.empty()) return kUsage.refuse("NAMING_CONTEXT_IOR is required");
  if (!p.eventsFile.empty()) {
    // On stdout's descriptor: every event line goes where stdout's would.
    const int fd = ::open(p.eventsFile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return kUsage.refuse("EVENTS_FILE " + p.eventsFile + ": " + std::strerror(errno));
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
  }
  // What CF::Resource::identifier answers: never made up from the name.
  if (p.identifier.empty()) return kUsage.refuse("COMPONENT_IDENTIFIER is required");
  if (p.components.empty()) {
    if (p.nameBinding.empty() || p.kind.empty())
      return kUsage.refuse("NAME_BINDING and KIND, or COMPONENT NAME:KIND, are required");
    p.components.push_back({p.nameBinding, p.kind, p.sampleType});
  } else if (!p.nameBinding.empty() || !p.kind.empty()) {
    return kUsage.refuse("COMPONENT names each component of the host: leave NAME_BINDING and KIND out");
  }
  for (auto& c : p.components)
    if (c.sampleType.empty()) c.sampleType = p.sampleType;
  CosNaming::NamingContext_var context;
  try {
    CORBA::Object_var obj = orb->string_to_object(p.namingContextIor.c_str());
    context = CosNaming::NamingContext::_narrow(obj);
  } catch (const CORBA::Exception& ex) {
    return kUsage.refuse(std::string("NAMING_CONTEXT_IOR is not a naming context: ") + ex._name());
  }
  if (CORBA::is_nil(context)) return kUsage.refuse("NAMING_CONTEXT_IOR is not a naming context");
  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
  // Events on stdout: a launcher that did not fork this process reads them
  // there (a node keeps them in the process's directory).
  Host host(orb, root, STDOUT_FILENO);
  host.expect(p.components.size());
  // Each name goes with its component (SCA: unbound on releaseObject), so
  // that a launcher sees the context as it left it.
  host.onRelease([&context](const std::string& released) {
    CosNaming::Name name;
    name.length(1);
    name[0].id = released.c_str();
    try {
      context->unbind(name);
    } catch (...) {
      // The context may be gone with its domain; nothing to undo then.
    }
  });
  std::vector<scabench::Component*> components;
  for (const auto& spec : p.components) {
    scabench::Component* c = nullptr;
    try {
      c = scabench::createComponent(spec.kind, spec.sampleType,
                                    {spec.name, p.recordDir, &host, componentIdentifier(p, spec.name), p.profileName});
    } catch (const std::exception& ex) {
      return kUsage.refuse("component " + spec.name + ": KIND " + spec.kind + ", SAMPLE_TYPE " + spec.sampleType +
                           ": " + ex.what());
    }
    PortableServer::ObjectId_var id = root->activate_object(c);
    CORBA::Object_var ref = root->id_to_reference(id);
    components.push_back(c);
    CosNaming::Name name;
    name.length(1);
    name[0].id = spec.name.c_str();
    if (components.size() == 1) {
      PortableServer::POAManager_var manager = root->the_POAManager();
      manager->activate();
    }
    try {
      context->rebind(name, ref);
    } catch (const CORBA::Exception& ex) {
      std::cerr << "scabench-host: cannot bind " << spec.name << ": " << ex._name() << "\n";
      return 1;
    }
  }
  orb->run();  // until every component is released (each unbound its name)
  orb->destroy();
  for (auto* c : components) c->_remove_ref();
  host.notify(rusageLine(p.components.front().name));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  // A unix-socket endpoint is owner-only (omniORB's default is 0777): anyone
  // who can connect can send to the ports and call configure or
  // releaseObject (docs/trust-model.md). First, so that an explicit option
  // on the command line still wins.
  std::vector<char*> args{argv[0], const_cast<char*>("-ORBunixTransportPermission"), const_cast<char*>("0600")};
  args.insert(args.end(), argv + 1, argv + argc);
  argc = int(args.size());
  args.push_back(nullptr);
  argv = args.data();
  // Runs use packets up to 64 MiB; a host started by anyone else gets the
  // same limit unless its own -ORB options say otherwise.
  const std::string messageLimit = std::to_string(scabench::kRunMessageLimit);
  const char* options[][2] = {{"giopMaxMsgSize", messageLimit.c_str()}, {nullptr, nullptr}};
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv, "omniORB4", options);  // removes the -ORB options
  bool libraryWithoutPath = false;
  const std::vector<std::string> libraries = takeLibraries(argc, argv, libraryWithoutPath);
  if (libraryWithoutPath) return kUsage.refuse("--library needs the path of a component library");
  if (argc == 2 && std::string(argv[1]) == "--describe") {
    if (const std::string why = loadLibraries(libraries); !why.empty()) return kUsage.refuse(why);
    return describe(orb);
  }
  if (isExecForm(argc, argv)) {
    if (const std::string why = loadLibraries(libraries); !why.empty()) return kUsage.refuse(why);
    return runExec(orb, argc, argv);
  }
  std::string hostName, recordDir;
  int statusFd = -1;
  std::vector<ComponentSpec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return kUsage.refuse("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--host") {
      hostName = value;
    } else if (arg == "--status-fd") {
      statusFd = std::stoi(value);
    } else if (arg == "--record-dir") {
      recordDir = value;
    } else if (arg == "--component") {
      const auto a = value.find(':'), b = value.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) return kUsage.refuse("bad --component " + value);
      specs.push_back({value.substr(0, a), value.substr(a + 1, b - a - 1), value.substr(b + 1)});
    } else {
      return kUsage.refuse("unknown argument " + arg);
    }
  }
  if (hostName.empty() || statusFd < 0 || recordDir.empty() || specs.empty()) return kUsage.refuse("missing arguments");

  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  PortableServer::POA_var root = PortableServer::POA::_narrow(obj);
  Host host(orb, root, statusFd);
  host.expect(specs.size());
  // The spec's check loaded each library already (scabench-host --library
  // --describe); a failure here is a library changed since. The launcher
  // names the host's first component, the line names the library.
  if (const std::string why = loadLibraries(libraries); !why.empty()) {
    std::cerr << "scabench-host: " << why << "\n";
    host.notify("error " + specs.front().name + " " + why);
    return 2;
  }

  std::vector<scabench::Component*> components;
  for (const auto& spec : specs) {
    try {
      scabench::Component* c = scabench::createComponent(spec.kind, spec.sampleType, {spec.name, recordDir, &host});
      PortableServer::ObjectId_var id = root->activate_object(c);
      CORBA::Object_var ref = root->id_to_reference(id);
      CORBA::String_var ior = orb->object_to_string(ref);
      components.push_back(c);
      writeReference(recordDir + "/" + spec.name + ".ior", ior.in());
      host.notify("ready " + spec.name + " " + ior.in());
    } catch (const std::exception& ex) {
      host.notify("error " + spec.name + " " + ex.what());
      return 3;
    }
  }
  PortableServer::POAManager_var manager = root->the_POAManager();
  manager->activate();
  orb->run();
  orb->destroy();  // waits for every upcall, then drops the POA's servant references
  for (auto* c : components) c->_remove_ref();

  host.notify(rusageLine(hostName));
  return 0;
}
