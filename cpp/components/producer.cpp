// Producer: emits `packets` packets of `samples` samples, either as fast as
// the connection lets it or one every `period_us` on an absolute schedule
// (a late send does not delay the ones after it). Each send is recorded
// (start and return), which gives the paper's send-time distributions.
#include <cmath>
#include <thread>
#include <vector>

#include "scabench/registry.hpp"

namespace scabench {

template <class T>
class Producer final : public Component {
 public:
  explicit Producer(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("packets", int64_t{1000}, "packets to send");
    properties().declare("samples", int64_t{1024}, "samples per packet");
    properties().declare("period_us", int64_t{0}, "0: no wait; else one packet every period_us");
    properties().declare("stream_id", int64_t{0}, "stream id stamped on every packet");
    properties().declare("drop_packet", int64_t{-1},
                         "sequence number of one packet to lose on purpose (its link number is used up "
                         "unsent), to test a receiver's gap handling; -1: none");
    out_ = &addOutPort<T>("out");
  }
  ~Producer() override { joinSender(); }

 protected:
  void onStart() override {
    const int64_t packets = properties().integer("packets");
    const int64_t samples = properties().integer("samples");
    const int64_t periodUs = properties().integer("period_us");
    if (packets < 0 || samples < 0 || periodUs < 0)
      throw std::invalid_argument("packets, samples and period_us must be >= 0");
    sender_ = std::thread([=, this] { run(packets, samples, periodUs * 1000); });
  }
  void onStop() override { joinSender(); }

 private:
  void run(int64_t packets, int64_t samples, int64_t periodNs) {
    // A real signal rather than zeros: one sinusoid, scaled to fit the type.
    std::vector<T> buffer(static_cast<std::size_t>(samples));
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = T(100.0 * std::sin(0.01 * double(i)));
    const uint32_t streamId = uint32_t(properties().integer("stream_id"));
    const int64_t drop = properties().integer("drop_packet");
    int64_t sent = 0;
    try {
      const int64_t startNs = monotonicNs();
      for (int64_t i = 0; i < packets; ++i) {
        if (periodNs > 0) sleepUntilNs(startNs + i * periodNs);
        if (i == drop) {
          // Announced at the end like any other packet: only a receiver that
          // resequences can tell it is gone (after its timeout); one that
          // does not waits for it until the run times out.
          out_->dropNext();
          ++sent;
          continue;
        }
        PacketHeader h{};
        h.stream_id = streamId;
        h.sequence_number = uint64_t(i);
        const int64_t sendNs = monotonicNs();
        h.send_time_ns = uint64_t(sendNs);
        h.end_of_stream = false;
        const uint64_t slot = records().arrive(uint64_t(i), sendNs);
        out_->push(h, buffer.data(), buffer.size());
        records().done(slot, monotonicNs());
        ++sent;
      }
      endStream(uint64_t(sent));
    } catch (const CORBA::Exception& ex) {
      fail("send of packet " + std::to_string(sent) + " failed: " + describeException(ex));
    } catch (const std::exception& ex) {
      fail(ex.what());
    }
  }
  void joinSender() {
    if (sender_.joinable() && sender_.get_id() != std::this_thread::get_id()) sender_.join();
  }

  OutPort<T>* out_;
  std::thread sender_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("producer", Producer);

}  // namespace scabench
