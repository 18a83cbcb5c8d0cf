// The shared-memory ring on its own (shm_ring.hpp), without an ORB: its own
// program, so that a test may fork a receiving process while this one has no
// threads. Nothing here is timed: a wait that never ends fails the test
// after 20 s instead of hanging it, and "does not return while held" is
// checked over a while in which returning would be the bug.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scabench/runtime/resequencer.hpp"
#include "scabench/runtime/shm_ring.hpp"

using namespace scabench::shm;
using namespace std::chrono_literals;

namespace {

// What a receiver saw, and a gate a test holds its handler at.
struct Seen {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<uint64_t> sequences;
  std::vector<bool> intact;  // the samples were the ones sent
  int inHandler = 0, mostInHandler = 0;
  bool held = false;
  std::string broken;

  RingReceiver::Handler handler() {
    return [this](const PacketFields& h, const void* samples, std::size_t bytes, bool) {
      std::unique_lock lock(mutex);
      mostInHandler = std::max(mostInHandler, ++inHandler);
      changed.notify_all();
      changed.wait(lock, [&] { return !held; });
      bool ok = bytes == h.sequence % 5000 * sizeof(double);
      const auto* x = static_cast<const double*>(samples);
      for (std::size_t i = 0; ok && i < bytes / sizeof(double); ++i) ok = x[i] == double(h.sequence + i);
      sequences.push_back(h.sequence);
      intact.push_back(ok);
      --inHandler;
      changed.notify_all();
    };
  }
  std::function<void(const std::string&)> onBroken() {
    return [this](const std::string& why) {
      std::lock_guard lock(mutex);
      broken = why;
      changed.notify_all();
    };
  }
  template <class Predicate>
  bool waitFor(Predicate p, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, p);
  }
  void hold(bool h) {
    std::lock_guard lock(mutex);
    held = h;
    changed.notify_all();
  }
};

// Packet i carries i % 5000 doubles, i, i + 1, ...: sizes from none to 40 kB.
std::vector<double> samplesOf(uint64_t i) {
  std::vector<double> x(i % 5000);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = double(i + k);
  return x;
}

void send(RingSender& ring, uint64_t i, Wait wait, bool twoway = false) {
  PacketFields h;
  h.sequence = i;
  h.link = i;
  const auto x = samplesOf(i);
  ring.send(h, x.data(), x.size() * sizeof(double), twoway, wait);
}

// Whether the thread `tid` (once known) of this process sleeps, within 20 s.
bool asleep(const std::atomic<pid_t>& tid) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < until) {
    if (tid.load() != 0) {
      std::ifstream stat("/proc/self/task/" + std::to_string(tid.load()) + "/stat");
      std::string line;
      std::getline(stat, line);
      const auto paren = line.rfind(')');  // "tid (name) S ..."
      if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S') return true;
    }
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// Runs `f` on a thread of its own; whether it has returned, and its exception.
struct Background {
  explicit Background(std::function<void()> f) : done(std::async(std::launch::async, std::move(f))) {}
  bool returnedWithin(std::chrono::milliseconds t) { return done.wait_for(t) == std::future_status::ready; }
  std::future<void> done;
};

// The set-up most tests share: a ring of the least size, attached, with a
// receiver whose handler records into `seen`. held: the handler waits from
// the first packet until seen.hold(false); onewayLimit: one-way calls at once.
struct Joined {
  explicit Joined(bool held = false, uint32_t onewayLimit = 1) {
    seen.hold(held);
    receiver = std::make_unique<RingReceiver>(ring.name(), sizeof(double), onewayLimit, 128, nullptr, seen.handler(),
                                              seen.onBroken());
    ring.attached();
  }
  RingSender ring{kMinDataBytes, sizeof(double)};
  Seen seen;
  std::unique_ptr<RingReceiver> receiver;  // declared last: gone first, before what its threads use
};

}  // namespace

// Packets of every size up to 40 kB through a ring of 64 kB: each is
// contiguous, so the write position wraps to the area's start again and
// again; every packet arrives once, in order, with its samples.
TEST(ShmRing, WrapsAroundAndKeepsOrderAndContent) {
  Joined joined;
  RingSender& ring = joined.ring;
  Seen& seen = joined.seen;
  constexpr uint64_t kPackets = 3000;
  for (uint64_t i = 0; i < kPackets; ++i) send(ring, i * 7, Wait::Written);
  ring.flush();
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == kPackets; }));
  for (uint64_t i = 0; i < kPackets; ++i) {
    EXPECT_EQ(seen.sequences[i], i * 7);
    EXPECT_TRUE(seen.intact[i]) << "packet " << i * 7;
  }
  EXPECT_TRUE(seen.broken.empty()) << seen.broken;
}

