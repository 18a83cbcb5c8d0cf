// A port's traffic, counted on every call: a few relaxed atomic adds, cheap
// enough to be always on. BulkIO's `statistics` answers from it (a provides
// port's, and a uses port's per connection: bulkio_port.hpp), and anything
// else that wants to watch a port as it runs may read it: a snapshot is
// taken without a lock, each field on its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace scabench {

struct PortTraffic {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> elements{0};
  std::atomic<uint64_t> bitsPerElement{0};  // the port's, the same at every call
  // The worker queue's fill at each call, in percent of its depth, summed
  // (0 for a port without a queue): averageQueueDepth is its mean.
  std::atomic<uint64_t> queuePercentSum{0};
  std::atomic<int64_t> firstCallNs{0};
  std::atomic<int64_t> lastCallNs{0};

  // Two read-modify-writes a call, three without a queue: each locked
  // instruction costs tens of ns on a VM, so what can be a plain store is
  // one (docs/findings/cost-of-looking.md).
  void count(uint64_t elementCount, uint64_t bits, int64_t nowNs, uint64_t queuePercent = 0) {
    if (firstCallNs.load(std::memory_order_relaxed) == 0) {
      int64_t unset = 0;
      firstCallNs.compare_exchange_strong(unset, nowNs, std::memory_order_relaxed);
    }
    lastCallNs.store(nowNs, std::memory_order_relaxed);
    bitsPerElement.store(bits, std::memory_order_relaxed);
    calls.fetch_add(1, std::memory_order_relaxed);
    elements.fetch_add(elementCount, std::memory_order_relaxed);
    if (queuePercent != 0) queuePercentSum.fetch_add(queuePercent, std::memory_order_relaxed);
  }

  // The counts and the rates over the traffic so far: from the first call
  // to the last (no rate before a second call), and how long ago the last
  // call was (0 before any).
  struct Snapshot {
    uint64_t calls = 0, elements = 0, bits = 0;
    double elementsPerSecond = 0, bitsPerSecond = 0, callsPerSecond = 0;
    double averageQueueDepth = 0;  // percent
    double secondsSinceLastCall = 0;
  };
  Snapshot snapshot(int64_t nowNs) const {
    Snapshot s;
    s.calls = calls.load(std::memory_order_relaxed);
    s.elements = elements.load(std::memory_order_relaxed);
    s.bits = s.elements * bitsPerElement.load(std::memory_order_relaxed);
    const int64_t first = firstCallNs.load(std::memory_order_relaxed);
    const int64_t last = lastCallNs.load(std::memory_order_relaxed);
    if (s.calls == 0) return s;
    s.averageQueueDepth = double(queuePercentSum.load(std::memory_order_relaxed)) / double(s.calls);
    s.secondsSinceLastCall = double(std::max<int64_t>(nowNs - last, 0)) * 1e-9;
    const double span = double(last - first) * 1e-9;
    if (s.calls > 1 && span > 0) {
      // The calls after the first over the time they took.
      s.callsPerSecond = double(s.calls - 1) / span;
      s.elementsPerSecond = double(s.elements) * s.callsPerSecond / double(s.calls);
      s.bitsPerSecond = double(s.bits) * s.callsPerSecond / double(s.calls);
    }
    return s;
  }
};

}  // namespace scabench
