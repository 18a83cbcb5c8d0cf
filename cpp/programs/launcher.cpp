// scabench-launch: runs one assembly and tears it down, whatever happens.
//
//   scabench-launch ASSEMBLY.json MANIFEST.json
//
// The assembly (written by `scabench run`, format in docs/architecture.md)
// lists host processes with their cores, ORB options and components, the
// external components (programs it starts with the SCA exec parameters, or
// references to components someone else started), and the connections. The
// launcher starts the hosts and the external programs, drives each component
// the SCA way (initialize, configure, getPort, connectPort, start), waits
// until every terminal component has seen end of stream, then
// stop/releaseObject. It measures the CPU that processes outside the run
// used meanwhile, and each process's own, and writes the outcome to
// MANIFEST.json. On any failure it names the component and the reason, and
// no process it started outlives it.
//
// A process placed on a node (docs/architecture.md, "Placement on nodes") is
// started by that node's ExecutableDevice (scabench node) instead of a fork,
// in the execute form, and binds itself in the waveform's naming context as
// an external program does. The launcher watches it through the node (its
// state, its events on stdout, the progress in its records' headers, one
// round trip per node every REMOTE_POLL_MS), relates the node's clock to its
// own by round trips before the stream starts and after it ends, fetches its
// record files into the run directory once the stream has ended, with their
// times moved onto the launcher's clock, and terminates it at the end.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <omniORB4/Naming.hh>
#include <omniORB4/omniORB.h>

#include "cf.hh"
#include "node.hh"
#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/core/record_log.hpp"
#include "launcher/plan.hpp"

using nlohmann::json;
using scabench::launch::Plan;

namespace {

volatile std::sig_atomic_t interrupted = 0;
void onSignal(int) { interrupted = 1; }

// A failure with the component it belongs to.
struct RunFailure : std::runtime_error {
  RunFailure(std::string component, const std::string& what) : std::runtime_error(what), component(std::move(component)) {}
  std::string component;
};

// Hands each whole line at the front of `pending` to `each`, taking it off
// first: a pipe or a node's file is read in pieces that can end mid-line, so
// an unfinished last line stays for the next piece.
template <typename Each>
void takeLines(std::string& pending, Each&& each) {
  std::size_t nl;
  while ((nl = pending.find('\n')) != std::string::npos) {
    const std::string line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    each(line);
  }
}

// A process the launcher starts: a scabench-host, or an external component's
// program started with the SCA exec parameters.
struct HostProc {
  std::string name;
  std::vector<int> cores;
  bool batch = false; // SCHED_BATCH: the host's threads do not preempt on wake-up
  std::vector<std::string> components;
  std::vector<std::string> argv;  // what is exec'd, made before fork (the child must not allocate)
  // An external program binds itself in the naming context and has no status
  // pipe: its stdout is read for the events a scabench component writes
  // ("error NAME ...", "stat NAME ..."), its stderr kept in the run directory.
  bool exec = false;
  std::string errPath;
  int outFd = -1;
  std::string outPending;
  double bindTimeoutS = 0;
  int64_t spawnedNs = 0;
  pid_t pid = -1;
  bool exited = false;
  int status = 0;
  json rusage;
  double cpuAtStart = 0;   // CPU seconds at the measured window's start
  double windowCpuS = -1;  // CPU seconds over the measured window; -1: not measured
  // On a node: started by its ExecutableDevice and watched through it; pid
  // is the node's. Empty node: forked here.
  std::string node;
  std::string program;        // the node's name for the program
  std::vector<std::string> execParams;  // its execute parameters, id and value in turn (made before execute)
  uint64_t outOffset = 0;     // how much of its stdout has been read
  int exitStatus = 0;         // as the node says: the exit code, or minus the signal
  std::string errorTail;      // its last line on stderr, as the node says
  json nodeRecord;            // the node's last record of it
  std::string lostWith;       // the node that died with it
};

// A round trip to a node's clock: the node read its CLOCK_MONOTONIC at some
// instant between the launcher's t0 and t1, so its offset to the launcher's
// clock is tNode - (t0 + t1) / 2 within (t1 - t0) / 2, whatever the delays
// each way. The best of a few probes (the shortest round trip) is kept.
struct ClockProbe {
  bool done = false;
  int64_t offsetNs = 0;  // node clock minus launcher clock
  int64_t boundNs = 0;   // |error| of offsetNs at most this
  int64_t rttNs = 0;
  int64_t atNs = 0;      // when, on the launcher's clock
};

// A node the run places processes on: its device (one reference with the
// calls' own timeout, one with a short one for the poll) and what the run
// took from it.
struct Node {
  std::string name;
  scabench::node::NodeDevice_var device, poll;
  bool sameMachine = false;  // on the launcher's machine (network hosts): its processes' CPU is the run's own
  long long memoryMib = 0;
  bool allocated = false;
  std::set<std::string> loaded;
  std::string publishedHost;
  std::string deadWhy;  // empty: alive
  int64_t lastPollNs = 0;
  ClockProbe start, end;
};

// A component the launcher does not host: exec'd (a HostProc of its own) or
// resolved from a reference.
struct External {
  std::string name;
  std::string ref;          // empty: exec'd
  bool release = true;      // releaseObject at the end (a reference may belong to someone else)
  bool configured = false;   // taken into the run: its configure succeeded
  bool startedByUs = false;
  std::string sampleType;
};

std::string describeException(const CORBA::Exception& ex) {
  std::string text = ex._name();
  if (auto* sys = CORBA::SystemException::_downcast(&ex))
    if (const char* minor = sys->NP_minorString()) text += std::string(" (") + minor + ")";
  return text;
}

// The last line a program wrote to its stderr file, for an error message.
std::string lastLineOf(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// ------------------------------------------------------------ CPU accounting

struct CpuSnapshot {
  int64_t wallNs = 0;
  double busySeconds = 0;  // on the measured cores, by anyone
  double ownSeconds = 0;   // by the run's processes
};

double jiffy() { return 1.0 / double(sysconf(_SC_CLK_TCK)); }

double busyOnCores(const std::vector<int>& cores) {
  std::ifstream in("/proc/stat");
  std::string line;
  double busy = 0;
  std::set<int> wanted(cores.begin(), cores.end());
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !isdigit(line[3])) continue;
    std::istringstream fields(line.substr(3));
    int cpu;
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal = 0;
    fields >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    // Steal counts as foreign: the hypervisor gave our core to someone else.
    if (wanted.count(cpu)) busy += double(user + nice + system + irq + softirq + steal);
  }
  return busy * jiffy();
}

