// The run's processes: made from the plan, forked here, their CPU measured, reaped and ended.
#include "launcher/launcher.hpp"

namespace scabench::launch {

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
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) +
           ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// ------------------------------------------------------------ CPU accounting

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

// What /proc says of a process of this machine (exists false: no such pid).
ProcStat procStat(pid_t pid) {
  ProcStat st;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the name in parentheses may hold spaces and ')'
  if (close == std::string::npos || close + 2 >= text.size()) return st;
  std::istringstream fields(text.substr(close + 2));
  std::vector<std::string> f;  // fields 3 (state) to 22 (starttime)
  std::string one;
  while (f.size() < 20 && fields >> one) f.push_back(one);
  if (f.size() < 20) return st;
  st.exists = true;
  st.state = f[0].empty() ? 0 : f[0][0];
  st.userS = double(std::stoull(f[11])) * jiffy();
  st.systemS = double(std::stoull(f[12])) * jiffy();
  st.startTicks = std::stoull(f[19]);
  return st;
}

std::vector<std::string> procCmdline(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

long long procContextSwitches(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  long long total = 0;
  int seen = 0;
  while (std::getline(in, line))
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
      total += std::stoll(line.substr(line.find(':') + 1));
      ++seen;
    }
  return seen == 2 ? total : -1;
}

