// Core pieces that carry no CORBA: work, queues, records.
#include <algorithm>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <vector>

#include "scabench/core/bounded_queue.hpp"
#include "scabench/core/clock.hpp"
#include "scabench/core/record_log.hpp"
#include "scabench/core/work.hpp"

using namespace scabench;

TEST(Work, CpuWorkConsumesThreadCpuTime) {
  const int64_t before = threadCpuNs();
  Work{WorkKind::Cpu, 3'000'000}.run();
  const int64_t used = threadCpuNs() - before;
  EXPECT_GE(used, 3'000'000);
  EXPECT_LT(used, 3'000'000 + 1'000'000);
}

TEST(Work, SleepWorkUsesNoCpu) {
  const int64_t cpu = threadCpuNs(), wall = monotonicNs();
  Work{WorkKind::Sleep, 5'000'000}.run();
  EXPECT_GE(monotonicNs() - wall, 5'000'000);
  EXPECT_LT(threadCpuNs() - cpu, 1'000'000);
}

TEST(Work, ParseRejectsUnknownKind) {
  EXPECT_EQ(parseWorkKind("cpu"), WorkKind::Cpu);
  EXPECT_THROW(parseWorkKind("spin"), std::invalid_argument);
}

TEST(BoundedQueue, KeepsFifoOrder) {
  BoundedQueue<int> q(4);
  for (int i = 0; i < 4; ++i) q.push(i);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(*q.pop(), i);
  EXPECT_EQ(q.deepest(), 4u);
}

