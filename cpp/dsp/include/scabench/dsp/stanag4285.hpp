// The STANAG 4285 transmitter as a chain of small DSP blocks: the one place
// where its processing lives. The SCA components (cpp/components/stanag4285.cpp)
// and the plain program (cpp/programs/s4285.cpp) both run these blocks,
// so every split does exactly the same work. No CORBA here.
//
//   bytes -> bits (LSB first) -> K=7 r=1/2 encoder -> repetition -> interleaver
//   -> puncturing -> phase mapping -> scrambler -> frame assembly (preamble,
//   probes) -> RRC pulse shaping (liquid-dsp) -> up-conversion to 1800 Hz
//   (liquid-dsp NCO) -> 16-bit audio at 9600 samples/s
//
// One packet between blocks is one frame: 256 symbols on air, 128 of them
// data. Every block is a stream processor: state (encoder register,
// interleaver delay lines, filter taps, oscillator phase) carries across
// frames, so frames must arrive in order.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace scabench::s4285 {

using cfloat = std::complex<float>;

constexpr int kSymbolRate = 2400;                             // symbols/s on air
constexpr int kSamplesPerSymbol = 4;                          // transmit filter oversampling
constexpr int kSampleRate = kSymbolRate * kSamplesPerSymbol;  // 9600 audio samples/s
constexpr double kCarrierHz = 1800.0;
constexpr float kRollOff = 0.2f;  // RRC excess bandwidth (an implementation choice)
constexpr int kFilterSpan = 8;    // RRC half-length, in symbols
constexpr int kFrameSymbols = 256;
constexpr int kPreambleSymbols = 80;
constexpr int kScrambledSymbols = kFrameSymbols - kPreambleSymbols;  // 176: data and probes
constexpr int kDataSymbolsPerFrame = 128;
constexpr int kAudioSamplesPerFrame = kFrameSymbols * kSamplesPerSymbol;  // 1024
constexpr float kAudioScale = 8192.0f;                                    // PCM units per unit of baseband amplitude

// A user data rate with its coding and interleaving.
struct Mode {
  std::string name;  // e.g. "2400L", "600S", "3600U"
  int userBps = 0;
  bool coded = true;       // false: no code, no interleaver
  int repetition = 1;      // coded pair sent this many times (75-300 bps)
  bool punctured = false;  // 2400 bps: 1/2 punctured to 2/3
  int bitsPerSymbol = 1;   // 1 BPSK, 2 QPSK, 3 8-PSK
  int interleaverInc = 0;  // row delay step in 32-bit groups; 0: no interleaver

  int userBytesPerFrame() const { return userBps * kFrameSymbols / kSymbolRate / 8; }
  int codedBitsPerFrame() const;                                                    // into the interleaver
  int channelBitsPerFrame() const { return kDataSymbolsPerFrame * bitsPerSymbol; }  // after puncturing
  // Whole-stream delay of the interleaver/deinterleaver pair, in bits.
  int interleaverDelayBits() const { return 31 * interleaverInc * 32; }
};

// "75S" ... "2400S", "75L" ... "2400L" (coded, short/long interleaver) and
// "1200U", "2400U", "3600U" (uncoded). Throws std::invalid_argument listing them.
Mode parseMode(const std::string& name);
std::vector<std::string> modeNames();

// Known sequences.
std::array<uint8_t, kPreambleSymbols> preambleBits();        // LFSR x^5+x^2+1 from 11010
std::array<uint8_t, kScrambledSymbols> scramblerSequence();  // phase steps 0..7, x^9+x^4+1 from 0x1FF
// True at the 176 positions after the preamble that carry a probe (unknown-data) symbol.
bool isProbePosition(int position);
// 8-PSK phase index (units of 45 degrees) of a tribit, dibit or bit.
int phaseIndexOf(int value, int bitsPerSymbol);
cfloat phasor(int phaseIndex);

// --- the blocks, in chain order. Each appends its output to `out`.

// Pseudo-random user bytes (mt19937 from a seed), one frame's worth at a time.
class ByteSource {
 public:
  ByteSource(const Mode& mode, uint64_t seed) : mode_(mode), rng_(seed) {}
  void frame(std::vector<uint8_t>& out);
 private:
  Mode mode_;
  std::mt19937_64 rng_;
};

// Bytes to bits, least significant bit first.
void unpackBits(const uint8_t* bytes, std::size_t n, std::vector<uint8_t>& out);

// K=7, rate 1/2, generators 133 and 171 (octal); G1's bit first.
class ConvEncoder {
 public:
  explicit ConvEncoder(const Mode& mode) : coded_(mode.coded) {}
  void process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out);
 private:
  bool coded_;
  unsigned state_ = 0;
};