// utime + stime of a whole process (threads that ended included).
double processCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;  // fields 3..13
  uint64_t utime = 0, stime = 0;
  fields >> utime >> stime;
  return double(utime + stime) * jiffy();
}

// CPU time of a whole process (its threads that ended included), to the
// nanosecond: the kernel's own clock of that process, where /proc counts
// whole clock ticks. -1 if it cannot be read (the process is gone).
double processCpuClockSeconds(pid_t pid) {
  clockid_t clock;
  timespec t{};
  if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &t) != 0) return -1;
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

CpuSnapshot snapshot(const std::vector<int>& cores, const std::vector<HostProc>& hosts) {
  CpuSnapshot s;
  s.wallNs = scabench::monotonicNs();
  s.busySeconds = busyOnCores(cores);
  s.ownSeconds = processCpuSeconds(getpid());
  for (const auto& h : hosts)
    if (!h.exited && h.node.empty()) s.ownSeconds += processCpuSeconds(h.pid);  // a node's: read through it
  return s;
}

// ------------------------------------------------------------------ Launcher

class Launcher {
 public:
  explicit Launcher(Plan plan) : plan_(std::move(plan)) {}

  json run() {
    json manifest;
    try {
      validate();
      initOrb();
      makeContext();
      resolveNodes();
      spawnAll();
      waitReady();
      resolveRefs();
      checkExternalPorts();
      configureAll();
      bindNames();
      connectAll();
      probeClocks(&Node::start);
      const double remoteBefore = readRemoteCpu(/*atStart=*/true);
      const CpuSnapshot before = snapshot(measuredCores_, hosts_);
      for (auto& h : hosts_)
        if (!h.exited && h.node.empty()) h.cpuAtStart = processCpuClockSeconds(h.pid);
      manifest["window_start_ns"] = before.wallNs;
      startAll();
      announceStart();
      waitEndOfStream();
      const CpuSnapshot after = snapshot(measuredCores_, hosts_);
      for (auto& h : hosts_) {
        const double now = h.exited || !h.node.empty() ? -1 : processCpuClockSeconds(h.pid);
        if (now >= 0 && h.cpuAtStart >= 0) h.windowCpuS = now - h.cpuAtStart;
      }
      // A node's processes through the node (a round trip after the local
      // reading; on the launcher's machine, their CPU is the run's own).
      const double remoteOwn = readRemoteCpu(/*atStart=*/false) - remoteBefore;
      manifest["window_end_ns"] = after.wallNs;
      const double wall = double(after.wallNs - before.wallNs) / 1e9;
      const double own = after.ownSeconds - before.ownSeconds + remoteOwn;
      const double foreign = (after.busySeconds - before.busySeconds) - own;
      manifest["own_cpu_s"] = own;
      // A share of the cores: /proc/stat counts in jiffies (10 ms) and a
      // process's CPU in nanoseconds, so over a short window the difference
      // can leave [0, 100] by a jiffy per core either way.
      manifest["foreign_cpu_pct"] =
          wall > 0 ? std::clamp(100.0 * foreign / (wall * double(measuredCores_.size())), 0.0, 100.0) : 0.0;
      manifest["eos"] = eos_;
      probeClocks(&Node::end);
      fetchRecords();  // before "held": the runner reads the records then
      holdIfAsked();
      releaseAll();
      manifest["status"] = "ok";
    } catch (const RunFailure& f) {
      manifest["status"] = "failed";
      manifest["failed_component"] = f.component;
      manifest["error"] = f.what();
      failed();
    } catch (const std::exception& ex) {
      manifest["status"] = "failed";
      manifest["failed_component"] = "";
      manifest["error"] = ex.what();
      failed();
    }
    endNodes();
    removeContext();
    // After the release: a component reports some figures (a Python
    // component's refusals) only as it goes.
    manifest["stats"] = stats_;
    json hosts = json::array();
    for (const auto& h : hosts_) {
      json entry = {{"name", h.name}, {"pid", h.pid}, {"cores", h.cores}, {"components", h.components}};
      if (h.exec) entry["exec"] = h.argv.front();
      if (!h.node.empty()) entry["node"] = h.node;
      entry["exit"] = exitText(h);
      if (!h.rusage.is_null()) entry["rusage"] = h.rusage;
      if (h.windowCpuS >= 0) entry["window_cpu_s"] = h.windowCpuS;
      hosts.push_back(entry);
    }
    manifest["hosts"] = hosts;
    if (!nodes_.empty()) manifest["nodes"] = describeNodes();
    if (!CORBA::is_nil(context_)) manifest["naming"] = {{"corbaloc", plan_.naming->corbaloc}, {"context", contextName_}};
    if (!CORBA::is_nil(orb_)) {
      try {
        orb_->destroy();
      } catch (...) {
      }
    }
    return manifest;
  }

