// scabench-launch: runs one plan and tears it down, whatever happens (the
// parts: launcher.hpp).
#include "launcher/launcher.hpp"

#include <csignal>
#include <fstream>
#include <iostream>

namespace scabench::launch {

volatile std::sig_atomic_t interrupted = 0;

namespace {
void onSignal(int) { interrupted = 1; }
}  // namespace

json Launcher::run() {
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
  manifest["lifecycle"] = lifecycle_;
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
    programFs_ = CF::FileSystem::_nil();  // a reference of this ORB: let go of before it goes
    try {
      orb_->destroy();
    } catch (...) {
    }
  }
  return manifest;
}

}  // namespace scabench::launch

const scabench::Usage kUsage{
    "scabench-launch",
    "usage: scabench-launch ASSEMBLY.json MANIFEST.json\n"
    "Runs one assembly (written by `scabench run`): starts its hosts, drives the components through the SCA\n"
    "lifecycle, waits for end of stream, tears everything down, and writes the outcome to MANIFEST.json.\n"};

using namespace scabench::launch;

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  if (argc != 3) return kUsage.refuse("expected two arguments");
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
