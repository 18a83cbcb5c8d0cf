// The STANAG 4285 transmitter and receiver as SCA components. Each kind runs
// a run of the blocks in scabench/dsp/stanag4285.hpp (transmitter) and
// stanag4285_rx.hpp (channel, receiver, BER, monitor); the kinds cover the
// transmitter's 2-, 7- and 11-component splits and the receiver's 1- and
// 3-component splits (experiments/stanag4285/), so every split does the same
// processing. One packet is one frame (a receiving block may emit an empty
// packet while it fills: the demodulator before its lock, the equaliser
// before its look-ahead, the decoder before its traceback).
//
// Port types per boundary:
//   user bytes, coded bits (one per octet)  -> octet
//   symbols, baseband samples               -> float, interleaved I/Q pairs
//   soft bits (LLRs, positive: 1)           -> float
//   audio                                   -> short (16-bit PCM, 9600 samples/s)
//
// Every block keeps state across frames (encoder, interleaver, filter,
// oscillator), so a component fails the run if frames arrive out of order
// (use two-way calls or serial dispatch, as the specs do).
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "scabench/core/clock.hpp"
#include "scabench/runtime/registry.hpp"
#include "scabench/runtime/source_loop.hpp"
#include "scabench/dsp/stanag4285.hpp"
#include "scabench/dsp/stanag4285_rx.hpp"

namespace scabench {
namespace {

using s4285::cfloat;

// What crosses a port, as the library sees it.
template <class Sample>
struct Wire;
template <>
struct Wire<CORBA::Octet> {
  using Port = CORBA::Octet;
  using Buffer = std::vector<uint8_t>;
  static const uint8_t* view(const CORBA::Octet* p, std::size_t n, std::size_t& count) { return count = n, p; }
  static const CORBA::Octet* data(const Buffer& b, std::size_t& count) { return count = b.size(), b.data(); }
};
template <>
struct Wire<cfloat> {
  using Port = CORBA::Float;
  using Buffer = std::vector<cfloat>;
  static const cfloat* view(const CORBA::Float* p, std::size_t n, std::size_t& count) {
    count = n / 2;  // std::complex<float> is laid out as two floats
    return reinterpret_cast<const cfloat*>(p);
  }
  static const CORBA::Float* data(const Buffer& b, std::size_t& count) {
    count = b.size() * 2;
    return reinterpret_cast<const CORBA::Float*>(b.data());
  }
};
template <>
struct Wire<float> {
  using Port = CORBA::Float;
  using Buffer = std::vector<float>;
  static const float* view(const CORBA::Float* p, std::size_t n, std::size_t& count) { return count = n, p; }
  static const CORBA::Float* data(const Buffer& b, std::size_t& count) { return count = b.size(), b.data(); }
};
template <>
struct Wire<int16_t> {
  using Port = CORBA::Short;
  using Buffer = std::vector<int16_t>;
  static const CORBA::Short* data(const Buffer& b, std::size_t& count) { return count = b.size(), b.data(); }
  static const int16_t* view(const CORBA::Short* p, std::size_t n, std::size_t& count) { return count = n, p; }
};

// Declares `mode` on every kind: each block sizes its work from it.
void declareMode(Component& c) {
  c.properties()
      .declare("mode", std::string("2400L"),
               "STANAG 4285 mode: 75S..2400S, 75L..2400L (coded, short/long interleaver), "
               "1200U, 2400U, 3600U (uncoded)")
      .oneOf(s4285::modeNames());
}

// Frames must come in order: the blocks are stream processors.
class OrderGuard {
 public:
  void check(Component& c, uint64_t sequence) {
    if (sequence != next_)
      throw std::runtime_error("frame " + std::to_string(sequence) + " arrived, expected " + std::to_string(next_) +
                               ": the STANAG 4285 blocks keep state across frames; use call = \"twoway\" "
                               "or dispatch = \"serial\"");
    ++next_;
  }
 private:
  uint64_t next_ = 0;
};

// Blocks that declare their own properties (static declare(Component&)) and
// are made from them; the others take the mode.
template <class Blocks>
concept OwnProperties = requires(Component& c, const PropertyBag& p) {
  Blocks::declare(c);
  Blocks(p);
};

// A component that runs `Blocks` on each frame: In samples in, Out samples out.
// Blocks: constructed from the mode (or its properties: OwnProperties);
// run(const In*, n, std::vector<Out>&).
template <class In, class Out, class Blocks>
class BlockComponent final : public Component {
 public:
  explicit BlockComponent(const ComponentContext& ctx) : Component(ctx) {
    if constexpr (OwnProperties<Blocks>)
      Blocks::declare(*this);
    else
      declareMode(*this);
    out_ = &addOutPort<typename Wire<Out>::Port>("out", "the block's output, one packet per packet taken in");
    addInPort<typename Wire<In>::Port>(
        "in",
        [this](const PacketView<typename Wire<In>::Port>& p) {
          std::lock_guard lock(mutex_);
          guard_.check(*this, p.header.sequence_number);
          std::size_t n = 0;
          const In* in = Wire<In>::view(p.samples, p.count, n);
          output_.clear();
          blocks_->run(in, n, output_);
          std::size_t count = 0;
          const auto* data = Wire<Out>::data(output_, count);
          out_->push(p.header, data, count);
        },
        "the block's input");
  }