// Each coded pair sent `repetition` times (75-300 bps).
class Repeater {
 public:
  explicit Repeater(const Mode& mode) : times_(mode.repetition) {}
  void process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out);
 private:
  int times_;
};

// The 32-row convolutional bit interleaver: bit i of a 32-bit group enters
// row 9i mod 32, row r delays by r*inc groups, output bit j comes from row j.
class Interleaver {
 public:
  explicit Interleaver(const Mode& mode);
  void process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out);
  static int rowOf(int inputBit) { return (9 * inputBit) % 32; }
 private:
  int inc_;
  std::array<std::vector<uint8_t>, 32> rows_;  // circular delay lines, row r holds r*inc bits
  std::array<std::size_t, 32> head_{};
};

// 2400 bps: of each 4 interleaved coded bits, the 4th is dropped.
class Puncturer {
 public:
  explicit Puncturer(const Mode& mode) : punctured_(mode.punctured) {}
  void process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out);
 private:
  bool punctured_;
};

// Bits to unit-amplitude PSK symbols (first bit most significant).
class SymbolMapper {
 public:
  explicit SymbolMapper(const Mode& mode) : bitsPerSymbol_(mode.bitsPerSymbol) {}
  void process(const uint8_t* bits, std::size_t n, std::vector<cfloat>& out);
 private:
  int bitsPerSymbol_;
};

// Rotates each frame's 128 data symbols by the scrambler phase of their
// position; restarts every frame.
class Scrambler {
 public:
  Scrambler();
  void process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out);
 private:
  std::vector<cfloat> dataRotation_;  // 128 phasors, one per data position
  std::size_t position_ = 0;
};

// Preamble + data/probe layout: 128 data symbols in, 256 frame symbols out.
class FrameAssembler {
 public:
  FrameAssembler();
  void process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out);
 private:
  std::array<cfloat, kPreambleSymbols> preamble_;
  std::array<cfloat, kScrambledSymbols> probe_;  // scrambler phasors (used at probe positions)
  std::size_t position_ = 0;
};

// Root-raised-cosine interpolation, 4 samples per symbol (liquid-dsp firinterp).
class PulseShaper {
 public:
  PulseShaper();
  ~PulseShaper();
  PulseShaper(const PulseShaper&) = delete;
  PulseShaper& operator=(const PulseShaper&) = delete;
  void process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out);
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Baseband to real passband at 1800 Hz (liquid-dsp oscillator), as 16-bit
// PCM: I*cos(phi) - Q*sin(phi), scaled by kAudioScale.
class UpConverter {
 public:
  UpConverter();
  ~UpConverter();
  UpConverter(const UpConverter&) = delete;
  UpConverter& operator=(const UpConverter&) = delete;
  void process(const cfloat* baseband, std::size_t n, std::vector<int16_t>& out);
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Where the audio goes: a running digest (FNV-1a over the PCM) and a sample
// count, and optionally a raw little-endian file, as a sound card would take it.
class AudioSink {
 public:
  explicit AudioSink(const std::string& path = "");
  ~AudioSink();
  AudioSink(const AudioSink&) = delete;
  AudioSink& operator=(const AudioSink&) = delete;
  void process(const int16_t* samples, std::size_t n);
  uint64_t digest() const { return digest_; }
  uint64_t samples() const { return samples_; }
 private:
  std::FILE* file_ = nullptr;
  uint64_t digest_ = 1469598103934665603ull;
  uint64_t samples_ = 0;
};

// The whole chain in one object: the plain program's processing, and the
// reference the tests compare every split with.
class Transmitter {
 public:
  explicit Transmitter(const Mode& mode);
  // One frame of user bytes (mode.userBytesPerFrame()) in, 1024 PCM samples out.
  void frame(const uint8_t* bytes, std::size_t n, std::vector<int16_t>& audio);
 private:
  ConvEncoder encoder_;
  Repeater repeater_;
  Interleaver interleaver_;
  Puncturer puncturer_;
  SymbolMapper mapper_;
  Scrambler scrambler_;
  FrameAssembler framer_;
  PulseShaper shaper_;
  UpConverter upconverter_;
  std::vector<uint8_t> bits_, coded_, repeated_, interleaved_, punctured_;
  std::vector<cfloat> mapped_, scrambled_, framed_, shaped_;
};

// Seconds between frames at `symbolRate` symbols/s (0: no pacing).
inline double framePeriodS(double symbolRate) { return symbolRate > 0 ? kFrameSymbols / symbolRate : 0.0; }

}  // namespace scabench::s4285
