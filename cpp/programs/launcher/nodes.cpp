// Processes placed on nodes (docs/architecture.md, "Placement on nodes"):
// started, watched, timed and ended through each node's ExecutableDevice.
//
// What the launcher asks of a node is standard CF where CF has a place for
// it: operationalState, allocateCapacity / deallocateCapacity of the GPP's
// memCapacity (REDHAWK's id, which any GPP answers), load, execute,
// terminate, unload. scabench::node::NodeDevice (idl/node.idl) is asked only
// for what CF has no place for: watch (the processes' events on stdout,
// their state and their packet records, without which the run can see
// neither its end nor its figures), processes' CPU in those records,
// monotonicNs (the node's clock), the query of published_host, and the
// execute options AFFINITY and SCHEDULER. A device that is a plain
// CF::ExecutableDevice gets CF alone, and what CF has no place for is had
// another way, on this machine only (plain_nodes.cpp).
#include "launcher/launcher.hpp"

namespace scabench::launch {

namespace {
// REDHAWK's GPP memCapacity (MiB not allocated): model/gpp.py has the GPP's ids.
constexpr const char* GPP_MEM_CAPACITY = "DCE:8dcef419-b440-4bcf-b893-cab79b6024fb";
constexpr const char* NODE_DEVICE_REPID = "IDL:scabench/node/NodeDevice:1.0";

CF::Properties memCapacity(long long mib) {
  CF::Properties capacity;
  capacity.length(1);
  capacity[0].id = GPP_MEM_CAPACITY;
  capacity[0].value <<= CORBA::LongLong(mib);
  return capacity;
}
}  // namespace

// Each node the assembly places a process on, from the run's Naming
// Service (nodes/NAME/device): it must answer ENABLED, its components
// must be reachable from the run's other processes, and it must have the
// memory the run's processes there need (allocateCapacity).
void Launcher::resolveNodes() {
  bool anyLocal = false;
  for (const auto& h : hosts_) anyLocal = anyLocal || h.node.empty();
  for (auto& [name, n] : nodes_) {
    const std::string who = firstComponentOn(name);
    CosNaming::Name path;
    path.length(3);
    path[0].id = "nodes";
    path[1].id = name.c_str();
    path[2].id = "device";
    try {
      CORBA::Object_var obj = root_->resolve(path);
      omniORB::setClientCallTimeout(obj, NODE_CALL_TIMEOUT_MS);
      if (!obj->_is_a("IDL:CF/ExecutableDevice:1.0"))
        throw RunFailure(who, "node " + name + ": nodes/" + name + "/device is not a CF::ExecutableDevice");
      n.plainCf = !obj->_is_a(NODE_DEVICE_REPID);
      n.device = CF::ExecutableDevice::_narrow(obj);
      CORBA::String_var ior = orb_->object_to_string(n.device);
      CORBA::Object_var again = orb_->string_to_object(ior.in());  // a reference of its own, for its own timeout
      n.poll = CF::ExecutableDevice::_narrow(again);
      if (!n.plainCf) {
        n.watcher = scabench::node::NodeDevice::_narrow(n.device);
        n.watcherPoll = scabench::node::NodeDevice::_narrow(n.poll);
        omniORB::setClientCallTimeout(n.watcher, NODE_CALL_TIMEOUT_MS);
        omniORB::setClientCallTimeout(n.watcherPoll, NODE_POLL_TIMEOUT_MS);
      }
    } catch (const CosNaming::NamingContext::NotFound&) {
      throw RunFailure(who, "node " + name + " is not registered in the domain (nodes/" + name + " in " +
                                plan_.naming->corbaloc + "); start it with scabench node --name " + name);
    } catch (const CORBA::SystemException& ex) {
      throw RunFailure(who, "node " + name + " does not answer: " + describeException(ex));
    }
    omniORB::setClientCallTimeout(n.device, NODE_CALL_TIMEOUT_MS);
    omniORB::setClientCallTimeout(n.poll, NODE_POLL_TIMEOUT_MS);
    if (n.plainCf) refuseScabenchOptions(n);
    nodeCall(n, "operationalState", [&] {
      if (n.poll->operationalState() != CF::Device::ENABLED)
        throw RunFailure(who, "node " + name + " is DISABLED" +
                                  (n.plainCf ? "" : ": its domain's Naming Service does not answer it"));
      if (n.plainCf) return;  // its components listen on loopback (plainParameters): this machine's
      CF::Properties asked;
      asked.length(1);
      asked[0].id = "published_host";
      n.watcherPoll->query(asked);
      const char* host = nullptr;
      if (asked[0].value >>= host) n.publishedHost = host;
    });
  }
  // Processes of this machine, a plain node's among them, listen on its
  // loopback, which a node's published elsewhere cannot reach.
  for (const auto& [name, n] : nodes_) anyLocal = anyLocal || n.plainCf;
  for (const auto& [name, n] : nodes_)
    if (anyLocal && !n.publishedHost.empty() && !isLoopback(n.publishedHost))
      throw RunFailure(firstComponentOn(name), "node " + name + "'s components are reached at " + n.publishedHost +
                                                   ", and this run's processes on this machine (a plain CF node's "
                                                   "included) listen on its loopback, which they cannot reach; "
                                                   "place every process on a scabench node");
  for (auto& [name, n] : nodes_) {
    const std::string who = firstComponentOn(name);
    if (n.memoryMib > 0) {
      bool granted = false;
      // A device that does not take the GPP's memCapacity cannot be asked
      // whether the run fits: refused by name rather than run blind.
      const std::string noMemCapacity = "node " + name + "'s device does not take REDHAWK's GPP memCapacity (" +
                                        GPP_MEM_CAPACITY + "), which the launcher asks for the " +
                                        std::to_string(n.memoryMib) + " MiB the run's processes there need: ";
      nodeCall(n, "allocateCapacity", [&] {
        try {
          granted = n.device->allocateCapacity(memCapacity(n.memoryMib));
        } catch (const CF::Device::InvalidCapacity& ex) {
          throw RunFailure(who, noMemCapacity + "InvalidCapacity (" + ex.msg.in() + "); nothing was started");
        } catch (const CORBA::NO_IMPLEMENT&) {
          throw RunFailure(who, noMemCapacity + "allocateCapacity is not implemented; nothing was started");
        } catch (const CORBA::BAD_OPERATION& ex) {
          throw RunFailure(who, noMemCapacity + describeException(ex) + "; nothing was started");
        }
      });
      if (!granted)
        throw RunFailure(who, "node " + name + " has not " + std::to_string(n.memoryMib) +
                                  " MiB of memory left for this run's processes (allocateCapacity refused)");
      n.allocated = true;
    }
  }
}

bool Launcher::isLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string Launcher::firstComponentOn(const std::string& node) const {
  for (const auto& h : hosts_)
    if (h.node == node && !h.components.empty()) return h.components.front();
  return "";
}

std::string Launcher::propertyIds(const CF::Properties& props) {
  std::string out;
  for (CORBA::ULong i = 0; i < props.length(); ++i) out += std::string(out.empty() ? "" : ", ") + props[i].id.in();
  return out;
}

// A node that does not answer. Only that is known: its agent may be gone
// (its processes then die with it, PR_SET_PDEATHSIG), or stopped or hung
// (they run on until it ends). On this machine (a network host) each
// process is looked at, and the message says which it is; elsewhere it
// says that it is not known.
RunFailure Launcher::nodeDied(const Node& n) {
  std::string lost;
  bool anyRunning = false, known = n.sameMachine;
  for (const auto& h : hosts_)
    if (h.node == n.name && h.pid > 0)
      for (const auto& c : h.components) {
        lost += (lost.empty() ? "" : ", ") + c;
        if (known) {
          const bool running = procStat(h.pid).running();
          anyRunning = anyRunning || running;
          lost += " (pid " + std::to_string(h.pid) + (running ? ", still running)" : ", ended)");
        }
      }
  std::string message = "node " + n.name + " does not answer (" + n.deadWhy + ")";
  if (lost.empty()) return RunFailure(firstComponentOn(n.name), message);
  if (!known)
    message += "; its components " + lost +
               " are out of the run (whether they still run is not known from "
               "here: a node's processes end when its agent does)";
  else if (anyRunning)
    message += ": its agent is stopped or hung, not gone; its components " + lost +
               " are out of the run (they end when their agent does)";
  else
    message += ": it is gone, and its components " + lost + " went with it";
  return RunFailure(firstComponentOn(n.name), message);
}

// Starts a process on its node: load, then execute with the SCA exec
// parameters (values as strings; the node adds its endpoint), on the
// CPUs asked (AFFINITY, within the node's) and the run's scheduler.
void Launcher::execute(HostProc& h) {
  Node& n = nodes_.at(h.node);
  const std::string who = h.components.front();
  // A scabench node runs its own installation's program, by its name, and
  // is handed no file system; a plain one (a GPP) copies the program from
  // the launcher's file system, by its absolute name there (plain_files.cpp).
  const std::string program = n.plainCf ? servedName(h) : h.program;
  if (!n.loaded.count(program)) {
    CF::FileSystem_var fs = n.plainCf ? CF::FileSystem::_duplicate(programFileSystem()) : CF::FileSystem::_nil();
    nodeCall(
        n, "load " + program, [&] { n.device->load(fs, program.c_str(), CF::LoadableDevice::EXECUTABLE); }, who);
    n.loaded.insert(program);
  }
  std::vector<std::string> params = execParameters(h);
  if (n.plainCf) plainParameters(h, params);
  CF::Properties parameters;
  parameters.length(CORBA::ULong(params.size() / 2));
  for (std::size_t i = 0; i + 1 < params.size(); i += 2) {
    parameters[CORBA::ULong(i / 2)].id = params[i].c_str();
    parameters[CORBA::ULong(i / 2)].value <<= params[i + 1].c_str();
  }
  CF::Properties options;  // scabench node's own options: never asked of a plain node (refuseScabenchOptions)
  if (!h.cores.empty()) {
    std::string cpus;
    for (int c : h.cores) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    options.length(options.length() + 1);
    options[options.length() - 1].id = "AFFINITY";
    options[options.length() - 1].value <<= cpus.c_str();
  }
  if (h.batch) {
    options.length(options.length() + 1);
    options[options.length() - 1].id = "SCHEDULER";
    options[options.length() - 1].value <<= "batch";
  }
  nodeCall(
      n, "execute " + program + " for " + who, [&] { h.pid = n.device->execute(program.c_str(), options, parameters); },
      who);
  h.spawnedNs = scabench::monotonicNs();
  if (n.plainCf)
    for (std::size_t i = 0; i + 1 < params.size(); i += 2)
      if (params[i] == "COMPONENT_IDENTIFIER") checkOnThisMachine(n, h, params[i + 1]);
}

// One round trip per node: every process of the run there that has not
// been seen ended, its stdout from where it was read to (events), and, for
// a host, its components' record headers (progress, for the watchdog and
// for a dead host's last packets). A node that does not answer is gone.
void Launcher::pollNodes(bool exitIsFailure, bool force) {
  const int64_t now = scabench::monotonicNs();
  std::vector<HostProc*> ended;
  for (auto& [name, n] : nodes_) {
    if (!n.deadWhy.empty() || CORBA::is_nil(n.poll)) continue;
    if (n.plainCf) {  // this machine's /proc and files: no round trip, every time
      pollPlain(n, ended);
      continue;
    }
    if (!force && now - n.lastPollNs < REMOTE_POLL_MS * 1'000'000) continue;
    std::vector<HostProc*> procs;
    for (auto& h : hosts_)
      if (h.node == name && h.pid > 0 && !h.exited) procs.push_back(&h);
    if (procs.empty()) continue;
    n.lastPollNs = now;
    scabench::node::WatchRequests requests;
    requests.length(CORBA::ULong(procs.size()));
    for (CORBA::ULong i = 0; i < procs.size(); ++i) {
      const HostProc& h = *procs[i];
      requests[i].pid = h.pid;
      requests[i].files.length(CORBA::ULong(1 + (h.exec ? 0 : h.components.size())));
      requests[i].files[0].fileName = "stdout";
      requests[i].files[0].offset = h.outOffset;
      requests[i].files[0].maxBytes = STDOUT_PART;
      for (CORBA::ULong j = 1; j < requests[i].files.length(); ++j) {
        requests[i].files[j].fileName = (h.components[j - 1] + ".rec").c_str();
        requests[i].files[j].offset = 0;
        requests[i].files[j].maxBytes = sizeof(scabench::RecordFileHeader);
      }
    }
    scabench::node::WatchedProcesses_var seen;
    try {
      seen = n.watcherPoll->watch(requests);
    } catch (const CORBA::SystemException& ex) {
      n.deadWhy = describeException(ex);
      lose(n);
      if (exitIsFailure) throw nodeDied(n);
      continue;
    } catch (const CORBA::Exception& ex) {
      throw RunFailure(procs.front()->components.front(), "node " + name + ": watch: " + describeException(ex));
    }
    for (CORBA::ULong i = 0; i < seen->length() && i < procs.size(); ++i) {
      HostProc& h = *procs[i];
      const scabench::node::Watched& w = seen[i];
      h.nodeRecord = recordJson(w.record);
      h.nodeCpuS = w.record.userSeconds + w.record.systemSeconds;
      const scabench::node::FilePart& out = w.files[0];
      if (out.exists && out.data.length()) {
        h.outPending.append(reinterpret_cast<const char*>(out.data.get_buffer()), out.data.length());
        h.outOffset += out.data.length();
      }
      for (CORBA::ULong j = 1; j < w.files.length(); ++j) {
        const scabench::node::FilePart& head = w.files[j];
        if (head.exists && head.data.length() == sizeof(scabench::RecordFileHeader))
          writeFile(runDir_ + "/" + h.components[j - 1] + ".progress", head.data.get_buffer(), head.data.length());
      }
      if (!w.record.running) {  // its files were read after it ended: nothing more will come
        h.exited = true;
        h.exitStatus = w.record.exitStatus;
        h.errorTail = w.record.errorTail.in();
        ended.push_back(&h);
      }
      remoteLines(h);
    }
  }
  if (exitIsFailure && !ended.empty()) throw hostDied(*ended.front());
}

// A node is gone: its processes went with it (PR_SET_PDEATHSIG).
void Launcher::lose(Node& n) {
  for (auto& h : hosts_)
    if (h.node == n.name && h.pid > 0 && !h.exited) {
      h.exited = true;
      h.lostWith = n.name;
    }
}

// The events in what a process on a node wrote on stdout, as a host writes
// them on its pipe: those naming its own components.
void Launcher::remoteLines(HostProc& h) {
  takeLines(h.outPending, [&](const std::string& line) {
    std::istringstream in(line);
    std::string kind, who;
    in >> kind >> who;
    const bool mine = std::find(h.components.begin(), h.components.end(), who) != h.components.end();
    if (!mine) return;
    if (kind == "rusage") {
      double utime, stime;
      long nvcsw, nivcsw, maxrss;
      if (in >> utime >> stime >> nvcsw >> nivcsw >> maxrss)
        h.rusage = {{"user_s", utime},
                    {"system_s", stime},
                    {"voluntary_ctxsw", nvcsw},
                    {"involuntary_ctxsw", nivcsw},
                    {"max_rss_kb", maxrss}};
    } else if (kind == "error" || kind == "stat" || (kind == "eos" && !h.exec)) {
      handleLine(line);
    }
  });
}

json Launcher::recordJson(const scabench::node::ProcessRecord& r) {
  return {{"pid", r.pid},
          {"program", r.program.in()},
          {"identifier", r.identifier.in()},
          {"running", bool(r.running)},
          {"exit_status", r.running ? json(nullptr) : json(r.exitStatus)},
          {"user_s", r.userSeconds},
          {"system_s", r.systemSeconds},
          {"context_switches", r.contextSwitches},
          {"error_tail", r.errorTail.in()}};
}

void Launcher::writeFile(const std::string& path, const void* data, std::size_t size) {
  const std::string temporary = path + ".part";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + strerror(errno));
  const char* p = static_cast<const char*>(data);
  std::size_t left = size;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path + ": " + strerror(errno));
    }
    p += n;
    left -= std::size_t(n);
  }
  ::close(fd);
  // Whole or not at all: the watchdog reads these files as they come.
  if (::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

// The CPU of every running process on a node, summed over the nodes on
// this machine (their processes' CPU is the run's own, not foreign); at
// the window's start each process's is kept, at its end the difference is
// its window_cpu_s.
double Launcher::readRemoteCpu(bool atStart) {
  if (nodes_.empty()) return 0;
  pollNodes(true, true);
  double sameMachine = 0;
  for (auto& h : hosts_) {
    if (h.node.empty() || h.nodeCpuS < 0) continue;
    const double cpu = h.nodeCpuS;
    if (atStart)
      h.cpuAtStart = cpu;
    else
      h.windowCpuS = cpu - h.cpuAtStart;
    if (nodes_.at(h.node).sameMachine) sameMachine += cpu;
  }
  return sameMachine;
}

// Each node's clock against the launcher's: the probe with the shortest
// round trip of CLOCK_PROBES.
void Launcher::probeClocks(ClockProbe Node::*which) {
  for (auto& [name, n] : nodes_) {
    if (!n.deadWhy.empty() || n.plainCf) continue;  // a plain node is this machine: its clock is the launcher's
    ClockProbe best;
    nodeCall(n, "monotonicNs", [&] {
      for (int i = 0; i < CLOCK_PROBES; ++i) {
        const int64_t t0 = scabench::monotonicNs();
        const int64_t tNode = n.watcherPoll->monotonicNs();
        const int64_t t1 = scabench::monotonicNs();
        if (!best.done || t1 - t0 < best.rttNs) {
          best.done = true;
          best.rttNs = t1 - t0;
          best.atNs = t0 + (t1 - t0) / 2;
          best.offsetNs = tNode - best.atNs;
          best.boundNs = (t1 - t0 + 1) / 2;
        }
      }
    });
    n.*which = best;
  }
}

// A time on a node's clock on the launcher's: less the offset, taken
// linearly between the probes before the stream and after it (the two
// clocks' rates may differ a little: NTP slews each).
int64_t Launcher::toLauncherNs(const Node& n, int64_t nodeNs) {
  if (!n.start.done) return nodeNs;
  long double offset = n.start.offsetNs;
  if (n.end.done) {
    const long double from = n.start.atNs + n.start.offsetNs, to = n.end.atNs + n.end.offsetNs;
    if (to > from) offset += (n.end.offsetNs - n.start.offsetNs) * ((nodeNs - from) / (to - from));
  }
  return nodeNs - int64_t(offset);
}

// Every record file of the run's hosts on nodes, into the run directory,
// its times (arrival, done) on the launcher's clock: the analysis then
// reads one clock, as for hosts of this machine. Best effort on a failure
// (a node gone takes its records along).
void Launcher::fetchRecords(bool bestEffort) {
  for (auto& h : hosts_) {
    if (h.node.empty() || h.exec || h.pid <= 0) continue;
    Node& n = nodes_.at(h.node);
    if (!n.deadWhy.empty() || n.plainCf) continue;  // a plain node's process wrote its records here itself
    if (!n.start.done && !bestEffort) continue;
    for (const auto& c : h.components) {
      try {
        fetchRecord(n, h, c);
      } catch (const RunFailure&) {
        if (!bestEffort) throw;
        break;  // its node is gone, or its file: the next host's
      }
    }
  }
}

void Launcher::fetchRecord(Node& n, const HostProc& h, const std::string& component) {
  std::string bytes;
  uint64_t size = 1;
  while (bytes.size() < size) {
    scabench::node::WatchRequests requests;
    requests.length(1);
    requests[0].pid = h.pid;
    requests[0].files.length(1);
    requests[0].files[0].fileName = (component + ".rec").c_str();
    requests[0].files[0].offset = bytes.size();
    requests[0].files[0].maxBytes = scabench::node::NodeDevice::MAX_WATCH_BYTES;
    scabench::node::WatchedProcesses_var seen;
    nodeCall(
        n, "fetch " + component + ".rec", [&] { seen = n.watcher->watch(requests); }, component);
    const scabench::node::FilePart& part = seen[0].files[0];
    if (!part.exists) return;  // never made, or the node no longer keeps it
    size = part.size;
    if (part.data.length() == 0) break;
    bytes.append(reinterpret_cast<const char*>(part.data.get_buffer()), part.data.length());
  }
  if (bytes.size() < sizeof(scabench::RecordFileHeader)) return;
  const auto* header = reinterpret_cast<const scabench::RecordFileHeader*>(bytes.data());
  const uint64_t count = std::min<uint64_t>(header->claimed.load(), header->capacity);
  const std::size_t slots = (bytes.size() - sizeof(scabench::RecordFileHeader)) / sizeof(scabench::PacketRecord);
  auto* records = reinterpret_cast<scabench::PacketRecord*>(bytes.data() + sizeof(scabench::RecordFileHeader));
  for (std::size_t i = 0; i < std::min<uint64_t>(count, slots); ++i) {
    // 0 is no time (a slot claimed, a packet not done): left as it is.
    if (records[i].arriveNs) records[i].arriveNs = toLauncherNs(n, records[i].arriveNs);
    if (records[i].doneNs) records[i].doneNs = toLauncherNs(n, records[i].doneNs);
  }
  writeFile(runDir_ + "/" + component + ".rec", bytes.data(), bytes.size());
  ::unlink((runDir_ + "/" + component + ".progress").c_str());
}

// After a failure: the processes ended (killAll: a node's are terminated
// through it), and what their records hold brought back from the nodes
// still there.
void Launcher::failed() {
  abandonRefs();
  killAll();
  try {
    fetchRecords(/*bestEffort=*/true);
  } catch (const std::exception&) {
  }
}

// At the end, every way: each node's last records of the run's processes
// (their CPU and context switches), its capacity given back, its programs
// unloaded. Each call bounded; a node gone is skipped.
void Launcher::endNodes() {
  for (auto& [name, n] : nodes_) {
    if (!n.deadWhy.empty() || CORBA::is_nil(n.device)) continue;
    try {
      omniORB::setClientCallTimeout(n.device, 5000);
      if (n.allocated) {
        n.device->deallocateCapacity(memCapacity(n.memoryMib));
        n.allocated = false;
      }
      for (const auto& program : n.loaded) n.device->unload(program.c_str());
    } catch (const CORBA::SystemException& ex) {
      n.deadWhy = describeException(ex);
    } catch (const CORBA::Exception&) {
    }
  }
}

json Launcher::describeNodes() const {
  json out = json::array();
  for (const auto& [name, n] : nodes_) {
    json entry = {{"name", name},
                  {"same_machine", n.sameMachine},
                  {"published_host", n.publishedHost},
                  {"device", n.plainCf ? "CF::ExecutableDevice" : "scabench::node::NodeDevice"},
                  // Where its processes' CPU and state come from: the node's records, or this machine's /proc.
                  {"cpu_from", n.plainCf ? "/proc" : "node"}};
    if (!n.deadWhy.empty()) entry["lost"] = n.deadWhy;
    json clock = json::object();
    for (const auto& [key, probe] : {std::pair<const char*, const ClockProbe*>{"start", &n.start}, {"end", &n.end}})
      if (probe->done)
        clock[key] = {{"offset_ns", probe->offsetNs},
                      {"bound_ns", probe->boundNs},
                      {"rtt_ns", probe->rttNs},
                      {"at_ns", probe->atNs}};
    entry["clock"] = clock;
    json processes = json::array();
    for (const auto& h : hosts_)
      if (h.node == name && h.pid > 0) {
        json record = h.nodeRecord.is_null() ? json{{"pid", h.pid}} : h.nodeRecord;
        record["host"] = h.name;
        record["components"] = h.components;
        processes.push_back(record);
      }
    entry["processes"] = processes;
    out.push_back(entry);
  }
  return out;
}

// A node's processes still running: terminate (SIGTERM, SIGKILL 5 s
// later, returns once gone), every one at once (a thread each: the call
// blocks, and a stopped process takes the whole 5 s), then one more look
// for their last records and output (rusage). A node gone took its
// processes along.
void Launcher::terminateRemote() {
  std::vector<std::thread> calls;
  std::mutex mutex;
  for (auto& h : hosts_) {
    if (h.node.empty() || h.exited || h.pid <= 0) continue;
    Node& n = nodes_.at(h.node);
    if (!n.deadWhy.empty()) {
      if (!n.plainCf) lose(n);  // a plain node's are ended below, on this machine
      continue;
    }
    calls.emplace_back([&n, &mutex, pid = h.pid] {
      try {
        n.device->terminate(pid);
      } catch (const CF::ExecutableDevice::InvalidProcess&) {
        // It had ended already.
      } catch (const CORBA::SystemException& ex) {
        std::lock_guard lock(mutex);
        n.deadWhy = describeException(ex);
      } catch (const CORBA::Exception&) {
      }
    });
  }
  for (auto& call : calls) call.join();
  endPlainProcesses();
  for (auto& [name, n] : nodes_)
    if (!n.deadWhy.empty()) lose(n);
  try {
    pollNodes(false, true);
  } catch (const std::exception&) {
  }
  // What a node could not say: ended either way, as far as the run goes;
  // but a plain node's process seen running here is not said to have ended.
  for (auto& h : hosts_)
    if (!h.node.empty() && !h.exited && h.pid > 0 && h.stillRunning.empty()) {
      h.exited = true;
      if (!nodes_.at(h.node).deadWhy.empty()) h.lostWith = h.node;
    }
}

}  // namespace scabench::launch