// While the port's thread behind the handler has work (consumerBusy), a
// receiving thread that found the ring empty is woken only once a batch
// waits, or when poked, or for a packet that is waited for or ends the
// stream; whatever woke it, it takes every waiting packet, in order.
TEST(ShmRing, AReceiverThatPutsItsWakeUpOffTakesEveryPacketInOrder) {
  std::atomic<bool> busy{true};
  std::atomic<pid_t> receiving{0};  // the receiving thread, once it has looked at an empty ring
  RingSender ring{kMinDataBytes, sizeof(double)};
  Seen seen;
  auto receiver = std::make_unique<RingReceiver>(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(),
                                                 seen.onBroken(), [&] {
                                                   receiving = gettid();
                                                   return busy.load();
                                                 });
  ring.attached();
  auto count = [&] {
    std::lock_guard lock(seen.mutex);
    return seen.sequences.size();
  };
  // Fewer than a batch, sent once the receiving thread sleeps: put off, until poked.
  ASSERT_TRUE(asleep(receiving));
  for (uint64_t i = 0; i < 5; ++i) send(ring, i, Wait::Written);
  EXPECT_FALSE(seen.waitFor([&] { return !seen.sequences.empty(); }, 300ms)) << "woken before a batch waited";
  receiver->poke();
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 5; }));
  // A whole batch wakes it without a poke.
  for (uint64_t i = 5; i < 5 + RingReceiver::kWakeBatch; ++i) send(ring, i, Wait::Written);
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 5 + RingReceiver::kWakeBatch; }));
  // A packet waited for (sync=server, sync=target) goes at once, and takes
  // what waits before it along.
  send(ring, 100, Wait::Written);
  Background waited([&] {
    send(ring, 101, Wait::Taken);
    send(ring, 102, Wait::Done);
  });
  ASSERT_TRUE(waited.returnedWithin(20s)) << "a packet waited for stayed behind a put-off wake-up";
  EXPECT_EQ(count(), 5 + RingReceiver::kWakeBatch + 3);
  // So does an end of stream, and what waits before it.
  send(ring, 103, Wait::Written);
  PacketFields eos;
  eos.sequence = 200;
  eos.endOfStream = true;
  ring.send(eos, nullptr, 0, false, Wait::Written);
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 5 + RingReceiver::kWakeBatch + 5; }));
  // Nothing behind it busy: each packet wakes it.
  busy = false;
  receiver->poke();  // the wake-up put off when the end of stream was taken
  send(ring, 104, Wait::Written);
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 5 + RingReceiver::kWakeBatch + 6; }));
  std::vector<uint64_t> expected;
  for (uint64_t i = 0; i < 5 + RingReceiver::kWakeBatch; ++i) expected.push_back(i);
  for (uint64_t i : {100, 101, 102, 103, 200, 104}) expected.push_back(i);
  EXPECT_EQ(seen.sequences, expected);
  EXPECT_TRUE(seen.broken.empty()) << seen.broken;
}

// A sender that finds the ring full wakes a receiver that put its wake-up
// off, rather than wait for a batch that cannot fit.
TEST(ShmRing, AFullRingWakesAReceiverThatPutItsWakeUpOff) {
  RingSender ring{kMinDataBytes, sizeof(double)};
  Seen seen;
  auto receiver = std::make_unique<RingReceiver>(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(),
                                                 seen.onBroken(), [] { return true; });
  ring.attached();
  // 4999 doubles (about 40 kB) each: two do not fit in 64 kB.
  Background sends([&] {
    for (uint64_t i = 0; i < 3; ++i) send(ring, 4999 + 5000 * i, Wait::Written);
  });
  ASSERT_TRUE(sends.returnedWithin(20s)) << "a full ring kept waiting on a put-off receiver";
  receiver->poke();  // the last one, fewer than a batch
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 3; }));
  EXPECT_EQ(seen.sequences, (std::vector<uint64_t>{4999, 9999, 14999}));
  for (bool ok : seen.intact) EXPECT_TRUE(ok);
}

