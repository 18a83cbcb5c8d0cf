// The STANAG 4285 receiver over the channel: transmitter -> channel ->
// receiver -> BER counter, bit-exact without noise (with and without
// multipath, at a start the receiver is not told), errors at low SNR; the
// channel's noise level and determinism, and the monitor on a known tone.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "scabench/dsp/stanag4285.hpp"
#include "scabench/dsp/stanag4285_rx.hpp"

namespace s4285 = scabench::s4285;

namespace {
constexpr uint64_t kSeed = 4285;
constexpr int kLead = 437;  // samples of silence before the first frame, unknown to the receiver

struct Link {
  uint64_t bits, errors;
  int64_t frameStart;
};

// `frames` frames of the source's bytes through transmitter, channel, receiver and BER counter.
Link run(const std::string& modeName, int frames, const std::string& profile, std::optional<double> snrDb) {
  const auto mode = s4285::parseMode(modeName);
  s4285::ByteSource source(mode, kSeed);
  s4285::Transmitter tx(mode);
  s4285::Channel channel(profile, snrDb, 7, kLead);
  s4285::Receiver rx(mode);
  s4285::BerCounter ber(mode, kSeed);
  std::vector<uint8_t> bytes, decoded;
  std::vector<int16_t> audio, heard;
  for (int f = 0; f < frames; ++f) {
    bytes.clear(), audio.clear(), heard.clear(), decoded.clear();
    source.frame(bytes);
    tx.frame(bytes.data(), bytes.size(), audio);
    channel.process(audio.data(), audio.size(), heard);
    rx.process(heard.data(), heard.size(), decoded);
    ber.process(decoded.data(), decoded.size());
  }
  return {ber.bits(), ber.errors(), rx.demodulator().frameStartSample()};
}

// Payload frames checked in the bit-exact tests, beyond the receiver's latency.
constexpr int kPayloadFrames = 20;
}  // namespace

class Stanag4285Link : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// No noise: every bit back, with the channel's lead found by the preamble
// search. The long interleaver needs receiverLatencyFrames() (97 frames at
// 2400L, 98 at 600L) before the payload is all out: 117 and 118 frames in all.
TEST_P(Stanag4285Link, BitExactWithoutNoise) {
  const auto& [modeName, profile] = GetParam();
  const auto mode = s4285::parseMode(modeName);
  const auto link = run(modeName, kPayloadFrames + s4285::receiverLatencyFrames(mode), profile, std::nullopt);
  // The lead, plus the transmit and matched filters' 16 symbols; multipath
  // may move the strongest correlation to a later path.
  EXPECT_GE(link.frameStart, kLead + 64);
  EXPECT_LE(link.frameStart, kLead + 64 + 40);
  EXPECT_GE(link.bits, uint64_t(kPayloadFrames) * mode.userBytesPerFrame() * 8);
  EXPECT_EQ(link.errors, 0u) << link.bits << " bits";
}

