// A port's latency so far, send to arrival, as a bounded histogram: fixed
// log-spaced bins, one relaxed atomic add per packet on the arrival time the
// port has already read, and quantiles worked out only when someone asks
// (BulkIO's statistics: the latency_* keywords, docs/reference/bulkio.md).
//
// The bins are the live view's (python/scabench/latency_bins.py, the one
// definition; these constants mirror it): 20 per decade from 1 µs to
// 1000 s, edges 1 µs * 10^(k/20) for k = 0..180, plus a bin below the first
// edge and one above the last. A latency falls in the bin whose upper edge
// is the first edge not below it, as numpy's searchsorted places it.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace scabench {

class LatencyHistogram {
 public:
  static constexpr int kPerDecade = 20;
  static constexpr int kDecades = 9;
  static constexpr double kFirstEdgeNs = 1000.0;  // 1 µs
  static constexpr std::size_t kEdges = std::size_t(kDecades * kPerDecade + 1);
  static constexpr std::size_t kBins = kEdges + 1;  // below the first edge, between edges, above the last

  // One packet's latency (arrival - send, ns; a negative one counts as below 1 µs).
  void add(int64_t latencyNs) { bins_[binOf(latencyNs)].fetch_add(1, std::memory_order_relaxed); }

  // The bin of a latency: how many edges lie below it. A branch-free binary
  // search over the 181 edges (eight steps), so that its cost does not
  // depend on the latency.
  static std::size_t binOf(int64_t latencyNs) {
    const double x = double(latencyNs);
    const double* base = edges().data();
    std::size_t n = kEdges;
    while (n > 1) {
      const std::size_t half = n / 2;
      base = base[half] < x ? base + half : base;
      n -= half;
    }
    return std::size_t(base - edges().data()) + (*base < x ? 1 : 0);
  }
  // A bin's upper edge in ns, rounded up: the first edge's for the bin
  // below it; for the bin above the last edge (beyond 1000 s), the last
  // edge, a floor rather than a bound.
  static int64_t upperEdgeNs(std::size_t bin) { return int64_t(std::ceil(edges()[bin < kEdges ? bin : kEdges - 1])); }

  struct Summary {
    uint64_t count = 0;
    // Bin resolution: the upper edge of the bin the quantile falls in (at
    // most 12 % above the latency); 0 while count is 0.
    int64_t p50Ns = 0, p99Ns = 0, maxNs = 0;
  };
  // Read bin by bin without a lock while packets are counted: the count and
  // the quantiles are of the same bins as read.
  Summary summary() const {
    std::array<uint64_t, kBins> counts{};
    Summary s;
    for (std::size_t i = 0; i < kBins; ++i) s.count += counts[i] = bins_[i].load(std::memory_order_relaxed);
    if (s.count == 0) return s;
    // The q-th quantile is the value of rank ceil(q * count) (1-based).
    auto at = [&](uint64_t rank) {
      uint64_t seen = 0;
      for (std::size_t i = 0; i < kBins; ++i)
        if ((seen += counts[i]) >= rank) return upperEdgeNs(i);
      return upperEdgeNs(kBins - 1);
    };
    s.p50Ns = at((s.count + 1) / 2);
    s.p99Ns = at((99 * s.count + 99) / 100);
    s.maxNs = at(s.count);
    return s;
  }

  static const std::array<double, kEdges>& edges() {
    static const std::array<double, kEdges> e = [] {
      std::array<double, kEdges> out{};
      for (std::size_t k = 0; k < kEdges; ++k) out[k] = kFirstEdgeNs * std::pow(10.0, double(k) / kPerDecade);
      return out;
    }();
    return e;
  }

 private:
  std::array<std::atomic<uint64_t>, kBins> bins_{};
};

}  // namespace scabench
