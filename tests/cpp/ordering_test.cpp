// The reorder buffer and the flow-control bookkeeping, without an ORB.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "scabench/runtime/flow.hpp"
#include "scabench/runtime/link_window.hpp"
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

// Whoever feeds the buffer is asked for more when next() leaves `low` or
// fewer held, and before next() waits (for an empty buffer, or a gap).
TEST(Resequencer, AsksItsFeederForMoreWhenItRunsLow) {
  Resequencer<int> r(8, 1s);
  std::atomic<int> asked{0};
  r.setRunningLow(2, [&] { ++asked; });
  for (int n = 0; n < 5; ++n) r.offer(uint64_t(n), n);
  EXPECT_EQ(r.next().value(), 0);  // 4 left
  EXPECT_EQ(r.next().value(), 1);  // 3 left
  EXPECT_EQ(asked.load(), 0);
  EXPECT_EQ(r.next().value(), 2);  // 2 left
  EXPECT_EQ(asked.load(), 1);
  EXPECT_EQ(r.next().value(), 3);
  EXPECT_EQ(r.next().value(), 4);
  EXPECT_EQ(asked.load(), 3);
  // Empty: it asks before it waits, and hands on what comes then.
  std::thread feeder([&] {
    while (asked.load() < 4) std::this_thread::yield();
    r.offer(6, 6);
    r.offer(5, 5);
  });
  EXPECT_EQ(r.next().value(), 5);
  EXPECT_EQ(r.next().value(), 6);
  feeder.join();
  // A gap: it asks before it waits for the missing number.
  r.offer(8, 8);
  const int before = asked.load();
  std::thread filler([&] {
    while (asked.load() <= before) std::this_thread::yield();
    r.offer(7, 7);
  });
  EXPECT_EQ(r.next().value(), 7);
  filler.join();
  EXPECT_EQ(r.next().value(), 8);
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

// A number far ahead of what the buffer waits for is refused at once: it is
// not filed, so it can neither make the releaser skip the real packets up to
// it nor make its caller wait for room.
TEST(Resequencer, RefusesANumberBeyondItsWindowWithoutWaiting) {
  Resequencer<int> r(2, 20ms, /*window=*/8);
  r.offer(1, 1);
  r.offer(2, 2);  // full, waiting for 0
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(r.offer(1'000'000, 9), Resequencer<int>::Offer::Refused);
  EXPECT_EQ(r.offer(UINT64_MAX - 1, 9), Resequencer<int>::Offer::Refused);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);  // would block forever if it waited for room
  EXPECT_EQ(r.held(), 2u);
  r.offer(0, 0);
  for (int expected = 0; expected < 3; ++expected) EXPECT_EQ(r.next().value(), expected);
  // The window moves with the releaser: 3 + 7 is inside now, 3 + 8 is not.
  EXPECT_EQ(r.offer(3 + 8, 11), Resequencer<int>::Offer::Refused);
  EXPECT_EQ(r.offer(3 + 7, 10), Resequencer<int>::Offer::Accepted);
  const auto s = r.stats();
  EXPECT_EQ(s.refused, 3u);
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_EQ(s.late, 0u);
}

TEST(LinkWindow, AdvancesOnlyOverAContiguousPrefix) {
  LinkWindow w(16);
  EXPECT_EQ(w.finish(1), 0u);
  EXPECT_EQ(w.finish(3), 0u);
  EXPECT_EQ(w.finish(0), 2u);
  EXPECT_EQ(w.finish(2), 4u);
  EXPECT_EQ(w.finish(4, 3), 7u);  // a skipped range finishes at once
  EXPECT_EQ(w.finish(1), 7u);     // old news changes nothing
}

TEST(LinkWindow, PlacesNumbersBehindInsideOrAheadOfItsWindow) {
  LinkWindow w(8);
  EXPECT_EQ(w.place(0), LinkWindow::Place::Inside);
  EXPECT_EQ(w.place(7), LinkWindow::Place::Inside);
  EXPECT_EQ(w.place(8), LinkWindow::Place::Ahead);
  EXPECT_EQ(w.place(UINT64_MAX), LinkWindow::Place::Ahead);
  w.finish(0, 3);
  w.finish(5);
  EXPECT_EQ(w.place(1), LinkWindow::Place::Behind);  // below the prefix
  EXPECT_EQ(w.place(5), LinkWindow::Place::Behind);  // finished, ahead of a gap
  EXPECT_EQ(w.place(4), LinkWindow::Place::Inside);
  EXPECT_EQ(w.place(10), LinkWindow::Place::Inside);  // the window moved with the prefix
  EXPECT_EQ(w.place(11), LinkWindow::Place::Ahead);
}

// A range reaching to 2^64 (what a skip up to a bogus number would ask for)
// costs at most the window: the prefix stops at the window's end and nothing
// beyond it is remembered.
TEST(LinkWindow, AHugeRangeIsCutAtTheWindow) {
  LinkWindow w(64);
  EXPECT_EQ(w.finish(0, UINT64_MAX), 64u);
  EXPECT_EQ(w.finish(150, UINT64_MAX), 64u);  // wholly beyond the window [64, 128): ignored
  EXPECT_EQ(w.place(127), LinkWindow::Place::Inside);
  EXPECT_EQ(w.place(150), LinkWindow::Place::Ahead);
  EXPECT_EQ(w.finish(64, 64), 128u);  // the bitmap is reused as the window moves
  EXPECT_EQ(w.place(100), LinkWindow::Place::Behind);
  EXPECT_EQ(w.place(150), LinkWindow::Place::Inside);  // the ignored range left no trace
}

TEST(LinkWindow, RefusesAnEmptyWindow) { EXPECT_THROW(LinkWindow(0), std::invalid_argument); }