// utime + stime of a whole process (threads that ended included).
double processCpuSeconds(pid_t pid) {
  const ProcStat st = procStat(pid);
  return st.userS + st.systemS;
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

// ---- set-up
void Launcher::validate() {
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
          throw RunFailure(c.name,
                           "component " + c.name + " comes from a component library, which a node does not load");
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
      proc.name = e.process;
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
  for (const auto& c : plan_.hops) hasOutgoing_.insert(c.uses.component);
  // An external component has no record file and reports no end of stream:
  // the run sees its packets at the ports of the components around it.
  for (const auto& [name, _] : externals_)
    if (!hasOutgoing_.count(name))
      throw RunFailure(name, "component " + name +
                                 " is external and has no outgoing connection; "
                                 "a run ends at a component of the runtime");
}

// A host's component as scabench-host takes it, forked here (--component)
// or started by a node (COMPONENT): NAME:KIND:SAMPLE_TYPE.
std::string Launcher::componentArgument(const scabench::launch::ComponentPlan& c) {
  return c.name + ":" + c.kind + ":" + c.sampleType;
}

// Starts every host and every external program, each on its CPU set, tied
// to the launcher (PR_SET_PDEATHSIG) and carrying the run owner's tag
// (inherited environment, python/scabench/run/processes.py). The child
// only makes system calls between fork and exec: the launcher's ORB has
// threads, and one of them may hold the allocator's lock at the fork.
void Launcher::spawnAll() {
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
      if (!h.cores.empty() && sched_setaffinity(0, sizeof(set), &set) != 0)
        childFail(h.argv.front().c_str(), "sched_setaffinity", 126);
      // Threads inherit the policy, so every ORB and worker thread gets it.
      if (h.batch) {
        sched_param param{};
        if (sched_setscheduler(0, SCHED_BATCH, &param) != 0)
          childFail(h.argv.front().c_str(), "sched_setscheduler(SCHED_BATCH)", 126);
      }
      if (h.exec) {
        // A process group of its own: what the program starts (a child
        // that outlives it, holding its stdout) is ended with it, by the
        // group (reap, killAll), as a node's processes are (node/processes.py).
        setpgid(0, 0);
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
      setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before a signal to it
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
std::vector<std::string> Launcher::execParameters(const HostProc& h) const {
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
[[noreturn]] void Launcher::childFail(const char* who, const char* what, int code) {
  const char* why = strerror(errno);
  const char* parts[] = {"scabench-launch: ", who, ": ", what, ": ", why, "\n"};
  for (const char* p : parts) {
    const ssize_t ignored = write(2, p, strlen(p));
    (void)ignored;
  }
  _exit(code);
}

std::string Launcher::formatSeconds(double s) {
  std::ostringstream out;
  out << s << " s";
  return out.str();
}

std::string Launcher::stderrTail(const HostProc& h) const {
  if (!h.node.empty()) return h.errorTail.empty() ? "" : "; its stderr: " + h.errorTail;
  if (!h.exec) return "";
  const std::string last = lastLineOf(h.errPath);
  return last.empty() ? "" : "; its stderr: " + last;
}

std::string Launcher::exitText(const HostProc& h) const {
  if (h.node.empty()) return h.exited ? describeStatus(h.status) : "not started";
  if (!h.lostWith.empty()) return "lost with node " + h.lostWith;
  if (!h.stillRunning.empty()) return h.stillRunning;
  if (h.endedHere)
    return "ended by the launcher, its node " + h.node +
           (nodes_.at(h.node).deadWhy.empty() ? "'s terminate having left it running" : " gone");
  if (!h.exited) return h.pid > 0 ? "still running" : "not started";
  // Not the launcher's child, and CF has no call that says how a process ended.
  if (nodes_.at(h.node).plainCf) return "ended (how is its device's to know: CF does not say)";
  if (h.exitStatus < 0)
    return std::string("killed by signal ") + std::to_string(-h.exitStatus) + " (" + strsignal(-h.exitStatus) + ")";
  return "exited with status " + std::to_string(h.exitStatus);
}

// What an external program writes on stdout: the events a scabench
// component writes are taken when they name its own component; anything
// else is its own business.
void Launcher::readOutput(HostProc& h) {
  char buf[8192];
  const ssize_t n = read(h.outFd, buf, sizeof buf);
  if (n < 0 && errno == EAGAIN) {  // the program has ended (killAll): what is left was read
    close(h.outFd);
    h.outFd = -1;
    return;
  }
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
// An external program is looked at first without reaping it (WNOWAIT):
// while it is a zombie its pid, and so its process group, cannot be
// reused, so what it left in its group is SIGKILLed without the risk of
// hitting a stranger.
bool Launcher::reap(HostProc& h, bool block) {
  if (h.exited || h.pid <= 0 || !h.node.empty()) return false;  // a node's process is the node's to reap
  if (h.exec) {
    siginfo_t info{};
    if (waitid(P_PID, id_t(h.pid), &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) != 0 || info.si_pid != h.pid)
      return false;
    kill(-h.pid, SIGKILL);
    block = true;  // it has exited: wait4 returns at once
  }
  int status;
  rusage usage{};
  if (wait4(h.pid, &status, block ? 0 : WNOHANG, &usage) != h.pid) return false;
  h.exited = true;
  h.status = status;
  if (h.exec) {
    const auto seconds = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    h.rusage = {{"user_s", seconds(usage.ru_utime)},
                {"system_s", seconds(usage.ru_stime)},
                {"voluntary_ctxsw", usage.ru_nvcsw},
                {"involuntary_ctxsw", usage.ru_nivcsw},
                {"max_rss_kb", usage.ru_maxrss}};
  }
  return true;
}

bool Launcher::allExited() const {
  for (const auto& h : hosts_)
    if (!h.exited && h.pid > 0) return false;
  return true;
}

// Ends every process still running: SIGTERM, then SIGKILL after a grace period.
void Launcher::killAll() {
  terminateRemote();
  // An external program's signals go to its whole group (spawnAll).
  const auto target = [](const HostProc& h) { return h.exec ? -h.pid : h.pid; };
  for (auto& h : hosts_)
    if (!h.exited && h.pid > 0 && h.node.empty()) kill(target(h), SIGTERM);
  const int64_t until = scabench::monotonicNs() + 2'000'000'000LL;
  while (!allExited()) {
    const bool late = scabench::monotonicNs() > until;
    for (auto& h : hosts_) {
      if (h.exited || h.pid <= 0 || !h.node.empty()) continue;
      if (late) kill(target(h), SIGKILL);
      reap(h, late);
    }
    if (!late) usleep(10'000);
  }
  // What the external programs wrote last (a Python component's refusals):
  // only what is in the pipe now. The program has ended and its group was
  // killed; a process it set apart in a group of its own may still hold
  // the pipe open, and must not keep the run waiting for an end of file.
  for (auto& h : hosts_) {
    if (h.outFd >= 0) fcntl(h.outFd, F_SETFL, O_NONBLOCK);
    while (h.outFd >= 0) readOutput(h);
  }
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

}  // namespace scabench::launch
