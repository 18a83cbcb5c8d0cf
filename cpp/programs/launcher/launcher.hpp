// scabench-launch: runs one plan and tears it down, whatever happens.
//
//   scabench-launch ASSEMBLY.json MANIFEST.json
//
// One class in parts: main.cpp reads the plan (plan.cpp, the only place
// that reads JSON, into the structs of plan.hpp) and runs it; the run goes
// through its processes (processes.cpp: made from the plan, forked, reaped,
// their CPU), its nodes (nodes.cpp), the SCA lifecycle (lifecycle.cpp) and
// the watching of the stream (watch.cpp).
//
// The plan (written by `scabench run`, python/scabench/run/plan.py; its
// schema docs/plan.schema.json) lists host processes with their cores, ORB options and components, the
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
// started by that node's ExecutableDevice instead of a fork, in the execute
// form, and binds itself in the waveform's naming context as an external
// program does. On a scabench node (scabench::node::NodeDevice) the launcher
// watches it through the node (its state, its events on stdout, the
// progress in its records' headers, one round trip per node every
// REMOTE_POLL_MS), relates the node's clock to its own by round trips
// before the stream starts and after it ends, fetches its record files into
// the run directory once the stream has ended, with their times moved onto
// the launcher's clock, and terminates it at the end. A node whose device is
// a plain CF::ExecutableDevice (a REDHAWK GPP) has no watch: the launcher
// drives it with CF alone, and only on this machine (plain_nodes.cpp): the
// process writes its events and records into the run directory itself
// (EVENTS_FILE, RECORD_DIR), and the launcher reads them there and the
// process's state and CPU in /proc.

#pragma once

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

namespace scabench::launch {

using nlohmann::json;

// Set by SIGINT/SIGTERM (main.cpp); every wait of the run checks it.
extern volatile std::sig_atomic_t interrupted;

// A failure with the component it belongs to.
struct RunFailure : std::runtime_error {
  RunFailure(std::string component, const std::string& what)
      : std::runtime_error(what), component(std::move(component)) {}
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
  bool batch = false;  // SCHED_BATCH: the host's threads do not preempt on wake-up
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
  // On a plain CF node (plain_nodes.cpp): the file it writes its events to,
  // in the run directory, and its start time in /proc (clock ticks after
  // boot), which tells it from a later process given the same pid.
  std::string eventsPath;
  unsigned long long startTicks = 0;
  std::string program;                  // the node's name for the program
  std::vector<std::string> execParams;  // its execute parameters, id and value in turn (made before execute)
  uint64_t outOffset = 0;               // how much of its stdout has been read
  int exitStatus = 0;                   // as the node says: the exit code, or minus the signal
  std::string errorTail;                // its last line on stderr, as the node says
  json nodeRecord;                      // the node's last record of it
  double nodeCpuS = -1;                 // its CPU seconds in that record; -1: no record yet
  std::string lostWith;                 // the node that died with it
  bool endedHere = false;               // on a plain node, ended by the launcher itself (endPlainProcesses)
  std::string stillRunning;             // on a plain node, running after the end and not the launcher's to signal
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
  int64_t atNs = 0;  // when, on the launcher's clock
};

// A node the run places processes on: its device (one reference with the
// calls' own timeout, one with a short one for the poll) and what the run
// took from it. `device` and `poll` are what every node answers, CF's
// ExecutableDevice; `watcher` and `watcherPoll` the same references as
// scabench::node::NodeDevice, nil on a plain CF node.
struct Node {
  std::string name;
  CF::ExecutableDevice_var device, poll;
  scabench::node::NodeDevice_var watcher, watcherPoll;
  bool plainCf = false;  // its device is a plain CF::ExecutableDevice (plain_nodes.cpp)
  bool sameMachine =
      false;  // on the launcher's machine (network hosts, plain CF nodes): its processes' CPU is the run's own
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
  bool configured = false;  // taken into the run: its configure succeeded
  bool startedByUs = false;
  std::string sampleType;
};

std::string describeException(const CORBA::Exception& ex);
// The last line a program wrote to its stderr file, for an error message.
std::string lastLineOf(const std::string& path);
std::string describeStatus(int status);

// ------------------------------------------------------------ CPU accounting (processes.cpp)

struct CpuSnapshot {
  int64_t wallNs = 0;
  double busySeconds = 0;  // on the measured cores, by anyone
  double ownSeconds = 0;   // by the run's processes
};

double busyOnCores(const std::vector<int>& cores);
// utime + stime of a whole process (threads that ended included).
double processCpuSeconds(pid_t pid);
// What /proc says of a process of this machine (exists false: no such pid).
struct ProcStat {
  bool exists = false;
  char state = 0;  // 'R', 'S', ..., 'Z' (ended, not reaped), 'X'
  double userS = 0, systemS = 0;
  unsigned long long startTicks = 0;  // clock ticks after boot
  bool running() const { return exists && state != 'Z' && state != 'X'; }
};
ProcStat procStat(pid_t pid);
// Its command line, an argument each; empty if it is gone (or a zombie).
std::vector<std::string> procCmdline(pid_t pid);
// Its voluntary and involuntary context switches, summed; -1 if unknown.
long long procContextSwitches(pid_t pid);
// CPU time of a whole process to the nanosecond; -1 if it cannot be read.
double processCpuClockSeconds(pid_t pid);
CpuSnapshot snapshot(const std::vector<int>& cores, const std::vector<HostProc>& hosts);

// ------------------------------------------------------------------ Launcher

class Launcher {
 public:
  explicit Launcher(Plan plan) : plan_(std::move(plan)) {}