// A packet published behind its successor (a sender whose threads draw
// link numbers before they take the ring's lock) must not stay in the ring
// while the reorder buffer waits for it: the packets held behind the gap
// are none the releaser can hand on, so the receiving thread does not put
// its wake-up off for them, and the gap's packet is delivered, not skipped
// at the timeout and then dropped as late.
TEST(ShmRing, APacketPublishedBehindItsSuccessorIsNotLeftInTheRing) {
  RingSender ring{kMinDataBytes, sizeof(double)};
  scabench::Resequencer<uint64_t> buffer(64, std::chrono::milliseconds(1000), 1024);
  std::mutex mutex;
  std::vector<uint64_t> released;
  uint64_t skipped = 0;
  std::condition_variable changed;
  auto handler = [&](const PacketFields& h, const void*, std::size_t, bool) {
    buffer.offer(h.link, h.sequence);
    // The last of those ahead of the gap lingers in the upcall: the
    // releaser, woken by it, asks for more before this thread looks at an
    // empty ring and decides whether to put its wake-up off.
    if (h.link == 4) std::this_thread::sleep_for(50ms);
  };
  Seen seen;  // for onBroken only
  std::unique_ptr<RingReceiver> receiver = std::make_unique<RingReceiver>(
      ring.name(), sizeof(double), 1, 128, nullptr, handler, seen.onBroken(), [&] { return buffer.feederMayWait(); });
  ring.attached();
  buffer.setRunningLow(2, [&] { receiver->poke(); });
  std::thread releaser([&] {
    while (auto item = buffer.next([&](uint64_t, uint64_t count) {
      std::lock_guard lock(mutex);
      skipped += count;
      changed.notify_all();
    })) {
      std::lock_guard lock(mutex);
      released.push_back(*item);
      changed.notify_all();
    }
  });
  for (uint64_t i : {1, 2, 3, 4}) send(ring, i, Wait::Written);
  std::this_thread::sleep_for(200ms);  // all four filed, the receiving thread asleep
  send(ring, 0, Wait::Written);
  {
    std::unique_lock lock(mutex);
    changed.wait_for(lock, 20s, [&] { return released.size() == 5 || skipped > 0; });
  }
  buffer.close();
  releaser.join();
  EXPECT_EQ(released, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(skipped, 0u) << "the gap's packet waited in the ring until the timeout";
  EXPECT_EQ(buffer.stats().late, 0u);
  receiver.reset();
}

// A consumer that runs low (and pokes) between a receiving thread's look at
// it and the put-off's store is seen: the thread looks again after the
// store, so the next packet wakes it at once, not only once a batch waits.
TEST(ShmRing, APokeBetweenTheLookAndThePutOffIsNotLost) {
  std::atomic<bool> armed{false};
  std::atomic<pid_t> receiving{0};
  RingSender ring{kMinDataBytes, sizeof(double)};
  Seen seen;
  RingReceiver* rx = nullptr;
  auto receiver = std::make_unique<RingReceiver>(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(),
                                                 seen.onBroken(), [&] {
                                                   receiving = gettid();
                                                   // Busy at this look, but it runs low and
                                                   // pokes before the put-off is stored.
                                                   if (!armed.exchange(false)) return false;
                                                   rx->poke();
                                                   return true;
                                                 });
  rx = receiver.get();
  ring.attached();
  ASSERT_TRUE(asleep(receiving));
  armed = true;
  send(ring, 0, Wait::Written);  // woken (nothing put off): takes it, then looks at the empty ring, armed
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 1; }));
  for (int i = 0; i < 20000 && armed.load(); ++i) std::this_thread::sleep_for(1ms);
  ASSERT_FALSE(armed.load()) << "the receiving thread did not look at the empty ring";
  ASSERT_TRUE(asleep(receiving));
  send(ring, 1, Wait::Written);
  EXPECT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 2; })) << "a poke fell between look and put-off";
  EXPECT_TRUE(seen.broken.empty()) << seen.broken;
}

// A sender's flush (a disconnect waits for it) wakes a receiving thread
// that put its wake-up off, rather than wait for whoever would poke it.
TEST(ShmRing, AFlushWakesAReceiverThatPutItsWakeUpOff) {
  std::atomic<pid_t> receiving{0};
  RingSender ring{kMinDataBytes, sizeof(double)};
  Seen seen;
  auto receiver = std::make_unique<RingReceiver>(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(),
                                                 seen.onBroken(), [&] {
                                                   receiving = gettid();
                                                   return true;
                                                 });
  ring.attached();
  ASSERT_TRUE(asleep(receiving));
  for (uint64_t i = 0; i < 3; ++i) send(ring, i, Wait::Written);
  Background flushed([&] { ring.flush(); });
  ASSERT_TRUE(flushed.returnedWithin(20s)) << "a flush waited on a put-off wake-up";
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 3; }));
  EXPECT_EQ(seen.sequences, (std::vector<uint64_t>{0, 1, 2}));
}