INSTANTIATE_TEST_SUITE_P(ModesAndProfiles, Stanag4285Link,
                         ::testing::Combine(::testing::Values("2400S", "2400L", "600S", "600L", "1200S", "75S"),
                                            ::testing::Values("none", "two-path")),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (auto& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// kPayloadFrames checked after each mode's latency: 117 frames in all at 2400L.
TEST(Stanag4285Link, BitExactOverTwoPathsAt30dB) {
  for (const std::string modeName : {"2400S", "600S", "2400L", "600L"}) {
    const auto mode = s4285::parseMode(modeName);
    const auto link = run(modeName, kPayloadFrames + s4285::receiverLatencyFrames(mode), "two-path", 30.0);
    EXPECT_GT(link.bits, 0u);
    EXPECT_EQ(link.errors, 0u) << modeName << ": " << link.bits << " bits";
  }
}

TEST(Stanag4285Link, LowSnrGivesErrorsAndLowerRatesResistBetter) {
  // At 0 dB in 3 kHz, 2400 bps (8-PSK, rate 2/3) cannot hold; 600 bps (BPSK,
  // rate 1/2) loses far fewer bits. The counter sees both.
  const auto fast = run("2400S", 40, "none", 0.0);
  const auto slow = run("600S", 40, "none", 0.0);
  ASSERT_GT(fast.bits, 5000u);
  ASSERT_GT(slow.bits, 1000u);
  const double fastBer = double(fast.errors) / double(fast.bits);
  const double slowBer = double(slow.errors) / double(slow.bits);
  EXPECT_GT(fastBer, 0.01);
  EXPECT_LT(fastBer, 0.6);  // errors, not a lost stream
  EXPECT_LT(slowBer, fastBer);
}

TEST(Stanag4285Channel, NominalPowerIsTheTransmittersPower) {
  const auto mode = s4285::parseMode("2400U");
  s4285::ByteSource source(mode, 1);
  s4285::Transmitter tx(mode);
  std::vector<uint8_t> bytes;
  std::vector<int16_t> audio;
  for (int f = 0; f < 100; ++f) source.frame(bytes);
  tx.frame(bytes.data(), bytes.size(), audio);
  double power = 0;
  for (std::size_t i = 2000; i < audio.size(); ++i) power += double(audio[i]) * audio[i];
  power /= double(audio.size() - 2000);
  EXPECT_NEAR(power / s4285::nominalAudioPower(), 1.0, 0.05);
}

TEST(Stanag4285Channel, NoiseHasTheStatedPowerAndIsSeeded) {
  // Silence in: what comes out is the noise alone. At 10 dB, the noise in
  // 3 kHz is a tenth of the nominal signal power; over the whole 4.8 kHz
  // band, 4.8/3 times that.
  const std::vector<int16_t> silence(96000, 0);
  auto noise = [&](uint64_t seed) {
    s4285::Channel channel("none", 10.0, seed);
    std::vector<int16_t> out;
    channel.process(silence.data(), silence.size(), out);
    return out;
  };
  const auto a = noise(1), b = noise(1), c = noise(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double power = 0;
  for (auto v : a) power += double(v) * v;
  power /= double(a.size());
  const double expected = s4285::nominalAudioPower() / 10.0 * (s4285::kSampleRate / 2.0) / s4285::kSnrBandHz;
  EXPECT_NEAR(power / expected, 1.0, 0.03);
  EXPECT_NEAR(s4285::esN0Db(10.0), 10.97, 0.01);
}

TEST(Stanag4285Channel, ProfilesAndLead) {
  EXPECT_THROW(s4285::multipathProfile("three-path"), std::invalid_argument);
  for (const auto& name : s4285::multipathProfileNames()) {
    double power = 0;
    for (const auto& p : s4285::multipathProfile(name)) power += std::norm(p.gain);
    EXPECT_NEAR(power, 1.0, 1e-3) << name;
  }
  // Without noise or multipath the channel only delays.
  s4285::Channel channel("none", std::nullopt, 0, 5);
  const std::vector<int16_t> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int16_t> out;
  channel.process(in.data(), in.size(), out);
  EXPECT_EQ(out, (std::vector<int16_t>{0, 0, 0, 0, 0, 1, 2, 3}));
}

TEST(Stanag4285Monitor, ToneGivesItsFrequencyAndPower) {
  std::vector<int16_t> tone(10 * s4285::Monitor::kBlock);
  for (std::size_t i = 0; i < tone.size(); ++i)
    tone[i] = int16_t(std::lround(1000.0 * std::sin(2 * M_PI * 1200.0 * i / 9600)));
  s4285::Monitor monitor;
  monitor.process(tone.data(), 1000);  // blocks need not match the calls
  monitor.process(tone.data() + 1000, tone.size() - 1000);
  EXPECT_EQ(monitor.blocks(), 10u);
  EXPECT_NEAR(monitor.meanPower(), 1000.0 * 1000.0 / 2, 500.0);
  EXPECT_NEAR(monitor.peakFrequencyHz(), 1200.0, 9.375);
  EXPECT_EQ(monitor.spectrum().size(), std::size_t(s4285::Monitor::kBlock / 2 + 1));
}