 private:
  // ---- set-up
  void validate() {
    runDir_ = plan_.runDir;
    measuredCores_ = plan_.measureCores;
    deadlineNs_ = scabench::monotonicNs() + int64_t(plan_.timeoutS * 1e9);
    for (const auto& n : plan_.nodes) {
      Node node;
      node.name = n.name;
      node.memoryMib = n.memoryMib;
      node.sameMachine = n.sameMachine;
      nodes_[node.name] = node;
    }
    for (const auto& h : plan_.hosts) {
      HostProc proc;
      proc.name = h.name;
      proc.cores = h.placement.cores;
      proc.batch = h.placement.batch;
      proc.node = h.placement.node;
      if (!proc.node.empty()) {
        // The execute form, one COMPONENT each; the node gives the endpoint
        // and the directory the records go to (its working directory).
        proc.program = "scabench-host";
        proc.argv = {proc.program};
        for (const auto& c : h.components) {
          if (!c.library.empty())
            throw RunFailure(c.name, "component " + c.name + " comes from a component library, which a node does not load");
          proc.components.push_back(c.name);
          proc.execParams.push_back("COMPONENT");
          proc.execParams.push_back(componentArgument(c));
        }
        for (const auto& o : h.orbOptions) proc.execParams.push_back(o);
        hosts_.push_back(proc);
        continue;
      }
      proc.argv = {plan_.hostBinary, "--host", proc.name, "--status-fd", "3", "--record-dir", runDir_};
      for (const auto& c : h.components) {
        proc.components.push_back(c.name);
        proc.argv.push_back("--component");
        proc.argv.push_back(componentArgument(c));
        ++componentCount_;
      }
      // The component libraries (plugins) this host's components come from,
      // each once: the host loads them before it creates any component.
      std::vector<std::string> libraries;
      for (const auto& c : h.components)
        if (!c.library.empty() && std::find(libraries.begin(), libraries.end(), c.library) == libraries.end())
          libraries.push_back(c.library);
      for (const auto& library : libraries) proc.argv.push_back("--library"), proc.argv.push_back(library);
      for (const auto& o : h.orbOptions) proc.argv.push_back(o);
      hosts_.push_back(proc);
    }
    for (const auto& e : plan_.externals) {
      External ext;
      ext.name = e.component.name;
      ext.ref = e.ref;
      ext.release = e.release;
      ext.sampleType = e.component.sampleType;
      if (ext.ref.empty()) {
        HostProc proc;
        proc.name = "exec-" + ext.name;
        proc.exec = true;
        proc.components = {ext.name};
        proc.cores = e.placement.cores;
        proc.batch = e.placement.batch;
        proc.argv = e.exec;  // the exec parameters follow in spawnAll
        proc.node = e.placement.node;
        // On a node, the node runs its own installation's program, by its name.
        if (!proc.node.empty())
          proc.program = e.program.empty() ? std::filesystem::path(proc.argv.front()).filename().string() : e.program;
        proc.errPath = runDir_ + "/" + ext.name + ".stderr";
        proc.bindTimeoutS = e.bindTimeoutS;
        hosts_.push_back(proc);
      }
      externals_[ext.name] = ext;
    }
    for (const auto& c : plan_.hops) {
      hasOutgoing_.insert(c.uses.component);
      hasIncoming_.insert(c.provides.component);
    }
    // An external component has no record file and reports no end of stream:
    // the run sees its packets at the ports of the components around it.
    for (const auto& [name, _] : externals_)
      if (!hasOutgoing_.count(name))
        throw RunFailure(name, "component " + name + " is external and has no outgoing connection; "
                               "a run ends at a component of the runtime");
  }

  // A host's component as scabench-host takes it, forked here (--component)
  // or started by a node (COMPONENT): NAME:KIND:SAMPLE_TYPE.
  static std::string componentArgument(const scabench::launch::ComponentPlan& c) {
    return c.name + ":" + c.kind + ":" + c.sampleType;
  }