TEST(BoundedQueue, FullQueueBlocksThePusherUntilAPop) {
  BoundedQueue<int> q(1);
  q.push(1);
  std::atomic<bool> pushed{false};
  std::thread t([&] {
    q.push(2);
    pushed = true;
  });
  usleep(50'000);
  EXPECT_FALSE(pushed);
  EXPECT_EQ(*q.pop(), 1);
  t.join();
  EXPECT_TRUE(pushed);
  EXPECT_EQ(*q.pop(), 2);
}

// With a resume level below capacity - 1, a pusher blocked on the full queue
// sleeps until the consumer has drained the queue to that level, not until
// the first free slot: one wake-up per burst instead of one per item.
TEST(BoundedQueue, BlockedPusherResumesOnlyAtTheResumeLevel) {
  BoundedQueue<int> q(4, 1);
  EXPECT_EQ(q.resumeAt(), 1u);
  for (int i = 0; i < 4; ++i) q.push(i);
  std::atomic<bool> pushed{false};
  std::thread t([&] {
    q.push(4);
    pushed = true;
  });
  while (q.blockedPushers() == 0) usleep(1'000);
  for (int expect = 0; expect < 2; ++expect) {  // 3, then 2 left: above the level
    EXPECT_EQ(*q.pop(), expect);
    usleep(50'000);
    EXPECT_FALSE(pushed) << "resumed with " << 3 - expect << " queued";
  }
  EXPECT_EQ(*q.pop(), 2);  // 1 left: the pusher resumes
  t.join();
  EXPECT_TRUE(pushed);
  for (int i = 3; i <= 4; ++i) EXPECT_EQ(*q.pop(), i);
}

// Several blocked producers (ORB threads of a pool) are let in one by one
// once the queue has drained, until it is full again; the rest keep waiting
// for the next drain.
TEST(BoundedQueue, DrainedQueueAdmitsBlockedPushersUntilFull) {
  BoundedQueue<int> q(2, 0);
  q.push(0);
  q.push(1);
  std::vector<std::thread> pushers;
  for (int i = 10; i < 13; ++i) pushers.emplace_back([&q, i] { q.push(i); });
  while (q.blockedPushers() < 3) usleep(1'000);
  q.pop();
  EXPECT_EQ(q.blockedPushers(), 3u);  // 1 left: above the resume level
  q.pop();
  while (q.blockedPushers() > 1) usleep(1'000);
  usleep(20'000);
  EXPECT_EQ(q.blockedPushers(), 1u);  // two went in, the queue is full again
  EXPECT_EQ(q.size(), 2u);
  std::vector<int> got{*q.pop(), *q.pop()};
  for (auto& t : pushers) t.join();
  got.push_back(*q.pop());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int>{10, 11, 12}));
}

// A push can name its own resume level (the in-port's worker_resume = "auto"
// gives a two-way caller d / 2 and a one-way caller d - 1): each blocked
// pusher resumes at its own level, not the queue's.
TEST(BoundedQueue, APushResumesAtTheLevelItNames) {
  for (const std::size_t level : {std::size_t{2}, std::size_t{3}}) {  // d / 2, d - 1 for d = 4
    BoundedQueue<int> q(4, 0);
    for (int i = 0; i < 4; ++i) q.push(i);
    std::atomic<bool> pushed{false};
    std::thread t([&] {
      q.push(4, level);
      pushed = true;
    });
    while (q.blockedPushers() == 0) usleep(1'000);
    std::size_t left = 4;
    while (left > level) {
      EXPECT_FALSE(pushed) << "resumed with " << left << " queued, level " << level;
      q.pop();
      --left;
      if (left > level) usleep(50'000);
    }
    t.join();  // resumes at its level
    EXPECT_TRUE(pushed);
    EXPECT_EQ(q.size(), level + 1);
  }
  BoundedQueue<int> q(4);
  EXPECT_THROW(
      {
        for (int i = 0; i < 4; ++i) q.push(i);
        q.push(4, 4);
      },
      std::invalid_argument);
}

// Blocked pushers wait in line: the first one's level decides when the queue
// refills, and they go in in the order they blocked.
TEST(BoundedQueue, BlockedPushersGoInInTheOrderTheyBlocked) {
  BoundedQueue<int> q(2, 0);
  q.push(0);
  q.push(1);
  std::vector<std::thread> pushers;
  for (int i = 10; i < 14; ++i) {
    pushers.emplace_back([&q, i] { q.push(i, i == 10 ? 1 : 0); });
    while (q.blockedPushers() < std::size_t(i - 9)) usleep(1'000);
  }
  q.pop();  // 1 left: the first in line resumes at 1, and only it fits
  while (q.blockedPushers() > 3) usleep(1'000);
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(*q.pop(), 1);
  EXPECT_EQ(*q.pop(), 10);  // empty: the next two go in
  for (int expect = 11; expect < 14; ++expect) EXPECT_EQ(*q.pop(), expect);
  for (auto& t : pushers) t.join();
}

TEST(BoundedQueue, ResumeLevelMustBeBelowCapacity) {
  EXPECT_THROW(BoundedQueue<int>(4, 4), std::invalid_argument);
  EXPECT_EQ(BoundedQueue<int>(4).resumeAt(), 3u);  // the first free slot
}

TEST(BoundedQueue, CloseDrainsThenEnds) {
  BoundedQueue<int> q(2);
  q.push(7);
  q.close();
  EXPECT_EQ(*q.pop(), 7);
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_FALSE(q.push(8));
  EXPECT_THROW(BoundedQueue<int>(0), std::invalid_argument);
}

TEST(RecordLog, WritesArrivalOrderToTheFile) {
  const std::string path = ::testing::TempDir() + "/records.rec";
  {
    RecordLog log(path, 3);
    for (uint64_t seq : {2, 0, 1, 3}) {  // the fourth overflows the capacity
      const uint64_t slot = log.arrive(seq, 100 + int64_t(seq));
      log.done(slot, 200 + int64_t(seq));
    }
    EXPECT_EQ(log.completedCount(), 3u);
  }
  std::ifstream in(path, std::ios::binary);
  RecordFileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  EXPECT_EQ(std::string(header.magic, 8), "SCABREC2");
  EXPECT_EQ(header.capacity, 3u);
  EXPECT_EQ(header.claimed.load(), 4u);
  PacketRecord r[3];
  in.read(reinterpret_cast<char*>(r), sizeof r);
  EXPECT_EQ(r[0].sequence, 2u);
  EXPECT_EQ(r[1].sequence, 0u);
  EXPECT_EQ(r[2].doneNs, 201);
}

TEST(RecordLog, TracksMostConcurrentUpcalls) {
  const std::string path = ::testing::TempDir() + "/conc.rec";
  RecordLog log(path, 1);
  log.enterUpcall();
  log.enterUpcall();
  log.leaveUpcall();
  log.enterUpcall();
  log.leaveUpcall();
  log.leaveUpcall();
  std::ifstream in(path, std::ios::binary);
  RecordFileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  EXPECT_EQ(header.maxConcurrent.load(), 2u);
}

TEST(PacketSchedule, SlotsAreAbsoluteAndDitherStaysInsideOneTick) {
  const PacketSchedule s{1'000'000'000, 25'000'000, 4'000'000};
  for (uint64_t i = 0; i < 1000; ++i) {
    const int64_t offset = s.dueNs(i) - (s.startNs + int64_t(i) * s.periodNs);
    ASSERT_GE(offset, 0);
    ASSERT_LT(offset, s.ditherNs);
    ASSERT_EQ(s.dueNs(i), s.dueNs(i)) << "deterministic";
  }
  // The dither covers the tick: each quarter of it gets a fair share.
  int quarters[4] = {};
  for (uint64_t i = 0; i < 4000; ++i) ++quarters[(s.dueNs(i) - s.startNs - int64_t(i) * s.periodNs) / 1'000'000];
  for (int q : quarters) EXPECT_NEAR(q, 1000, 150);
  EXPECT_EQ((PacketSchedule{5, 10, 0}.dueNs(3)), 35);
}

TEST(PacketSchedule, ALatePacketDoesNotShiftTheOnesAfterIt) {
  const PacketSchedule s{monotonicNs(), 5'000'000, 0};
  std::vector<int64_t> sent;
  for (uint64_t i = 0; i < 30; ++i) {
    s.waitFor(i);
    sent.push_back(monotonicNs());
    if (i == 2) sleepUntilNs(monotonicNs() + 60'000'000);  // 12 periods late
  }
  // No packet leaves before its slot; the late ones go at once, and the
  // schedule does not slip: a relative one would leave the last packet 60 ms
  // late, the absolute one catches up long before.
  for (uint64_t i = 0; i < sent.size(); ++i) EXPECT_GE(sent[i], s.dueNs(i)) << "packet " << i;
  EXPECT_GE(sent[3] - s.dueNs(3), 50'000'000);
  EXPECT_LT(sent.back() - s.dueNs(sent.size() - 1), 40'000'000);
}
