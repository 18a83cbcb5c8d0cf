// Watching the run: events from the hosts and the external programs, end of
// stream, and what a failure says about the stream's progress.
#include "launcher/launcher.hpp"

namespace scabench::launch {

void Launcher::waitEndOfStream() {
  std::set<std::string> terminal;
  for (const auto& [name, _] : resources_)
    if (!hasOutgoing_.count(name)) terminal.insert(name);
  while (true) {
    bool all = true;
    for (const auto& t : terminal) all = all && eos_.contains(t);
    if (all) return;
    if (scabench::monotonicNs() > deadlineNs_)
      throw RunFailure(
          "", "timed out after " + std::to_string(plan_.timeoutS) + " s waiting for end of stream" + progressReport());
    pumpEvents(50);
  }
}

// ---- events from the hosts and the external programs
// Reads status lines (the hosts' pipe, each external program's stdout) and
// reaps processes. One that exits before it is released is a failure
// named after its components.
void Launcher::pumpEvents(int timeoutMs, bool exitIsFailure) {
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

void Launcher::handleLine(const std::string& line) {
  std::istringstream in(line);
  std::string kind, who;
  in >> kind >> who;
  std::string rest;
  std::getline(in, rest);
  if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  if (kind == "ready")
    iors_[who] = rest;
  else if (kind == "eos")
    eos_[who] = std::stoll(rest);
  else if (kind == "stat") {
    // "stat NAME KEY VALUE": a figure a component reports about its run.
    const auto space = rest.find(' ');
    if (space != std::string::npos) stats_[who][rest.substr(0, space)] = rest.substr(space + 1);
  } else if (kind == "rusage") {
    std::istringstream f(rest);
    double utime, stime;
    long nvcsw, nivcsw, maxrss;
    f >> utime >> stime >> nvcsw >> nivcsw >> maxrss;
    for (auto& h : hosts_)
      if (h.name == who)
        h.rusage = {{"user_s", utime},
                    {"system_s", stime},
                    {"voluntary_ctxsw", nvcsw},
                    {"involuntary_ctxsw", nivcsw},
                    {"max_rss_kb", maxrss}};
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

RunFailure Launcher::hostDied(const HostProc& h) {
  if (!h.node.empty()) {
    std::string names;
    for (const auto& c : h.components) names += (names.empty() ? "" : ", ") + c;
    const std::string tail = h.errorTail.empty() ? "" : "; its stderr: " + h.errorTail;
    return RunFailure(h.components.front(), "component " + names + " (" + (h.exec ? h.program : "host " + h.name) +
                                                " on node " + h.node + ", pid " + std::to_string(h.pid) + ") " +
                                                exitText(h) + tail + (h.exec ? "" : lastPackets(h)));
  }
  if (h.exec)
    return RunFailure(h.components.front(), "component " + h.components.front() + " (" + h.argv.front() + ", pid " +
                                                std::to_string(h.pid) + ") " + describeStatus(h.status) +
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
bool Launcher::openRecords(const std::string& component, std::ifstream& in, scabench::RecordFileHeader& header) {
  in.open(runDir_ + "/" + component + ".rec", std::ios::binary);
  if (!in) in.open(runDir_ + "/" + component + ".progress", std::ios::binary);
  return bool(in.read(reinterpret_cast<char*>(&header), sizeof header));
}

// What the records of a dead host's components say they handled last.
std::string Launcher::lastPackets(const HostProc& h) {
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
      out +=
          "; " + c + " had received " + std::to_string(n) + " packets, the last was #" + std::to_string(last.sequence);
  }
  return out;
}

std::string Launcher::progressReport() {
  std::string out;
  for (const auto& [name, _] : resources_) {
    std::ifstream in;
    scabench::RecordFileHeader header;
    if (openRecords(name, in, header)) out += "; " + name + " handled " + std::to_string(header.completed.load());
  }
  return out;
}

}  // namespace scabench::launch
