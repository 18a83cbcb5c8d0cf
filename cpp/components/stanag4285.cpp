// The STANAG 4285 transmitter as SCA components. Each kind runs a run of the
// blocks in scabench/dsp/stanag4285.hpp; the kinds cover the 2-, 7- and
// 11-component splits (experiments/stanag4285/), so every split does the same
// processing. One packet is one frame.
//
// Port types per boundary:
//   user bytes, coded bits (one per octet)  -> octet
//   symbols, baseband samples               -> float, interleaved I/Q pairs
//   audio                                   -> short (16-bit PCM, 9600 samples/s)
//
// Every block keeps state across frames (encoder, interleaver, filter,
// oscillator), so a component fails the run if frames arrive out of order
// (use two-way calls or serial dispatch, as the specs do).
#include <mutex>
#include <thread>

#include "scabench/core/clock.hpp"
#include "scabench/runtime/registry.hpp"
#include "scabench/runtime/source_loop.hpp"
#include "scabench/dsp/stanag4285.hpp"

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

// A component that runs `Blocks` on each frame: In samples in, Out samples out.
// Blocks: constructed from the mode; run(const In*, n, std::vector<Out>&).
template <class In, class Out, class Blocks>
class BlockComponent final : public Component {
 public:
  explicit BlockComponent(const ComponentContext& ctx) : Component(ctx) {
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
  void onStart() override { blocks_ = std::make_unique<Blocks>(s4285::parseMode(properties().text("mode"))); }

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
                        registerKind<Symbols>("s4285-symbols") && registerKind<WholeTransmitter>("s4285-tx");

}  // namespace
}  // namespace scabench
