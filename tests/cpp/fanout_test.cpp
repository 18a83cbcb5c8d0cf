// A uses port with several connections (fan-out), over a real in-process
// omniORB: each fanout policy with one consumer held in its handler, the
// connections' own ends of stream and counts (`<name>.connections.json`),
// connect and disconnect by id, and the in-port side's numbering per
// component and optional ports.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_host.hpp"

using namespace scabench;

namespace {

constexpr auto kPatience = std::chrono::seconds(20);  // a failing test fails instead of hanging; nothing is timed

// A last stage that keeps the sequence numbers it received, in order. Held,
// its handler waits in its first packet until letGo(): a consumer as slow as
// it gets.
class Consumer final : public Component {
 public:
  explicit Consumer(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>("in", [this](const PacketView<CORBA::Double>& p) {
      {
        std::lock_guard lock(mutex_);
        ++entered_;
        changed_.notify_all();
      }
      if (held_.load()) mayGo_.wait();
      std::lock_guard lock(mutex_);
      got_.push_back(p.header.sequence_number);
      changed_.notify_all();
    });
    configure(props({{"record_capacity", integer(64)}}));
  }
  void hold() { held_.store(true); }
  void letGo() {
    held_.store(false);
    release_.set_value();
  }
  // Whether `n` packets have entered the handler (held or not) / been received.
  bool entered(std::size_t n) {
    return waitUntil([&] { return entered_ >= n; });
  }
  bool received(std::size_t n) {
    return waitUntil([&] { return got_.size() >= n; });
  }
  std::vector<uint64_t> got() {
    std::lock_guard lock(mutex_);
    return got_;
  }

 private:
  template <class Pred>
  bool waitUntil(Pred pred) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, pred);
  }
  std::atomic<bool> held_{false};
  std::promise<void> release_;
  std::shared_future<void> mayGo_ = release_.get_future().share();
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t entered_ = 0;
  std::vector<uint64_t> got_;
};

// A source the test drives: each send() pushes packets numbered from..to-1
// through its one uses port, on the test's thread.
class Source final : public Component {
 public:
  explicit Source(const ComponentContext& ctx) : Component(ctx) {
    out = &addOutPort<CORBA::Double>("out");
    configure(props({{"record_capacity", integer(64)}}));
  }
  void send(uint64_t from, uint64_t to) {
    const double samples[4] = {1, 2, 3, 4};
    for (uint64_t s = from; s < to; ++s) {
      PacketHeader h{};
      h.sequence_number = s;
      out->push(h, samples, 4);
    }
  }
  void finish(uint64_t count) { endStream(count, 0); }
  CF::Port_ptr port() {
    CORBA::Object_var obj = getPort("out");
    return CF::Port::_narrow(obj);
  }
  OutPort<CORBA::Double>* out;
};

scabench::dataDouble_ptr inPort(Component* c, const char* name = "in") {
  CORBA::Object_var obj = c->getPort(name);
  return scabench::dataDouble::_narrow(obj);
}

std::vector<uint64_t> upTo(uint64_t n) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// A source whose port has `fanout` (and depth), connected first to `first`
// and then to `second`, everything started.
struct FanOut {
  FanOut(const std::string& name, const char* fanout, int64_t depth, bool slowFirst) {
    source = new Source({name + "-source", ::testing::TempDir(), &host()});
    fast = new Consumer({name + "-fast", ::testing::TempDir(), &host()});
    slow = new Consumer({name + "-slow", ::testing::TempDir(), &host()});
    source->configure(props({{"out.fanout", text(fanout)}, {"out.fanout_depth", integer(depth)}}));
    port = source->port();
    scabench::dataDouble_var f = inPort(fast), s = inPort(slow);
    if (slowFirst) {
      port->connectPort(s, "to-slow");
      port->connectPort(f, "to-fast");
    } else {
      port->connectPort(f, "to-fast");
      port->connectPort(s, "to-slow");
    }
    slow->hold();
    fast->start();
    slow->start();
    source->start();
  }
  UsesConnectionCounts counts(const std::string& id) {
    for (const auto& c : source->out->connectionCounts())
      if (c.connectionId == id) return c;
    ADD_FAILURE() << "no connection " << id;
    return {};
  }
  Source* source;
  Consumer *fast, *slow;
  CF::Port_var port;
};

}  // namespace

