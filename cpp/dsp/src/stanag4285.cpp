#include "scabench/dsp/stanag4285.hpp"

#include <cmath>
#include <stdexcept>

// liquid.h uses std::complex when <complex> comes first.
#include <liquid/liquid.h>

namespace scabench::s4285 {

namespace {
struct ModeRow {
  int bps;
  int repetition;
  bool punctured;
  int bitsPerSymbol;
  int shortInc, longInc;
};
// User rate, repetition, puncturing, bits per symbol, interleaver increments.
constexpr ModeRow kCodedModes[] = {
    {75, 8, false, 1, 1, 12},  {150, 4, false, 1, 1, 12},  {300, 2, false, 1, 1, 12},
    {600, 1, false, 1, 1, 12}, {1200, 1, false, 2, 2, 24}, {2400, 1, true, 3, 4, 48},
};
constexpr int kUncodedRates[] = {1200, 2400, 3600};

// Odd parity of the set bits.
inline unsigned parity(unsigned x) { return unsigned(__builtin_parity(x)); }
}  // namespace

int Mode::codedBitsPerFrame() const {
  if (!coded) return channelBitsPerFrame();
  return punctured ? channelBitsPerFrame() * 4 / 3 : channelBitsPerFrame();
}

std::vector<std::string> modeNames() {
  std::vector<std::string> names;
  for (const char suffix : {'S', 'L'})
    for (const auto& row : kCodedModes) names.push_back(std::to_string(row.bps) + suffix);
  for (int bps : kUncodedRates) names.push_back(std::to_string(bps) + "U");
  return names;
}

Mode parseMode(const std::string& name) {
  Mode m;
  m.name = name;
  const char suffix = name.empty() ? '?' : name.back();
  int bps = 0;
  try {
    std::size_t used = 0;
    bps = std::stoi(name.substr(0, name.size() - 1), &used);
    if (used != name.size() - 1) bps = 0;
  } catch (const std::exception&) {
    bps = 0;
  }
  m.userBps = bps;
  if (suffix == 'U') {
    for (int rate : kUncodedRates)
      if (rate == bps) {
        m.coded = false;
        m.bitsPerSymbol = bps / 1200;
        return m;
      }
  } else if (suffix == 'S' || suffix == 'L') {
    for (const auto& row : kCodedModes)
      if (row.bps == bps) {
        m.repetition = row.repetition;
        m.punctured = row.punctured;
        m.bitsPerSymbol = row.bitsPerSymbol;
        m.interleaverInc = suffix == 'S' ? row.shortInc : row.longInc;
        return m;
      }
  }
  std::string valid;
  for (const auto& n : modeNames()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown STANAG 4285 mode '" + name + "' (valid: " + valid + ")");
}

std::array<uint8_t, kPreambleSymbols> preambleBits() {
  // x^5 + x^2 + 1, state 11010 (bit 4 first as written), output bit 0.
  std::array<uint8_t, kPreambleSymbols> bits{};
  unsigned state = 0b11010;
  for (auto& b : bits) {
    b = uint8_t(state & 1);
    const unsigned t = (state ^ (state >> 2)) & 1;
    state = (state >> 1) | (t << 4);
  }
  return bits;
}

std::array<uint8_t, kScrambledSymbols> scramblerSequence() {
  std::array<uint8_t, kScrambledSymbols> seq{};
  unsigned state = 0x1FF;
  for (auto& s : seq) {
    s = uint8_t(state & 7);
    for (int k = 0; k < 3; ++k) {
      const unsigned t = (state ^ (state >> 4)) & 1;
      state = (state >> 1) | (t << 8);
    }
  }
  return seq;
}

bool isProbePosition(int position) {
  // 32 data, 16 probe, repeated; the last block is data only.
  return position % 48 >= 32;
}

int phaseIndexOf(int value, int bitsPerSymbol) {
  switch (bitsPerSymbol) {
    case 1: return value ? 4 : 0;
    case 2: {
      static constexpr int gray[4] = {0, 2, 6, 4};  // 00, 01, 10, 11 -> 0, 90, 270, 180 degrees
      return gray[value & 3];
    }
    default: {
      // The public transmitter's Gray table (unverified against the standard's text).
      static constexpr int gray[8] = {1, 0, 2, 3, 6, 7, 5, 4};
      return gray[value & 7];
    }
  }
}

cfloat phasor(int phaseIndex) {
  const double a = (phaseIndex & 7) * M_PI / 4.0;
  return {float(std::cos(a)), float(std::sin(a))};
}

void ByteSource::frame(std::vector<uint8_t>& out) {
  const int n = mode_.userBytesPerFrame();
  for (int i = 0; i < n; ++i) out.push_back(uint8_t(rng_() & 0xFF));
}

void unpackBits(const uint8_t* bytes, std::size_t n, std::vector<uint8_t>& out) {
  for (std::size_t i = 0; i < n; ++i)
    for (int b = 0; b < 8; ++b) out.push_back(uint8_t((bytes[i] >> b) & 1));
}

void ConvEncoder::process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out) {
  if (!coded_) {
    out.insert(out.end(), bits, bits + n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    // The register shifts right, the new bit entering at bit 6.
    state_ = (state_ >> 1) | (unsigned(bits[i] & 1) << 6);
    out.push_back(uint8_t(parity(state_ & 0x5B)));  // G1 = 133 octal
    out.push_back(uint8_t(parity(state_ & 0x79)));  // G2 = 171 octal
  }
}

void Repeater::process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out) {
  for (std::size_t i = 0; i + 1 < n; i += 2)
    for (int k = 0; k < times_; ++k) {
      out.push_back(bits[i]);
      out.push_back(bits[i + 1]);
    }
}

Interleaver::Interleaver(const Mode& mode) : inc_(mode.interleaverInc) {
  for (int r = 0; r < 32; ++r) rows_[r].assign(std::size_t(r) * inc_, 0);
}

void Interleaver::process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out) {
  if (inc_ == 0) {
    out.insert(out.end(), bits, bits + n);
    return;
  }
  if (n % 32) throw std::invalid_argument("interleaver input must be whole 32-bit groups");
  std::array<uint8_t, 32> rowIn{};
  for (std::size_t g = 0; g < n; g += 32) {
    for (int i = 0; i < 32; ++i) rowIn[rowOf(i)] = bits[g + i];
    for (int r = 0; r < 32; ++r) {
      auto& line = rows_[r];
      if (line.empty()) {
        out.push_back(rowIn[r]);
        continue;
      }
      // A delay line of r*inc bits: read the oldest, write the newest in its place.
      std::size_t& head = head_[r];
      out.push_back(line[head]);
      line[head] = rowIn[r];
      head = head + 1 == line.size() ? 0 : head + 1;
    }
  }
}

