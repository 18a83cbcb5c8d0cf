// Producer: emits `packets` packets of `samples` samples, either as fast as
// the connection lets it or one every `period_us` on an absolute schedule
// (a late send does not delay the ones after it). Each send is recorded
// (start and return), which gives the paper's send-time distributions.
// stop() stops it before its next packet; a later start() goes on with the
// next one (source_loop.hpp).
//
// With `filters` > 0 (float only) it runs that many FIR filters of `taps`
// taps over each packet before sending it: the seed's FTOT component, source
// and all the functional work in one (W2).
#include <cmath>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "scabench/dsp/fir.hpp"
#include "scabench/runtime/registry.hpp"
#include "scabench/runtime/source_loop.hpp"

namespace scabench {

template <class T>
class Producer final : public Component {
 public:
  explicit Producer(const ComponentContext& ctx) : Component(ctx) {
    auto count = [&](const char* id, int64_t value, const char* description) -> PropertyBag::Declaration& {
      return properties().declare(id, PropertyType::ULong, value, description);
    };
    count("packets", 1000, "packets to send");
    count("samples", 1024, "samples per packet");
    count("period_us", 0, "0: no wait; else one packet every period_us");
    count("stream_id", 0, "stream id stamped on every packet");
    properties()
        .declare("drop_packet", PropertyType::LongLong, int64_t{-1},
                 "sequence number of one packet to lose on purpose (its link number is used up unsent), to test a "
                 "receiver's gap handling; -1: none")
        .within(-1, INT64_MAX);
    count("dither_us", 0, "each send waits a pseudo-random 0..dither_us past its slot (the slots stay fixed)");
    count("filters", 0, "FIR filters run over each packet before sending (float only)");
    count("taps", 10, "taps of each FIR filter").within(1, UINT32_MAX);
    out_ = &addOutPort<T>("out");
  }

 protected:
  void onStart() override {
    const int64_t filters = properties().integer("filters"), taps = properties().integer("taps");
    if (filters > 0 && !std::is_same_v<T, CORBA::Float>) throw std::invalid_argument("filters > 0 needs sample_type float");
    chain_.reset();
    if (filters > 0) chain_ = std::make_unique<FirChain>(std::size_t(filters), std::size_t(taps));
    // A real signal rather than zeros: one sinusoid, scaled to fit the type.
    buffer_.resize(std::size_t(properties().integer("samples")));
    for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = T(100.0 * std::sin(0.01 * double(i)));
    filtered_.resize(chain_ ? buffer_.size() : 0);
    streamId_ = uint32_t(properties().integer("stream_id"));
    drop_ = properties().integer("drop_packet");
    loop_.start(uint64_t(properties().integer("packets")), properties().integer("period_us") * 1000,
                properties().integer("dither_us") * 1000, [this](uint64_t i) { send(i); },
                [this](uint64_t count) { endStream(count, streamId_); });
  }
  void onStop() override { loop_.stop(); }

 private:
  void send(uint64_t i) {
    if (int64_t(i) == drop_) {
      // Announced at the end like any other packet: only a receiver that
      // resequences can tell it is gone (after its timeout); one that does
      // not waits for it until the run times out.
      out_->dropNext();
      return;
    }
    PacketHeader h{};
    h.stream_id = streamId_;
    h.sequence_number = i;
    const int64_t sendNs = monotonicNs();
    h.send_time_ns = uint64_t(sendNs);
    h.end_of_stream = false;
    const uint64_t slot = records().arrive(i, sendNs);
    if constexpr (std::is_same_v<T, CORBA::Float>) {
      if (chain_) {
        chain_->process(buffer_.data(), filtered_.data(), buffer_.size());
        out_->push(h, filtered_.data(), filtered_.size());
        records().done(slot, monotonicNs());
        return;
      }
    }
    out_->push(h, buffer_.data(), buffer_.size());
    records().done(slot, monotonicNs());
  }

  OutPort<T>* out_;
  std::unique_ptr<FirChain> chain_;
  std::vector<T> buffer_, filtered_;
  uint32_t streamId_ = 0;
  int64_t drop_ = -1;
  SourceLoop loop_{*this, "packet"};
};

SCABENCH_REGISTER_TYPED_COMPONENT("producer", Producer);

}  // namespace scabench
