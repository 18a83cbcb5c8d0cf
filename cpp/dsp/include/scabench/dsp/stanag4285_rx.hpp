// The STANAG 4285 receiver, an HF channel to test it on, and what measures
// it: the one place where the receiving side's processing lives (the SCA
// components in cpp/components/stanag4285.cpp and the plain program
// cpp/programs/s4285.cpp run these blocks). No CORBA here.
//
//   audio -> Channel (multipath, AWGN) -> audio
//   audio -> Demodulator: mix down from 1800 Hz, RRC matched filter,
//            preamble correlation (timing and frame start) -> symbols, 1 per
//            symbol, whole frames from a preamble on
//         -> Equaliser: decision-feedback, RLS-trained on the preamble and
//            probes; descrambling; max-log soft demapping -> LLRs
//         -> Decoder: depuncturing, deinterleaving, repetition combining,
//            K=7 Viterbi (libfec), bits -> bytes (LSB first)
//         -> BerCounter (against the source's bytes, regenerated)
//   audio -> Monitor: power and spectrum (FFTW)
//
// Every block is a stream processor, as the transmitter's: state (filters,
// equaliser taps, deinterleaver lines, survivor paths) carries across calls,
// so frames must arrive in order. A call may produce nothing: the
// demodulator waits for a preamble, the equaliser for the next frame's first
// symbols, the decoder for its traceback depth.
//
// Soft bits are log-likelihood ratios ln(P(bit=1)/P(bit=0)): positive means 1.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scabench/dsp/stanag4285.hpp"

