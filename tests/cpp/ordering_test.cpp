// The reorder buffer and the flow-control bookkeeping, without an ORB.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/resequencer.hpp"

using namespace scabench;
using namespace std::chrono_literals;

TEST(Resequencer, ReleasesShuffledOffersInOrder) {
  Resequencer<int> r(1000, 1s);
  std::vector<int> numbers(200);
  std::iota(numbers.begin(), numbers.end(), 0);
  std::shuffle(numbers.begin(), numbers.end(), std::mt19937(7));
  for (int n : numbers) EXPECT_EQ(r.offer(uint64_t(n), n), Resequencer<int>::Offer::Accepted);
  for (int expected = 0; expected < 200; ++expected) EXPECT_EQ(r.next().value(), expected);
  EXPECT_EQ(r.stats().peakHeld, 200u);
  EXPECT_EQ(r.stats().skipped, 0u);
}

TEST(Resequencer, SkipsAGapAfterTheTimeoutAndCountsTheLatecomer) {
  Resequencer<int> r(8, 20ms);
  r.offer(0, 0);
  r.offer(2, 2);  // 1 is missing
  EXPECT_EQ(r.next().value(), 0);
  uint64_t skippedFirst = 99, skippedCount = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(r.next([&](uint64_t first, uint64_t count) { skippedFirst = first, skippedCount = count; }).value(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 15ms);
  EXPECT_EQ(skippedFirst, 1u);
  EXPECT_EQ(skippedCount, 1u);
  EXPECT_EQ(r.offer(1, 1), Resequencer<int>::Offer::Late);
  EXPECT_EQ(r.offer(2, 2), Resequencer<int>::Offer::Duplicate);
  r.offer(3, 3);
  EXPECT_EQ(r.offer(3, 3), Resequencer<int>::Offer::Duplicate);
  const auto s = r.stats();
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(s.late, 1u);
  EXPECT_EQ(s.duplicates, 2u);
}

TEST(Resequencer, HoldsAtMostItsCapacityButAdmitsGapFillers) {
  Resequencer<int> r(2, 10s);
  r.offer(1, 1);
  r.offer(2, 2);  // full, waiting for 0
  std::atomic<bool> offered{false};
  std::thread beyond([&] {
    r.offer(3, 3);  // must wait for room
    offered = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(offered);
  EXPECT_EQ(r.held(), 2u);
  EXPECT_EQ(r.offer(0, 0), Resequencer<int>::Offer::Accepted);  // fills the gap although full
  for (int expected = 0; expected < 4; ++expected) EXPECT_EQ(r.next().value(), expected);
  beyond.join();
  EXPECT_TRUE(offered);
  EXPECT_LE(r.stats().peakHeld, 3u);
}

TEST(Resequencer, CloseDrainsWhatIsHeldSkippingGaps) {
  Resequencer<int> r(8, 10s);
  r.offer(0, 0);
  r.offer(5, 5);
  r.close();
  EXPECT_EQ(r.next().value(), 0);
  EXPECT_EQ(r.next().value(), 5);
  EXPECT_FALSE(r.next().has_value());
  EXPECT_EQ(r.stats().skipped, 4u);
  EXPECT_EQ(r.offer(6, 6), Resequencer<int>::Offer::Closed);
}

TEST(Resequencer, RefusesAZeroCapacity) { EXPECT_THROW(Resequencer<int>(0, 1ms), std::invalid_argument); }

TEST(AckTracker, AdvancesOnlyOverAContiguousPrefix) {
  AckTracker t;
  EXPECT_EQ(t.finish(1), 0u);
  EXPECT_EQ(t.finish(3), 0u);
  EXPECT_EQ(t.finish(0), 2u);
  EXPECT_EQ(t.finish(2), 4u);
  EXPECT_EQ(t.finish(4, 3), 7u);  // a skipped range finishes at once
  EXPECT_EQ(t.finish(1), 7u);     // old news changes nothing
}

TEST(FlowGate, CreditsBlockTheSenderUntilAcknowledged) {
  FlowGate gate(2);
  EXPECT_TRUE(gate.admit(0));
  EXPECT_TRUE(gate.admit(1));
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = gate.admit(2); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);
  gate.acknowledge(1);
  sender.join();
  EXPECT_TRUE(sent);
  EXPECT_EQ(gate.stalls(), 1u);
}

TEST(FlowGate, SuspendResumeFollowsTheNewestEpoch) {
  FlowGate gate(0);
  gate.setSuspended(true, 2);
  gate.setSuspended(false, 1);  // older, overtaken: ignored
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = gate.admit(0); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);
  gate.setSuspended(false, 3);
  sender.join();
  EXPECT_TRUE(sent);
}

TEST(FlowGate, CloseReleasesABlockedSender) {
  FlowGate gate(1);
  gate.admit(0);
  std::atomic<int> result{-1};
  std::thread sender([&] { result = gate.admit(1) ? 1 : 0; });
  std::this_thread::sleep_for(20ms);
  gate.close();
  sender.join();
  EXPECT_EQ(result, 0);
}
