// The STANAG 4285 transmitter: known answers from the public facts, a
// spectrum check, and a bit-exact loopback through the receiver
// (stanag4285_rx.hpp) in every mode, with no channel in between.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include <fftw3.h>

#include "scabench/dsp/stanag4285.hpp"
#include "scabench/dsp/stanag4285_rx.hpp"

namespace s4285 = scabench::s4285;

namespace {
std::vector<int16_t> transmit(const s4285::Mode& mode, const std::vector<uint8_t>& bytes) {
  s4285::Transmitter tx(mode);
  std::vector<int16_t> audio;
  const std::size_t per = std::size_t(mode.userBytesPerFrame());
  for (std::size_t at = 0; at + per <= bytes.size(); at += per) tx.frame(bytes.data() + at, per, audio);
  return audio;
}

std::vector<uint8_t> randomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}
}  // namespace

TEST(Stanag4285KnownAnswers, PreambleBits) {
  const std::string expected = "01011001111100011011101010000100101100111110001101110101000010010110011111000110";
  std::string got;
  for (auto b : s4285::preambleBits()) got += char('0' + b);
  EXPECT_EQ(got, expected);
}

TEST(Stanag4285KnownAnswers, FirstScramblerValues) {
  const std::vector<int> expected = {7, 7, 7, 0, 4, 7, 6, 7, 0, 5, 3, 6, 4, 0, 4, 4, 2, 6, 5, 5, 0, 7, 1, 7,
                                     3, 6, 6, 0, 5, 2, 2, 4, 3, 4, 5, 5, 2, 7, 0, 1, 3, 4, 0, 1, 0, 0, 1, 4};
  const auto seq = s4285::scramblerSequence();
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(seq[i], expected[i]) << "position " << i;
  // Positions 32-47 are the first probe.
  for (int p = 0; p < 48; ++p) EXPECT_EQ(s4285::isProbePosition(p), p >= 32) << p;
}

TEST(Stanag4285KnownAnswers, EncoderImpulseResponse) {
  s4285::ConvEncoder enc(s4285::parseMode("600S"));
  const std::vector<uint8_t> impulse = {1, 0, 0, 0, 0, 0, 0};
  std::vector<uint8_t> out;
  enc.process(impulse.data(), impulse.size(), out);
  const std::vector<uint8_t> expected = {1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0};
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 14),
            std::vector<uint8_t>(expected.begin(), expected.begin() + 14));
  EXPECT_EQ(out[14], 0);  // the impulse has left the register
  EXPECT_EQ(out[15], 0);
}

TEST(Stanag4285KnownAnswers, InterleaverRowMappingAndDelays) {
  EXPECT_EQ(s4285::Interleaver::rowOf(0), 0);
  EXPECT_EQ(s4285::Interleaver::rowOf(1), 9);
  EXPECT_EQ(s4285::Interleaver::rowOf(4), 4);
  EXPECT_EQ(s4285::Interleaver::rowOf(31), 23);
  const std::vector<std::pair<std::string, int>> incs = {{"600S", 1},   {"600L", 12}, {"1200S", 2},
                                                         {"1200L", 24}, {"2400S", 4}, {"2400L", 48}};
  for (const auto& [name, inc] : incs) {
    const auto mode = s4285::parseMode(name);
    ASSERT_EQ(mode.interleaverInc, inc) << name;
    // Memory is 32 + 496 * inc bits: the input group plus the rows' delay lines.
    EXPECT_EQ(32 + 31 * 32 / 2 * inc, 32 + 496 * inc);
    for (int i = 0; i < 32; ++i) {
      s4285::Interleaver il(mode);
      const int groups = 31 * inc + 1;
      std::vector<uint8_t> in(std::size_t(groups) * 32, 0), out;
      in[i] = 1;  // a single one at bit i of the first group
      il.process(in.data(), in.size(), out);
      const auto pos = std::find(out.begin(), out.end(), 1) - out.begin();
      const int row = (9 * i) % 32;
      EXPECT_EQ(pos, std::ptrdiff_t(row) * inc * 32 + row) << name << " bit " << i;
      EXPECT_EQ(std::count(out.begin(), out.end(), 1), 1);
    }
  }
}

