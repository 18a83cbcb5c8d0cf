#include "scabench/dsp/fir.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace scabench {

namespace {

constexpr std::size_t kTile = 256;  // outputs per tile: 1 KiB of accumulators, in L1

// out[n] = sum_j rev[j] * x[n + j], n < count, j < taps.
__attribute__((target_clones("avx512f", "avx2", "default"))) void firKernel(const float* __restrict x,
                                                                            const float* __restrict rev,
                                                                            float* __restrict out, std::size_t taps,
                                                                            std::size_t count) {
  for (std::size_t n0 = 0; n0 < count; n0 += kTile) {
    const std::size_t m = std::min(kTile, count - n0);
    float acc[kTile] = {};
    for (std::size_t j = 0; j < taps; ++j) {
      const float h = rev[j];
      const float* __restrict xs = x + n0 + j;
      for (std::size_t n = 0; n < m; ++n) acc[n] += h * xs[n];
    }
    std::memcpy(out + n0, acc, m * sizeof(float));
  }
}

}  // namespace

std::vector<float> lowpassTaps(std::size_t taps) {
  if (taps == 0) throw std::invalid_argument("a FIR filter needs at least one tap");
  std::vector<double> h(taps);
  const double mid = 0.5 * double(taps - 1), cutoff = 0.25;  // of the sample rate
  double sum = 0;
  for (std::size_t k = 0; k < taps; ++k) {
    const double t = double(k) - mid;
    const double sinc = t == 0 ? 2 * cutoff : std::sin(2 * M_PI * cutoff * t) / (M_PI * t);
    const double window = taps == 1 ? 1.0 : 0.54 - 0.46 * std::cos(2 * M_PI * double(k) / double(taps - 1));
    h[k] = sinc * window;
    sum += h[k];
  }
  std::vector<float> out(taps);
  for (std::size_t k = 0; k < taps; ++k) out[k] = float(h[k] / sum);
  return out;
}

FirFilter::FirFilter(std::vector<float> taps) : reversed_(taps.rbegin(), taps.rend()) {
  if (reversed_.empty()) throw std::invalid_argument("a FIR filter needs at least one tap");
  buffer_.assign(reversed_.size() - 1, 0.0f);
}

void FirFilter::reset() { buffer_.assign(reversed_.size() - 1, 0.0f); }

void FirFilter::process(const float* in, float* out, std::size_t count) {
  const std::size_t history = reversed_.size() - 1;
  buffer_.resize(history + count);
  std::memcpy(buffer_.data() + history, in, count * sizeof(float));
  firKernel(buffer_.data(), reversed_.data(), out, reversed_.size(), count);
  // Keep the last N-1 inputs for the next block.
  std::memmove(buffer_.data(), buffer_.data() + count, history * sizeof(float));
  buffer_.resize(history);
}

FirChain::FirChain(std::size_t filters, std::size_t taps) {
  const std::vector<float> h = lowpassTaps(taps);
  stages_.reserve(filters);
  for (std::size_t i = 0; i < filters; ++i) stages_.emplace_back(h);
}

void FirChain::process(const float* in, float* out, std::size_t count) {
  if (stages_.empty()) {
    std::memmove(out, in, count * sizeof(float));
    return;
  }
  for (auto& s : scratch_) s.resize(count);
  const float* src = in;
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    float* dst = i + 1 == stages_.size() ? out : scratch_[i % 2].data();
    stages_[i].process(src, dst, count);
    src = dst;
  }
}

float sourceSample(std::size_t i) { return float(100.0 * std::sin(0.01 * double(i))); }

double accumulate(double sum, const float* samples, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) sum += double(samples[i]);
  return sum;
}

std::vector<double> firReference(const std::vector<double>& taps, const std::vector<double>& x) {
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t n = 0; n < x.size(); ++n)
    for (std::size_t k = 0; k < taps.size() && k <= n; ++k) y[n] += taps[k] * x[n - k];
  return y;
}

}  // namespace scabench