  // The naming context of the waveform instance, made before any external
  // program starts: its IOR is their NAMING_CONTEXT_IOR. In a domain shared
  // with other runs ("shared"), the first instance number not bound
  // (<name>_1, <name>_2, ...), as an SCA domain numbers an application's
  // instances; the context goes at the end of the run (removeContext).
  void makeContext() {
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
  void removeContext() {
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

  // Starts every host and every external program, each on its CPU set, tied
  // to the launcher (PR_SET_PDEATHSIG) and carrying the run owner's tag
  // (inherited environment, python/scabench/run/processes.py). The child
  // only makes system calls between fork and exec: the launcher's ORB has
  // threads, and one of them may hold the allocator's lock at the fork.
  void spawnAll() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create the status pipe");
    statusRead_ = fds[0];
    const int statusWrite = fds[1];
    const int devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t launcherPid = getpid();
    for (auto& h : hosts_) {
      if (!h.node.empty()) {
        execute(h);
        continue;
      }
      if (h.exec) {
        const std::vector<std::string> params = execParameters(h);
        h.argv.insert(h.argv.end(), params.begin(), params.end());
      }
      std::vector<char*> argv;
      for (auto& a : h.argv) argv.push_back(a.data());
      argv.push_back(nullptr);
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int core : h.cores) CPU_SET(core, &set);
      int out[2] = {-1, -1}, errFd = -1;
      if (h.exec) {
        if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe for " + h.name);
        errFd = open(h.errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (errFd < 0) throw std::runtime_error("cannot create " + h.errPath);
      }
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        // The process dies with the launcher, even if the launcher is killed.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != launcherPid) _exit(127);
        if (!h.cores.empty() && sched_setaffinity(0, sizeof(set), &set) != 0) childFail(h.argv.front().c_str(), "sched_setaffinity", 126);
        // Threads inherit the policy, so every ORB and worker thread gets it.
        if (h.batch) {
          sched_param param{};
          if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) childFail(h.argv.front().c_str(), "sched_setscheduler(SCHED_BATCH)", 126);
        }
        if (h.exec) {
          // Not the launcher's stdin (the runner's hold pipe) nor its stdout
          // (the runner reads "started" and "held" there).
          dup2(devNull, 0);
          dup2(out[1], 1);
          dup2(errFd, 2);
        } else {
          dup2(statusWrite, 3);  // dup2 clears close-on-exec on fd 3
        }
        execv(argv[0], argv.data());
        childFail(h.argv.front().c_str(), "exec", 127);
      }
      h.pid = pid;
      h.spawnedNs = scabench::monotonicNs();
      if (h.exec) {
        close(out[1]);
        close(errFd);
        h.outFd = out[0];
      }
    }
    close(statusWrite);
    if (devNull >= 0) close(devNull);
  }

  // The SCA exec parameters of an external program (then the spec's own,
  // then its -ORB options), or of a host on a node (then its COMPONENTs and
  // -ORB options): what follows the program on its command line.
  std::vector<std::string> execParameters(const HostProc& h) const {
    std::vector<std::string> out = {"NAMING_CONTEXT_IOR", contextIor_, "COMPONENT_IDENTIFIER",
                                    (h.exec ? h.components.front() : h.name) + ":" + contextName_};
    if (!h.exec) {
      out.insert(out.end(), h.execParams.begin(), h.execParams.end());
      return out;
    }
    const std::string& name = h.components.front();
    const scabench::launch::ExternalPlan& e = *plan_.external(name);
    out.push_back("NAME_BINDING");
    out.push_back(name);
    for (const auto& [key, value] : e.parameters) out.push_back(key), out.push_back(value);
    out.insert(out.end(), e.orbOptions.begin(), e.orbOptions.end());
    return out;
  }

  // In the child after fork: "scabench-launch: WHO: WHAT: why" with
  // write(2), which takes no lock.
  [[noreturn]] static void childFail(const char* who, const char* what, int code) {
    const char* why = strerror(errno);
    const char* parts[] = {"scabench-launch: ", who, ": ", what, ": ", why, "\n"};
    for (const char* p : parts) {
      const ssize_t ignored = write(2, p, strlen(p));
      (void)ignored;
    }
    _exit(code);
  }

  // Hosts say "ready NAME IOR" on the pipe; an external program, and every
  // component of a host on a node, binds its name in the context, or it does
  // not within its time.
  static constexpr double HOST_READY_S = 30;
  void waitReady() {
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
        if (resolveBound(*it->first, it->second)) it = binding.erase(it);
        else ++it;
      }
    }
    for (const auto& [name, ior] : iors_) {
      CORBA::Object_var obj = orb_->string_to_object(ior.c_str());
      resources_[name] = CF::Resource::_narrow(obj);
    }
  }

  bool resolveBound(const HostProc& h, const std::string& name) {
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
      throw RunFailure(name, "component " + name + ": the Naming Service failed while resolving it: " +
                                 describeException(ex));
    }
  }

  static std::string formatSeconds(double s) {
    std::ostringstream out;
    out << s << " s";
    return out.str();
  }

  std::string stderrTail(const HostProc& h) const {
    if (!h.node.empty()) return h.errorTail.empty() ? "" : "; its stderr: " + h.errorTail;
    if (!h.exec) return "";
    const std::string last = lastLineOf(h.errPath);
    return last.empty() ? "" : "; its stderr: " + last;
  }

  // A component someone else started: its reference (IOR:, corbaloc: or
  // corbaname:, which names it in a Naming Service) must answer as a
  // CF::Resource, and soon: a call to it times out after REF_TIMEOUT_MS.
  static constexpr CORBA::ULong REF_TIMEOUT_MS = 10000;
  void resolveRefs() {
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
  void checkExternalPorts() {
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
        const std::string repoId = uses ? "IDL:CF/Port:1.0"
                                        : "IDL:scabench/" + interfaces.at(ext->second.sampleType) + ":1.0";
        bool ok = false;
        try {
          ok = !CORBA::is_nil(obj) && obj->_is_a(repoId.c_str());
        } catch (const CORBA::Exception& ex) {
          throw RunFailure(name, who + ": its port '" + port + "' does not answer: " + describeException(ex));
        }
        if (!ok)
          throw RunFailure(name, who + ": its port '" + port + "' is not " +
                                     (uses ? "a uses port (CF::Port)" : "a scabench " +
                                      interfaces.at(ext->second.sampleType) + " port"));
      }
    }
  }

  void initOrb() {
    int argc = 0;
    // A hung component must not hang the launcher: calls time out.
    const char* options[][2] = {{"clientCallTimeOutPeriod", "30000"}, {"verifyObjectExistsAndType", "0"}, {nullptr, nullptr}};
    orb_ = CORBA::ORB_init(argc, nullptr, "omniORB4", options);
  }

  static CORBA::Any toAny(const scabench::launch::PropertyValue& v) {
    CORBA::Any any;
    if (auto b = std::get_if<bool>(&v)) any <<= CORBA::Any::from_boolean(*b);
    else if (auto i = std::get_if<int64_t>(&v)) any <<= CORBA::LongLong(*i);
    else if (auto d = std::get_if<double>(&v)) any <<= CORBA::Double(*d);
    else any <<= std::get<std::string>(v).c_str();
    return any;
  }

  void configureAll() {
    for (const auto& h : plan_.hosts)
      for (const auto& c : h.components) configure(c.name, c.properties);
    for (const auto& e : plan_.externals) configure(e.component.name, e.component.properties);
  }

  void configure(const std::string& name, const scabench::launch::Properties& properties) {
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
  void bindNames() {
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
      throw RunFailure("", "the Naming Service at " + plan_.naming->corbaloc +
                               " refused the run's names: " + describeException(ex));
    }
  }

  // With "hold" in the assembly: once the stream has ended and been
  // measured, say so on stdout ("held") and keep every component up, bound
  // in the Naming Service, until stdin closes; then release as usual.
  void holdIfAsked() {
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

  void connectAll() {
    // In the assembly's order, one at a time: a receiving port numbers its
    // connections in the order they attach (several may feed one port), and
    // each packet's record names its connection by that number, which the
    // analysis maps back to the assembly's order (run/runner.py).
    for (const auto& c : plan_.hops) {
      const std::string &id = c.id, &uses = c.uses.component, &provides = c.provides.component;
      const std::string &usesPort = c.uses.port, &providesPort = c.provides.port;
      CORBA::Object_var target;
      guardCall(provides, "getPort(" + providesPort + ")", [&] { target = resources_[provides]->getPort(providesPort.c_str()); });
      guardCall(uses, "connectPort(" + usesPort + ")", [&] {
        CORBA::Object_var portObj = resources_[uses]->getPort(usesPort.c_str());
        CF::Port_var port = CF::Port::_narrow(portObj);
        if (CORBA::is_nil(port)) throw std::runtime_error("port " + usesPort + " is not a uses port");
        port->connectPort(target, id.c_str());
      });
    }
  }

  void startAll() {
    // Receivers first, so that nothing is sent to a component not yet started.
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& [name, res] : resources_) {
        const bool source = !hasIncoming_.count(name);
        if ((pass == 0) == source) continue;
        guardCall(name, "start", [&] { res->start(); });
        auto ext = externals_.find(name);
        if (ext != externals_.end()) ext->second.startedByUs = true;
      }
  }

  // With "announce_start" in the assembly, tells whoever runs the launcher
  // that the stream has started, with the hosts' pids, on one stdout line
  // ("started PID ..."): the granularity lab measures a steady window of
  // those processes from there (python/scabench/measure/window.py).
  void announceStart() {
    if (!plan_.announceStart) return;
    std::string line = "started";
    for (const auto& h : hosts_)
      if (h.node.empty()) line += " " + std::to_string(h.pid);  // this machine's processes
    std::cout << line << std::endl;
  }

  void waitEndOfStream() {
    std::set<std::string> terminal;
    for (const auto& [name, _] : resources_)
      if (!hasOutgoing_.count(name)) terminal.insert(name);
    while (true) {
      bool all = true;
      for (const auto& t : terminal) all = all && eos_.contains(t);
      if (all) return;
      if (scabench::monotonicNs() > deadlineNs_)
        throw RunFailure("", "timed out after " + std::to_string(plan_.timeoutS) +
                                 " s waiting for end of stream" + progressReport());
      pumpEvents(50);
    }
  }

  void releaseAll() {
    for (const auto& [name, res] : resources_) guardCall(name, "stop", [&] { res->stop(); });
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

  void disconnectUses(const std::string& name) {
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
  void abandonRefs() {
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


  // ---- nodes (docs/architecture.md, "Placement on nodes")
  static constexpr int64_t REMOTE_POLL_MS = 200;
  static constexpr CORBA::ULong NODE_CALL_TIMEOUT_MS = 30000;  // execute, terminate (5 s grace), a record file's part
  static constexpr CORBA::ULong NODE_POLL_TIMEOUT_MS = 3000;   // the poll: a hung node is dead after this
  static constexpr CORBA::ULong STDOUT_PART = 65536;
  static constexpr int CLOCK_PROBES = 8;

  // Each node the assembly places a process on, from the run's Naming
  // Service (nodes/NAME/device): it must answer ENABLED, its components
  // must be reachable from the run's other processes, and it must have the
  // memory the run's processes there need (allocateCapacity).
  void resolveNodes() {
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
        n.device = scabench::node::NodeDevice::_narrow(obj);
        if (CORBA::is_nil(n.device)) throw RunFailure(who, "node " + name + ": nodes/" + name + "/device is not a node's device");
        CORBA::String_var ior = orb_->object_to_string(n.device);
        CORBA::Object_var again = orb_->string_to_object(ior.in());  // a reference of its own, for its own timeout
        n.poll = scabench::node::NodeDevice::_narrow(again);
      } catch (const CosNaming::NamingContext::NotFound&) {
        throw RunFailure(who, "node " + name + " is not registered in the domain (nodes/" + name + " in " +
                                  plan_.naming->corbaloc + "); start it with scabench node --name " +
                                  name);
      } catch (const CORBA::SystemException& ex) {
        throw RunFailure(who, "node " + name + " does not answer: " + describeException(ex));
      }
      omniORB::setClientCallTimeout(n.device, NODE_CALL_TIMEOUT_MS);
      omniORB::setClientCallTimeout(n.poll, NODE_POLL_TIMEOUT_MS);
      nodeCall(n, "operationalState", [&] {
        if (n.poll->operationalState() != CF::Device::ENABLED)
          throw RunFailure(who, "node " + name + " is DISABLED: its domain's Naming Service does not answer it");
        CF::Properties asked;
        asked.length(1);
        asked[0].id = "published_host";
        n.poll->query(asked);
        const char* host = nullptr;
        if (asked[0].value >>= host) n.publishedHost = host;
      });
      if (anyLocal && !n.publishedHost.empty() && !isLoopback(n.publishedHost))
        throw RunFailure(who, "node " + name + "'s components are reached at " + n.publishedHost +
                                  ", and this run's processes on this machine listen on its loopback, which they "
                                  "cannot reach; place every process on a node");
      if (n.memoryMib > 0) {
        CF::Properties capacity;
        capacity.length(1);
        capacity[0].id = "memory_mib";
        capacity[0].value <<= CORBA::ULongLong(n.memoryMib);
        bool granted = false;
        nodeCall(n, "allocateCapacity", [&] { granted = n.device->allocateCapacity(capacity); });
        if (!granted)
          throw RunFailure(who, "node " + name + " has not " + std::to_string(n.memoryMib) +
                                    " MiB of memory left for this run's processes (allocateCapacity refused)");
        n.allocated = true;
      }
    }
  }

  static bool isLoopback(const std::string& host) {
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
  }

  std::string firstComponentOn(const std::string& node) const {
    for (const auto& h : hosts_)
      if (h.node == node && !h.components.empty()) return h.components.front();
    return "";
  }

  // A call to a node: its own exceptions become a failure naming the node
  // and the component; a system exception means the node is gone.
  template <class F>
  void nodeCall(Node& n, const std::string& what, F&& call, const std::string& component = "") {
    const std::string who = component.empty() ? firstComponentOn(n.name) : component;
    const std::string on = "node " + n.name + ": " + what + ": ";
    try {
      call();
    } catch (const RunFailure&) {
      throw;
    } catch (const CF::Device::InvalidState& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::Device::InvalidCapacity& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::InvalidFileName& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::LoadableDevice::LoadFail& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::ExecutableDevice::ExecuteFail& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::ExecutableDevice::InvalidProcess& ex) {
      throw RunFailure(who, on + ex.msg.in());
    } catch (const CF::ExecutableDevice::InvalidParameters& ex) {
      throw RunFailure(who, on + "it refused the parameters " + propertyIds(ex.invalidParms));
    } catch (const CF::ExecutableDevice::InvalidOptions& ex) {
      throw RunFailure(who, on + "it refused the options " + propertyIds(ex.invalidOpts));
    } catch (const CORBA::SystemException& ex) {
      n.deadWhy = describeException(ex);
      throw nodeDied(n);
    } catch (const CORBA::Exception& ex) {
      throw RunFailure(who, on + describeException(ex));
    }
  }

  static std::string propertyIds(const CF::Properties& props) {
    std::string out;
    for (CORBA::ULong i = 0; i < props.length(); ++i) out += std::string(out.empty() ? "" : ", ") + props[i].id.in();
    return out;
  }

  RunFailure nodeDied(const Node& n) {
    std::string lost;
    for (const auto& h : hosts_)
      if (h.node == n.name && h.pid > 0)
        for (const auto& c : h.components) lost += (lost.empty() ? "" : ", ") + c;
    return RunFailure(firstComponentOn(n.name), "node " + n.name + " is gone: its agent does not answer (" +
                                                    n.deadWhy + ")" +
                                                    (lost.empty() ? "" : "; its components " + lost +
                                                                             " went with it (a node's processes die with it)"));
  }

  // Starts a process on its node: load, then execute with the SCA exec
  // parameters (values as strings; the node adds its endpoint), on the
  // CPUs asked (AFFINITY, within the node's) and the run's scheduler.
  void execute(HostProc& h) {
    Node& n = nodes_.at(h.node);
    const std::string who = h.components.front();
    if (!n.loaded.count(h.program)) {
      nodeCall(n, "load " + h.program, [&] {
        n.device->load(CF::FileSystem::_nil(), h.program.c_str(), CF::LoadableDevice::EXECUTABLE);
      }, who);
      n.loaded.insert(h.program);
    }
    const std::vector<std::string> params = execParameters(h);
    CF::Properties parameters;
    parameters.length(CORBA::ULong(params.size() / 2));
    for (std::size_t i = 0; i + 1 < params.size(); i += 2) {
      parameters[CORBA::ULong(i / 2)].id = params[i].c_str();
      parameters[CORBA::ULong(i / 2)].value <<= params[i + 1].c_str();
    }
    CF::Properties options;
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
    nodeCall(n, "execute " + h.program + " for " + who, [&] {
      h.pid = n.device->execute(h.program.c_str(), options, parameters);
    }, who);
    h.spawnedNs = scabench::monotonicNs();
  }

  // One round trip per node: every process of the run there that has not
  // been seen ended, its stdout from where it was read to (events), and, for
  // a host, its components' record headers (progress, for the watchdog and
  // for a dead host's last packets). A node that does not answer is gone.
  void pollNodes(bool exitIsFailure, bool force = false) {
    const int64_t now = scabench::monotonicNs();
    std::vector<HostProc*> ended;
    for (auto& [name, n] : nodes_) {
      if (!n.deadWhy.empty() || CORBA::is_nil(n.poll)) continue;
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
        seen = n.poll->watch(requests);
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
  void lose(Node& n) {
    for (auto& h : hosts_)
      if (h.node == n.name && h.pid > 0 && !h.exited) {
        h.exited = true;
        h.lostWith = n.name;
      }
  }

  // The events in what a process on a node wrote on stdout, as a host writes
  // them on its pipe: those naming its own components.
  void remoteLines(HostProc& h) {
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
          h.rusage = {{"user_s", utime}, {"system_s", stime}, {"voluntary_ctxsw", nvcsw},
                      {"involuntary_ctxsw", nivcsw}, {"max_rss_kb", maxrss}};
      } else if (kind == "error" || kind == "stat" || (kind == "eos" && !h.exec)) {
        handleLine(line);
      }
    });
  }

  static json recordJson(const scabench::node::ProcessRecord& r) {
    return {{"pid", r.pid}, {"program", r.program.in()}, {"identifier", r.identifier.in()},
            {"running", bool(r.running)}, {"exit_status", r.running ? json(nullptr) : json(r.exitStatus)},
            {"user_s", r.userSeconds}, {"system_s", r.systemSeconds},
            {"context_switches", r.contextSwitches}, {"error_tail", r.errorTail.in()}};
  }

  void writeFile(const std::string& path, const void* data, std::size_t size) {
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
  double readRemoteCpu(bool atStart) {
    if (nodes_.empty()) return 0;
    pollNodes(true, true);
    double sameMachine = 0;
    for (auto& h : hosts_) {
      if (h.node.empty() || h.nodeRecord.is_null()) continue;
      const double cpu = h.nodeRecord["user_s"].get<double>() + h.nodeRecord["system_s"].get<double>();
      if (atStart) h.cpuAtStart = cpu;
      else h.windowCpuS = cpu - h.cpuAtStart;
      if (nodes_.at(h.node).sameMachine) sameMachine += cpu;
    }
    return sameMachine;
  }

  // Each node's clock against the launcher's: the probe with the shortest
  // round trip of CLOCK_PROBES.
  void probeClocks(ClockProbe Node::*which) {
    for (auto& [name, n] : nodes_) {
      if (!n.deadWhy.empty()) continue;
      ClockProbe best;
      nodeCall(n, "monotonicNs", [&] {
        for (int i = 0; i < CLOCK_PROBES; ++i) {
          const int64_t t0 = scabench::monotonicNs();
          const int64_t tNode = n.poll->monotonicNs();
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
  static int64_t toLauncherNs(const Node& n, int64_t nodeNs) {
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
  void fetchRecords(bool bestEffort = false) {
    for (auto& h : hosts_) {
      if (h.node.empty() || h.exec || h.pid <= 0) continue;
      Node& n = nodes_.at(h.node);
      if (!n.deadWhy.empty()) continue;
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

  void fetchRecord(Node& n, const HostProc& h, const std::string& component) {
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
      nodeCall(n, "fetch " + component + ".rec", [&] { seen = n.device->watch(requests); }, component);
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
  void failed() {
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
  void endNodes() {
    for (auto& [name, n] : nodes_) {
      if (!n.deadWhy.empty() || CORBA::is_nil(n.device)) continue;
      try {
        omniORB::setClientCallTimeout(n.device, 5000);
        if (n.allocated) {
          CF::Properties capacity;
          capacity.length(1);
          capacity[0].id = "memory_mib";
          capacity[0].value <<= CORBA::ULongLong(n.memoryMib);
          n.device->deallocateCapacity(capacity);
          n.allocated = false;
        }
        for (const auto& program : n.loaded) n.device->unload(program.c_str());
      } catch (const CORBA::SystemException& ex) {
        n.deadWhy = describeException(ex);
      } catch (const CORBA::Exception&) {
      }
    }
  }

  json describeNodes() const {
    json out = json::array();
    for (const auto& [name, n] : nodes_) {
      json entry = {{"name", name}, {"same_machine", n.sameMachine}, {"published_host", n.publishedHost}};
      if (!n.deadWhy.empty()) entry["lost"] = n.deadWhy;
      json clock = json::object();
      for (const auto& [key, probe] : {std::pair<const char*, const ClockProbe*>{"start", &n.start}, {"end", &n.end}})
        if (probe->done)
          clock[key] = {{"offset_ns", probe->offsetNs}, {"bound_ns", probe->boundNs}, {"rtt_ns", probe->rttNs},
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

  std::string exitText(const HostProc& h) const {
    if (h.node.empty()) return h.exited ? describeStatus(h.status) : "not started";
    if (!h.lostWith.empty()) return "lost with node " + h.lostWith;
    if (!h.exited) return h.pid > 0 ? "still running" : "not started";
    if (h.exitStatus < 0) return std::string("killed by signal ") + std::to_string(-h.exitStatus) + " (" +
                                 strsignal(-h.exitStatus) + ")";
    return "exited with status " + std::to_string(h.exitStatus);
  }

  // ---- events from the hosts and the external programs
  // Reads status lines (the hosts' pipe, each external program's stdout) and
  // reaps processes. One that exits before it is released is a failure
  // named after its components.
  void pumpEvents(int timeoutMs, bool exitIsFailure = true) {
    if (interrupted) throw RunFailure("", "interrupted");
    std::vector<pollfd> fds{{statusRead_, POLLIN, 0}};  // poll() skips a negative fd
    for (const auto& h : hosts_)
      if (h.outFd >= 0) fds.push_back({h.outFd, POLLIN, 0});
    if (poll(fds.data(), nfds_t(fds.size()), timeoutMs) > 0) {
      char buf[8192];
      if (fds[0].revents) {
        const ssize_t n = read(statusRead_, buf, sizeof buf);
        if (n > 0) pending_.append(buf, std::size_t(n));
        if (n == 0) {  // every host of this machine has closed it (or there are none): poll() would spin on it
          close(statusRead_);
          statusRead_ = -1;
        }
      }
      for (auto& h : hosts_) {
        if (h.outFd < 0) continue;
        for (const auto& f : fds)
          if (f.fd == h.outFd && f.revents) readOutput(h);
      }
    }
    takeLines(pending_, [&](const std::string& line) { handleLine(line); });
    for (auto& h : hosts_)
      if (reap(h, false) && exitIsFailure) throw hostDied(h);
    pollNodes(exitIsFailure);
  }

  // What an external program writes on stdout: the events a scabench
  // component writes are taken when they name its own component; anything
  // else is its own business.
  void readOutput(HostProc& h) {
    char buf[8192];
    const ssize_t n = read(h.outFd, buf, sizeof buf);
    if (n <= 0) {
      close(h.outFd);
      h.outFd = -1;
      return;
    }
    h.outPending.append(buf, std::size_t(n));
    takeLines(h.outPending, [&](const std::string& line) {
      std::istringstream in(line);
      std::string kind, who;
      in >> kind >> who;
      if ((kind == "error" || kind == "stat") && who == h.components.front()) handleLine(line);
    });
  }

  // Reaps `h` if it has exited (blocking: waits for it); true if it just did.
  // An external program's resource usage comes from the kernel here (a host
  // reports its own on the pipe).
  bool reap(HostProc& h, bool block) {
    if (h.exited || h.pid <= 0 || !h.node.empty()) return false;  // a node's process is the node's to reap
    int status;
    rusage usage{};
    if (wait4(h.pid, &status, block ? 0 : WNOHANG, &usage) != h.pid) return false;
    h.exited = true;
    h.status = status;
    if (h.exec) {
      const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
      h.rusage = {{"user_s", seconds(usage.ru_utime)}, {"system_s", seconds(usage.ru_stime)},
                  {"voluntary_ctxsw", usage.ru_nvcsw}, {"involuntary_ctxsw", usage.ru_nivcsw},
                  {"max_rss_kb", usage.ru_maxrss}};
    }
    return true;
  }

  void handleLine(const std::string& line) {
    std::istringstream in(line);
    std::string kind, who;
    in >> kind >> who;
    std::string rest;
    std::getline(in, rest);
    if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
    if (kind == "ready") iors_[who] = rest;
    else if (kind == "eos") eos_[who] = std::stoll(rest);
    else if (kind == "stat") {
      // "stat NAME KEY VALUE": a figure a component reports about its run.
      const auto space = rest.find(' ');
      if (space != std::string::npos) stats_[who][rest.substr(0, space)] = rest.substr(space + 1);
    }
    else if (kind == "rusage") {
      std::istringstream f(rest);
      double utime, stime;
      long nvcsw, nivcsw, maxrss;
      f >> utime >> stime >> nvcsw >> nivcsw >> maxrss;
      for (auto& h : hosts_)
        if (h.name == who)
          h.rusage = {{"user_s", utime}, {"system_s", stime}, {"voluntary_ctxsw", nvcsw},
                      {"involuntary_ctxsw", nivcsw}, {"max_rss_kb", maxrss}};
    } else if (kind == "error") {
      // The error may be the echo of a neighbour's death: give dead hosts a
      // moment to be reaped, and ask the nodes, so that the true culprit is
      // named (once: asking a node reads more lines).
      if (!checkingError_) {
        checkingError_ = true;
        for (int i = 0; i < 10; ++i) {
          for (auto& h : hosts_)
            if (reap(h, false)) throw hostDied(h);
          if (i == 0 || i == 9) pollNodes(true, true);
          usleep(20'000);
        }
      }
      throw RunFailure(who, "component " + who + " failed: " + rest);
    }
  }

  RunFailure hostDied(const HostProc& h) {
    if (!h.node.empty()) {
      std::string names;
      for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
      const std::string tail = h.errorTail.empty() ? "" : "; its stderr: " + h.errorTail;
      return RunFailure(h.components.front(), "component " + names + " (" + (h.exec ? h.program : "host " + h.name) +
                                                  " on node " + h.node + ", pid " + std::to_string(h.pid) + ") " +
                                                  exitText(h) + tail + (h.exec ? "" : lastPackets(h)));
    }
    if (h.exec)
      return RunFailure(h.components.front(), "component " + h.components.front() + " (" + h.argv.front() +
                                                  ", pid " + std::to_string(h.pid) + ") " + describeStatus(h.status) +
                                                  stderrTail(h));
    std::string names;
    for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
    return RunFailure(h.components.empty() ? h.name : h.components.front(),
                      "component " + names + " (host " + h.name + ", pid " + std::to_string(h.pid) + ") " +
                          describeStatus(h.status) + lastPackets(h));
  }

  // Opens a component's record file positioned after its header; false if
  // the component never got as far as creating it.
  // A component on a node has only its header here (.progress) until its
  // records are fetched.
  bool openRecords(const std::string& component, std::ifstream& in, scabench::RecordFileHeader& header) {
    in.open(runDir_ + "/" + component + ".rec", std::ios::binary);
    if (!in) in.open(runDir_ + "/" + component + ".progress", std::ios::binary);
    return bool(in.read(reinterpret_cast<char*>(&header), sizeof header));
  }

  // What the records of a dead host's components say they handled last.
  std::string lastPackets(const HostProc& h) {
    std::string out;
    for (const auto& c : h.components) {
      std::ifstream in;
      scabench::RecordFileHeader header;
      if (!openRecords(c, in, header)) continue;
      const uint64_t n = std::min<uint64_t>(header.claimed.load(), header.capacity);
      if (n == 0) {
        out += "; " + c + " had handled no packet";
        continue;
      }
      scabench::PacketRecord last;
      in.seekg(std::streamoff(sizeof header + (n - 1) * sizeof last));
      if (in.read(reinterpret_cast<char*>(&last), sizeof last))
        out += "; " + c + " had received " + std::to_string(n) + " packets, the last was #" + std::to_string(last.sequence);
    }
    return out;
  }

  std::string progressReport() {
    std::string out;
    for (const auto& [name, _] : resources_) {
      std::ifstream in;
      scabench::RecordFileHeader header;
      if (openRecords(name, in, header)) out += "; " + name + " handled " + std::to_string(header.completed.load());
    }
    return out;
  }

  template <class F>
  void guardCall(const std::string& component, const std::string& what, F&& call) {
    try {
      call();
    } catch (const CF::PropertySet::InvalidConfiguration& ex) {
      throw RunFailure(component, "component " + component + " rejected its configuration: " + ex.msg.in());
    } catch (const CF::PortSupplier::UnknownPort&) {
      pumpEvents(50);  // a bad port property is reported on the pipe: name that instead
      throw RunFailure(component, "component " + component + ": " + what + ": no such port");
    } catch (const CF::Port::InvalidPort& ex) {
      throw RunFailure(component, "component " + component + ": " + what + ": " + ex.msg.in());
    } catch (const CF::Resource::StartError& ex) {
      throw RunFailure(component, "component " + component + " could not start: " + ex.msg.in());
    } catch (const CORBA::Exception& ex) {
      // Most likely the host died (or its node): prefer that explanation.
      pumpEvents(50);
      pollNodes(true, true);
      throw RunFailure(component, "component " + component + ": " + what + " failed: " + ex._name());
    } catch (const RunFailure&) {
      throw;
    } catch (const std::exception& ex) {
      throw RunFailure(component, "component " + component + ": " + what + ": " + ex.what());
    }
  }

  bool allExited() const {
    for (const auto& h : hosts_)
      if (!h.exited && h.pid > 0) return false;
    return true;
  }

  // A node's processes still running: terminate (SIGTERM, SIGKILL 5 s
  // later, returns once gone), every one at once (a thread each: the call
  // blocks, and a stopped process takes the whole 5 s), then one more look
  // for their last records and output (rusage). A node gone took its
  // processes along.
  void terminateRemote() {
    std::vector<std::thread> calls;
    std::mutex mutex;
    for (auto& h : hosts_) {
      if (h.node.empty() || h.exited || h.pid <= 0) continue;
      Node& n = nodes_.at(h.node);
      if (!n.deadWhy.empty()) {
        lose(n);
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
    for (auto& [name, n] : nodes_)
      if (!n.deadWhy.empty()) lose(n);
    try {
      pollNodes(false, true);
    } catch (const std::exception&) {
    }
    for (auto& h : hosts_)  // what a node could not say: ended either way, as far as the run goes
      if (!h.node.empty() && !h.exited && h.pid > 0) {
        h.exited = true;
        if (!nodes_.at(h.node).deadWhy.empty()) h.lostWith = h.node;
      }
  }

  // Ends every process still running: SIGTERM, then SIGKILL after a grace period.
  void killAll() {
    terminateRemote();
    for (auto& h : hosts_)
      if (!h.exited && h.pid > 0 && h.node.empty()) kill(h.pid, SIGTERM);
    const int64_t until = scabench::monotonicNs() + 2'000'000'000LL;
    while (!allExited()) {
      const bool late = scabench::monotonicNs() > until;
      for (auto& h : hosts_) {
        if (h.exited || h.pid <= 0 || !h.node.empty()) continue;
        if (late) kill(h.pid, SIGKILL);
        reap(h, late);
      }
      if (!late) usleep(10'000);
    }
    // What the external programs wrote last (a Python component's refusals).
    for (auto& h : hosts_)
      while (h.outFd >= 0) readOutput(h);
    // Read the last status lines (rusage) the hosts wrote before exiting.
    if (statusRead_ >= 0) {
      char buf[8192];
      ssize_t n;
      fcntl(statusRead_, F_SETFL, O_NONBLOCK);
      while ((n = read(statusRead_, buf, sizeof buf)) > 0) pending_.append(buf, std::size_t(n));
      takeLines(pending_, [&](const std::string& line) {
        if (line.rfind("rusage", 0) == 0) handleLine(line);
      });
    }
  }

  Plan plan_;
  std::string runDir_;
  std::vector<int> measuredCores_;
  int64_t deadlineNs_ = 0;
  std::vector<HostProc> hosts_;
  std::size_t componentCount_ = 0;
  std::set<std::string> hasOutgoing_, hasIncoming_;
  int statusRead_ = -1;
  std::string pending_;
  std::map<std::string, std::string> iors_;
  std::map<std::string, int64_t> eos_;
  std::map<std::string, std::map<std::string, std::string>> stats_;
  CORBA::ORB_var orb_;
  std::map<std::string, CF::Resource_var> resources_;
  std::map<std::string, External> externals_;
  CosNaming::NamingContext_var root_, context_;
  std::string contextIor_, contextName_;
  bool madeContext_ = false;
  std::map<std::string, Node> nodes_;
  bool checkingError_ = false;  // an error line is being traced to its cause (handleLine)
};

}  // namespace

const char* const USAGE =
    "usage: scabench-launch ASSEMBLY.json MANIFEST.json\n"
    "Runs one assembly (written by `scabench run`): starts its hosts, drives the components through the SCA\n"
    "lifecycle, waits for end of stream, tears everything down, and writes the outcome to MANIFEST.json.\n";

int main(int argc, char** argv) {
  if (scabench::askedForHelp(argc, argv)) {
    std::cout << USAGE;
    return 0;
  }
  if (argc != 3) {
    std::cerr << "scabench-launch: expected two arguments\n" << USAGE;
    return 2;
  }
  Plan plan;
  try {
    plan = scabench::launch::readPlan(argv[1]);
  } catch (const std::exception& ex) {
    std::cerr << "scabench-launch: " << argv[1] << ": " << ex.what() << "\n";
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  json manifest = Launcher(std::move(plan)).run();
  std::ofstream(argv[2]) << manifest.dump(2) << "\n";
  if (manifest["status"] != "ok") {
    std::cerr << "scabench-launch: " << manifest["error"].get<std::string>() << "\n";
    return 1;
  }
  return 0;
}