TEST(Stanag4285KnownAnswers, ModesAndMappings) {
  EXPECT_EQ(s4285::parseMode("2400L").userBytesPerFrame(), 32);
  EXPECT_EQ(s4285::parseMode("1200S").userBytesPerFrame(), 16);
  EXPECT_EQ(s4285::parseMode("600L").userBytesPerFrame(), 8);
  EXPECT_EQ(s4285::parseMode("75S").userBytesPerFrame(), 1);
  EXPECT_EQ(s4285::parseMode("3600U").userBytesPerFrame(), 48);
  EXPECT_EQ(s4285::parseMode("2400L").codedBitsPerFrame(), 512);
  EXPECT_EQ(s4285::parseMode("150L").repetition, 4);
  EXPECT_THROW(s4285::parseMode("4800L"), std::invalid_argument);
  EXPECT_THROW(s4285::parseMode("600"), std::invalid_argument);
  // QPSK Gray: 00 -> 0, 01 -> 90, 11 -> 180, 10 -> 270 degrees (units of 45).
  EXPECT_EQ(s4285::phaseIndexOf(0b00, 2), 0);
  EXPECT_EQ(s4285::phaseIndexOf(0b01, 2), 2);
  EXPECT_EQ(s4285::phaseIndexOf(0b11, 2), 4);
  EXPECT_EQ(s4285::phaseIndexOf(0b10, 2), 6);
  // 8-PSK: 000->45, 001->0, 010->90, 011->135, 100->270, 101->315, 110->225, 111->180.
  const int degrees[8] = {45, 0, 90, 135, 270, 315, 225, 180};
  for (int v = 0; v < 8; ++v) EXPECT_EQ(s4285::phaseIndexOf(v, 3) * 45, degrees[v]) << v;
}

TEST(Stanag4285Frame, PreambleAndProbesOnAir) {
  // An uncoded BPSK frame of zero bytes: data symbols carry only the scrambler.
  const auto mode = s4285::parseMode("1200U");
  // Three frames: the pulse shaper still holds the end of the last one.
  const auto audio = transmit(mode, std::vector<uint8_t>(std::size_t(mode.userBytesPerFrame()) * 3, 0));
  ASSERT_EQ(audio.size(), 3u * s4285::kAudioSamplesPerFrame);
  std::vector<s4285::cfloat> symbols;
  s4285::Demodulator demodulator;
  demodulator.process(audio.data(), audio.size(), symbols);
  ASSERT_GE(symbols.size(), 2u * s4285::kFrameSymbols);
  // The transmit and matched filters delay the first frame by 2 x 8 symbols.
  EXPECT_EQ(demodulator.frameStartSample(), 2 * s4285::kFilterSpan * s4285::kSamplesPerSymbol);
  const auto pre = s4285::preambleBits();
  const auto scr = s4285::scramblerSequence();
  for (int f = 0; f < 2; ++f) {
    for (int p = 0; p < s4285::kPreambleSymbols; ++p) {
      const auto s = symbols[std::size_t(f) * 256 + p];
      EXPECT_GT(std::abs(s), 0.5f);
      EXPECT_EQ(s.real() < 0, pre[p] == 1) << "frame " << f << " preamble " << p;
    }
    for (int p = 0; p < s4285::kScrambledSymbols; ++p) {
      const auto s = symbols[std::size_t(f) * 256 + 80 + p];
      // Every symbol after the preamble is the scrambler phase (data bit 0 is 0 degrees).
      EXPECT_NEAR(std::arg(s * std::conj(s4285::phasor(scr[p]))), 0.0, 0.1) << "frame " << f << " position " << p;
    }
  }
}

