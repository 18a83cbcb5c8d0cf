// scabench-launch: runs one assembly and tears it down, whatever happens.
//
//   scabench-launch ASSEMBLY.json MANIFEST.json
//
// The assembly (written by `scabench run`, format in docs/architecture.md)
// lists host processes with their cores, ORB options and components, and the
// connections with their properties. The launcher starts the hosts, drives
// each component the SCA way (initialize, configure, getPort, connectPort,
// start), waits until every terminal component has seen end of stream, then
// stop/releaseObject. It measures the CPU that processes outside the run
// used meanwhile, and writes the outcome to MANIFEST.json. On any failure it
// names the component and the reason, and no host outlives it.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <omniORB4/Naming.hh>

#include "cf.hh"
#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/core/record_log.hpp"

using nlohmann::json;

namespace {

volatile std::sig_atomic_t interrupted = 0;
void onSignal(int) { interrupted = 1; }

// A failure with the component it belongs to.
struct RunFailure : std::runtime_error {
  RunFailure(std::string component, const std::string& what) : std::runtime_error(what), component(std::move(component)) {}
  std::string component;
};

struct HostProc {
  std::string name;
  std::vector<int> cores;
  std::string netns;  // network namespace the host runs in; empty: the launcher's own
  bool batch = false; // SCHED_BATCH: the host's threads do not preempt on wake-up
  std::vector<std::string> components;
  pid_t pid = -1;
  bool exited = false;
  int status = 0;
  json rusage;
};

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

CpuSnapshot snapshot(const std::vector<int>& cores, const std::vector<HostProc>& hosts) {
  CpuSnapshot s;
  s.wallNs = scabench::monotonicNs();
  s.busySeconds = busyOnCores(cores);
  s.ownSeconds = processCpuSeconds(getpid());
  for (const auto& h : hosts)
    if (!h.exited) s.ownSeconds += processCpuSeconds(h.pid);
  return s;
}

// ------------------------------------------------------------------ Launcher

class Launcher {
 public:
  Launcher(json assembly) : a_(std::move(assembly)) {}

  json run() {
    json manifest;
    try {
      validate();
      spawnHosts();
      waitReady();
      initOrb();
      configureAll();
      bindNames();
      connectAll();
      const CpuSnapshot before = snapshot(measuredCores_, hosts_);
      manifest["window_start_ns"] = before.wallNs;
      startAll();
      announceStart();
      waitEndOfStream();
      const CpuSnapshot after = snapshot(measuredCores_, hosts_);
      manifest["window_end_ns"] = after.wallNs;
      const double wall = double(after.wallNs - before.wallNs) / 1e9;
      const double foreign = (after.busySeconds - before.busySeconds) - (after.ownSeconds - before.ownSeconds);
      manifest["own_cpu_s"] = after.ownSeconds - before.ownSeconds;
      manifest["foreign_cpu_pct"] = wall > 0 ? std::max(0.0, 100.0 * foreign / (wall * double(measuredCores_.size()))) : 0.0;
      manifest["eos"] = eos_;
      manifest["stats"] = stats_;
      holdIfAsked();
      releaseAll();
      manifest["status"] = "ok";
    } catch (const RunFailure& f) {
      manifest["status"] = "failed";
      manifest["failed_component"] = f.component;
      manifest["error"] = f.what();
      killAll();
    } catch (const std::exception& ex) {
      manifest["status"] = "failed";
      manifest["failed_component"] = "";
      manifest["error"] = ex.what();
      killAll();
    }
    json hosts = json::array();
    for (const auto& h : hosts_) {
      json entry = {{"name", h.name}, {"pid", h.pid}, {"cores", h.cores}, {"components", h.components}};
      entry["exit"] = h.exited ? describeStatus(h.status) : "not started";
      if (!h.rusage.is_null()) entry["rusage"] = h.rusage;
      hosts.push_back(entry);
    }
    manifest["hosts"] = hosts;
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
    for (const char* key : {"run_dir", "host_binary", "hosts", "connections", "timeout_s", "measure_cores"})
      if (!a_.contains(key)) throw std::runtime_error(std::string("assembly has no '") + key + "'");
    runDir_ = a_["run_dir"];
    measuredCores_ = a_["measure_cores"].get<std::vector<int>>();
    deadlineNs_ = scabench::monotonicNs() + int64_t(a_["timeout_s"].get<double>() * 1e9);
    for (const auto& h : a_["hosts"]) {
      HostProc proc;
      proc.name = h["name"];
      proc.cores = h["cores"].get<std::vector<int>>();
      proc.netns = h.value("netns", "");
      const std::string scheduler = h.value("scheduler", "normal");
      if (scheduler != "normal" && scheduler != "batch")
        throw std::runtime_error("host " + proc.name + ": scheduler '" + scheduler + "' is not normal or batch");
      proc.batch = scheduler == "batch";
      for (const auto& c : h["components"]) {
        proc.components.push_back(c["name"]);
        ++componentCount_;
      }
      hosts_.push_back(proc);
    }
    for (const auto& c : a_["connections"]) {
      hasOutgoing_.insert(c["uses"]["component"].get<std::string>());
      hasIncoming_.insert(c["provides"]["component"].get<std::string>());
    }
  }

