#include "scabench/dsp/stanag4285_rx.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>

// liquid.h uses std::complex when <complex> comes first.
#include <liquid/liquid.h>
extern "C" {
#include <fec.h>
}
#include <fftw3.h>

namespace scabench::s4285 {

namespace {
using cdouble = std::complex<double>;

int16_t toPcm(float v) { return int16_t(std::fmax(-32768.0f, std::fmin(32767.0f, std::nearbyint(v)))); }

// Constellation point of `value` before scrambling.
cfloat point(int value, int bitsPerSymbol) { return phasor(phaseIndexOf(value, bitsPerSymbol)); }

// The value whose point is nearest in phase to z (already descrambled).
int nearest(cfloat z, int bitsPerSymbol) {
  int best = 0;
  float bestScore = -1e30f;
  for (int v = 0; v < (1 << bitsPerSymbol); ++v) {
    const float score = (z * std::conj(point(v, bitsPerSymbol))).real();
    if (score > bestScore) bestScore = score, best = v;
  }
  return best;
}
}  // namespace

// ---------------------------------------------------------------- channel

double nominalAudioPower() {
  // The transmit filter's taps, as PulseShaper's interpolator designs them.
  std::vector<float> h(2 * kSamplesPerSymbol * kFilterSpan + 1);
  liquid_firdes_prototype(LIQUID_FIRFILT_RRC, kSamplesPerSymbol, kFilterSpan, kRollOff, 0.0f, h.data());
  double energy = 0;
  for (float t : h) energy += double(t) * t;
  // Unit-power symbols, one every kSamplesPerSymbol samples: E|x|^2 = sum(h^2) / k.
  // The real passband signal carries half of it.
  return double(kAudioScale) * kAudioScale * energy / kSamplesPerSymbol / 2.0;
}

double esN0Db(double snrDb) { return snrDb + 10.0 * std::log10(kSnrBandHz / kSymbolRate); }

std::vector<std::string> multipathProfileNames() { return {"none", "two-path", "harsh"}; }

std::vector<Path> multipathProfile(const std::string& name) {
  if (name == "none") return {{0, {1.0f, 0.0f}}};
  // Two paths 1.04 ms (10 samples, 2.5 symbols) apart, the second 2.5 dB weaker.
  if (name == "two-path") return {{0, std::polar(0.8f, 0.0f)}, {10, std::polar(0.6f, 1.0f)}};
  // Three paths over 3.1 ms (7.5 symbols), the second as strong as the first:
  // deep notches in the band.
  if (name == "harsh")
    return {{0, std::polar(0.6f, 0.0f)}, {20, std::polar(0.64f, 2.0f)}, {30, std::polar(0.48f, -1.0f)}};
  std::string valid;
  for (const auto& n : multipathProfileNames()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown multipath profile '" + name + "' (valid: " + valid + ")");
}

struct Channel::Impl {
  std::vector<Path> paths;
  bool direct = false;          // a single undelayed unit path: no Hilbert transform needed
  firhilbf hilbert = nullptr;   // real audio -> analytic signal
  std::vector<cfloat> history;  // analytic signal, circular, longest delay + 1
  std::size_t head = 0;
  std::deque<float> lead;  // the leading silence, then the signal
  float noiseSigma = 0;
  std::mt19937_64 rng;
  std::normal_distribution<float> gauss{0.0f, 1.0f};
};

Channel::Channel(const std::string& profile, std::optional<double> snrDb, uint64_t seed, int leadSamples)
    : impl_(new Impl) {
  auto& s = *impl_;
  s.paths = multipathProfile(profile);
  s.direct = s.paths.size() == 1 && s.paths[0].delaySamples == 0 && s.paths[0].gain == cfloat(1.0f, 0.0f);
  int longest = 0;
  for (const auto& p : s.paths) longest = std::max(longest, p.delaySamples);
  s.history.assign(std::size_t(longest) + 1, cfloat(0.0f, 0.0f));
  if (!s.direct) s.hilbert = firhilbf_create(20, 60.0f);
  s.lead.assign(std::size_t(std::max(0, leadSamples)), 0.0f);
  if (snrDb) {
    // White noise of variance sigma^2 spreads over 0..fs/2; kSnrBandHz of it counts.
    const double inBand = nominalAudioPower() / std::pow(10.0, *snrDb / 10.0);
    s.noiseSigma = float(std::sqrt(inBand * (kSampleRate / 2.0) / kSnrBandHz));
  }
  s.rng.seed(seed);
}

Channel::~Channel() {
  if (impl_->hilbert) firhilbf_destroy(impl_->hilbert);
}

void Channel::process(const int16_t* audio, std::size_t n, std::vector<int16_t>& out) {
  auto& s = *impl_;
  for (std::size_t i = 0; i < n; ++i) {
    float y = audio[i];
    if (!s.direct) {
      cfloat analytic;
      firhilbf_r2c_execute(s.hilbert, y, &analytic);
      s.history[s.head] = analytic;
      cfloat sum(0.0f, 0.0f);
      for (const auto& p : s.paths) {
        const std::size_t at = (s.head + s.history.size() - std::size_t(p.delaySamples)) % s.history.size();
        sum += p.gain * s.history[at];
      }
      s.head = (s.head + 1) % s.history.size();
      y = sum.real();
    }
    if (!s.lead.empty()) {
      s.lead.push_back(y);
      y = s.lead.front();
      s.lead.pop_front();
    }
    if (s.noiseSigma > 0) y += s.noiseSigma * s.gauss(s.rng);
    out.push_back(toPcm(y));
  }
}

// ---------------------------------------------------------------- demodulator

namespace {
constexpr int kFrameSamples = kAudioSamplesPerFrame;
// Start positions searched for the first preamble: a frame, and 40 symbols
// more so that a start just past a frame is found rather than its sidelobe
// 31 symbols earlier.
constexpr int kSearchSamples = kFrameSamples + 40 * kSamplesPerSymbol;
// How far before the strongest correlation an earlier path is looked for: 12 symbols (5 ms).
constexpr int kEarlierPathSamples = 12 * kSamplesPerSymbol;
}  // namespace

struct Demodulator::Impl {
  nco_crcf nco;
  firfilt_crcf matched;
  std::vector<cfloat> buffer;  // matched-filter output, kSamplesPerSymbol per symbol
  std::array<float, kPreambleSymbols> preamble{};
  bool locked = false;
  int offset = 0;       // where in `buffer` the next frame starts
  int64_t dropped = 0;  // samples dropped from the buffer's front before lock
  int64_t start = -1;
};

Demodulator::Demodulator() : impl_(new Impl) {
  auto& s = *impl_;
  s.nco = nco_crcf_create(LIQUID_VCO);
  nco_crcf_set_frequency(s.nco, float(2.0 * M_PI * kCarrierHz / kSampleRate));
  s.matched = firfilt_crcf_create_rnyquist(LIQUID_FIRFILT_RRC, kSamplesPerSymbol, kFilterSpan, kRollOff, 0.0f);
  const auto bits = preambleBits();
  for (int i = 0; i < kPreambleSymbols; ++i) s.preamble[i] = bits[i] ? -1.0f : 1.0f;
}

Demodulator::~Demodulator() {
  firfilt_crcf_destroy(impl_->matched);
  nco_crcf_destroy(impl_->nco);
}

bool Demodulator::locked() const { return impl_->locked; }
int64_t Demodulator::frameStartSample() const { return impl_->start; }

void Demodulator::process(const int16_t* audio, std::size_t n, std::vector<cfloat>& symbols) {
  auto& s = *impl_;
  for (std::size_t i = 0; i < n; ++i) {
    cfloat y;
    nco_crcf_mix_down(s.nco, cfloat(audio[i] / kAudioScale, 0.0f), &y);
    nco_crcf_step(s.nco);
    firfilt_crcf_push(s.matched, y);
    firfilt_crcf_execute(s.matched, &y);
    s.buffer.push_back(y);
  }
  constexpr int span = kPreambleSymbols * kSamplesPerSymbol;
  while (!s.locked && int(s.buffer.size()) >= kSearchSamples + span) {
    auto correlate = [&](int at, float& energy) {
      cfloat c(0.0f, 0.0f);
      energy = 0;
      for (int k = 0; k < kPreambleSymbols; ++k) {
        const cfloat x = s.buffer[std::size_t(at + k * kSamplesPerSymbol)];
        c += s.preamble[k] * x;
        energy += std::norm(x);
      }
      return std::norm(c);
    };
    int best = 0;
    float bestPower = -1, bestEnergy = 0;
    for (int at = 0; at < kSearchSamples; ++at) {
      float energy;
      if (const float power = correlate(at, energy); power > bestPower)
        bestPower = power, bestEnergy = energy, best = at;
    }
    // Two preambles in reach: the earlier is the first frame.
    if (float energy; best >= kFrameSamples && correlate(best - kFrameSamples, energy) >= 0.5f * bestPower)
      best -= kFrameSamples, bestEnergy = energy;
    // An earlier path at least half as strong in amplitude (a peak of its
    // own, not the main peak's slope): time on it, so that the later paths
    // are echoes the feedback taps cancel rather than precursors the short
    // look-ahead cannot.
    for (int at = std::max(2, best - kEarlierPathSamples); at < best - 2; ++at) {
      float energy, around;
      const float power = correlate(at, energy);
      if (power < 0.25f * bestPower) continue;
      bool peak = true;
      for (int d = -2; d <= 2 && peak; ++d) peak = d == 0 || correlate(at + d, around) <= power;
      if (peak) {
        best = at, bestPower = power, bestEnergy = energy;
        break;
      }
    }
    if (bestEnergy > 0 && bestPower / (bestEnergy * kPreambleSymbols) >= kLockThreshold) {
      s.locked = true;
      s.offset = best;
      s.start = s.dropped + best;
    } else {
      s.buffer.erase(s.buffer.begin(), s.buffer.begin() + kFrameSamples);
      s.dropped += kFrameSamples;
    }
  }
  while (s.locked && int(s.buffer.size()) >= s.offset + kFrameSamples) {
    for (int k = 0; k < kFrameSymbols; ++k) symbols.push_back(s.buffer[std::size_t(s.offset + k * kSamplesPerSymbol)]);
    s.buffer.erase(s.buffer.begin(), s.buffer.begin() + kFrameSamples);
  }
}

// ---------------------------------------------------------------- equaliser

namespace {
constexpr int kBehind = 3;                      // feed-forward taps on earlier symbols
constexpr int kAhead = 8;                       // ... and on later ones
constexpr int kForward = kBehind + 1 + kAhead;  // 12
constexpr int kFeedback = 10;                   // past symbols (known or decided)
constexpr int kTaps = kForward + kFeedback;
// RLS without forgetting, plus a random walk of the taps (a Kalman filter's
// process noise) in place of exponential forgetting: forgetting lets P grow
// without bound along directions the known symbols do not excite (the
// feed-forward and feedback inputs are nearly collinear on a clean channel),
// and the taps then blow up after some thousands of symbols.
constexpr double kTapWander = 1e-5;        // added to P's diagonal per update
constexpr double kInitialInverse = 100.0;  // P(0) = 100 I
constexpr double kNoiseFloor = 1e-3;
}  // namespace

struct Equaliser::Impl {
  Mode mode;
  std::vector<cfloat> history;           // kBehind symbols of the frame before, then unequalised frames
  std::array<cdouble, kTaps> w{};        // y = w^H u
  std::vector<cdouble> p;                // kTaps x kTaps, row-major, Hermitian
  std::array<cdouble, kFeedback> fed{};  // past symbols, most recent first
  std::array<cfloat, kPreambleSymbols> preamble{};
  std::array<cfloat, kScrambledSymbols> scrambler{};  // phasors: probe symbols and data rotations
  double noise = 1.0;

  void equaliseFrame(const cfloat* r, std::vector<float>& softBits);
  cdouble rlsStep(const std::array<cdouble, kTaps>& u, cdouble wanted, bool train);
};

Equaliser::Equaliser(const Mode& mode) : impl_(new Impl) {
  auto& s = *impl_;
  s.mode = mode;
  s.history.assign(kBehind, cfloat(0.0f, 0.0f));
  s.p.assign(std::size_t(kTaps) * kTaps, 0.0);
  for (int i = 0; i < kTaps; ++i) s.p[std::size_t(i) * kTaps + i] = kInitialInverse;
  const auto bits = preambleBits();
  for (int i = 0; i < kPreambleSymbols; ++i) s.preamble[i] = phasor(bits[i] ? 4 : 0);
  const auto seq = scramblerSequence();
  for (int i = 0; i < kScrambledSymbols; ++i) s.scrambler[i] = phasor(seq[i]);
}

Equaliser::~Equaliser() = default;

double Equaliser::noiseVariance() const { return impl_->noise; }

cdouble Equaliser::Impl::rlsStep(const std::array<cdouble, kTaps>& u, cdouble wanted, bool train) {
  cdouble y = 0;
  for (int i = 0; i < kTaps; ++i) y += std::conj(w[i]) * u[i];
  if (!train) return y;
  // pi = P u; k = pi / (1 + u^H pi); w += k conj(e); P = P - k pi^H + wander I.
  std::array<cdouble, kTaps> pu{};
  for (int i = 0; i < kTaps; ++i) {
    cdouble acc = 0;
    for (int j = 0; j < kTaps; ++j) acc += p[std::size_t(i) * kTaps + j] * u[j];
    pu[i] = acc;
  }
  cdouble denom = 1.0;
  for (int i = 0; i < kTaps; ++i) denom += std::conj(u[i]) * pu[i];
  const cdouble e = wanted - y;
  std::array<cdouble, kTaps> gain{};
  for (int i = 0; i < kTaps; ++i) gain[i] = pu[i] / denom.real();
  for (int i = 0; i < kTaps; ++i) w[i] += gain[i] * std::conj(e);
  for (int i = 0; i < kTaps; ++i)
    for (int j = 0; j < kTaps; ++j) {
      auto& pij = p[std::size_t(i) * kTaps + j];
      pij -= gain[i] * std::conj(pu[j]);
    }
  for (int i = 0; i < kTaps; ++i) p[std::size_t(i) * kTaps + i] += kTapWander;
  return y;
}

void Equaliser::Impl::equaliseFrame(const cfloat* r, std::vector<float>& softBits) {
  // r[-kBehind .. kFrameSymbols + kAhead) are valid.
  const int k = mode.bitsPerSymbol;
  std::vector<cfloat> data;  // descrambled equaliser outputs of the data symbols
  data.reserve(kDataSymbolsPerFrame);
  double probeError = 0;
  int probes = 0;
  std::array<cdouble, kTaps> u{};
  for (int pos = 0; pos < kFrameSymbols; ++pos) {
    for (int d = -kBehind; d <= kAhead; ++d) u[std::size_t(d + kBehind)] = r[pos + d];
    for (int j = 0; j < kFeedback; ++j) u[std::size_t(kForward + j)] = fed[j];
    cdouble decided;
    if (pos < kPreambleSymbols) {
      decided = preamble[pos];
      rlsStep(u, decided, true);
    } else if (const int q = pos - kPreambleSymbols; isProbePosition(q)) {
      decided = scrambler[q];
      const cdouble y = rlsStep(u, decided, true);
      probeError += std::norm(decided - y);
      ++probes;
    } else {
      const cfloat y = cfloat(rlsStep(u, 0.0, false));
      const cfloat z = y * std::conj(scrambler[q]);
      data.push_back(z);
      decided = point(nearest(z, k), k) * scrambler[q];
    }
    for (int j = kFeedback - 1; j > 0; --j) fed[j] = fed[j - 1];
    fed[0] = decided;
  }
  noise = std::max(kNoiseFloor, probeError / std::max(1, probes));
  // Max-log LLRs: per bit, the nearest point with it 0 against the nearest with it 1.
  const int points = 1 << k;
  std::array<float, 8> dist{};
  for (const cfloat z : data) {
    for (int v = 0; v < points; ++v) dist[v] = std::norm(z - point(v, k));
    for (int b = k - 1; b >= 0; --b) {  // the first bit is the most significant
      float zero = 1e30f, one = 1e30f;
      for (int v = 0; v < points; ++v) {
        float& nearestWithBit = (v >> b) & 1 ? one : zero;
        nearestWithBit = std::min(nearestWithBit, dist[v]);
      }
      softBits.push_back(float((zero - one) / noise));
    }
  }
}

void Equaliser::process(const cfloat* symbols, std::size_t n, std::vector<float>& softBits) {
  auto& s = *impl_;
  s.history.insert(s.history.end(), symbols, symbols + n);
  while (s.history.size() >= std::size_t(kBehind + kFrameSymbols + kAhead)) {
    s.equaliseFrame(s.history.data() + kBehind, softBits);
    s.history.erase(s.history.begin(), s.history.begin() + kFrameSymbols);
  }
}

// ---------------------------------------------------------------- decoder

namespace {
// An LLR to libfec's soft symbol: 0 a sure 0, 255 a sure 1, 128 no idea.
constexpr float kSoftScale = 8.0f;
uint8_t softSymbol(float llr) { return uint8_t(std::clamp(128.0f + llr * kSoftScale, 0.0f, 255.0f)); }
// Pairs decoded again at the start of each window, whose bits are already out:
// the window starts from an unknown state.
constexpr int kOverlapBits = 48;
std::mutex libfecTables;  // set_viterbi27_polynomial writes libfec's global branch tables
}  // namespace

struct Decoder::Impl {
  Mode mode;
  int punctureCount = 0;
  std::array<std::deque<float>, 32> rows;  // deinterleaver lines: row j holds (31 - j) * inc groups
  std::vector<float> group;                // a partial 32-bit group
  uint64_t fillLeft = 0;                   // deinterleaver fill still to drop
  std::vector<float> copies;               // a partial set of repeated pairs
  std::vector<uint8_t> pairs;              // soft symbols from pair `base` on
  uint64_t base = 0, decided = 0;
  void* viterbi = nullptr;
  int capacity = 0;
  std::vector<uint8_t> packed;
  unsigned byte = 0;
  int bitsInByte = 0;

  void bit(int b, std::vector<uint8_t>& bytes) {
    byte |= unsigned(b & 1) << bitsInByte;
    if (++bitsInByte == 8) bytes.push_back(uint8_t(byte)), byte = 0, bitsInByte = 0;
  }
  void deinterleaved(float llr);
  void pair(float a, float b) { pairs.push_back(softSymbol(a)), pairs.push_back(softSymbol(b)); }
  void decode(std::vector<uint8_t>& bytes);
};

Decoder::Decoder(const Mode& mode) : impl_(new Impl) {
  auto& s = *impl_;
  s.mode = mode;
  for (int j = 0; j < 32; ++j) s.rows[j].assign(std::size_t(31 - j) * mode.interleaverInc, 0.0f);
  s.fillLeft = uint64_t(mode.interleaverDelayBits());
}

Decoder::~Decoder() {
  if (impl_->viterbi) delete_viterbi27(impl_->viterbi);
}

void Decoder::Impl::deinterleaved(float llr) {
  if (fillLeft) {
    --fillLeft;
    return;
  }
  copies.push_back(llr);
  const std::size_t span = 2 * std::size_t(mode.repetition);
  if (copies.size() < span) return;
  float a = 0, b = 0;
  for (std::size_t i = 0; i < span; i += 2) a += copies[i], b += copies[i + 1];
  copies.clear();
  pair(a, b);
}

void Decoder::Impl::decode(std::vector<uint8_t>& bytes) {
  const uint64_t total = base + pairs.size() / 2;
  if (total < decided + kTracebackBits + 1) return;
  const uint64_t target = total - kTracebackBits;
  const int steps = int(total - base);
  if (steps > capacity) {
    std::lock_guard lock(libfecTables);
    if (viterbi) delete_viterbi27(viterbi);
    // libfec's LSB-first convention: G1 = 133 octal is 0x6D, G2 = 171 octal is 0x4F.
    int polys[2] = {0x6D, 0x4F};
    set_viterbi27_polynomial(polys);
    capacity = std::max(steps, 2 * capacity);
    viterbi = create_viterbi27(capacity);
    if (!viterbi) throw std::runtime_error("libfec: create_viterbi27 failed");
  }
  init_viterbi27(viterbi, 0);
  update_viterbi27_blk(viterbi, pairs.data(), steps);
  // Traced back from state 0 at the end: the last kTracebackBits are not trusted.
  const unsigned traced = unsigned(steps - 6);
  packed.assign(traced / 8 + 2, 0);
  chainback_viterbi27(viterbi, packed.data(), traced, 0);
  for (uint64_t i = decided - base; i < target - base; ++i) bit((packed[i / 8] >> (7 - i % 8)) & 1, bytes);
  decided = target;
  const uint64_t keepFrom = decided > kOverlapBits ? std::max(base, decided - kOverlapBits) : base;
  pairs.erase(pairs.begin(), pairs.begin() + std::ptrdiff_t(2 * (keepFrom - base)));
  base = keepFrom;
}

void Decoder::process(const float* softBits, std::size_t n, std::vector<uint8_t>& bytes) {
  auto& s = *impl_;
  if (!s.mode.coded) {
    for (std::size_t i = 0; i < n; ++i) s.bit(softBits[i] > 0 ? 1 : 0, bytes);
    return;
  }
  const int inc = s.mode.interleaverInc;
  auto take = [&](float llr) {
    s.group.push_back(llr);
    if (s.group.size() < 32) return;
    // Output bit i of the group is row 9i mod 32's, each row delayed (31 - row) * inc groups.
    std::array<float, 32> rowOut{};
    for (int j = 0; j < 32; ++j) {
      auto& line = s.rows[j];
      if (inc == 0 || line.empty()) {
        rowOut[j] = s.group[j];
        continue;
      }
      line.push_back(s.group[j]);
      rowOut[j] = line.front();
      line.pop_front();
    }
    s.group.clear();
    for (int i = 0; i < 32; ++i) s.deinterleaved(rowOut[Interleaver::rowOf(i)]);
  };
  for (std::size_t i = 0; i < n; ++i) {
    take(softBits[i]);
    if (s.mode.punctured && ++s.punctureCount == 3) {
      s.punctureCount = 0;
      take(0.0f);  // the 4th bit the transmitter dropped
    }
  }
  s.decode(bytes);
}

// ---------------------------------------------------------------- receiver

Receiver::Receiver(const Mode& mode) : equaliser_(mode), decoder_(mode) {}

void Receiver::process(const int16_t* audio, std::size_t n, std::vector<uint8_t>& bytes) {
  symbols_.clear(), soft_.clear();
  demodulator_.process(audio, n, symbols_);
  equaliser_.process(symbols_.data(), symbols_.size(), soft_);
  decoder_.process(soft_.data(), soft_.size(), bytes);
}

int receiverLatencyFrames(const Mode& mode) {
  const int perFrame = mode.codedBitsPerFrame();
  const int bits = mode.coded ? mode.interleaverDelayBits() + 2 * mode.repetition * (Decoder::kTracebackBits + 1) : 0;
  return (bits + perFrame - 1) / perFrame + 3;
}

// ---------------------------------------------------------------- measuring

void BerCounter::process(const uint8_t* bytes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (used_ == expected_.size()) {
      expected_.clear(), used_ = 0;
      source_.frame(expected_);
    }
    errors_ += unsigned(__builtin_popcount(unsigned(bytes[i] ^ expected_[used_++])));
    bits_ += 8;
  }
}

namespace {
std::mutex fftwPlanner;  // FFTW's planner is not thread-safe
}

struct Monitor::Impl {
  std::vector<float> in, window;
  fftwf_complex* out = nullptr;
  fftwf_plan plan = nullptr;
  std::vector<float> pending;
  std::vector<double> psd;
  double power = 0;
  uint64_t blocks = 0;
};

Monitor::Monitor() : impl_(new Impl) {
  auto& s = *impl_;
  s.in.resize(kBlock);
  s.window.resize(kBlock);
  s.psd.assign(kBlock / 2 + 1, 0.0);
  for (int i = 0; i < kBlock; ++i) s.window[i] = float(0.5 - 0.5 * std::cos(2 * M_PI * i / kBlock));
  std::lock_guard lock(fftwPlanner);
  s.out = fftwf_alloc_complex(kBlock / 2 + 1);
  s.plan = fftwf_plan_dft_r2c_1d(kBlock, s.in.data(), s.out, FFTW_ESTIMATE);
}

Monitor::~Monitor() {
  std::lock_guard lock(fftwPlanner);
  fftwf_destroy_plan(impl_->plan);
  fftwf_free(impl_->out);
}

void Monitor::process(const int16_t* audio, std::size_t n) {
  auto& s = *impl_;
  for (std::size_t i = 0; i < n; ++i) {
    s.pending.push_back(audio[i]);
    if (int(s.pending.size()) < kBlock) continue;
    double sum = 0;
    for (int k = 0; k < kBlock; ++k) sum += double(s.pending[k]) * s.pending[k], s.in[k] = s.pending[k] * s.window[k];
    s.power += sum / kBlock;
    fftwf_execute(s.plan);
    for (int k = 0; k <= kBlock / 2; ++k)
      s.psd[k] += double(s.out[k][0]) * s.out[k][0] + double(s.out[k][1]) * s.out[k][1];
    ++s.blocks;
    s.pending.clear();
  }
}

uint64_t Monitor::blocks() const { return impl_->blocks; }
double Monitor::meanPower() const { return impl_->blocks ? impl_->power / double(impl_->blocks) : 0.0; }

double Monitor::peakFrequencyHz() const {
  const auto& psd = impl_->psd;
  const auto peak = std::max_element(psd.begin() + 1, psd.end()) - psd.begin();  // past DC
  return double(peak) * kSampleRate / kBlock;
}

std::vector<double> Monitor::spectrum() const {
  std::vector<double> avg(impl_->psd);
  if (impl_->blocks)
    for (auto& v : avg) v /= double(impl_->blocks);
  return avg;
}

}  // namespace scabench::s4285