void Puncturer::process(const uint8_t* bits, std::size_t n, std::vector<uint8_t>& out) {
  if (!punctured_) {
    out.insert(out.end(), bits, bits + n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (i % 4 != 3) out.push_back(bits[i]);
}

void SymbolMapper::process(const uint8_t* bits, std::size_t n, std::vector<cfloat>& out) {
  const int k = bitsPerSymbol_;
  for (std::size_t i = 0; i + k <= n; i += k) {
    int value = 0;
    for (int b = 0; b < k; ++b) value = (value << 1) | (bits[i + b] & 1);
    out.push_back(phasor(phaseIndexOf(value, k)));
  }
}

Scrambler::Scrambler() {
  const auto seq = scramblerSequence();
  for (int p = 0; p < kScrambledSymbols; ++p)
    if (!isProbePosition(p)) dataRotation_.push_back(phasor(seq[p]));
}

void Scrambler::process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out) {
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(symbols[i] * dataRotation_[position_]);
    position_ = (position_ + 1) % dataRotation_.size();
  }
}

FrameAssembler::FrameAssembler() {
  const auto pre = preambleBits();
  for (int i = 0; i < kPreambleSymbols; ++i) preamble_[i] = phasor(pre[i] ? 4 : 0);
  const auto seq = scramblerSequence();
  for (int p = 0; p < kScrambledSymbols; ++p) probe_[p] = phasor(seq[p]);
}

