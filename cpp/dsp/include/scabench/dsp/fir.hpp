// A real FIR filter: float samples, N taps, y[n] = sum_k h[k] x[n-k], one
// multiply-add per tap and output sample. The filter keeps the last N-1
// inputs, so a stream cut into packets of any size gives the same output as
// one long block. No CORBA: the standalone FUNC program, the components and
// the calibration tool all run this code, so their functional work is equal.
//
// The inner loop runs along the block (for each tap, out[n..] += h * x[n..])
// in tiles that stay in L1, which the compiler vectorises; target_clones
// picks AVX-512, AVX2 or SSE2 at load time. Its cost is proportional to N*B,
// which the seed's synthetic load assumes (docs/architecture.md, "Granularity").
#pragma once

#include <cstddef>
#include <vector>

namespace scabench {

// A windowed-sinc low-pass of `taps` taps (Hamming window, cut-off at a
// quarter of the sample rate) scaled to unit gain at DC, so that a cascade of
// filters keeps the signal's size.
std::vector<float> lowpassTaps(std::size_t taps);

class FirFilter {
 public:
  explicit FirFilter(std::vector<float> taps);
  std::size_t taps() const { return reversed_.size(); }

  // Filters `count` samples from `in` into `out` (they may not overlap).
  void process(const float* in, float* out, std::size_t count);
  void reset();

 private:
  std::vector<float> reversed_;  // h[N-1] ... h[0]
  std::vector<float> buffer_;    // the last N-1 inputs, then the current block
};

// `filters` identical FIR filters in cascade, each with its own state: the
// seed's unit of functional load ("one FIR load") times `filters`.
class FirChain {
 public:
  FirChain(std::size_t filters, std::size_t taps);
  std::size_t filters() const { return stages_.size(); }

  // Runs the cascade over `count` samples; `out` receives the last filter's
  // output (with no filter, a copy of the input).
  void process(const float* in, float* out, std::size_t count);

 private:
  std::vector<FirFilter> stages_;
  std::vector<float> scratch_[2];
};

// The signal every synthetic source sends: sample i of every packet is
// 100 sin(0.01 i), as the producer has always sent.
float sourceSample(std::size_t i);

// The sink's check: the sum, in double and in arrival order, of every sample.
double accumulate(double sum, const float* samples, std::size_t count);

// Direct-form reference in double precision, for tests: y[n] = sum h[k] x[n-k]
// with x[n] = 0 before the first sample.
std::vector<double> firReference(const std::vector<double>& taps, const std::vector<double>& x);

}  // namespace scabench
