// scabench-peer-threads: the paper's pipeline as plain C++ threads, one per
// stage, joined by bounded queues (scabench's BoundedQueue, blocking when
// full, resuming at the first free slot) of `--depth` packets. No
// middleware at all: what is left of the floor's overhead is the scheduler's.
//
//   scabench-peer-threads [--packets 1000] [--samples 1024] [--stages 3] [--work-us 5000] [--depth 16]
//
// Prints one JSON line (peer.hpp).
#include <memory>
#include <thread>

#include "peer.hpp"
#include "scabench/core/bounded_queue.hpp"

namespace {

using Packet = std::vector<double>;

}  // namespace

int main(int argc, char** argv) {
  using namespace scabench;
  using namespace scabench::peers;
  const Options o = parseOptions(argc, argv, "scabench-peer-threads");
  std::vector<std::unique_ptr<BoundedQueue<Packet>>> queues;
  for (long long i = 0; i < o.stages; ++i) queues.push_back(std::make_unique<BoundedQueue<Packet>>(o.depth));
  std::vector<StageReport> reports(std::size_t(o.stages));
  const Work work = stageWork(o);

  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    threads.emplace_back([&, i] {
      BoundedQueue<Packet>* next = i + 1 < queues.size() ? queues[i + 1].get() : nullptr;
      while (auto packet = queues[i]->pop()) {
        reports[i].see(sequenceOf(packet->data()));
        work.run();
        if (next) next->push(std::move(*packet));
        reports[i].done();
      }
      if (next) next->close();  // end of stream, after every packet
    });
  }
  const int64_t t0 = monotonicNs();
  for (long long i = 0; i < o.packets; ++i) {
    Packet packet(std::size_t(o.samples));
    fillPacket(packet.data(), packet.size(), sendOrder(uint64_t(i), o));
    queues[0]->push(std::move(packet));
  }
  queues[0]->close();
  for (auto& t : threads) t.join();
  printResult("threads", o, t0, reports);
  return 0;
}
