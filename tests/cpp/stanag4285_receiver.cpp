#include "stanag4285_receiver.hpp"

#include <array>
#include <cmath>
#include <deque>
#include <stdexcept>

#include <liquid/liquid.h>
extern "C" {
#include <fec.h>
}

namespace scabench::s4285::testing {

std::vector<cfloat> demodulate(const std::vector<int16_t>& audio) {
  nco_crcf nco = nco_crcf_create(LIQUID_VCO);
  nco_crcf_set_frequency(nco, float(2.0 * M_PI * kCarrierHz / kSampleRate));
  firfilt_crcf mf = firfilt_crcf_create_rnyquist(LIQUID_FIRFILT_RRC, kSamplesPerSymbol, kFilterSpan, kRollOff, 0.0f);
  // The transmit and matched filters each delay by kFilterSpan symbols.
  const std::size_t delay = 2 * kFilterSpan * kSamplesPerSymbol;
  std::vector<cfloat> filtered;
  filtered.reserve(audio.size() + delay);
  for (std::size_t i = 0; i < audio.size() + delay; ++i) {
    const float x = i < audio.size() ? audio[i] / kAudioScale : 0.0f;
    cfloat y;
    nco_crcf_mix_down(nco, cfloat(x, 0.0f), &y);
    nco_crcf_step(nco);
    firfilt_crcf_push(mf, y);
    firfilt_crcf_execute(mf, &y);
    filtered.push_back(y);
  }
  firfilt_crcf_destroy(mf);
  nco_crcf_destroy(nco);
  std::vector<cfloat> symbols;
  for (std::size_t i = delay; i < filtered.size(); i += kSamplesPerSymbol) symbols.push_back(filtered[i]);
  return symbols;
}

namespace {
constexpr uint8_t kErasure = 128;

// Hard decision on one descrambled symbol: the constellation value closest in phase.
int decide(cfloat symbol, int bitsPerSymbol) {
  int best = 0;
  float bestScore = -1e30f;
  for (int v = 0; v < (1 << bitsPerSymbol); ++v) {
    const float score = (symbol * std::conj(phasor(phaseIndexOf(v, bitsPerSymbol)))).real();
    if (score > bestScore) bestScore = score, best = v;
  }
  return best;
}

std::vector<uint8_t> pack(const std::vector<uint8_t>& bits) {
  std::vector<uint8_t> bytes(bits.size() / 8, 0);
  for (std::size_t i = 0; i < bytes.size() * 8; ++i) bytes[i / 8] |= uint8_t((bits[i] & 1) << (i % 8));
  return bytes;
}
}  // namespace

int flushFrames(const Mode& mode) {
  // The pulse shaper holds the last kFilterSpan symbols: one frame more lets them out.
  if (!mode.coded) return 1;
  // The interleaver's delay, plus the code's 6-bit tail, plus a frame to spare.
  const int needed = mode.interleaverDelayBits() + 2 * 6 * mode.repetition;
  return (needed + mode.codedBitsPerFrame() - 1) / mode.codedBitsPerFrame() + 1;
}

std::vector<uint8_t> decode(const Mode& mode, const std::vector<cfloat>& symbols) {
  const auto scrambler = scramblerSequence();
  // Channel bits as soft values (0 = sure 0, 255 = sure 1).
  std::vector<uint8_t> channel;
  for (std::size_t f = 0; f + kFrameSymbols <= symbols.size(); f += kFrameSymbols)
    for (int p = 0; p < kScrambledSymbols; ++p) {
      if (isProbePosition(p)) continue;
      const cfloat s = symbols[f + kPreambleSymbols + p] * std::conj(phasor(scrambler[p]));
      const int v = decide(s, mode.bitsPerSymbol);
      for (int b = mode.bitsPerSymbol - 1; b >= 0; --b) channel.push_back((v >> b) & 1 ? 255 : 0);
    }
  if (!mode.coded) {
    for (auto& b : channel) b = b ? 1 : 0;
    return pack(channel);
  }
  // Depuncture: the dropped 4th bit of every 4 becomes an erasure.
  std::vector<uint8_t> interleaved;
  for (std::size_t i = 0; i < channel.size(); ++i) {
    interleaved.push_back(channel[i]);
    if (mode.punctured && i % 3 == 2) interleaved.push_back(kErasure);
  }
  // Deinterleave: row j (fed by output bit j) delays (31 - j) * inc groups and
  // output bit i reads row 9i mod 32, so every bit is delayed by 31 * inc groups.
  const int inc = mode.interleaverInc;
  std::array<std::deque<uint8_t>, 32> rows;
  for (int j = 0; j < 32; ++j) rows[j].assign(std::size_t(31 - j) * inc, kErasure);
  std::vector<uint8_t> coded;
  std::array<uint8_t, 32> rowOut{};
  for (std::size_t g = 0; g + 32 <= interleaved.size(); g += 32) {
    for (int j = 0; j < 32; ++j) {
      rows[j].push_back(interleaved[g + j]);
      rowOut[j] = rows[j].front();
      rows[j].pop_front();
    }
    for (int i = 0; i < 32; ++i) coded.push_back(rowOut[Interleaver::rowOf(i)]);
  }
  coded.erase(coded.begin(), coded.begin() + std::min<std::size_t>(coded.size(), mode.interleaverDelayBits()));
  // Undo repetition: average the copies of each coded pair.
  std::vector<uint8_t> pairs;
  const std::size_t span = 2 * std::size_t(mode.repetition);
  for (std::size_t i = 0; i + span <= coded.size(); i += span)
    for (int c = 0; c < 2; ++c) {
      int sum = 0;
      for (int k = 0; k < mode.repetition; ++k) sum += coded[i + 2 * k + c];
      pairs.push_back(uint8_t(sum / mode.repetition));
    }
  // Viterbi (libfec), in its LSB-first convention: 0x6D for G1, 0x4F for G2.
  const int npairs = int(pairs.size() / 2);
  if (npairs <= 6) return {};
  const int nbits = npairs - 6;  // the last 6 are the zero tail that ends in state 0
  int polys[2] = {0x6D, 0x4F};
  set_viterbi27_polynomial(polys);
  void* vp = create_viterbi27(nbits);
  if (!vp) throw std::runtime_error("libfec: create_viterbi27 failed");
  init_viterbi27(vp, 0);
  update_viterbi27_blk(vp, pairs.data(), npairs);
  std::vector<uint8_t> packedMsbFirst((nbits + 7) / 8, 0);
  chainback_viterbi27(vp, packedMsbFirst.data(), unsigned(nbits), 0);
  delete_viterbi27(vp);
  std::vector<uint8_t> bits;
  for (int i = 0; i < nbits; ++i) bits.push_back((packedMsbFirst[i / 8] >> (7 - i % 8)) & 1);
  return pack(bits);
}

}  // namespace scabench::s4285::testing