  json run();

 private:
  // ---- set-up
  void validate();

  // A host's component as scabench-host takes it, forked here (--component)
  // or started by a node (COMPONENT): NAME:KIND:SAMPLE_TYPE.
  static std::string componentArgument(const scabench::launch::ComponentPlan& c);

  // The naming context of the waveform instance, made before any external
  // program starts: its IOR is their NAMING_CONTEXT_IOR. In a domain shared
  // with other runs ("shared"), the first instance number not bound
  // (<name>_1, <name>_2, ...), as an SCA domain numbers an application's
  // instances; the context goes at the end of the run (removeContext).
  void makeContext();

  // At the end, in a shared domain: the names the run's components left in
  // its context (each component unbinds its own on release; a failed run
  // leaves them), then the context. Each call bounded, each failure ignored.
  void removeContext();

  // Starts every host and every external program, each on its CPU set, tied
  // to the launcher (PR_SET_PDEATHSIG) and carrying the run owner's tag
  // (inherited environment, python/scabench/run/processes.py). The child
  // only makes system calls between fork and exec: the launcher's ORB has
  // threads, and one of them may hold the allocator's lock at the fork.
  void spawnAll();

  // The SCA exec parameters of an external program (then the spec's own,
  // then its -ORB options), or of a host on a node (then its COMPONENTs and
  // -ORB options): what follows the program on its command line.
  std::vector<std::string> execParameters(const HostProc& h) const;

  // In the child after fork: "scabench-launch: WHO: WHAT: why" with
  // write(2), which takes no lock.
  [[noreturn]] static void childFail(const char* who, const char* what, int code);

  // Hosts say "ready NAME IOR" on the pipe; an external program, and every
  // component of a host on a node, binds its name in the context, or it does
  // not within its time.
  static constexpr double HOST_READY_S = 30;
  void waitReady();

  bool resolveBound(const HostProc& h, const std::string& name);

  static std::string formatSeconds(double s);

  std::string stderrTail(const HostProc& h) const;

  // A component someone else started: its reference (IOR:, corbaloc: or
  // corbaname:, which names it in a Naming Service) must answer as a
  // CF::Resource, and soon: a call to it times out after REF_TIMEOUT_MS.
  static constexpr CORBA::ULong REF_TIMEOUT_MS = 10000;
  void resolveRefs();

  // Every port the connections use on an external component must be there,
  // and be what they need, before anything is configured.
  void checkExternalPorts();

  void initOrb();

  static CORBA::Any toAny(const scabench::launch::PropertyValue& v);

  void configureAll();

  void configure(const std::string& name, const scabench::launch::Properties& properties);