TEST(Stanag4285Spectrum, CarrierAt1800HzAndBandwidthFitsRollOff) {
  const auto mode = s4285::parseMode("2400L");
  const auto audio = transmit(mode, randomBytes(std::size_t(mode.userBytesPerFrame()) * 120, 7));
  ASSERT_FALSE(audio.empty());
  EXPECT_LT(*std::max_element(audio.begin(), audio.end(), [](auto a, auto b) { return std::abs(a) < std::abs(b); }),
            32767);  // no clipping
  // Welch: Hann windows of 1024 samples, half overlapped, averaged (FFTW).
  const int n = 1024;
  std::vector<float> in(n), window(n), psd(n / 2 + 1, 0.0f);
  std::vector<fftwf_complex> spec(n / 2 + 1);
  fftwf_plan plan = fftwf_plan_dft_r2c_1d(n, in.data(), spec.data(), FFTW_ESTIMATE);
  for (int i = 0; i < n; ++i) window[i] = float(0.5 - 0.5 * std::cos(2 * M_PI * i / n));
  for (std::size_t at = 0; at + n <= audio.size(); at += n / 2) {
    for (int i = 0; i < n; ++i) in[i] = audio[at + i] * window[i];
    fftwf_execute(plan);
    for (int k = 0; k <= n / 2; ++k) psd[k] += spec[k][0] * spec[k][0] + spec[k][1] * spec[k][1];
  }
  fftwf_destroy_plan(plan);
  const double binHz = double(s4285::kSampleRate) / n;
  const double total = std::accumulate(psd.begin(), psd.end(), 0.0);
  double centroid = 0;
  for (int k = 0; k <= n / 2; ++k) centroid += k * binHz * psd[k] / total;
  EXPECT_NEAR(centroid, s4285::kCarrierHz, 15.0);
  // 99% occupied bandwidth: 0.5% of the power below, 0.5% above.
  double cum = 0, low = 0, high = 0;
  for (int k = 0; k <= n / 2; ++k) {
    const double before = cum;
    cum += psd[k];
    if (before < 0.005 * total && cum >= 0.005 * total) low = k * binHz;
    if (before < 0.995 * total && cum >= 0.995 * total) high = k * binHz;
  }
  const double occupied = high - low;
  const double nyquistBw = s4285::kSymbolRate, fullBw = s4285::kSymbolRate * (1 + s4285::kRollOff);
  EXPECT_NEAR((low + high) / 2, s4285::kCarrierHz, 2 * binHz);
  EXPECT_GT(occupied, nyquistBw * (1 - s4285::kRollOff));
  EXPECT_LE(occupied, fullBw + 2 * binHz) << "occupied " << occupied << " Hz, roll-off allows " << fullBw;
  RecordProperty("occupied_bandwidth_hz", std::to_string(occupied));
}

class Stanag4285Loopback : public ::testing::TestWithParam<std::string> {};

// The source's bytes through the transmitter and straight into the receiver:
// `payloadFrames` frames, then receiverLatencyFrames() more so that all of
// them come back; the BER counter checks every byte that came back.
TEST_P(Stanag4285Loopback, RandomBytesComeBackBitExact) {
  const auto mode = s4285::parseMode(GetParam());
  const int payloadFrames = std::max(24, 256 / mode.userBytesPerFrame());  // at least 256 bytes, or 24 frames
  s4285::ByteSource source(mode, 4285);
  s4285::Transmitter tx(mode);
  s4285::Receiver rx(mode);
  s4285::BerCounter ber(mode, 4285);
  std::vector<uint8_t> bytes, decoded;
  std::vector<int16_t> audio;
  for (int f = 0; f < payloadFrames + s4285::receiverLatencyFrames(mode); ++f) {
    bytes.clear(), audio.clear(), decoded.clear();
    source.frame(bytes);
    tx.frame(bytes.data(), bytes.size(), audio);
    rx.process(audio.data(), audio.size(), decoded);
    ber.process(decoded.data(), decoded.size());
  }
  EXPECT_GE(ber.bits(), uint64_t(payloadFrames) * mode.userBytesPerFrame() * 8);
  EXPECT_EQ(ber.errors(), 0u) << "bit errors in " << ber.bits() << " bits";
}

INSTANTIATE_TEST_SUITE_P(EveryMode, Stanag4285Loopback, ::testing::ValuesIn(s4285::modeNames()),
                         [](const auto& info) { return "mode_" + info.param; });

TEST(Stanag4285Loopback, ACorruptedSymbolIsNoticed) {
  // The loopback can fail: flip one data symbol of an uncoded frame.
  const auto mode = s4285::parseMode("2400U");
  const auto payload = randomBytes(std::size_t(mode.userBytesPerFrame()) * 4, 3);
  const auto audio = transmit(mode, payload);
  std::vector<s4285::cfloat> symbols;
  s4285::Demodulator().process(audio.data(), audio.size(), symbols);
  ASSERT_GE(symbols.size(), 2u * s4285::kFrameSymbols);
  auto decode = [&](const std::vector<s4285::cfloat>& on) {
    s4285::Equaliser equaliser(mode);
    s4285::Decoder decoder(mode);
    std::vector<float> soft;
    std::vector<uint8_t> bytes;
    equaliser.process(on.data(), on.size(), soft);
    decoder.process(soft.data(), soft.size(), bytes);
    bytes.resize(std::size_t(mode.userBytesPerFrame()));  // the first frame
    return bytes;
  };
  const std::vector<uint8_t> first(payload.begin(), payload.begin() + mode.userBytesPerFrame());
  EXPECT_EQ(decode(symbols), first);
  symbols[s4285::kPreambleSymbols] = -symbols[s4285::kPreambleSymbols];  // the first data symbol
  EXPECT_NE(decode(symbols), first);
}