void FrameAssembler::process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out) {
  for (std::size_t i = 0; i < n;) {
    if (position_ == 0) out.insert(out.end(), preamble_.begin(), preamble_.end());
    while (isProbePosition(int(position_))) out.push_back(probe_[position_++]);
    out.push_back(symbols[i++]);
    ++position_;
    while (position_ < kScrambledSymbols && isProbePosition(int(position_))) out.push_back(probe_[position_++]);
    if (position_ == kScrambledSymbols) position_ = 0;
  }
}

struct PulseShaper::Impl {
  firinterp_crcf q;
};

PulseShaper::PulseShaper() : impl_(new Impl) {
  impl_->q = firinterp_crcf_create_prototype(LIQUID_FIRFILT_RRC, kSamplesPerSymbol, kFilterSpan, kRollOff, 0.0f);
}
PulseShaper::~PulseShaper() { firinterp_crcf_destroy(impl_->q); }

void PulseShaper::process(const cfloat* symbols, std::size_t n, std::vector<cfloat>& out) {
  const std::size_t at = out.size();
  out.resize(at + n * kSamplesPerSymbol);
  firinterp_crcf_execute_block(impl_->q, const_cast<cfloat*>(symbols), unsigned(n), out.data() + at);
}

struct UpConverter::Impl {
  nco_crcf q;
};

UpConverter::UpConverter() : impl_(new Impl) {
  impl_->q = nco_crcf_create(LIQUID_VCO);  // the precise oscillator (sin/cos, no table)
  nco_crcf_set_frequency(impl_->q, float(2.0 * M_PI * kCarrierHz / kSampleRate));
}
UpConverter::~UpConverter() { nco_crcf_destroy(impl_->q); }

void UpConverter::process(const cfloat* baseband, std::size_t n, std::vector<int16_t>& out) {
  for (std::size_t i = 0; i < n; ++i) {
    cfloat y;
    nco_crcf_mix_up(impl_->q, baseband[i], &y);  // x * e^{j phi}: its real part is I cos - Q sin
    nco_crcf_step(impl_->q);
    const float v = std::nearbyint(y.real() * kAudioScale);
    out.push_back(int16_t(std::fmax(-32768.0f, std::fmin(32767.0f, v))));
  }
}

AudioSink::AudioSink(const std::string& path) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw std::runtime_error("cannot write audio file '" + path + "'");
}
AudioSink::~AudioSink() {
  if (file_) std::fclose(file_);
}

void AudioSink::process(const int16_t* samples, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const uint16_t u = uint16_t(samples[i]);
    for (const uint8_t byte : {uint8_t(u & 0xFF), uint8_t(u >> 8)}) {
      digest_ ^= byte;
      digest_ *= 1099511628211ull;
    }
  }
  samples_ += n;
  if (file_ && std::fwrite(samples, sizeof(int16_t), n, file_) != n)
    throw std::runtime_error("audio file write failed");
}

Transmitter::Transmitter(const Mode& mode)
    : encoder_(mode), repeater_(mode), interleaver_(mode), puncturer_(mode), mapper_(mode) {}

void Transmitter::frame(const uint8_t* bytes, std::size_t n, std::vector<int16_t>& audio) {
  bits_.clear(), coded_.clear(), repeated_.clear(), interleaved_.clear(), punctured_.clear();
  mapped_.clear(), scrambled_.clear(), framed_.clear(), shaped_.clear();
  unpackBits(bytes, n, bits_);
  encoder_.process(bits_.data(), bits_.size(), coded_);
  repeater_.process(coded_.data(), coded_.size(), repeated_);
  interleaver_.process(repeated_.data(), repeated_.size(), interleaved_);
  puncturer_.process(interleaved_.data(), interleaved_.size(), punctured_);
  mapper_.process(punctured_.data(), punctured_.size(), mapped_);
  scrambler_.process(mapped_.data(), mapped_.size(), scrambled_);
  framer_.process(scrambled_.data(), scrambled_.size(), framed_);
  shaper_.process(framed_.data(), framed_.size(), shaped_);
  upconverter_.process(shaped_.data(), shaped_.size(), audio);
}

}  // namespace scabench::s4285