  // The SCA way to find a waveform's components: a naming context for this
  // waveform instance in the run's Naming Service, each component bound in
  // it under its name. The launcher binds them (it holds every reference);
  // an external program bound itself. An outside tool resolves them there
  // (README, "Finding a run's components").
  void bindNames();

  // With "hold" in the assembly: once the stream has ended and been
  // measured, say so on stdout ("held") and keep every component up, bound
  // in the Naming Service, until stdin closes; then release as usual.
  void holdIfAsked();

  void connectAll();

  void startAll();

  // With "announce_start" in the assembly, tells whoever runs the launcher
  // that the stream has started, with the hosts' pids, on one stdout line
  // ("started PID ..."): the granularity lab measures a steady window of
  // those processes from there (python/scabench/measure/window.py).
  void announceStart();

  void waitEndOfStream();

  void releaseAll();

  void disconnectUses(const std::string& name);

  // On a failure, the referenced components the run had taken in (configured):
  // released if the run owns their end, else stopped if the run started them
  // and cut from the run's connections; each call bounded, each failure
  // ignored (the run has failed already). One the run never configured is
  // left as it was found.
  void abandonRefs();

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
  void resolveNodes();

  static bool isLoopback(const std::string& host);

  std::string firstComponentOn(const std::string& node) const;

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

  static std::string propertyIds(const CF::Properties& props);

  RunFailure nodeDied(const Node& n);

  // Starts a process on its node: load, then execute with the SCA exec
  // parameters (values as strings; the node adds its endpoint), on the
  // CPUs asked (AFFINITY, within the node's) and the run's scheduler.
  void execute(HostProc& h);

  // One round trip per node: every process of the run there that has not
  // been seen ended, its stdout from where it was read to (events), and, for
  // a host, its components' record headers (progress, for the watchdog and
  // for a dead host's last packets). A node that does not answer is gone.
  void pollNodes(bool exitIsFailure, bool force = false);

  // A node is gone: its processes went with it (PR_SET_PDEATHSIG).
  void lose(Node& n);

  // The events in what a process on a node wrote on stdout, as a host writes
  // them on its pipe: those naming its own components.
  void remoteLines(HostProc& h);

  static json recordJson(const scabench::node::ProcessRecord& r);

  void writeFile(const std::string& path, const void* data, std::size_t size);

  // The CPU of every running process on a node, summed over the nodes on
  // this machine (their processes' CPU is the run's own, not foreign); at
  // the window's start each process's is kept, at its end the difference is
  // its window_cpu_s.
  double readRemoteCpu(bool atStart);

  // Each node's clock against the launcher's: the probe with the shortest
  // round trip of CLOCK_PROBES.
  void probeClocks(ClockProbe Node::*which);

  // A time on a node's clock on the launcher's: less the offset, taken
  // linearly between the probes before the stream and after it (the two
  // clocks' rates may differ a little: NTP slews each).
  static int64_t toLauncherNs(const Node& n, int64_t nodeNs);

  // Every record file of the run's hosts on nodes, into the run directory,
  // its times (arrival, done) on the launcher's clock: the analysis then
  // reads one clock, as for hosts of this machine. Best effort on a failure
  // (a node gone takes its records along).
  void fetchRecords(bool bestEffort = false);

  void fetchRecord(Node& n, const HostProc& h, const std::string& component);

  // After a failure: the processes ended (killAll: a node's are terminated
  // through it), and what their records hold brought back from the nodes
  // still there.
  void failed();

  // At the end, every way: each node's last records of the run's processes
  // (their CPU and context switches), its capacity given back, its programs
  // unloaded. Each call bounded; a node gone is skipped.
  void endNodes();

  json describeNodes() const;

  std::string exitText(const HostProc& h) const;

  // ---- plain CF nodes (plain_nodes.cpp)
  static constexpr double PLAIN_EXEC_CHECK_S = 5;  // a process's command line shows its parameters by then
  static constexpr int64_t PLAIN_TERM_GRACE_MS = 5000;

  // A plan that asks a plain node for what only scabench node does (the
  // execute options AFFINITY, SCHEDULER) is refused by name before any
  // process starts: the run would not be what the spec says.
  void refuseScabenchOptions(const Node& n) const;

