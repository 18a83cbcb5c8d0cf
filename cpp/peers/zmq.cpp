// scabench-peer-zmq: the paper's pipeline over ZeroMQ PUSH/PULL sockets.
//
//   scabench-peer-zmq --transport inproc|ipc [--packets 1000] [--samples 1024] [--stages 3] [--work-us 5000]
//                     [--depth 16]
//
// inproc: one process, a thread per stage, one ZeroMQ context (inproc
// endpoints live inside a context). `scabench peers` runs it with --depth 4.
// ipc: a process per stage, as scabench
// runs its components, over Unix-domain sockets. Each stage PULLs from its
// own bound endpoint and PUSHes to the next stage's; the producer (the main
// process's main thread) PUSHes to the first. Every socket's high-water mark
// (send and receive) is `--depth` messages: a PUSH socket blocks once the
// pipe is full, ZeroMQ's own back pressure. A PUSH/PULL pipe keeps order, so
// an empty message after the packets is the end of stream.
//
// Every stage binds before anyone connects (a connect to an endpoint not yet
// bound would retry only after ZeroMQ's reconnect interval, 100 ms, and that
// wait would be timed): stages report "bound", the main process then lets
// them all go. No socket closes before the last stage has the end of stream:
// ZeroMQ's linger delivers what is still queued in a pipe, but over ipc it
// dropped what the socket's engine held once the receiver's high-water mark
// had stopped it (the last packets never arrived).
//
// Prints one JSON line (peer.hpp).
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <latch>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

#include "peer.hpp"

namespace {

using namespace scabench;
using namespace scabench::peers;

std::string endpoint(const std::string& base, std::size_t stage) { return base + "stage" + std::to_string(stage); }

// One stage: bind, say so, wait for the go, connect downstream, then take
// packets until the end of stream and pass each on after its work; then
// finished(), which returns once every stage has finished, before the
// sockets close.
void runStage(zmq::context_t& context, const Options& o, const std::string& base, std::size_t index,
              StageReport& report, const std::function<void()>& bound, const std::function<void()>& go,
              const std::function<void()>& finished) {
  const bool last = index + 1 == std::size_t(o.stages);
  zmq::socket_t in(context, zmq::socket_type::pull);
  in.set(zmq::sockopt::rcvhwm, int(o.depth));
  in.bind(endpoint(base, index));
  zmq::socket_t out(context, zmq::socket_type::push);
  out.set(zmq::sockopt::sndhwm, int(o.depth));
  bound();
  go();
  if (!last) out.connect(endpoint(base, index + 1));
  const Work work = stageWork(o);
  const std::size_t bytes = std::size_t(o.samples) * sizeof(double);
  zmq::message_t message;
  while (true) {
    if (!in.recv(message)) throw std::runtime_error("receive interrupted");
    if (message.size() == 0) break;
    if (message.size() != bytes)
      throw std::runtime_error("stage " + std::to_string(index) + " received " + std::to_string(message.size()) +
                               " bytes, not " + std::to_string(bytes));
    report.see(sequenceOf(message.data<double>()));
    work.run();
    if (!last) out.send(message, zmq::send_flags::none);  // hands the message's buffer on, no copy
    report.done();
  }
  if (!last) out.send(zmq::message_t(), zmq::send_flags::none);
  finished();
}

// The producer: send every packet to the first stage, then the end of
// stream. Returns the time of the first send. The caller keeps the socket
// open until the pipeline has finished.
int64_t produce(zmq::socket_t& out, const Options& o) {
  const std::size_t bytes = std::size_t(o.samples) * sizeof(double);
  const int64_t t0 = monotonicNs();
  for (long long i = 0; i < o.packets; ++i) {
    zmq::message_t message(bytes);
    fillPacket(message.data<double>(), std::size_t(o.samples), sendOrder(uint64_t(i), o));
    out.send(message, zmq::send_flags::none);
  }
  out.send(zmq::message_t(), zmq::send_flags::none);
  return t0;
}

zmq::socket_t producerSocket(zmq::context_t& context, const Options& o, const std::string& base) {
  zmq::socket_t out(context, zmq::socket_type::push);
  out.set(zmq::sockopt::sndhwm, int(o.depth));
  out.connect(endpoint(base, 0));
  return out;
}

int runInproc(const Options& o) {
  zmq::context_t context;
  std::vector<StageReport> reports(std::size_t(o.stages));
  std::latch bound(o.stages), go(1), finished(o.stages);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    threads.emplace_back([&, i] {
      bool counted = false, done = false;
      try {
        runStage(
            context, o, "inproc://", i, reports[i],
            [&] {
              counted = true;
              bound.count_down();
            },
            [&] { go.wait(); },
            [&] {
              done = true;
              finished.arrive_and_wait();
            });
      } catch (const std::exception& e) {
        errors[i] = e.what();
        if (!counted) bound.count_down();
        if (!done) finished.count_down();
      }
    });
  }
  bound.wait();
  go.count_down();
  zmq::socket_t out = producerSocket(context, o, "inproc://");
  const int64_t t0 = produce(out, o);
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (!e.empty()) {
      std::cerr << "scabench-peer-zmq: " << e << "\n";
      return 1;
    }
  }
  printResult("zmq-inproc", o, t0, reports);
  return 0;
}