namespace scabench::s4285 {

// --- the channel

// Mean square of the transmitter's PCM (PCM units squared): the signal
// power the channel's SNR is measured against. Computed from the transmit
// filter's taps for unit-power random symbols.
double nominalAudioPower();

// The noise bandwidth SNR is stated in: a 3 kHz audio channel. SNR = signal
// power / noise power within 3 kHz; the noise is white over the whole
// 0..4800 Hz band. Per symbol, Es/N0 = SNR + 10 log10(3000/2400) dB.
constexpr double kSnrBandHz = 3000.0;
double esN0Db(double snrDb);

// A static multipath profile: paths with a delay (audio samples at 9600/s)
// and a complex gain (applied to the analytic signal, so a phase turns the
// carrier), total power 1.
struct Path {
  int delaySamples;
  cfloat gain;
};
std::vector<std::string> multipathProfileNames();  // "none", "two-path", "harsh"
// Throws std::invalid_argument naming the valid profiles.
std::vector<Path> multipathProfile(const std::string& name);

// Static multipath, then white Gaussian noise at `snrDb` (none if empty),
// seeded: the same seed gives the same noise. `leadSamples` of silence come
// out before the signal (an unknown start for the receiver). Audio in, as
// much audio out.
class Channel {
 public:
  Channel(const std::string& profile, std::optional<double> snrDb, uint64_t seed, int leadSamples = 0);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  void process(const int16_t* audio, std::size_t n, std::vector<int16_t>& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// --- the receiver

// Audio to symbols: down-conversion from 1800 Hz (liquid-dsp NCO), RRC
// matched filter (liquid-dsp), and frame synchronisation: the preamble's
// correlation over the first 1184 sample positions (a frame and 40 symbols,
// so the true start beats the preamble's 31-symbol sidelobes) gives the
// sampling phase and the frame start: the strongest path's, or an earlier
// path's up to 12 symbols before it if that is at least half as strong. Input with no preamble whose
// normalised correlation reaches kLockThreshold is dropped a frame at a time.
// Output: 256 symbols per frame, frame-aligned (position 0 is a preamble's
// first symbol), one symbol per symbol period.
class Demodulator {
 public:
  // |c|^2 / (energy * 80): 1 for a clean preamble, about 1/80 for noise alone.
  static constexpr float kLockThreshold = 0.12f;
  Demodulator();
  ~Demodulator();
  Demodulator(const Demodulator&) = delete;
  Demodulator& operator=(const Demodulator&) = delete;
  void process(const int16_t* audio, std::size_t n, std::vector<cfloat>& symbols);
  bool locked() const;
  // Samples of input (matched filter's output) before the first frame's first symbol; -1 before lock.
  int64_t frameStartSample() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Symbols to soft bits: a decision-feedback equaliser (12 feed-forward taps,
// 3 symbols behind to 8 ahead; 10 feedback taps on past symbols) trained by
// RLS (no forgetting; a small random walk of the taps keeps it adaptable) on
// the known symbols only (preamble and probes, 128 of each frame's 256; a
// static channel needs no decision-directed tracking); data symbols
// feed back as decisions. Then descrambling and max-log soft demapping
// against the mode's constellation, with the noise variance measured on the
// frame's probes. Takes whole frames; gives a frame's LLRs once the next
// frame's first symbols are in (one frame behind).
class Equaliser {
 public:
  explicit Equaliser(const Mode& mode);
  ~Equaliser();
  Equaliser(const Equaliser&) = delete;
  Equaliser& operator=(const Equaliser&) = delete;
  void process(const cfloat* symbols, std::size_t n, std::vector<float>& softBits);
  // Of the last frame equalised: mean |error|^2 on its probes (the LLRs' noise variance).
  double noiseVariance() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Soft bits to user bytes: depuncturing (the dropped 4th bit of 2400 bps
// becomes an LLR of 0), the inverse convolutional interleaver (row j delays
// (31 - j) * inc groups, so every bit is delayed by 31 * inc groups:
// Mode::interleaverDelayBits()), repetition combining (LLRs of the copies
// summed), and libfec's K=7 Viterbi decoder over a sliding window
// (traceback depth kTracebackBits). The deinterleaver's first
// interleaverDelayBits() bits are its initial fill, not data: they are
// dropped, so the first byte out is the transmitter's first byte in.
// Uncoded modes: hard decisions.
class Decoder {
 public:
  static constexpr int kTracebackBits = 96;
  explicit Decoder(const Mode& mode);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  void process(const float* softBits, std::size_t n, std::vector<uint8_t>& bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole receiver in one object: audio in, user bytes out.
class Receiver {
 public:
  explicit Receiver(const Mode& mode);
  void process(const int16_t* audio, std::size_t n, std::vector<uint8_t>& bytes);
  const Demodulator& demodulator() const { return demodulator_; }
  const Equaliser& equaliser() const { return equaliser_; }

 private:
  Demodulator demodulator_;
  Equaliser equaliser_;
  Decoder decoder_;
  std::vector<cfloat> symbols_;
  std::vector<float> soft_;
};

// Frames the transmitter must send after a payload for the receiver to give
// all of it back (with a channel lead under 960 samples, 100 ms): a frame while
// the demodulator locks, one for the equaliser's look-ahead, the
// deinterleaver's delay and the Viterbi decoder's traceback, rounded up.
int receiverLatencyFrames(const Mode& mode);

// --- measuring

// Bit errors against the source: regenerates the ByteSource's bytes from the
// mode and seed and compares the received stream with them byte for byte
// from the first (the decoder has already removed its delay, so the
// received stream's byte k is the source's byte k).
class BerCounter {
 public:
  BerCounter(const Mode& mode, uint64_t seed) : source_(mode, seed) {}
  void process(const uint8_t* bytes, std::size_t n);
  uint64_t bits() const { return bits_; }
  uint64_t errors() const { return errors_; }
  double ber() const { return bits_ ? double(errors_) / double(bits_) : 0.0; }

 private:
  ByteSource source_;
  std::vector<uint8_t> expected_;
  std::size_t used_ = 0;
  uint64_t bits_ = 0, errors_ = 0;
};

// Power and spectrum of audio: per 1024-sample block (a frame), the mean
// square and a Hann-windowed power spectrum (FFTW), averaged over the blocks.
class Monitor {
 public:
  static constexpr int kBlock = kAudioSamplesPerFrame;
  Monitor();
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  void process(const int16_t* audio, std::size_t n);
  uint64_t blocks() const;
  double meanPower() const;  // PCM units squared
  double peakFrequencyHz() const;
  std::vector<double> spectrum() const;  // kBlock/2 + 1 bins, averaged power

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scabench::s4285