  // The execute parameters a process on a plain node gets besides the SCA
  // ones: where its events (EVENTS_FILE) and records (RECORD_DIR) go, in
  // the run directory, and where it listens (loopback, as the run's other
  // processes of this machine).
  void plainParameters(HostProc& h, std::vector<std::string>& params);

  // After execute on a plain node: the pid answered must be a process of
  // this machine whose command line carries the COMPONENT_IDENTIFIER given
  // (what a GPP's execute makes of the parameters: argv NAME VALUE pairs);
  // otherwise the node is elsewhere, and the run fails naming it.
  void checkOnThisMachine(Node& n, HostProc& h, const std::string& identifier);

  // One look at each process of the run on a plain node: its state and CPU
  // in /proc, then its events file from where it was read to (a process
  // seen ended has written all it will).
  void pollPlain(Node& n, std::vector<HostProc*>& ended);

  // After terminate (a GPP's swallows what goes wrong) or a plain node gone:
  // each of its processes still running on this machine is ended here, by
  // pid (its group when it leads one), each checked by its start time; one
  // the launcher may not signal is reported still running (stillRunning).
  void endPlainProcesses();

  // ---- the programs a plain node loads (plain_files.cpp)
  // The name a plain node loads and executes a process's program by:
  // /scabench/bin/PROGRAM, in the file system below.
  static std::string servedName(const HostProc& h);
  // The read-only CF::FileSystem the launcher serves to its plain nodes
  // (made, and the launcher's POA activated, at the first call): the file
  // of this machine each program there is, at its servedName.
  CF::FileSystem_ptr programFileSystem();

  // ---- events from the hosts and the external programs
  // Reads status lines (the hosts' pipe, each external program's stdout) and
  // reaps processes. One that exits before it is released is a failure
  // named after its components.
  void pumpEvents(int timeoutMs, bool exitIsFailure = true);

  // What an external program writes on stdout: the events a scabench
  // component writes are taken when they name its own component; anything
  // else is its own business.
  void readOutput(HostProc& h);

  // Reaps `h` if it has exited (blocking: waits for it); true if it just did.
  // An external program's resource usage comes from the kernel here (a host
  // reports its own on the pipe).
  bool reap(HostProc& h, bool block);

  void handleLine(const std::string& line);

  RunFailure hostDied(const HostProc& h);

  // Opens a component's record file positioned after its header; false if
  // the component never got as far as creating it.
  // A component on a node has only its header here (.progress) until its
  // records are fetched.
  bool openRecords(const std::string& component, std::ifstream& in, scabench::RecordFileHeader& header);

  // What the records of a dead host's components say they handled last.
  std::string lastPackets(const HostProc& h);

  std::string progressReport();

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

  bool allExited() const;

  // A node's processes still running: terminate (SIGTERM, SIGKILL 5 s
  // later, returns once gone), every one at once (a thread each: the call
  // blocks, and a stopped process takes the whole 5 s), then one more look
  // for their last records and output (rusage). A node gone took its
  // processes along.
  void terminateRemote();

  // Ends every process still running: SIGTERM, then SIGKILL after a grace period.
  void killAll();

  Plan plan_;
  std::string runDir_;
  std::vector<int> measuredCores_;
  int64_t deadlineNs_ = 0;
  std::vector<HostProc> hosts_;
  std::size_t componentCount_ = 0;
  std::set<std::string> hasOutgoing_;
  int statusRead_ = -1;
  std::string pending_;
  std::map<std::string, std::string> iors_;
  std::map<std::string, int64_t> eos_;
  std::map<std::string, std::map<std::string, std::string>> stats_;
  CORBA::ORB_var orb_;
  CF::FileSystem_var programFs_;  // nil until a plain node loads (programFileSystem)
  std::map<std::string, CF::Resource_var> resources_;
  std::map<std::string, External> externals_;
  CosNaming::NamingContext_var root_, context_;
  std::string contextIor_, contextName_;
  bool madeContext_ = false;
  std::map<std::string, Node> nodes_;
  bool checkingError_ = false;  // an error line is being traced to its cause (handleLine)
  json lifecycle_ = {{"started", json::array()}, {"stopped", json::array()}};  // the manifest's "lifecycle"
};

}  // namespace scabench::launch