// sequential: the caller waits for each connection in turn, so the one held
// holds back the other: while it waits in the slow consumer's first packet,
// the fast one has that packet and no more. Both get every packet, in order.
TEST(Fanout, SequentialHoldsTheFastConsumerBackWithTheSlowOne) {
  FanOut f("seq", "sequential", 64, /*slowFirst=*/false);
  auto sending = std::async(std::launch::async, [&] { f.source->send(0, 5); });
  ASSERT_TRUE(f.slow->entered(1));
  EXPECT_EQ(f.fast->got(), upTo(1));  // the caller is in the slow one's call: packet 1 has gone nowhere
  f.slow->letGo();
  sending.wait();
  EXPECT_EQ(f.fast->got(), upTo(5));
  EXPECT_EQ(f.slow->got(), upTo(5));
  EXPECT_EQ(f.counts("to-fast").sent, 5u);
  EXPECT_EQ(f.counts("to-slow").sent, 5u);
  EXPECT_EQ(f.counts("to-slow").fanout, "sequential");
}

// parallel: each connection has its queue and sender thread. The fast
// consumer gets every packet while the slow one is held in its first; once
// the slow one's queue is full (depth 4: packets 1-4 behind the held 0) the
// caller waits for room. Let go, the slow one gets every packet in order,
// and each connection's end of stream comes after its queued packets.
TEST(Fanout, ParallelLetsTheFastConsumerRunAheadWithinTheQueue) {
  FanOut f("par", "parallel", 4, /*slowFirst=*/true);
  f.source->send(0, 5);  // 0 in the slow handler, 1-4 in its queue: none of these waits
  ASSERT_TRUE(f.slow->entered(1));
  ASSERT_TRUE(f.fast->received(5));
  EXPECT_EQ(f.fast->got(), upTo(5));
  EXPECT_TRUE(f.slow->got().empty());
  // The slow queue is full: the next push waits for it, before the fast
  // connection (connected after it) is given the packet.
  auto sending = std::async(std::launch::async, [&] { f.source->send(5, 6); });
  EXPECT_EQ(sending.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(f.counts("to-slow").queuePeak, 4u);
  f.slow->letGo();
  sending.wait();
  f.source->finish(6);
  ASSERT_TRUE(host().waitForEnds("par-fast", 1));
  ASSERT_TRUE(host().waitForEnds("par-slow", 1));
  EXPECT_EQ(f.fast->got(), upTo(6));
  EXPECT_EQ(f.slow->got(), upTo(6));
  EXPECT_EQ(f.counts("to-slow").sent, 6u);
  EXPECT_EQ(f.counts("to-slow").dropped, 0u);
  EXPECT_GT(f.counts("to-slow").blockedNs, 0u);
}

// drop: as parallel, but the held consumer's full queue drops the packet for
// it alone, counted. The fast one gets all; the slow one what its queue took,
// in order, and its end of stream, which announces what it carried. The
// counts are in the source's connections file.
TEST(Fanout, DropLosesPacketsOnlyForTheSlowConsumer) {
  FanOut f("drop", "drop", 2, /*slowFirst=*/true);
  f.source->send(0, 1);
  ASSERT_TRUE(f.slow->entered(1));  // 0 in the handler: the queue holds the next two
  // Never waits: 1 and 2 queued, 3-9 dropped for the slow one. One at a
  // time, each once the fast one has it, so that its queue never fills.
  for (uint64_t s = 1; s < 10; ++s) {
    f.source->send(s, s + 1);
    ASSERT_TRUE(f.fast->received(s + 1));
  }
  EXPECT_EQ(f.fast->got(), upTo(10));
  f.slow->letGo();
  f.source->finish(10);
  ASSERT_TRUE(host().waitForEnds("drop-fast", 1));
  ASSERT_TRUE(host().waitForEnds("drop-slow", 1));
  EXPECT_EQ(f.slow->got(), upTo(3));
  const UsesConnectionCounts slow = f.counts("to-slow"), fast = f.counts("to-fast");
  EXPECT_EQ(slow.sent, 3u);
  EXPECT_EQ(slow.dropped, 7u);
  EXPECT_EQ(slow.queuePeak, 2u);
  EXPECT_EQ(fast.sent, 10u);
  EXPECT_EQ(fast.dropped, 0u);

  std::ifstream in(::testing::TempDir() + "/drop-source.connections.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["uses"].size(), 2u);
  EXPECT_EQ(doc["uses"][0]["port"], "out");
  EXPECT_EQ(doc["uses"][0]["connection_id"], "to-slow");
  EXPECT_EQ(doc["uses"][0]["fanout"], "drop");
  EXPECT_EQ(doc["uses"][0]["sent"], 3);
  EXPECT_EQ(doc["uses"][0]["dropped"], 7);
  EXPECT_EQ(doc["uses"][1]["connection_id"], "to-fast");
  EXPECT_EQ(doc["uses"][1]["sent"], 10);
  EXPECT_TRUE(doc["provides"].empty());
  // The slow consumer's end of stream announced what its connection carried.
  std::lock_guard lock(host().mutex);
  bool announced = false;
  for (const auto& line : host().lines) announced = announced || line == "eos drop-slow 3";
  EXPECT_TRUE(announced);
}

// A stop ends a parallel connection's wait for credits, as it ends a
// sequential one's. The slow consumer's worker is held in its first packet,
// so it grants no more credit, and its connection's sender thread waits for
// one with the next packet; stop() gives that packet and the ones queued
// behind it up, counted unsent on that connection alone.
TEST(Fanout, AStopEndsAParallelConnectionsWaitForCredits) {
  auto* source = new Source({"halt-source", ::testing::TempDir(), &host()});
  auto* fast = new Consumer({"halt-fast", ::testing::TempDir(), &host()});
  auto* slow = new Consumer({"halt-slow", ::testing::TempDir(), &host()});
  source->configure(
      props({{"out.fanout", text("parallel")}, {"out.fanout_depth", integer(8)}, {"out.flow", text("credits(1)")}}));
  fast->configure(props({{"in.flow", text("credits(1)")}}));
  // A worker: the call returns once the packet is queued, and the held
  // handler runs on the worker, so the sender thread goes on to the credits.
  slow->configure(props({{"in.flow", text("credits(1)")}, {"in.worker", integer(4)}}));
  CF::Port_var port = source->port();
  scabench::dataDouble_var s = inPort(slow), f = inPort(fast);
  port->connectPort(s, "to-slow");
  port->connectPort(f, "to-fast");
  slow->hold();
  fast->start();
  slow->start();
  source->start();
  source->send(0, 4);  // the slow one: 0 in its handler, 1 waiting for a credit, 2 and 3 queued
  ASSERT_TRUE(slow->entered(1));
  ASSERT_TRUE(fast->received(4));
  std::future<void> stopped = std::async(std::launch::async, [&] { source->stop(); });
  const bool returned = stopped.wait_for(kPatience) == std::future_status::ready;
  auto counts = [&](const char* id) {
    for (const auto& c : source->out->connectionCounts())
      if (c.connectionId == id) return c;
    return UsesConnectionCounts{};
  };
  // The sender thread gives the queued packets up as it comes to them.
  for (int i = 0; i < 2000 && counts("to-slow").unsent < 3; ++i) usleep(10'000);
  EXPECT_EQ(counts("to-slow").sent, 1u);
  EXPECT_EQ(counts("to-slow").unsent, 3u);
  EXPECT_EQ(counts("to-fast").sent, 4u);
  EXPECT_EQ(counts("to-fast").unsent, 0u);
  EXPECT_EQ(source->records().header().unsent.load(), 3u);
  slow->letGo();
  stopped.wait();
  EXPECT_TRUE(returned) << "stop() waited for the slow consumer's credits";
}

// Connections are by id: an id already connected is an OccupiedPort, an
// unknown one an InvalidPort, and a disconnect takes one connection away and
// leaves the other going.
TEST(Fanout, ConnectionsComeAndGoById) {
  auto* source = new Source({"byid-source", ::testing::TempDir(), &host()});
  auto* a = new Consumer({"byid-a", ::testing::TempDir(), &host()});
  auto* b = new Consumer({"byid-b", ::testing::TempDir(), &host()});
  CF::Port_var port = source->port();
  scabench::dataDouble_var ina = inPort(a), inb = inPort(b);
  port->connectPort(ina, "a");
  EXPECT_THROW(port->connectPort(inb, "a"), CF::Port::OccupiedPort);
  port->connectPort(inb, "b");
  EXPECT_THROW(port->disconnectPort("c"), CF::Port::InvalidPort);
  a->start();
  b->start();
  source->start();
  source->send(0, 2);
  port->disconnectPort("a");
  source->send(2, 5);
  source->finish(5);
  ASSERT_TRUE(host().waitForEnds("byid-b", 1));
  EXPECT_EQ(a->got(), upTo(2));
  EXPECT_EQ(b->got(), upTo(5));
  EXPECT_TRUE(source->out->connected());
  port->disconnectPort("b");
  EXPECT_FALSE(source->out->connected());
  EXPECT_THROW(port->disconnectPort("b"), CF::Port::InvalidPort);
}

namespace {

// Two provides ports, the second optional.
class TwoIn final : public Component {
 public:
  explicit TwoIn(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>(
        "main", [](const PacketView<CORBA::Double>&) {}, "the packets");
    addInPort<CORBA::Double>(
        "side", [](const PacketView<CORBA::Double>&) {}, "more packets, if any", Presence::Optional);
    configure(props({{"record_capacity", integer(64)}}));
  }
};

std::vector<PacketRecord> recordsOf(const std::string& name) {
  std::ifstream in(::testing::TempDir() + "/" + name + ".rec", std::ios::binary);
  RecordFileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  std::vector<PacketRecord> out(std::min<uint64_t>(header.claimed.load(), header.capacity));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(out.size() * sizeof(PacketRecord)));
  return out;
}

}  // namespace

// An optional provides port that nothing connects to does not hold back the
// component's end of stream.
TEST(Fanout, AnUnconnectedOptionalPortDoesNotHoldBackTheEnd) {
  auto* source = new Source({"opt-source", ::testing::TempDir(), &host()});
  auto* sink = new TwoIn({"opt-sink", ::testing::TempDir(), &host()});
  CF::Port_var port = source->port();
  scabench::dataDouble_var in = inPort(sink, "main");
  port->connectPort(in, "main");
  sink->start();
  source->start();
  source->send(0, 3);
  source->finish(3);
  EXPECT_TRUE(host().waitForEnds("opt-sink", 1));
  const auto declared = sink->portDeclarations();
  ASSERT_EQ(declared.size(), 2u);
  EXPECT_TRUE(declared[0].required);
  EXPECT_FALSE(declared[1].required);
  EXPECT_EQ(declared[1].description, "more packets, if any");
  EXPECT_EQ(declared[1].type, "double");
}

// Connections into a component are numbered across its provides ports, in
// attach order: each record names its own, and the connections file says
// which port each number is.
TEST(Fanout, InConnectionsAreNumberedPerComponent) {
  auto* one = new Source({"num-one", ::testing::TempDir(), &host()});
  auto* two = new Source({"num-two", ::testing::TempDir(), &host()});
  auto* sink = new TwoIn({"num-sink", ::testing::TempDir(), &host()});
  CF::Port_var p1 = one->port(), p2 = two->port();
  scabench::dataDouble_var side = inPort(sink, "side"), main = inPort(sink, "main");
  p1->connectPort(side, "one");  // attached first: number 0, on the second port
  p2->connectPort(main, "two");
  sink->start();
  one->start();
  two->start();
  one->send(0, 2);
  two->send(0, 3);
  one->finish(2);
  two->finish(3);
  ASSERT_TRUE(host().waitForEnds("num-sink", 1));
  sink->stop();
  std::vector<int> perConnection(2, 0);
  for (const auto& r : recordsOf("num-sink")) ++perConnection.at(r.flags & 0xFFFFu);
  EXPECT_EQ(perConnection, (std::vector<int>{2, 3}));
  std::ifstream in(::testing::TempDir() + "/num-sink.connections.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["provides"], nlohmann::json::parse(R"([{"port": "main", "number": 1, "protocol": "scabench"},
                                                       {"port": "side", "number": 0, "protocol": "scabench"}])"));
}
