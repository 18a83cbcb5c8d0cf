// scabench-peer-gnuradio: the paper's pipeline as GNU Radio C++ blocks in
// one flowgraph, run by GNU Radio's thread-per-block scheduler.
//
//   scabench-peer-gnuradio [--packets 1000] [--samples 1024] [--stages 3] [--work-us 5000] [--depth 16]
//
// One stream item is one packet (a vector of `samples` doubles), so a
// buffer between two blocks holds whole packets: each block's output buffer
// holds `--depth` items, or GNU Radio's own 64 KiB if that is more.
// A stage handles one packet per call of work() and returns it at once,
// so each packet is handed on as soon as it is done, as in the other peers;
// given more items, a stage would spin through all of them before the next
// block saw any. The last stage is a sink (no output).
//
// Prints one JSON line (peer.hpp).
#include <gnuradio/io_signature.h>
#include <gnuradio/logger.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>

#include <cstring>

#include "peer.hpp"

namespace {

using namespace scabench;
using namespace scabench::peers;

std::size_t itemBytes(const Options& o) { return std::size_t(o.samples) * sizeof(double); }

class Source final : public gr::sync_block {
 public:
  explicit Source(const Options& o)
      : gr::sync_block("scabench_peer_source", gr::io_signature::make(0, 0, 0),
                       gr::io_signature::make(1, 1, int(itemBytes(o)))),
        options_(o) {}

  int work(int noutput_items, gr_vector_const_void_star&, gr_vector_void_star& outputs) override {
    if (sent_ == options_.packets) return WORK_DONE;
    if (sent_ == 0) t0Ns = monotonicNs();
    const long long n = std::min<long long>(noutput_items, options_.packets - sent_);
    auto* out = static_cast<double*>(outputs[0]);
    for (long long i = 0; i < n; ++i, ++sent_)
      fillPacket(out + i * options_.samples, std::size_t(options_.samples), sendOrder(uint64_t(sent_), options_));
    return int(n);
  }

  int64_t t0Ns = 0;

 private:
  Options options_;
  long long sent_ = 0;
};

class Stage final : public gr::sync_block {
 public:
  Stage(const Options& o, bool last, StageReport& report)
      : gr::sync_block("scabench_peer_stage", gr::io_signature::make(1, 1, int(itemBytes(o))),
                       last ? gr::io_signature::make(0, 0, 0) : gr::io_signature::make(1, 1, int(itemBytes(o)))),
        options_(o),
        last_(last),
        work_(stageWork(o)),
        report_(report) {}

  int work(int noutput_items, gr_vector_const_void_star& inputs, gr_vector_void_star& outputs) override {
    const auto* in = static_cast<const double*>(inputs[0]);
    report_.see(sequenceOf(in));
    work_.run();
    if (!last_) std::memcpy(outputs[0], in, itemBytes(options_));
    report_.done();
    return 1;  // one packet per call (see the top of the file)
  }

 private:
  Options options_;
  bool last_;
  Work work_;
  StageReport& report_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parseOptions(argc, argv, "scabench-peer-gnuradio");
  // GNU Radio logs to stdout; its notes (the buffer sizes set) would come
  // before the JSON line. Warnings and errors still show.
  gr::logging::singleton().set_default_level(gr::log_level::warn);
  std::vector<StageReport> reports(std::size_t(o.stages));
  auto top = gr::make_top_block("scabench_peer");
  auto source = gnuradio::make_block_sptr<Source>(o);
  // GNU Radio sizes a buffer at 64 KiB of items (8 packets of 1024 doubles)
  // unless told otherwise; a minimum of `depth` items gives `depth` (a
  // maximum could only lower the 64 KiB, and then the minimum is ignored).
  source->set_min_output_buffer(long(o.depth));
  gr::basic_block_sptr previous = source;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    auto stage = gnuradio::make_block_sptr<Stage>(o, i + 1 == reports.size(), reports[i]);
    if (i + 1 < reports.size()) stage->set_min_output_buffer(long(o.depth));
    top->connect(previous, 0, stage, 0);
    previous = stage;
  }
  top->run();
  printResult("gnuradio", o, source->t0Ns, reports);
  return 0;
}
