// Producer: emits `packets` packets of `samples` samples, either as fast as
// the connection lets it or one every `period_us` on an absolute schedule
// (a late send does not delay the ones after it). Each send is recorded
// (start and return), which gives the paper's send-time distributions.
// stop() stops it before its next packet; a later start() goes on with the
// next one (source_loop.hpp).
//
// What it sends is `signal` (docs/architecture.md, "The producer's signal"),
// with j the sample's place in the stream (packet number * samples + i):
//   sine   sample i of every packet: amplitude * sin(radians_per_sample * i)
//          (the same packet every time: what the producer always sent)
//   ramp   amplitude * j / (packets * samples): from 0 towards amplitude
//   noise  amplitude * (2u - 1), u = (splitmix64(seed + j) >> 11) * 2^-53
//   file   sample j mod L of the SigMF recording `path` (L samples), looping
// each computed in double and converted to the sample type (an integer
// type: truncated toward zero, then wrapped to its width).
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

#include "scabench/core/splitmix.hpp"
#include "scabench/dsp/fir.hpp"
#include "scabench/runtime/message_limit.hpp"
#include "sigmf.hpp"
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
    // A stream has at least one packet, and a packet at least one sample
    // and no more than fit in one ORB message of the run (message_limit.hpp).
    count("packets", 1000, "packets to send").within(1, UINT32_MAX);
    count("samples", 1024, "samples per packet, no more than fit in an ORB message")
        .within(1, maxPacketSamples(sizeof(T)));
    count("period_us", 0, "0: no wait; else one packet every period_us");
    count("stream_id", 0, "stream id stamped on every packet; each source of a spec has its own")
        .within(0, kMaxRecordedStreamId);
    properties()
        .declare("drop_packet", PropertyType::LongLong, int64_t{-1},
                 "sequence number of one packet to lose on purpose (its link number is used up unsent), to test a "
                 "receiver's gap handling; -1: none")
        .within(-1, INT64_MAX);
    count("dither_us", 0, "each send waits a pseudo-random 0..dither_us past its slot (the slots stay fixed)");
    count("filters", 0, "FIR filters run over each packet before sending (float only)");
    count("taps", 10, "taps of each FIR filter").within(1, UINT32_MAX);
    properties()
        .declare("signal", PropertyType::String, std::string("sine"),
                 "what each packet holds: sine (the same every packet), ramp, noise (seeded) or file (a SigMF "
                 "recording, looped)")
        .oneOf({"sine", "ramp", "noise", "file"});
    properties().declare("amplitude", PropertyType::Double, 100.0, "the signal's peak (sine, ramp, noise)");
    properties().declare("radians_per_sample", PropertyType::Double, 0.01, "the sine's step, radians per sample");
    count("seed", 1, "noise: the first sample's seed (sample j uses seed + j)");
    properties().declare("path", PropertyType::String, std::string(""),
                         "file: the SigMF recording to play (NAME or NAME.sigmf-meta), of this sample type");
    out_ = &addOutPort<T>("out", "the packets the producer makes");
  }

 protected:
  void onStart() override {
    const int64_t filters = properties().integer("filters"), taps = properties().integer("taps");
    if (filters > 0 && !std::is_same_v<T, CORBA::Float>)
      throw std::invalid_argument("filters > 0 needs sample_type float");
    chain_.reset();
    if (filters > 0) chain_ = std::make_unique<FirChain>(std::size_t(filters), std::size_t(taps));
    buffer_.resize(std::size_t(properties().integer("samples")));
    readSignal();
    filtered_.resize(chain_ ? buffer_.size() : 0);
    streamId_ = uint32_t(properties().integer("stream_id"));
    drop_ = properties().integer("drop_packet");
    loop_.start(
        uint64_t(properties().integer("packets")), properties().integer("period_us") * 1000,
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
    fill(i);  // before the send's record: making the signal is not the connection's cost
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

  enum class Signal { Sine, Ramp, Noise, File };

  void readSignal() {
    const std::string& name = properties().text("signal");
    signal_ = name == "ramp"    ? Signal::Ramp
              : name == "noise" ? Signal::Noise
              : name == "file"  ? Signal::File
                                : Signal::Sine;
    amplitude_ = properties().real("amplitude");
    seed_ = uint64_t(properties().integer("seed"));
    streamSamples_ = double(properties().integer("packets")) * double(buffer_.size());
    recording_.clear();
    if (signal_ == Signal::File) {
      if (properties().text("path").empty()) throw std::invalid_argument("signal file needs a path");
      recording_ = sigmf::read<T>(properties().text("path"));
    }
    if (signal_ == Signal::Sine) {  // the same every packet: made once
      const double step = properties().real("radians_per_sample");
      for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = convert(amplitude_ * std::sin(step * double(i)));
    }
  }

  // Packet `number`'s samples into buffer_.
  void fill(uint64_t number) {
    const uint64_t first = number * buffer_.size();
    switch (signal_) {
      case Signal::Sine: return;
      case Signal::Ramp:
        for (std::size_t i = 0; i < buffer_.size(); ++i)
          buffer_[i] = convert(amplitude_ * double(first + i) / streamSamples_);
        return;
      case Signal::Noise:
        for (std::size_t i = 0; i < buffer_.size(); ++i) {
          const double u = double(splitmix64(seed_ + first + i) >> 11) * 0x1.0p-53;
          buffer_[i] = convert(amplitude_ * (2 * u - 1));
        }
        return;
      case Signal::File:
        for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = recording_[(first + i) % recording_.size()];
        return;
    }
  }

  static T convert(double v) {
    if constexpr (std::is_integral_v<T>) return T(int64_t(v));  // truncated, then wrapped to the type's width
    return T(v);
  }

  OutPort<T>* out_;
  Signal signal_ = Signal::Sine;
  double amplitude_ = 100, streamSamples_ = 1;
  uint64_t seed_ = 1;
  std::vector<T> recording_;
  std::unique_ptr<FirChain> chain_;
  std::vector<T> buffer_, filtered_;
  uint32_t streamId_ = 0;
  int64_t drop_ = -1;
  SourceLoop loop_{*this, "packet"};
};

SCABENCH_REGISTER_TYPED_COMPONENT("producer", Producer);

}  // namespace scabench
