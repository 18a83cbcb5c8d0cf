// Processes placed on a node whose device is a plain CF::ExecutableDevice
// (a REDHAWK GPP, say), driven with CF alone: allocateCapacity of the GPP's
// memCapacity, load, execute, terminate, unload, operationalState
// (nodes.cpp, as for every node). Load is handed the launcher's own
// read-only CF::FileSystem, which serves each program at /scabench/bin/NAME
// (plain_files.cpp): a GPP copies it from there into its cache, and load,
// execute and unload name it so.
//
// CF has no place for what the run needs besides: a process's events (its
// end of stream, its errors, its figures), its packet records, its state,
// its CPU, and a clock the records' times can be put on. A scabench node
// gives them through its watch (idl/node.idl); a plain device cannot. So
// the launcher drives a plain node only on its own machine, where each of
// them can be had another way:
//   - the process writes its events into a file of the run directory
//     (EVENTS_FILE: what it would write on stdout) and its records there too
//     (RECORD_DIR), which the launcher reads as it reads a node's stdout
//     (remoteLines) and a local host's records (openRecords); their times
//     are this machine's CLOCK_MONOTONIC, the launcher's own;
//   - its state and CPU come from /proc (it is not the launcher's child: no
//     waitpid, so no exit status either), and what a terminate leaves
//     running is ended here (endPlainProcesses);
//   - the run's memory is still asked of the device (memCapacity).
// That the node is this machine is checked, not assumed: after execute, the
// pid the device answered must be a process here whose command line carries
// the COMPONENT_IDENTIFIER the launcher gave (a GPP passes the execute
// parameters as argv NAME VALUE pairs), of the launcher's user (it writes
// in the launcher's run directory). Otherwise the run fails naming the
// node, every process started terminated through its device.
#include <sys/stat.h>
#include "launcher/launcher.hpp"