 protected:
  void onStart() override {
    if constexpr (OwnProperties<Blocks>)
      blocks_ = std::make_unique<Blocks>(properties());
    else
      blocks_ = std::make_unique<Blocks>(s4285::parseMode(properties().text("mode")));
  }

 private:
  OutPort<typename Wire<Out>::Port>* out_;
  std::unique_ptr<Blocks> blocks_;
  typename Wire<Out>::Buffer output_;
  OrderGuard guard_;
  std::mutex mutex_;
};

// --- the blocks each kind runs

struct EncoderBlocks {  // bytes -> bits -> K=7 code
  explicit EncoderBlocks(const s4285::Mode& m) : encoder(m) {}
  void run(const uint8_t* in, std::size_t n, std::vector<uint8_t>& out) {
    bits.clear();
    s4285::unpackBits(in, n, bits);
    encoder.process(bits.data(), bits.size(), out);
  }
  s4285::ConvEncoder encoder;
  std::vector<uint8_t> bits;
};

// One library block, as a kind of its own.
template <class Block, class In, class Out>
struct Single {
  explicit Single(const s4285::Mode& m) : block(m) {}
  void run(const In* in, std::size_t n, std::vector<Out>& out) { block.process(in, n, out); }
  Block block;
};
template <class Block, class In, class Out>
struct SingleNoMode {
  explicit SingleNoMode(const s4285::Mode&) {}
  void run(const In* in, std::size_t n, std::vector<Out>& out) { block.process(in, n, out); }
  Block block;
};

struct CoderBlocks {  // 7-way split: bytes -> bits -> code -> repetition
  explicit CoderBlocks(const s4285::Mode& m) : encode(m), repeater(m) {}
  void run(const uint8_t* in, std::size_t n, std::vector<uint8_t>& out) {
    coded.clear();
    encode.run(in, n, coded);
    repeater.process(coded.data(), coded.size(), out);
  }
  EncoderBlocks encode;
  s4285::Repeater repeater;
  std::vector<uint8_t> coded;
};

struct InterleavePunctureBlocks {  // 7-way split
  explicit InterleavePunctureBlocks(const s4285::Mode& m) : interleaver(m), puncturer(m) {}
  void run(const uint8_t* in, std::size_t n, std::vector<uint8_t>& out) {
    interleaved.clear();
    interleaver.process(in, n, interleaved);
    puncturer.process(interleaved.data(), interleaved.size(), out);
  }
  s4285::Interleaver interleaver;
  s4285::Puncturer puncturer;
  std::vector<uint8_t> interleaved;
};

struct SymbolBlocks {  // 7-way split: mapping -> scrambler -> frame assembly
  explicit SymbolBlocks(const s4285::Mode& m) : mapper(m) {}
  void run(const uint8_t* in, std::size_t n, std::vector<cfloat>& out) {
    mapped.clear(), scrambled.clear();
    mapper.process(in, n, mapped);
    scrambler.process(mapped.data(), mapped.size(), scrambled);
    framer.process(scrambled.data(), scrambled.size(), out);
  }
  s4285::SymbolMapper mapper;
  s4285::Scrambler scrambler;
  s4285::FrameAssembler framer;
  std::vector<cfloat> mapped, scrambled;
};

// --- the receiving side's blocks

struct ChannelBlocks {  // static multipath and AWGN, audio in and out
  static void declare(Component& c) {
    c.properties()
        .declare("profile", std::string("none"), "static multipath profile: none, two-path (1 ms), harsh (3 paths)")
        .oneOf(s4285::multipathProfileNames());
    c.properties()
        .declare("snr_db", PropertyType::Double, 30.0, "signal to noise ratio in a 3 kHz band (Es/N0 is 0.97 dB more)")
        .within(-30, 100);
    c.properties().declare("noise", true, "add white Gaussian noise at snr_db; false: none");
    c.properties().declare("seed", PropertyType::LongLong, int64_t{1}, "seed of the noise");
    c.properties()
        .declare("lead_samples", PropertyType::ULong, int64_t{0},
                 "samples of silence before the signal (the receiver finds the start)")
        .within(0, 959);
  }
  explicit ChannelBlocks(const PropertyBag& p)
      : channel(p.text("profile"), p.flag("noise") ? std::optional<double>(p.real("snr_db")) : std::nullopt,
                uint64_t(p.integer("seed")), int(p.integer("lead_samples"))) {}
  void run(const int16_t* in, std::size_t n, std::vector<int16_t>& out) { channel.process(in, n, out); }
  s4285::Channel channel;
};

struct DemodulatorBlocks {  // down-conversion, matched filter, frame synchronisation
  explicit DemodulatorBlocks(const s4285::Mode&) {}
  void run(const int16_t* in, std::size_t n, std::vector<cfloat>& out) { demodulator.process(in, n, out); }
  s4285::Demodulator demodulator;
};

struct TransmitterBlocks {  // the whole transmitter, audio out
  explicit TransmitterBlocks(const s4285::Mode& m) : transmitter(m) {}
  void run(const uint8_t* in, std::size_t n, std::vector<int16_t>& out) { transmitter.frame(in, n, out); }
  s4285::Transmitter transmitter;
};

struct ReceiverBlocks {  // the whole receiver
  explicit ReceiverBlocks(const s4285::Mode& m) : receiver(m) {}
  void run(const int16_t* in, std::size_t n, std::vector<uint8_t>& out) { receiver.process(in, n, out); }
  s4285::Receiver receiver;
};

using Encoder = BlockComponent<uint8_t, uint8_t, EncoderBlocks>;
using Repetition = BlockComponent<uint8_t, uint8_t, Single<s4285::Repeater, uint8_t, uint8_t>>;
using Interleave = BlockComponent<uint8_t, uint8_t, Single<s4285::Interleaver, uint8_t, uint8_t>>;
using Puncture = BlockComponent<uint8_t, uint8_t, Single<s4285::Puncturer, uint8_t, uint8_t>>;
using Mapper = BlockComponent<uint8_t, cfloat, Single<s4285::SymbolMapper, uint8_t, cfloat>>;
using Scramble = BlockComponent<cfloat, cfloat, SingleNoMode<s4285::Scrambler, cfloat, cfloat>>;
using Framer = BlockComponent<cfloat, cfloat, SingleNoMode<s4285::FrameAssembler, cfloat, cfloat>>;
using Shaper = BlockComponent<cfloat, cfloat, SingleNoMode<s4285::PulseShaper, cfloat, cfloat>>;
using UpConvert = BlockComponent<cfloat, int16_t, SingleNoMode<s4285::UpConverter, cfloat, int16_t>>;
using Coder = BlockComponent<uint8_t, uint8_t, CoderBlocks>;
using InterleavePuncture = BlockComponent<uint8_t, uint8_t, InterleavePunctureBlocks>;
using Symbols = BlockComponent<uint8_t, cfloat, SymbolBlocks>;
using ChannelKind = BlockComponent<int16_t, int16_t, ChannelBlocks>;
using Demodulate = BlockComponent<int16_t, cfloat, DemodulatorBlocks>;
using Equalise = BlockComponent<cfloat, float, Single<s4285::Equaliser, cfloat, float>>;
using Decode = BlockComponent<float, uint8_t, Single<s4285::Decoder, float, uint8_t>>;
using WholeReceiver = BlockComponent<int16_t, uint8_t, ReceiverBlocks>;
using Modulator = BlockComponent<uint8_t, int16_t, TransmitterBlocks>;

// Audio output: the digest, sample count and optional raw file of
// s4285::AudioSink. The digest and count are reported at end of stream
// ("stat NAME audio_digest HEX", "stat NAME audio_samples N") so that a run's
// audio can be checked against the plain program's without a file.
void declareAudioOutput(Component& c) {
  c.properties().declare("audio_file", std::string(""), "raw 16-bit little-endian PCM at 9600 Hz; empty: none");
}

void reportAudio(Component& c, const s4285::AudioSink& sink) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(sink.digest()));
  c.host().notify("stat " + c.name() + " audio_digest " + digest);
  c.host().notify("stat " + c.name() + " audio_samples " + std::to_string(sink.samples()));
}