// The name goes once the receiver has the ring mapped: nothing is left in /dev/shm.
TEST(ShmRing, ItsNameIsRemovedOnceBothEndsHaveIt) {
  RingSender ring(kMinDataBytes, sizeof(double));
  const std::string file = "/dev/shm" + ring.name();
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(ring.name().rfind(std::string(kNamePrefix) + ownerTag() + "-", 0), 0u);
  Seen seen;
  RingReceiver receiver(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(), seen.onBroken());
  ring.attached();
  EXPECT_FALSE(std::filesystem::exists(file));
}

// A full ring (here its data area: two 40 kB packets in 64 kB) blocks a
// one-way sender, as a full socket does, until the receiver frees room.
TEST(ShmRing, AFullRingBlocksTheSenderUntilTheReceiverTakesMore) {
  Joined joined(/*held=*/true);
  RingSender& ring = joined.ring;
  Seen& seen = joined.seen;
  send(ring, 4999, Wait::Written);  // in the handler, held
  ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == 1; }));
  Background second([&] { send(ring, 4998, Wait::Written); });
  EXPECT_FALSE(second.returnedWithin(300ms)) << "a second 40 kB packet found room in a 64 kB ring";
  seen.hold(false);
  EXPECT_TRUE(second.returnedWithin(20s));
  ring.flush();
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 2; }));
}

// Two-way (and sync=target): the send returns once the receiver's handler
// has returned, not before. sync=server: once a receiving thread has taken
// the packet, while its handler still runs. sync=transport: at once.
TEST(ShmRing, EachWaitReturnsAtItsPhase) {
  Joined joined(/*held=*/true);
  RingSender& ring = joined.ring;
  Seen& seen = joined.seen;
  Background twoway([&] { send(ring, 1, Wait::Done, true); });
  ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == 1; }));
  EXPECT_FALSE(twoway.returnedWithin(300ms)) << "a two-way send returned while its handler ran";
  seen.hold(false);
  ASSERT_TRUE(twoway.returnedWithin(20s));
  EXPECT_EQ(seen.sequences.size(), 1u);  // done before the send returned

  seen.hold(true);
  Background taken([&] { send(ring, 2, Wait::Taken); });
  ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == 1; }));
  EXPECT_TRUE(taken.returnedWithin(20s)) << "sync=server waited for the handler";
  EXPECT_EQ(seen.sequences.size(), 1u);  // its handler still held
  // With one thread (serial), the next packet is taken only once that handler returns.
  Background next([&] { send(ring, 3, Wait::Taken); });
  EXPECT_FALSE(next.returnedWithin(300ms)) << "a serial receiver took a packet while its handler ran";
  send(ring, 4, Wait::Written);  // transport: in the ring, whatever the receiver does
  seen.hold(false);
  EXPECT_TRUE(next.returnedWithin(20s));
  ring.flush();
  ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 4; }));
  EXPECT_EQ(seen.sequences, (std::vector<uint64_t>{1, 2, 3, 4}));
}

// The dispatch's limit on one-way calls at once: serial never overlaps two
// handlers; pool:3 runs three at once and takes the fourth only when one
// returns.
TEST(ShmRing, OneWayPacketsOverlapAsTheDispatchAllows) {
  for (uint32_t limit : {1u, 3u}) {
    Joined joined(/*held=*/true, limit);
    RingSender& ring = joined.ring;
    Seen& seen = joined.seen;
    for (uint64_t i = 0; i < 4; ++i) send(ring, 10 + i, Wait::Written);
    ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == int(limit); })) << limit;
    EXPECT_FALSE(seen.waitFor([&] { return seen.inHandler > int(limit); }, 300ms)) << limit;
    seen.hold(false);
    ring.flush();
    ASSERT_TRUE(seen.waitFor([&] { return seen.sequences.size() == 4; }));
    EXPECT_EQ(seen.mostInHandler, int(limit));
  }
}

// Two-way packets from two sending threads overlap even on a serial
// connection: under CORBA each concurrent two-way caller has a connection,
// and an ORB thread, of its own.
TEST(ShmRing, TwoWayCallersOfOneConnectionOverlap) {
  Joined joined(/*held=*/true);
  RingSender& ring = joined.ring;
  Seen& seen = joined.seen;
  Background first([&] { send(ring, 1, Wait::Done, true); });
  Background second([&] { send(ring, 2, Wait::Done, true); });
  EXPECT_TRUE(seen.waitFor([&] { return seen.inHandler == 2; })) << "the second caller waited for the first";
  seen.hold(false);
  EXPECT_TRUE(first.returnedWithin(20s));
  EXPECT_TRUE(second.returnedWithin(20s));
}

