// The FIR filter against a direct-form reference in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "scabench/dsp/fir.hpp"

using namespace scabench;

namespace {

std::vector<float> noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

std::vector<double> toDouble(const std::vector<float>& v) { return {v.begin(), v.end()}; }

void expectClose(const std::vector<float>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tolerance) << "sample " << i;
}

}  // namespace

TEST(Fir, LowpassHasUnitGainAtDc) {
  for (std::size_t taps : {1, 2, 10, 51, 1000}) {
    const auto h = lowpassTaps(taps);
    EXPECT_NEAR(std::accumulate(h.begin(), h.end(), 0.0), 1.0, 1e-5) << taps;
  }
}

TEST(Fir, MatchesTheDirectFormReference) {
  // Taps from 1 to past the kernel's tile (256), blocks that are not a multiple of it.
  for (std::size_t taps : {1, 3, 10, 50, 300}) {
    const auto h = lowpassTaps(taps);
    const auto x = noise(1234, unsigned(taps));
    FirFilter filter(h);
    std::vector<float> y(x.size());
    filter.process(x.data(), y.data(), x.size());
    expectClose(y, firReference(toDouble(h), toDouble(x)), 1e-5);
  }
}

TEST(Fir, PacketsGiveTheSameOutputAsOneBlock) {
  const auto h = lowpassTaps(37);
  const auto x = noise(5000, 7);
  FirFilter whole(h), pieces(h);
  std::vector<float> one(x.size()), many(x.size());
  whole.process(x.data(), one.data(), x.size());
  // Packets shorter than the filter, then longer: the history must carry over.
  std::size_t at = 0;
  for (std::size_t size : {5, 20, 36, 37, 100, 1000, 3802}) {
    pieces.process(x.data() + at, many.data() + at, size);
    at += size;
  }
  ASSERT_EQ(at, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(one[i], many[i]) << "sample " << i;
}

TEST(Fir, ChainIsTheCascadeOfItsFilters) {
  const std::size_t taps = 12, filters = 9;
  const auto x = noise(2000, 3);
  std::vector<double> want = toDouble(x);
  const auto h = toDouble(lowpassTaps(taps));
  for (std::size_t i = 0; i < filters; ++i) want = firReference(h, want);
  FirChain chain(filters, taps);
  std::vector<float> y(x.size());
  chain.process(x.data(), y.data(), x.size());
  expectClose(y, want, 1e-4);
}

TEST(Fir, SplittingTheChainChangesNoBit) {
  // W11 runs nine one-filter chains where FUNC runs one nine-filter chain:
  // the same arithmetic in the same order, so the same bits.
  const auto x = noise(3000, 11);
  FirChain nine(9, 20);
  std::vector<float> once(x.size());
  std::vector<FirChain> ones;
  for (int i = 0; i < 9; ++i) ones.emplace_back(1, 20);
  for (int packet = 0; packet < 3; ++packet) {
    std::vector<float> a(x.begin() + packet * 1000, x.begin() + (packet + 1) * 1000), b(1000);
    nine.process(a.data(), once.data() + packet * 1000, 1000);
    for (auto& c : ones) {
      c.process(a.data(), b.data(), 1000);
      a.swap(b);
    }
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(once[packet * 1000 + i], a[i]);
  }
}

TEST(Fir, NoFilterIsACopy) {
  FirChain none(0, 10);
  const auto x = noise(100, 1);
  std::vector<float> y(x.size());
  none.process(x.data(), y.data(), x.size());
  EXPECT_EQ(x, y);
}

TEST(Fir, SourceAndChecksum) {
  EXPECT_FLOAT_EQ(sourceSample(0), 0.0f);
  EXPECT_NEAR(sourceSample(157), 100.0 * std::sin(1.57), 1e-4);
  const std::vector<float> v = {1.5f, 2.5f, -1.0f};
  EXPECT_DOUBLE_EQ(accumulate(10.0, v.data(), v.size()), 13.0);
}