// The audio sink: where a sound card would be.
class AudioOut final : public Component {
 public:
  explicit AudioOut(const ComponentContext& ctx) : Component(ctx) {
    declareMode(*this);
    declareAudioOutput(*this);
    addInPort<CORBA::Short>(
        "in",
        [this](const PacketView<CORBA::Short>& p) {
          std::lock_guard lock(mutex_);
          guard_.check(*this, p.header.sequence_number);
          sink_->process(p.samples, p.count);
        },
        "the received audio, as a sound card would play it");
  }

 protected:
  void onStart() override { sink_ = std::make_unique<s4285::AudioSink>(properties().text("audio_file")); }
  void onEndOfStream() override {
    reportAudio(*this, *sink_);
    sink_.reset();  // flushes the file before the launcher hears of the end
    Component::onEndOfStream();
  }

 private:
  std::unique_ptr<s4285::AudioSink> sink_;
  OrderGuard guard_;
  std::mutex mutex_;
};

// The whole transmitter and the audio output in one component (the 2-way split).
class WholeTransmitter final : public Component {
 public:
  explicit WholeTransmitter(const ComponentContext& ctx) : Component(ctx) {
    declareMode(*this);
    declareAudioOutput(*this);
    addInPort<CORBA::Octet>(
        "in",
        [this](const PacketView<CORBA::Octet>& p) {
          std::lock_guard lock(mutex_);
          guard_.check(*this, p.header.sequence_number);
          audio_.clear();
          tx_->frame(p.samples, p.count, audio_);
          sink_->process(audio_.data(), audio_.size());
        },
        "the user bytes to transmit");
  }