// A receiving port that closes the connection fails a waiting sender, and
// every later send, with RingClosed.
TEST(ShmRing, AClosedReceiverFailsTheSender) {
  RingSender ring(kMinDataBytes, sizeof(double));
  Seen seen;
  seen.hold(true);
  auto receiver =
      std::make_unique<RingReceiver>(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(), seen.onBroken());
  ring.attached();
  send(ring, 1, Wait::Written);
  ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == 1; }));
  std::atomic<bool> failed{false};
  Background waiting([&] {
    try {
      send(ring, 2, Wait::Done, true);
    } catch (const RingClosed&) {
      failed = true;
    }
  });
  receiver->close();
  EXPECT_TRUE(waiting.returnedWithin(20s));
  EXPECT_TRUE(failed);
  EXPECT_THROW(send(ring, 3, Wait::Written), RingClosed);
  seen.hold(false);
  receiver.reset();  // joins its threads once the held handler returns
}

// A receiving process that dies does not hang its sender: a two-way send
// waiting on it, and a one-way sender on its full ring, fail with
// RingClosed once the sender sees the process gone (it looks every 100 ms).
TEST(ShmRing, ADeadReceiverFailsTheSenderInBoundedTime) {
  for (Wait wait : {Wait::Done, Wait::Written}) {
    RingSender ring(kMinDataBytes, sizeof(double));
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // The receiving process: its handler never returns.
      RingReceiver receiver(
          ring.name(), sizeof(double), 1, 128, nullptr,
          [&](const PacketFields&, const void*, std::size_t, bool) { pause(); }, nullptr);
      (void)!write(ready[1], "r", 1);
      pause();
      _exit(0);
    }
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    ring.attached();
    std::atomic<bool> failed{false};
    Background sender([&] {
      try {
        // Two-way: waits on the first packet. One-way: fills the ring (40 kB packets in 64 kB).
        for (uint64_t i = 0; i < 10; ++i) send(ring, 4999, wait, wait == Wait::Done);
      } catch (const RingClosed&) {
        failed = true;
      }
    });
    EXPECT_FALSE(sender.returnedWithin(300ms));
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    EXPECT_TRUE(sender.returnedWithin(20s)) << "the sender hung on a dead receiver";
    EXPECT_TRUE(failed);
    // Once found gone, it stays gone: a packet that would fit fails at once.
    EXPECT_THROW(send(ring, 1, Wait::Written), RingClosed);
    close(ready[0]);
    close(ready[1]);
  }
}

// What the receiver refuses: a name that is not a ring's, a ring for
// samples of another size, and a sender that puts a packet's samples outside
// the ring (the connection is closed, the port told, the sender fails).
TEST(ShmRing, TheReceiverTrustsNothingInTheSegment) {
  Seen seen;
  EXPECT_THROW(RingReceiver("/etc-passwd", 8, 1, 128, nullptr, seen.handler(), nullptr), std::invalid_argument);
  EXPECT_THROW(RingReceiver(std::string(kNamePrefix) + "nosuch", 8, 1, 128, nullptr, seen.handler(), nullptr),
               std::invalid_argument);
  RingSender ring(kMinDataBytes, sizeof(double));
  EXPECT_THROW(RingReceiver(ring.name(), sizeof(float), 1, 128, nullptr, seen.handler(), nullptr),
               std::invalid_argument);
  // Someone else who can write the segment (mapped before its name goes).
  const int fd = shm_open(ring.name().c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  void* base = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(base, MAP_FAILED);
  seen.hold(true);
  RingReceiver receiver(ring.name(), sizeof(double), 1, 128, nullptr, seen.handler(), seen.onBroken());
  ring.attached();
  send(ring, 1, Wait::Written);
  ASSERT_TRUE(seen.waitFor([&] { return seen.inHandler == 1; }));
  send(ring, 2, Wait::Written);  // waits in the ring: the connection is serial
  // Packet 2's byte count (shm_ring.cpp's layout: the control block's 256
  // bytes, then 64-byte slots whose last word is the count) made larger than the ring.
  static_cast<uint64_t*>(base)[(256 + 64 * 1 + 56) / 8] = uint64_t(1) << 40;
  seen.hold(false);
  EXPECT_TRUE(seen.waitFor([&] { return !seen.broken.empty(); })) << "the receiver took samples outside the ring";
  EXPECT_EQ(seen.sequences, std::vector<uint64_t>{1});
  EXPECT_THROW(send(ring, 3, Wait::Written), RingClosed);
  munmap(base, 4096);
}