// Whether the gate let the next packet go (its link sequence drawn from `next`).
bool admitted(FlowGate& gate, std::atomic<uint64_t>& next) { return gate.admit(next).has_value(); }

TEST(FlowGate, CreditsBlockTheSenderUntilAcknowledged) {
  FlowGate gate(2);
  std::atomic<uint64_t> next{0};  // the port's link sequences, drawn by the gate
  EXPECT_TRUE(admitted(gate, next));
  EXPECT_TRUE(admitted(gate, next));
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = admitted(gate, next); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);
  gate.acknowledge(1);
  sender.join();
  EXPECT_TRUE(sent);
  EXPECT_EQ(gate.stalls(), 1u);
}

TEST(FlowGate, SuspendResumeFollowsTheNewestEpoch) {
  FlowGate gate(0);
  std::atomic<uint64_t> next{0};  // the port's link sequences, drawn by the gate
  gate.issue(next);
  gate.issue(next);  // two packets out: the receiver can be at epoch 4 at most
  gate.setSuspended(true, 2);
  gate.setSuspended(false, 1);  // older, overtaken: ignored
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = admitted(gate, next); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);
  gate.setSuspended(false, 3);
  sender.join();
  EXPECT_TRUE(sent);
}

TEST(FlowGate, CloseReleasesABlockedSender) {
  FlowGate gate(1);
  std::atomic<uint64_t> next{0};  // the port's link sequences, drawn by the gate
  admitted(gate, next);
  std::atomic<int> result{-1};
  std::thread sender([&] { result = admitted(gate, next) ? 1 : 0; });
  std::this_thread::sleep_for(20ms);
  gate.close();
  sender.join();
  EXPECT_EQ(result, 0);
}

// An acknowledgement can only cover what was sent: one beyond it would grant
// credits past the window, so it is refused, counted and ignored.
TEST(FlowGate, RefusesAnAcknowledgementOfPacketsNotSent) {
  int refusals = 0;
  FlowGate gate(2, [&] { ++refusals; });
  std::atomic<uint64_t> next{0};
  EXPECT_TRUE(admitted(gate, next));
  EXPECT_TRUE(admitted(gate, next));
  gate.acknowledge(UINT64_MAX);  // a bogus grant of everything
  gate.acknowledge(3);           // more than the two sent
  EXPECT_EQ(gate.refused(), 2u);
  EXPECT_EQ(refusals, 2);
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = admitted(gate, next); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);   // still no credit for link 2
  gate.acknowledge(2);  // the truth: 0 and 1 are done
  sender.join();
  EXPECT_TRUE(sent);
  EXPECT_EQ(gate.refused(), 2u);
}

// Numbers used without waiting (end of stream, a packet dropped on purpose)
// may be acknowledged too: the receiver finishes or skips them.
TEST(FlowGate, NumbersIssuedWithoutWaitingMayBeAcknowledged) {
  FlowGate gate(4);
  std::atomic<uint64_t> next{0};  // the port's link sequences, drawn by the gate
  admitted(gate, next);
  gate.issue(next);  // dropped on purpose
  gate.issue(next);  // end of stream
  gate.acknowledge(3);
  EXPECT_EQ(gate.refused(), 0u);
}

// A suspend signal from an epoch the receiver cannot have reached (at most
// two a packet) is refused: taken, it would make every true signal look stale.
TEST(FlowGate, RefusesASuspendSignalFromTooFarAhead) {
  FlowGate gate(0);
  std::atomic<uint64_t> next{0};  // the port's link sequences, drawn by the gate
  admitted(gate, next);           // one packet issued: epochs 1 and 2 are possible
  gate.setSuspended(true, UINT64_MAX);
  gate.setSuspended(true, 3);
  EXPECT_EQ(gate.refused(), 2u);
  EXPECT_TRUE(admitted(gate, next));  // not suspended
  gate.setSuspended(true, 1);         // a true signal still works
  std::atomic<bool> sent{false};
  std::thread sender([&] { sent = admitted(gate, next); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(sent);
  gate.setSuspended(false, 2);
  sender.join();
  EXPECT_TRUE(sent);
}

// Whether a sender waiting at the gate (the one packet issued so far keeps
// it waiting) was let go by halt(): refused, and with no link sequence drawn.
bool haltRefusesTheWaitingSender(FlowGate& gate, std::atomic<uint64_t>& next) {
  std::promise<bool> result;
  std::thread sender([&] { result.set_value(admitted(gate, next)); });
  while (gate.stalls() == 0) std::this_thread::yield();  // it waits
  gate.halt();
  sender.join();
  return !result.get_future().get() && next.load() == 1;
}

// stop() on the sending component ends a wait for credits at once (before,
// only an acknowledgement or a disconnect did): the packet is refused and
// draws no link sequence, so the receiver sees no gap; after resume() the
// gate admits again.
TEST(FlowGate, HaltReleasesASenderWaitingForCreditsAndDrawsNothing) {
  FlowGate gate(1);
  std::atomic<uint64_t> next{0};
  EXPECT_TRUE(admitted(gate, next));
  EXPECT_TRUE(haltRefusesTheWaitingSender(gate, next));
  EXPECT_FALSE(admitted(gate, next));  // halted: none waits (no credit yet)
  gate.resume();
  gate.acknowledge(1);
  EXPECT_TRUE(admitted(gate, next));
  EXPECT_EQ(next.load(), 2u);
}

// The same for a sender its receiver suspended (watermarks).
TEST(FlowGate, HaltReleasesASuspendedSender) {
  FlowGate gate(0);
  std::atomic<uint64_t> next{0};
  EXPECT_TRUE(admitted(gate, next));
  gate.setSuspended(true, 1);
  EXPECT_TRUE(haltRefusesTheWaitingSender(gate, next));
}