  void spawnHosts() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create the status pipe");
    statusRead_ = fds[0];
    const int statusWrite = fds[1];
    const pid_t launcherPid = getpid();
    const std::string binary = a_["host_binary"];
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      const json& h = a_["hosts"][i];
      std::vector<std::string> args = {binary, "--host", hosts_[i].name, "--status-fd", "3", "--record-dir", runDir_};
      for (const auto& c : h["components"])
        args.push_back("--component"), args.push_back(c["name"].get<std::string>() + ":" + c["kind"].get<std::string>() +
                                                       ":" + c["sample_type"].get<std::string>());
      // The component libraries (plugins) this host's components come from,
      // each once: the host loads them before it creates any component.
      std::vector<std::string> libraries;
      for (const auto& c : h["components"])
        if (c.contains("library") && std::find(libraries.begin(), libraries.end(), c["library"]) == libraries.end())
          libraries.push_back(c["library"]);
      for (const auto& library : libraries) args.push_back("--library"), args.push_back(library);
      for (const auto& o : h["orb_options"]) args.push_back(o);
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        // The host dies with the launcher, even if the launcher is killed.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != launcherPid) _exit(127);
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int core : hosts_[i].cores) CPU_SET(core, &set);
        if (!hosts_[i].cores.empty() && sched_setaffinity(0, sizeof(set), &set) != 0) {
          perror("scabench-host: sched_setaffinity");
          _exit(126);
        }
        // A network host: the run made the namespace (python/scabench/run/network.py);
        // entering it here keeps the host a direct child, so PDEATHSIG and
        // waitpid work as for any other host.
        if (!hosts_[i].netns.empty()) {
          const std::string path = "/run/netns/" + hosts_[i].netns;
          const int nsFd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
          if (nsFd < 0 || setns(nsFd, CLONE_NEWNET) != 0) {
            std::cerr << "scabench-host: cannot enter network namespace " << path << ": " << std::strerror(errno) << "\n";
            _exit(125);
          }
          close(nsFd);
        }
        // Threads inherit the policy, so every ORB and worker thread gets it.
        if (hosts_[i].batch) {
          sched_param param{};
          if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) {
            perror("scabench-host: sched_setscheduler(SCHED_BATCH)");
            _exit(126);
          }
        }
        dup2(statusWrite, 3);  // dup2 clears close-on-exec on fd 3
        std::vector<char*> argv;
        for (auto& s : args) argv.push_back(s.data());
        argv.push_back(nullptr);
        execv(binary.c_str(), argv.data());
        perror("scabench-host: exec");
        _exit(127);
      }
      hosts_[i].pid = pid;
    }
    close(statusWrite);
  }

  void waitReady() {
    const std::size_t expected = componentCount_;
    const int64_t readyDeadline = scabench::monotonicNs() + 30'000'000'000LL;
    while (iors_.size() < expected) {
      if (scabench::monotonicNs() > readyDeadline) throw RunFailure("", "hosts did not come up within 30 s");
      pumpEvents(100);
    }
  }

  void initOrb() {
    int argc = 0;
    // A hung component must not hang the launcher: calls time out.
    const char* options[][2] = {{"clientCallTimeOutPeriod", "30000"}, {"verifyObjectExistsAndType", "0"}, {nullptr, nullptr}};
    orb_ = CORBA::ORB_init(argc, nullptr, "omniORB4", options);
    for (const auto& [name, ior] : iors_) {
      CORBA::Object_var obj = orb_->string_to_object(ior.c_str());
      resources_[name] = CF::Resource::_narrow(obj);
    }
  }

  static CORBA::Any toAny(const json& v) {
    CORBA::Any any;
    if (v.is_boolean()) any <<= CORBA::Any::from_boolean(v.get<bool>());
    else if (v.is_number_integer()) any <<= CORBA::LongLong(v.get<int64_t>());
    else if (v.is_number()) any <<= CORBA::Double(v.get<double>());
    else any <<= v.get<std::string>().c_str();
    return any;
  }

  void configureAll() {
    for (const auto& h : a_["hosts"]) {
      for (const auto& c : h["components"]) {
        const std::string name = c["name"];
        guardCall(name, "initialize/configure", [&] {
          resources_[name]->initialize();
          CF::Properties props;
          props.length(CORBA::ULong(c["properties"].size()));
          CORBA::ULong i = 0;
          for (const auto& [id, value] : c["properties"].items()) {
            props[i].id = id.c_str();
            props[i].value = toAny(value);
            ++i;
          }
          resources_[name]->configure(props);
        });
      }
    }
  }

  // The SCA way to find a waveform's components: a naming context for this
  // waveform instance in the run's Naming Service, each component bound in
  // it under its name. The launcher binds them (it holds every reference);
  // an outside tool resolves them there (README, "Finding a run's components").
  void bindNames() {
    if (!a_.contains("naming")) return;
    const json& naming = a_["naming"];
    const std::string where = naming["corbaloc"].get<std::string>();
    try {
      CORBA::Object_var obj = orb_->string_to_object(where.c_str());
      CosNaming::NamingContext_var root = CosNaming::NamingContext::_narrow(obj);
      if (CORBA::is_nil(root)) throw std::runtime_error("not a naming context");
      CosNaming::Name contextName;
      contextName.length(1);
      contextName[0].id = naming["context"].get<std::string>().c_str();
      CosNaming::NamingContext_var context;
      try {
        context = root->bind_new_context(contextName);
      } catch (const CosNaming::NamingContext::AlreadyBound&) {
        obj = root->resolve(contextName);
        context = CosNaming::NamingContext::_narrow(obj);
      }
      for (const auto& [name, res] : resources_) {
        CosNaming::Name n;
        n.length(1);
        n[0].id = name.c_str();
        context->rebind(n, res);
      }
    } catch (const CORBA::Exception& ex) {
      throw RunFailure("", "the Naming Service at " + where + " refused the run's names: " + ex._name());
    }
  }

  // With "hold" in the assembly: once the stream has ended and been
  // measured, say so on stdout ("held") and keep every component up, bound
  // in the Naming Service, until stdin closes; then release as usual.
  void holdIfAsked() {
    if (!a_.value("hold", false)) return;
    std::cout << "held" << std::endl;
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
    for (const auto& c : a_["connections"]) {
      const std::string id = c["id"], uses = c["uses"]["component"], provides = c["provides"]["component"];
      const std::string usesPort = c["uses"]["port"], providesPort = c["provides"]["port"];
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
      }
  }

  // With "announce_start" in the assembly, tells whoever runs the launcher
  // that the stream has started, with the hosts' pids, on one stdout line
  // ("started PID ..."): the granularity lab measures a steady window of
  // those processes from there (python/scabench/measure/window.py).
  void announceStart() {
    if (!a_.value("announce_start", false)) return;
    std::string line = "started";
    for (const auto& h : hosts_) line += " " + std::to_string(h.pid);
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
        throw RunFailure("", "timed out after " + std::to_string(a_["timeout_s"].get<double>()) +
                                 " s waiting for end of stream" + progressReport());
      pumpEvents(50);
    }
  }

  void releaseAll() {
    for (const auto& [name, res] : resources_) guardCall(name, "stop", [&] { res->stop(); });
    for (const auto& [name, res] : resources_) guardCall(name, "releaseObject", [&] { res->releaseObject(); });
    // Hosts exit once all their components are released; give them time to
    // report their resource usage, then make sure.
    const int64_t until = scabench::monotonicNs() + 10'000'000'000LL;
    while (scabench::monotonicNs() < until && !allExited()) pumpEvents(20, /*exitIsFailure=*/false);
    killAll();
  }

  // ---- events from the hosts
  // Reads status lines and reaps hosts. A host that exits before it is
  // released is a failure named after its components.
  void pumpEvents(int timeoutMs, bool exitIsFailure = true) {
    if (interrupted) throw RunFailure("", "interrupted");
    pollfd p{statusRead_, POLLIN, 0};
    if (poll(&p, 1, timeoutMs) > 0) {
      char buf[8192];
      const ssize_t n = read(statusRead_, buf, sizeof buf);
      if (n > 0) pending_.append(buf, std::size_t(n));
    }
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
      const std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      handleLine(line);
    }
    for (auto& h : hosts_) {
      if (h.exited || h.pid <= 0) continue;
      int status;
      if (waitpid(h.pid, &status, WNOHANG) == h.pid) {
        h.exited = true;
        h.status = status;
        if (exitIsFailure) throw hostDied(h);
      }
    }
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
      // moment to be reaped so that the true culprit is named.
      for (int i = 0; i < 10; ++i) {
        for (auto& h : hosts_) {
          int status;
          if (!h.exited && h.pid > 0 && waitpid(h.pid, &status, WNOHANG) == h.pid) {
            h.exited = true;
            h.status = status;
            throw hostDied(h);
          }
        }
        usleep(20'000);
      }
      throw RunFailure(who, "component " + who + " failed: " + rest);
    }
  }

  RunFailure hostDied(const HostProc& h) {
    std::string names;
    for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
    return RunFailure(h.components.empty() ? h.name : h.components.front(),
                      "component " + names + " (host " + h.name + ", pid " + std::to_string(h.pid) + ") " +
                          describeStatus(h.status) + lastPackets(h));
  }

  // Opens a component's record file positioned after its header; false if
  // the component never got as far as creating it.
  bool openRecords(const std::string& component, std::ifstream& in, scabench::RecordFileHeader& header) {
    in.open(runDir_ + "/" + component + ".rec", std::ios::binary);
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
      // Most likely the host died: prefer that explanation.
      pumpEvents(50);
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

  // Ends every host still running: SIGTERM, then SIGKILL after a grace period.
  void killAll() {
    for (auto& h : hosts_)
      if (!h.exited && h.pid > 0) kill(h.pid, SIGTERM);
    const int64_t until = scabench::monotonicNs() + 2'000'000'000LL;
    while (!allExited()) {
      const bool late = scabench::monotonicNs() > until;
      for (auto& h : hosts_) {
        if (h.exited || h.pid <= 0) continue;
        if (late) kill(h.pid, SIGKILL);
        int status;
        if (waitpid(h.pid, &status, late ? 0 : WNOHANG) == h.pid) h.exited = true, h.status = status;
      }
      if (!late) usleep(10'000);
    }
    // Read the last status lines (rusage) the hosts wrote before exiting.
    if (statusRead_ >= 0) {
      char buf[8192];
      ssize_t n;
      fcntl(statusRead_, F_SETFL, O_NONBLOCK);
      while ((n = read(statusRead_, buf, sizeof buf)) > 0) pending_.append(buf, std::size_t(n));
      std::size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        const std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (line.rfind("rusage", 0) == 0) handleLine(line);
      }
    }
  }

  json a_;
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
  json assembly;
  try {
    std::ifstream in(argv[1]);
    if (!in) throw std::runtime_error("cannot open");
    assembly = json::parse(in);
  } catch (const std::exception& ex) {
    std::cerr << "scabench-launch: " << argv[1] << ": " << ex.what() << "\n";
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  json manifest = Launcher(std::move(assembly)).run();
  std::ofstream(argv[2]) << manifest.dump(2) << "\n";
  if (manifest["status"] != "ok") {
    std::cerr << "scabench-launch: " << manifest["error"].get<std::string>() << "\n";
    return 1;
  }
  return 0;
}