 protected:
  void onStart() override {
    tx_ = std::make_unique<s4285::Transmitter>(s4285::parseMode(properties().text("mode")));
    sink_ = std::make_unique<s4285::AudioSink>(properties().text("audio_file"));
  }
  void onEndOfStream() override {
    reportAudio(*this, *sink_);
    sink_.reset();
    Component::onEndOfStream();
  }

 private:
  std::unique_ptr<s4285::Transmitter> tx_;
  std::unique_ptr<s4285::AudioSink> sink_;
  std::vector<int16_t> audio_;
  OrderGuard guard_;
  std::mutex mutex_;
};

// Writes `text` to `path` whole or not at all: a temporary file, renamed.
void writeAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

// An end of a receiving chain that measures what reaches it and writes
// `<record_dir>/<name>.<suffix>.json` at end of stream (atomically), and
// reports the same figures as run stats ("stat NAME KEY VALUE").
template <class In, class Meter>
class MeterSink final : public Component {
 public:
  explicit MeterSink(const ComponentContext& ctx) : Component(ctx), recordDir_(ctx.recordDir) {
    Meter::declare(*this);
    addInPort<typename Wire<In>::Port>("in", [this](const PacketView<typename Wire<In>::Port>& p) {
      std::lock_guard lock(mutex_);
      guard_.check(*this, p.header.sequence_number);
      std::size_t n = 0;
      const In* in = Wire<In>::view(p.samples, p.count, n);
      meter_->process(in, n);
      ++frames_;
    });
  }

 protected:
  void onStart() override {
    if (!meter_) meter_ = std::make_unique<Meter>(properties());
  }
  void onEndOfStream() override {
    {
      std::lock_guard lock(mutex_);
      auto report = meter_->report();
      report["frames"] = frames_;
      writeAtomically(recordDir_ + "/" + name() + "." + Meter::kSuffix + ".json", report.dump());
      // The same figures as run stats, which reach the run's result.
      for (const auto& [key, value] : report.items())
        host().notify("stat " + name() + " " + key + " " +
                      (value.is_string() ? value.template get<std::string>() : value.dump()));
    }
    Component::onEndOfStream();
  }

 private:
  std::string recordDir_;
  std::unique_ptr<Meter> meter_;
  uint64_t frames_ = 0;
  OrderGuard guard_;
  std::mutex mutex_;
};

// Bit errors of the decoded bytes against the source's (same mode and seed).
struct BerMeter {
  static constexpr const char* kSuffix = "ber";
  static void declare(Component& c) {
    declareMode(c);
    c.properties().declare("seed", PropertyType::LongLong, int64_t{4285}, "the source's seed");
  }
  explicit BerMeter(const PropertyBag& p)
      : mode(s4285::parseMode(p.text("mode"))), counter(mode, uint64_t(p.integer("seed"))) {}
  void process(const uint8_t* in, std::size_t n) { counter.process(in, n); }
  nlohmann::json report() const {
    return {{"mode", mode.name}, {"bits", counter.bits()}, {"bit_errors", counter.errors()}, {"ber", counter.ber()}};
  }
  s4285::Mode mode;
  s4285::BerCounter counter;
};