bool readAll(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= std::size_t(n);
  }
  return true;
}

int runIpc(const Options& o) {
  char dirTemplate[] = "/tmp/scabench-peer-zmq-XXXXXX";
  if (!mkdtemp(dirTemplate)) {
    std::cerr << "scabench-peer-zmq: cannot make a directory for the sockets: " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string dir = dirTemplate;
  const std::string base = "ipc://" + dir + "/";
  // ready: each stage writes one byte once bound; go: the main process writes
  // one byte per stage, and closes it once every stage has reported (the
  // stages then close their sockets); results: each stage writes its
  // StageReport at the end.
  int ready[2], go[2], results[2];
  if (pipe(ready) != 0 || pipe(go) != 0 || pipe(results) != 0) {
    std::cerr << "scabench-peer-zmq: pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  const pid_t parent = getpid();
  std::vector<pid_t> children;
  // Fork before any ZeroMQ context exists: a context's threads do not survive a fork.
  for (std::size_t i = 0; i < std::size_t(o.stages); ++i) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "scabench-peer-zmq: fork: " << std::strerror(errno) << "\n";
      for (pid_t c : children) kill(c, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a stage dies with the main process
      if (getppid() != parent) _exit(1);
      close(ready[0]);
      close(go[1]);
      close(results[0]);
      int status = 0;
      {
        StageReport report;
        try {
          zmq::context_t context;
          runStage(
              context, o, base, i, report, [&] { (void)!write(ready[1], "b", 1); },
              [&] {
                char c;
                if (!readAll(go[0], &c, 1)) throw std::runtime_error("the main process went away");
              },
              [&] {
                const uint64_t record[4] = {i, report.received, report.inOrder, uint64_t(report.lastDoneNs)};
                (void)!write(results[1], record, sizeof record);  // under PIPE_BUF: one write, never mixed
                close(results[1]);
                char c;
                (void)!readAll(go[0], &c, 1);  // returns at end of file: every stage has finished
              });
        } catch (const std::exception& e) {
          std::cerr << "scabench-peer-zmq: stage " << i << ": " << e.what() << "\n";
          status = 1;
        }
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  close(ready[1]);
  close(go[0]);
  close(results[1]);
  auto fail = [&](const std::string& why) {
    std::cerr << "scabench-peer-zmq: " << why << "\n";
    for (pid_t c : children) kill(c, SIGKILL);
    for (pid_t c : children) waitpid(c, nullptr, 0);
    std::filesystem::remove_all(dir);
    return 1;
  };
  for (std::size_t i = 0; i < children.size(); ++i) {
    char c;
    if (!readAll(ready[0], &c, 1)) return fail("a stage ended before it bound its socket");
  }
  const std::string goBytes(children.size(), 'g');
  if (write(go[1], goBytes.data(), goBytes.size()) != ssize_t(goBytes.size())) return fail("cannot start the stages");
  zmq::context_t context;
  zmq::socket_t out = producerSocket(context, o, base);
  const int64_t t0 = produce(out, o);
  std::vector<StageReport> reports(children.size());
  uint64_t record[4];
  std::size_t got = 0;
  while (readAll(results[0], record, sizeof record)) {
    if (record[0] >= reports.size()) return fail("a stage reported nonsense");
    reports[record[0]].received = record[1];
    reports[record[0]].inOrder = record[2];
    reports[record[0]].lastDoneNs = int64_t(record[3]);
    ++got;
  }
  close(go[1]);  // every stage has reported: they may close their sockets
  bool failed = false;
  for (pid_t c : children) {
    int status = 0;
    waitpid(c, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  std::filesystem::remove_all(dir);
  if (failed || got != children.size()) {
    std::cerr << "scabench-peer-zmq: a stage failed\n";
    return 1;
  }
  printResult("zmq-ipc", o, t0, reports);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parseOptions(argc, argv, "scabench-peer-zmq", {"inproc", "ipc"});
  try {
    return o.transport == "inproc" ? runInproc(o) : runIpc(o);
  } catch (const std::exception& e) {
    std::cerr << "scabench-peer-zmq: " << e.what() << "\n";
    return 1;
  }
}