namespace scabench::launch {

void Launcher::refuseScabenchOptions(const Node& n) const {
  for (const auto& h : hosts_) {
    if (h.node != n.name) continue;
    std::string names;
    for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
    const std::string plain = "node " + n.name + "'s device is a plain CF::ExecutableDevice, which has no ";
    const std::string what = "; run scabench node there, whose device takes it (nothing was started)";
    if (!h.cores.empty()) {
      std::string cpus;
      for (int c : h.cores) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
      throw RunFailure(
          h.components.front(),
          plain + "AFFINITY execute option (scabench node's), and the plan asks CPUs " + cpus + " for " + names + what);
    }
    if (h.batch)
      throw RunFailure(h.components.front(), plain +
                                                 "SCHEDULER execute option (scabench node's), and the plan asks "
                                                 "[run] scheduler = \"batch\" for " +
                                                 names + "; leave the scheduler normal, or" + what.substr(1));
  }
}

void Launcher::plainParameters(HostProc& h, std::vector<std::string>& params) {
  // Made empty here, so that nothing of an earlier run in this directory is read as this one's.
  h.eventsPath = runDir_ + "/" + h.name + ".events";
  writeFile(h.eventsPath, "", 0);
  params.push_back("EVENTS_FILE");
  params.push_back(h.eventsPath);
  if (!h.exec) {  // a host's records; an external program writes none, and gets no RECORD_DIR anywhere
    params.push_back("RECORD_DIR");
    params.push_back(runDir_);
  }
  // Where it listens: a scabench node adds its own endpoint; a plain device
  // adds none. A program that takes no -ORB options (an external's
  // `orb_options = false`) is left to its own.
  const bool takesOrbOptions = !h.exec || !plan_.external(h.components.front())->orbOptions.empty();
  if (takesOrbOptions) {
    params.push_back("-ORBendPoint");
    params.push_back("giop:tcp:127.0.0.1:");
  }
}

void Launcher::checkOnThisMachine(Node& n, HostProc& h, const std::string& identifier) {
  const int64_t until = scabench::monotonicNs() + int64_t(PLAIN_EXEC_CHECK_S * 1e9);
  ProcStat st;
  do {
    // Between the device's fork and its exec the child shows the device's
    // own command line: looked at again until it shows the program's.
    st = procStat(h.pid);
    if (!st.running()) break;
    const std::vector<std::string> args = procCmdline(h.pid);
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "COMPONENT_IDENTIFIER" && args[i + 1] == identifier &&
          procStat(h.pid).startTicks == st.startTicks) {
        h.startTicks = st.startTicks;
        // Its events and records go into the run directory, which only the
        // launcher's user may write: a device of another user's would start
        // processes that cannot tell the run anything.
        struct stat owner {};
        if (::stat(("/proc/" + std::to_string(h.pid)).c_str(), &owner) == 0 && owner.st_uid != geteuid())
          throw RunFailure(h.components.front(),
                           "node " + n.name + "'s device started pid " + std::to_string(h.pid) + " for " +
                               h.components.front() + " as uid " + std::to_string(owner.st_uid) +
                               ", not the launcher's uid " + std::to_string(geteuid()) +
                               ": a plain CF node's device must run as the launcher's user (its processes "
                               "write their events and records in the launcher's run directory, which only "
                               "that user may write); what the device started is terminated through it");
        n.sameMachine = true;
        return;
      }
    usleep(10'000);
  } while (scabench::monotonicNs() < until);
  std::string names;
  for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
  throw RunFailure(
      h.components.front(),
      "node " + n.name + "'s device is a plain CF::ExecutableDevice, which the launcher drives only on " +
          "its own machine (it reads the events, records and CPU of its processes here), and pid " +
          std::to_string(h.pid) + ", which it answered for " + names + ", is " +
          (st.exists ? "no process here carrying COMPONENT_IDENTIFIER " + identifier : "no process of this machine") +
          " (or the process ended at once; what the device started is terminated through it); to place "
          "components on another machine, run scabench node there");
}

void Launcher::pollPlain(Node& n, std::vector<HostProc*>& ended) {
  for (auto& h : hosts_) {
    if (h.node != n.name || h.pid <= 0 || h.exited || h.startTicks == 0) continue;
    // Its state first, then its events: a process seen ended has written all it will.
    const ProcStat st = procStat(h.pid);
    const bool same = st.exists && st.startTicks == h.startTicks;  // not a later process given its pid
    if (same) {
      // The kernel's CPU clock of the process, to the nanosecond (as a
      // local host's is read: /proc counts whole ticks), else /proc's.
      const double clock = processCpuClockSeconds(h.pid);
      const double cpu = clock >= 0 ? clock : st.userS + st.systemS;
      if (cpu >= h.nodeCpuS) {  // a zombie's may read 0: the last seen running is kept
        h.nodeCpuS = cpu;
        h.nodeRecord = {{"pid", h.pid},
                        {"program", h.program},
                        {"running", st.running()},
                        {"exit_status", nullptr},  // not the launcher's child: CF does not say how it ended
                        {"user_s", st.userS},
                        {"system_s", st.systemS},
                        {"context_switches", std::max(0LL, procContextSwitches(h.pid))},
                        {"error_tail", ""}};
      }
    }
    std::ifstream events(h.eventsPath, std::ios::binary);
    events.seekg(std::streamoff(h.outOffset));
    char buf[8192];
    while (events.read(buf, sizeof buf) || events.gcount() > 0) {
      h.outPending.append(buf, std::size_t(events.gcount()));
      h.outOffset += uint64_t(events.gcount());
    }
    if (!(same && st.running())) {
      h.exited = true;
      if (!h.nodeRecord.is_null()) h.nodeRecord["running"] = false;
      ended.push_back(&h);
    }
    remoteLines(h);
  }
}

void Launcher::endPlainProcesses() {
  // Its group when it leads one (what it started goes with it), else itself.
  const auto send = [](const HostProc& h, int sig) {
    return kill(getpgid(h.pid) == h.pid ? -h.pid : h.pid, sig) == 0 || errno == ESRCH;
  };
  const auto same = [](const HostProc& h) {
    const ProcStat st = procStat(h.pid);
    return st.running() && st.startTicks == h.startTicks;  // not a later process given its pid
  };
  std::vector<HostProc*> ending;
  for (auto& h : hosts_) {
    if (h.node.empty() || h.exited || h.pid <= 0 || h.startTicks == 0 || !nodes_.at(h.node).plainCf) continue;
    if (!same(h)) continue;  // ended: its poll says so
    if (send(h, SIGTERM)) {
      ending.push_back(&h);
    } else {  // EPERM: another user's (its device runs as another user)
      h.stillRunning = "pid " + std::to_string(h.pid) + " still running: not this launcher's to signal";
      std::cerr << "scabench-launch: node " << h.node << ": " << h.stillRunning << "\n";
    }
  }
  const int64_t grace = scabench::monotonicNs() + PLAIN_TERM_GRACE_MS * 1'000'000;
  for (auto* h : ending) {
    bool killed = false;
    // A SIGKILL is not refused where the SIGTERM was not: it is gone within the next second.
    while (same(*h)) {
      const int64_t now = scabench::monotonicNs();
      if (killed && now > grace + 1'000'000'000) break;
      if (!killed && now > grace) {
        send(*h, SIGKILL);
        killed = true;
      }
      usleep(10'000);
    }
    if (same(*h)) {
      h->stillRunning = "pid " + std::to_string(h->pid) + " still running after SIGKILL";
      std::cerr << "scabench-launch: node " << h->node << ": " << h->stillRunning << "\n";
      continue;
    }
    h->exited = true;
    h->endedHere = true;
  }
}

}  // namespace scabench::launch