// Power and spectrum of the audio (FFTW), per frame, averaged.
struct AudioMeter {
  static constexpr const char* kSuffix = "monitor";
  static void declare(Component&) {}
  explicit AudioMeter(const PropertyBag&) {}
  void process(const int16_t* in, std::size_t n) { monitor.process(in, n); }
  nlohmann::json report() const {
    return {{"blocks", monitor.blocks()},
            {"mean_power", monitor.meanPower()},
            {"peak_frequency_hz", monitor.peakFrequencyHz()},
            {"sample_rate", s4285::kSampleRate}};
  }
  s4285::Monitor monitor;
};

// The data source: random user bytes, one frame per packet, paced to the
// symbol rate on an absolute schedule (the rate regulator). stop() stops it
// before its next frame, a later start() goes on (source_loop.hpp).
class DataSource final : public Component {
 public:
  explicit DataSource(const ComponentContext& ctx) : Component(ctx) {
    declareMode(*this);
    properties()
        .declare("packets", PropertyType::ULong, int64_t{100}, "frames to send (256 symbols each)")
        .within(1, UINT32_MAX);
    properties()
        .declare("symbol_rate", PropertyType::Double, 2400.0,
                 "symbols/s the frames are paced to; 0: as fast as possible")
        .within(0, INT64_MAX);
    properties().declare("seed", PropertyType::LongLong, int64_t{4285}, "seed of the random user bytes");
    properties().declare("dither_us", PropertyType::ULong, int64_t{0},
                         "each frame waits a pseudo-random 0..dither_us past its slot (the slots stay fixed)");
    out_ = &addOutPort<CORBA::Octet>("out", "the user bytes, one frame's worth per packet");
  }

 protected:
  void onStart() override {
    const auto mode = s4285::parseMode(properties().text("mode"));
    // Made at the first start: a restart goes on with the same stream of bytes.
    if (!source_) source_ = std::make_unique<s4285::ByteSource>(mode, uint64_t(properties().integer("seed")));
    loop_.start(
        uint64_t(properties().integer("packets")), int64_t(s4285::framePeriodS(properties().real("symbol_rate")) * 1e9),
        properties().integer("dither_us") * 1000, [this](uint64_t i) { send(i); },
        [this](uint64_t count) { endStream(count); });
  }
  void onStop() override { loop_.stop(); }

 private:
  void send(uint64_t i) {
    bytes_.clear();
    source_->frame(bytes_);
    PacketHeader h{};
    h.sequence_number = i;
    const int64_t sendNs = monotonicNs();
    h.send_time_ns = uint64_t(sendNs);
    const uint64_t slot = records().arrive(i, sendNs);
    out_->push(h, bytes_.data(), bytes_.size());
    records().done(slot, monotonicNs());
  }

  OutPort<CORBA::Octet>* out_;
  std::unique_ptr<s4285::ByteSource> source_;
  std::vector<uint8_t> bytes_;
  SourceLoop loop_{*this, "frame"};
};

template <class C>
bool registerKind(const char* kind) {
  return registerComponent(kind, "", [](const ComponentContext& c) { return new C(c); });
}

const bool registered = registerKind<DataSource>("s4285-source") && registerKind<Encoder>("s4285-encoder") &&
                        registerKind<Repetition>("s4285-repetition") && registerKind<Interleave>("s4285-interleaver") &&
                        registerKind<Puncture>("s4285-puncturer") && registerKind<Mapper>("s4285-mapper") &&
                        registerKind<Scramble>("s4285-scrambler") && registerKind<Framer>("s4285-framer") &&
                        registerKind<Shaper>("s4285-shaper") && registerKind<UpConvert>("s4285-upconverter") &&
                        registerKind<AudioOut>("s4285-sink") && registerKind<Coder>("s4285-coder") &&
                        registerKind<InterleavePuncture>("s4285-interleave-puncture") &&
                        registerKind<Symbols>("s4285-symbols") && registerKind<WholeTransmitter>("s4285-tx") &&
                        registerKind<Modulator>("s4285-modulator") && registerKind<ChannelKind>("s4285-channel") &&
                        registerKind<Demodulate>("s4285-demodulator") && registerKind<Equalise>("s4285-equaliser") &&
                        registerKind<Decode>("s4285-decoder") && registerKind<WholeReceiver>("s4285-rx") &&
                        registerKind<MeterSink<uint8_t, BerMeter>>("s4285-ber") &&
                        registerKind<MeterSink<int16_t, AudioMeter>>("s4285-monitor");

}  // namespace
}  // namespace scabench
