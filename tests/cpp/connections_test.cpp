// Connections into a provides port, over a real in-process omniORB: each
// connection's own sequence space (a reconnect starts at 0), end of stream
// per stream and per connection, re-armed by stop and start, and fan-in.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "scabench/runtime/registry.hpp"
#include "test_host.hpp"

using namespace scabench;

namespace {

Component* make(const char* kind, const std::string& name, CF::Properties p) {
  Component* c = createComponent(kind, "double", {name, ::testing::TempDir(), &host()});
  c->configure(p);
  return c;
}

CF::Port_ptr usesPort(Component* c) {
  CORBA::Object_var obj = c->getPort("out");
  return CF::Port::_narrow(obj);
}

scabench::dataDouble_ptr providesPort(Component* c) {
  CORBA::Object_var obj = c->getPort("in");
  return scabench::dataDouble::_narrow(obj);
}

uint32_t refused(Component* c, Refusal why) { return c->records().header().refused[std::size_t(why)].load(); }

void push(scabench::dataDouble_ptr in, uint64_t token, uint64_t link, uint64_t sequence, uint32_t stream = 0) {
  PacketHeader h{};
  h.stream_id = stream;
  h.sequence_number = sequence;
  h.link_sequence = link;
  h.connection_token = token;
  CORBA::DoubleSeq data;
  data.length(4);
  in->pushPacket(h, data);
}

void pushEndOfStream(scabench::dataDouble_ptr in, uint64_t token, uint64_t link, uint64_t count) {
  PacketHeader h{};
  h.sequence_number = count;
  h.link_sequence = link;
  h.connection_token = token;
  h.end_of_stream = true;
  in->pushPacket(h, CORBA::DoubleSeq());
}

// The records a component wrote, read back from its file.
std::vector<PacketRecord> recordsOf(Component* c) {
  std::ifstream in(::testing::TempDir() + "/" + c->name() + ".rec", std::ios::binary);
  RecordFileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  std::vector<PacketRecord> out(std::min<uint64_t>(header.claimed.load(), header.capacity));
  in.read(reinterpret_cast<char*>(out.data()), std::streamsize(out.size() * sizeof(PacketRecord)));
  return out;
}

// The counts `name` announced at its ends of stream ("eos NAME COUNT"), in order.
std::vector<std::string> announced(const std::string& name) {
  std::lock_guard lock(host().mutex);
  std::vector<std::string> counts;
  for (const auto& line : host().lines)
    if (line.rfind("eos " + name + " ", 0) == 0) counts.push_back(line.substr(5 + name.size()));
  return counts;
}

}  // namespace

// Waits until `c` has finished `n` packets; false if not within 20 s.
bool waitForCompleted(Component* c, uint64_t n) {
  for (int i = 0; i < 2000; ++i) {
    if (c->records().header().completed.load() >= n) return true;
    usleep(10'000);
  }
  return false;
}

// A producer with credits (100 packets, one every 10 ms) sends part of its
// stream to one sink, is stopped, reconnected to another and started again:
// it goes on with its next packet. The second connection must number from
// 0: the new receiver's window and the new gate's credits both start there.
// Numbering on from the first connection's count left the producer waiting
// for acknowledgements of packets it could not send (a deadlock).
// Over either transport (a shared-memory ring works within one process too).
void aNewConnectionNumbersItsPacketsFromZero(const char* transport) {
  const std::string t = transport;
  Component* p = make("producer", "reconnect-producer-" + t,
                      props({{"packets", integer(100)},
                             {"samples", integer(4)},
                             {"period_us", integer(10'000)},
                             {"out.flow", text("credits(4)")},
                             {"out.transport", text(transport)},
                             {"record_capacity", integer(128)}}));
  Component* a =
      make("sink", "reconnect-a-" + t, props({{"in.flow", text("credits(4)")}, {"record_capacity", integer(128)}}));
  Component* b =
      make("sink", "reconnect-b-" + t, props({{"in.flow", text("credits(4)")}, {"record_capacity", integer(128)}}));
  CF::Port_var out = usesPort(p);
  scabench::dataDouble_var aIn = providesPort(a), bIn = providesPort(b);
  out->connectPort(aIn, "p-a");
  a->start();
  p->start();
  ASSERT_TRUE(waitForCompleted(a, 8));  // past the 4 credits a new gate grants
  p->stop();
  const uint64_t toA = a->records().header().completed.load();
  ASSERT_LT(toA, 100u) << "the producer finished before it was stopped: nothing is left for the second connection";
  out->disconnectPort("p-a");
  out->connectPort(bIn, "p-b");
  b->start();
  p->start();
  const bool ended = host().waitForEnds("reconnect-b-" + t, 1);
  out->disconnectPort("p-b");  // closes the gate: a producer stuck on credits gives up
  p->stop();
  EXPECT_TRUE(ended) << "the second connection's stream never ended";
  EXPECT_EQ(toA + b->records().header().completed.load(), 100u);
  EXPECT_EQ(b->records().header().skipped.load() + b->records().header().duplicates.load(), 0u);
  for (Refusal why : {Refusal::Sequence, Refusal::Sender, Refusal::EndOfStream, Refusal::Credit})
    EXPECT_EQ(refused(b, why), 0u) << int(why);
  a->stop();
  b->stop();
}

TEST(Reconnect, ANewConnectionNumbersItsPacketsFromZero) { aNewConnectionNumbersItsPacketsFromZero("orb"); }
TEST(Reconnect, ANewSharedMemoryConnectionNumbersItsPacketsFromZero) { aNewConnectionNumbersItsPacketsFromZero("shm"); }

// The same receiver, stopped, takes its sender back: the old connection is
// forgotten (detachSender), the new one numbers from 0, and the stream ends
// on the new connection alone.
void aStoppedReceiverTakesANewConnection(const char* transport) {
  const std::string t = transport;
  Component* p = make("producer", "again-producer-" + t,
                      props({{"packets", integer(100)},
                             {"samples", integer(4)},
                             {"period_us", integer(10'000)},
                             {"out.flow", text("credits(4)")},
                             {"out.transport", text(transport)},
                             {"record_capacity", integer(128)}}));
  Component* s =
      make("sink", "again-sink-" + t, props({{"in.flow", text("credits(4)")}, {"record_capacity", integer(128)}}));
  CF::Port_var out = usesPort(p);
  scabench::dataDouble_var in = providesPort(s);
  out->connectPort(in, "c1");
  s->start();
  p->start();
  ASSERT_TRUE(waitForCompleted(s, 8));
  p->stop();
  s->stop();
  ASSERT_LT(s->records().header().completed.load(), 100u) << "the producer finished before it was stopped";
  out->disconnectPort("c1");
  out->connectPort(in, "c2");  // the receiver is stopped: it takes a sender
  s->start();
  p->start();
  const bool ended = host().waitForEnds("again-sink-" + t, 1);
  out->disconnectPort("c2");
  p->stop();
  EXPECT_TRUE(ended) << "the new connection's stream never ended";
  EXPECT_EQ(host().ends("again-sink-" + t), 1);
  EXPECT_EQ(s->records().header().completed.load(), 100u);  // records are kept across a stop
  EXPECT_EQ(refused(s, Refusal::Sequence) + refused(s, Refusal::EndOfStream), 0u);
  s->stop();
}

TEST(Reconnect, AStoppedReceiverTakesANewConnection) { aStoppedReceiverTakesANewConnection("orb"); }
TEST(Reconnect, AStoppedReceiverTakesANewSharedMemoryConnection) { aStoppedReceiverTakesANewConnection("shm"); }

// Over shared memory a producer's stream reaches its sink with every call
// and sync, and ends; the port's checks are the same as for CORBA calls.
TEST(SharedMemory, EveryCallAndSyncCrossesTheRingAndEnds) {
  const std::pair<const char*, const char*> policies[] = {
      {"twoway", "transport"}, {"oneway", "none"}, {"oneway", "transport"}, {"oneway", "server"}, {"oneway", "target"}};
  for (const auto& [call, sync] : policies) {
    const std::string n = std::string(call) + "-" + sync;
    Component* s = make("sink", "shm-sink-" + n, props({{"record_capacity", integer(64)}}));
    Component* p = make("producer", "shm-producer-" + n,
                        props({{"packets", integer(40)},
                               {"samples", integer(64)},
                               {"out.call", text(call)},
                               {"out.sync", text(sync)},
                               {"out.transport", text("shm")},
                               {"record_capacity", integer(64)}}));
    scabench::dataDouble_var in = providesPort(s);
    CF::Port_var out = usesPort(p);
    out->connectPort(in, "shm");
    s->start();
    p->start();
    EXPECT_TRUE(host().waitForEnds("shm-sink-" + n, 1)) << n;
    out->disconnectPort("shm");
    p->stop();
    s->stop();
    EXPECT_EQ(s->records().header().completed.load(), 40u) << n;
    for (Refusal why : {Refusal::Sequence, Refusal::Sender, Refusal::EndOfStream, Refusal::Threads})
      EXPECT_EQ(refused(s, why), 0u) << n << " " << int(why);
  }
}

// A packet larger than the connection's ring is refused before it is sent,
// as one beyond the ORB's message limit is, naming the ring.
TEST(SharedMemory, APacketLargerThanItsRingIsRefused) {
  Component* s = make("sink", "shm-big-sink", props({{"record_capacity", integer(8)}}));
  Component* p = make("producer", "shm-big-producer",
                      props({{"packets", integer(2)},
                             {"samples", integer(10'000)},
                             {"out.transport", text("shm")},
                             {"out.shm_bytes", integer(65536)},
                             {"record_capacity", integer(8)}}));
  scabench::dataDouble_var in = providesPort(s);
  CF::Port_var out = usesPort(p);
  out->connectPort(in, "big");
  s->start();
  p->start();
  std::string error;
  for (int i = 0; i < 2000 && error.empty(); ++i) {
    {
      std::lock_guard lock(host().mutex);
      for (const auto& line : host().lines)
        if (line.rfind("error shm-big-producer ", 0) == 0) error = line;
    }
    usleep(10'000);
  }
  p->stop();
  s->stop();
  EXPECT_NE(error.find("80000 bytes) does not fit in the connection's shared-memory ring of 65536 bytes "
                       "(out.shm_bytes): at most 8192 double samples"),
            std::string::npos)
      << error;
  EXPECT_EQ(s->records().header().completed.load(), 0u);
}

// End of stream is per stream: the second stream on a connection ends too,
// with or without a stop and start in between. Each stream ends once every
// packet before its marker is in; a second marker within one stream is
// still refused.
TEST(EndOfStream, EveryStreamOfAConnectionEnds) {
  constexpr uint64_t kToken = 0xfeed;
  Component* s = make("sink", "streams", props({{"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  in->attachSender(kToken, scabench::FlowControl::_nil());
  s->start();
  push(in, kToken, 0, 0);
  push(in, kToken, 1, 1);
  pushEndOfStream(in, kToken, 2, 2);
  EXPECT_EQ(host().ends("streams"), 1);
  // The next stream on the same connection, its numbers going on.
  push(in, kToken, 4, 1);  // overtook packet 3
  pushEndOfStream(in, kToken, 5, 2);
  pushEndOfStream(in, kToken, 5, 2);  // a second marker for the same stream
  EXPECT_EQ(host().ends("streams"), 1);
  push(in, kToken, 3, 0);
  EXPECT_EQ(host().ends("streams"), 2);
  EXPECT_EQ(refused(s, Refusal::EndOfStream), 1u);
  // Stopped and started: the port is re-armed, and a third stream ends.
  s->stop();
  s->start();
  push(in, kToken, 6, 0);
  pushEndOfStream(in, kToken, 7, 1);
  EXPECT_EQ(host().ends("streams"), 3);
  EXPECT_EQ(s->records().header().completed.load(), 5u);  // records are kept across a stop
  // Each end announces its own stream's packets, not every packet since the
  // component was made (it announced 2, 4, 5).
  EXPECT_EQ(announced("streams"), (std::vector<std::string>{"2", "2", "1"}));
  s->stop();
}

// A stream cut short by a stop (its marker never came) does not hold up the
// one after the start: the port is re-armed on start.
TEST(EndOfStream, StartReArmsAPortWhoseStreamWasCutShort) {
  constexpr uint64_t kToken = 0xcafe;
  Component* s = make("sink", "cut-short", props({{"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  in->attachSender(kToken, scabench::FlowControl::_nil());
  s->start();
  push(in, kToken, 0, 0);
  pushEndOfStream(in, kToken, 2, 2);  // waits for 1, which never comes
  EXPECT_EQ(host().ends("cut-short"), 0);
  s->stop();
  s->start();
  push(in, kToken, 1, 1);
  push(in, kToken, 3, 0);
  pushEndOfStream(in, kToken, 4, 1);
  EXPECT_EQ(host().ends("cut-short"), 1);
  EXPECT_EQ(refused(s, Refusal::EndOfStream), 0u);
  s->stop();
}

// A resequencing port made again at start waits for the number its
// connection stands at, not for 0. A packet that came while it was stopped
// is refused; its number is skipped after the timeout.
TEST(EndOfStream, AResequencingPortRestartsWhereItsConnectionStands) {
  constexpr uint64_t kToken = 0x5e9;
  CORBA::Any timeout;
  timeout <<= CORBA::Double(5.0);
  Component* s = make(
      "sink", "resequenced",
      props(
          {{"in.ordering", text("resequence")}, {"in.reorder_timeout_ms", timeout}, {"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  in->attachSender(kToken, scabench::FlowControl::_nil());
  s->start();
  push(in, kToken, 1, 1);
  push(in, kToken, 0, 0);
  pushEndOfStream(in, kToken, 2, 2);
  ASSERT_TRUE(host().waitForEnds("resequenced", 1));
  s->stop();
  push(in, kToken, 3, 0);  // stopped: refused
  s->start();
  push(in, kToken, 4, 1);
  pushEndOfStream(in, kToken, 5, 2);
  ASSERT_TRUE(host().waitForEnds("resequenced", 2));
  s->stop();
  EXPECT_EQ(s->records().header().completed.load(), 3u);  // links 0, 1 and 4
  EXPECT_EQ(s->records().header().skipped.load(), 1u);    // link 3
  EXPECT_EQ(refused(s, Refusal::Sender), 1u);
  EXPECT_EQ(refused(s, Refusal::Sequence), 0u);
}

// Fan-in: two senders into one port, each a sequence space of its own. The
// same link number from both is two packets, not a duplicate; each
// connection's end of stream waits for its own packets; the port's comes
// once both have ended. Each record says which connection and which stream.
TEST(FanIn, EachConnectionIsASequenceSpaceOfItsOwn) {
  constexpr uint64_t kA = 0xa11ce, kB = 0xb0b;
  Component* s = make("sink", "fan-in", props({{"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  in->attachSender(kA, scabench::FlowControl::_nil());
  in->attachSender(kB, scabench::FlowControl::_nil());
  s->start();
  push(in, kA, 0, 0, 1);
  push(in, kB, 0, 0, 2);
  push(in, kA, 1, 1, 1);
  pushEndOfStream(in, kA, 2, 2);
  EXPECT_EQ(host().ends("fan-in"), 0);  // B's stream goes on
  push(in, kB, 2, 2, 2);                // overtook B's packet 1
  pushEndOfStream(in, kB, 3, 3);
  EXPECT_EQ(host().ends("fan-in"), 0);  // ... and B's end waits for it
  push(in, kB, 1, 1, 2);
  EXPECT_EQ(host().ends("fan-in"), 1);
  push(in, kA, 0, 0, 1);  // A's packet 0 again: a duplicate of A's
  EXPECT_EQ(s->records().header().completed.load(), 5u);
  EXPECT_EQ(s->records().header().duplicates.load(), 1u);
  EXPECT_EQ(refused(s, Refusal::Sender) + refused(s, Refusal::Sequence) + refused(s, Refusal::EndOfStream), 0u);
  const std::vector<PacketRecord> records = recordsOf(s);
  ASSERT_EQ(records.size(), 5u);
  const uint32_t a = recordFlags(0, 1), b = recordFlags(1, 2);
  EXPECT_EQ(records[0].flags, a);
  EXPECT_EQ(records[1].flags, b);
  EXPECT_EQ(records[2].flags, a);
  EXPECT_EQ(records[3].flags, b);
  EXPECT_EQ(records[4].flags, b);
  s->stop();
}

// A connection detached while the others stream is no longer waited for,
// and its packets are refused from then on.
TEST(FanIn, ADetachedConnectionIsNotWaitedFor) {
  constexpr uint64_t kA = 31, kB = 32;
  Component* s = make("sink", "detached", props({{"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  in->attachSender(kA, scabench::FlowControl::_nil());
  in->attachSender(kB, scabench::FlowControl::_nil());
  s->start();
  EXPECT_THROW(in->attachSender(33, scabench::FlowControl::_nil()), CF::Port::OccupiedPort);  // running
  push(in, kA, 0, 0);
  push(in, kB, 0, 0);
  pushEndOfStream(in, kA, 1, 1);
  EXPECT_EQ(host().ends("detached"), 0);
  in->detachSender(kB + 1);  // not a connection: refused, changes nothing
  EXPECT_EQ(host().ends("detached"), 0);
  in->detachSender(kB);
  EXPECT_EQ(host().ends("detached"), 1);
  push(in, kB, 1, 1);
  EXPECT_EQ(s->records().header().completed.load(), 2u);
  EXPECT_EQ(refused(s, Refusal::Sender), 3u);  // the attach while running, the stranger's detach, B's late packet
  s->stop();
}

// Two producers with credits into one sink: credits are per connection, so
// each producer's window is its own, and the sink's stream ends once both
// producers' have. Real components, collocated calls.
TEST(FanIn, TwoProducersWithCreditsIntoOneSink) {
  Component* s = make("sink", "two-sink", props({{"in.flow", text("credits(4)")}, {"record_capacity", integer(64)}}));
  Component* p1 = make("producer", "two-p1",
                       props({{"packets", integer(20)},
                              {"samples", integer(4)},
                              {"stream_id", integer(1)},
                              {"out.flow", text("credits(4)")},
                              {"record_capacity", integer(32)}}));
  Component* p2 = make("producer", "two-p2",
                       props({{"packets", integer(15)},
                              {"samples", integer(4)},
                              {"stream_id", integer(2)},
                              {"out.flow", text("credits(4)")},
                              {"record_capacity", integer(32)}}));
  scabench::dataDouble_var in = providesPort(s);
  CF::Port_var out1 = usesPort(p1), out2 = usesPort(p2);
  out1->connectPort(in, "p1-s");
  out2->connectPort(in, "p2-s");
  s->start();
  p1->start();
  p2->start();
  const bool ended = host().waitForEnds("two-sink", 1);
  out1->disconnectPort("p1-s");
  out2->disconnectPort("p2-s");
  p1->stop();
  p2->stop();
  ASSERT_TRUE(ended);
  EXPECT_EQ(host().ends("two-sink"), 1);
  EXPECT_EQ(s->records().header().completed.load(), 35u);
  uint32_t perConnection[2] = {0, 0};
  for (const PacketRecord& r : recordsOf(s)) {
    ASSERT_LT(r.flags & 0xFFFFu, 2u);
    ++perConnection[r.flags & 0xFFFFu];
    EXPECT_EQ(r.flags >> 16, 1u + (r.flags & 0xFFFFu));  // connection 0 is p1's stream 1
  }
  EXPECT_EQ(perConnection[0], 20u);
  EXPECT_EQ(perConnection[1], 15u);
  s->stop();
}

// ------------------------------------------------- a stream's end and its id

namespace {

// A last stage that keeps the stream id each of its ends of stream carried.
class StreamProbe final : public Component {
 public:
  explicit StreamProbe(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>("in", [](const PacketView<CORBA::Double>&) {});
  }
  std::vector<uint32_t> ended() {
    std::lock_guard lock(mutex_);
    return ended_;
  }

 protected:
  void onEndOfStream() override {
    {
      std::lock_guard lock(mutex_);
      ended_.push_back(endedStreamId());
    }
    Component::onEndOfStream();
  }

 private:
  std::mutex mutex_;
  std::vector<uint32_t> ended_;
};

}  // namespace

// The end of stream carries the stream's id, from the producer and on
// through a stage, whichever way the packets go (it carried 0 whatever the
// stream). A receiver that tells streams apart by id sees its stream end.
void theEndOfStreamCarriesTheStreamsId(const char* transport) {
  const std::string t = transport;
  Component* p = make("producer", "id-producer-" + t,
                      props({{"packets", integer(5)},
                             {"samples", integer(4)},
                             {"stream_id", integer(7)},
                             {"out.transport", text(transport)},
                             {"record_capacity", integer(16)}}));
  Component* stage =
      make("stage", "id-stage-" + t,
           props({{"work", text("none")}, {"out.transport", text(transport)}, {"record_capacity", integer(16)}}));
  auto* probe = new StreamProbe({"id-probe-" + t, ::testing::TempDir(), &host()});
  probe->configure(props({{"record_capacity", integer(16)}}));
  CF::Port_var pOut = usesPort(p), stageOut = usesPort(stage);
  scabench::dataDouble_var stageIn = providesPort(stage), probeIn = providesPort(probe);
  pOut->connectPort(stageIn, "p-stage");
  stageOut->connectPort(probeIn, "stage-probe");
  probe->start();
  stage->start();
  p->start();
  ASSERT_TRUE(host().waitForEnds("id-probe-" + t, 1));
  EXPECT_EQ(probe->ended(), std::vector<uint32_t>{7});
  EXPECT_EQ(announced("id-probe-" + t), std::vector<std::string>{"5"});
  for (Component* c : {static_cast<Component*>(p), stage, static_cast<Component*>(probe)}) c->stop();
  pOut->disconnectPort("p-stage");
  stageOut->disconnectPort("stage-probe");
}

TEST(EndOfStream, CarriesTheStreamsIdCollocated) { theEndOfStreamCarriesTheStreamsId("orb"); }
TEST(EndOfStream, CarriesTheStreamsIdThroughASharedMemoryRing) { theEndOfStreamCarriesTheStreamsId("shm"); }

// A pushed end of stream's id reaches the component, and a second stream's
// id replaces the first's.
TEST(EndOfStream, EachStreamEndsWithItsOwnId) {
  constexpr uint64_t kToken = 0x1d;
  auto* probe = new StreamProbe({"ids", ::testing::TempDir(), &host()});
  probe->configure(props({{"record_capacity", integer(16)}}));
  scabench::dataDouble_var in = providesPort(probe);
  in->attachSender(kToken, scabench::FlowControl::_nil());
  probe->start();
  auto endOf = [&](uint64_t link, uint32_t stream) {
    PacketHeader h{};
    h.stream_id = stream;
    h.sequence_number = 1;
    h.link_sequence = link;
    h.connection_token = kToken;
    h.end_of_stream = true;
    in->pushPacket(h, CORBA::DoubleSeq());
  };
  push(in, kToken, 0, 0, 3);
  endOf(1, 3);
  push(in, kToken, 2, 0, 4);
  endOf(3, 4);
  EXPECT_EQ(probe->ended(), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(announced("ids"), (std::vector<std::string>{"1", "1"}));
  probe->stop();
}

// ------------------------------------------- stop, query and a sender's waits

namespace {

// A producer whose receiver never acknowledges: a sink that was not started
// refuses every packet, so the producer's third packet waits for credits.
struct WaitingForCredits {
  explicit WaitingForCredits(const std::string& name) {
    producer = make("producer", name,
                    props({{"packets", integer(10)},
                           {"samples", integer(4)},
                           {"out.flow", text("credits(2)")},
                           {"record_capacity", integer(16)}}));
    sink = make("sink", name + "-sink", props({{"in.flow", text("credits(2)")}, {"record_capacity", integer(16)}}));
    out = usesPort(producer);
    scabench::dataDouble_var in = providesPort(sink);
    out->connectPort(in, "waiting");
    producer->start();
    for (int i = 0; i < 2000 && producer->records().header().sendStalls.load() == 0; ++i) usleep(10'000);
  }
  RecordFileHeader& header() { return producer->records().header(); }
  // Frees the producer as only a disconnect did before: so that a failing
  // test does not leave a thread waiting for ever.
  void release() {
    try {
      out->disconnectPort("waiting");
    } catch (const CF::Port::InvalidPort&) {
    }
  }
  Component* producer;
  Component* sink;
  CF::Port_var out;
};

bool within20s(std::future<void>& f) { return f.wait_for(std::chrono::seconds(20)) == std::future_status::ready; }

}  // namespace

// stop() on a producer waiting for credits returns: the wait ends, the packet
// is given up and counted unsent (it waited until an acknowledgement or a
// disconnect came, and query() waited with it). A later start goes on.
TEST(Lifecycle, StopEndsAWaitForCredits) {
  WaitingForCredits w("stop-waiting");
  ASSERT_EQ(w.header().sendStalls.load(), 1u) << "the producer never waited for credits";
  std::future<void> stopped = std::async(std::launch::async, [&] { w.producer->stop(); });
  const bool returned = within20s(stopped);
  if (!returned) w.release();
  stopped.wait();
  EXPECT_TRUE(returned) << "stop() waited for the receiver's credits";
  EXPECT_EQ(w.header().unsent.load(), 1u);
  // While stopped, query answers; started again, the producer waits again.
  CF::Properties q = props({{"packets", integer(0)}});
  w.producer->query(q);
  w.producer->start();
  // Stopped before it waits again, the producer would send nothing (a stopped
  // source gives up one packet at most): this test is about the wait.
  for (int i = 0; i < 2000 && w.header().sendStalls.load() < 2; ++i) usleep(10'000);
  EXPECT_EQ(w.header().sendStalls.load(), 2u) << "the producer never waited again";
  std::future<void> again = std::async(std::launch::async, [&] { w.producer->stop(); });
  const bool returnedAgain = within20s(again);
  if (!returnedAgain) w.release();
  again.wait();
  EXPECT_TRUE(returnedAgain);
  EXPECT_EQ(w.header().unsent.load(), 2u);
  w.release();
}

// disconnectPort frees a producer waiting for credits, as before, and now
// counts the packet it gave up.
TEST(Lifecycle, ADisconnectCountsThePacketThatWaited) {
  WaitingForCredits w("disconnect-waiting");
  ASSERT_EQ(w.header().sendStalls.load(), 1u) << "the producer never waited for credits";
  w.out->disconnectPort("waiting");
  w.producer->stop();
  EXPECT_EQ(w.header().unsent.load(), 1u);
}

namespace {

// A component whose stop takes as long as the test says.
class SlowToStop final : public Component {
 public:
  explicit SlowToStop(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("level", int64_t{3}, "anything to query");
  }
  std::promise<void> stopping, mayStop;

 protected:
  void onStop() override {
    stopping.set_value();
    mayStop.get_future().wait();
  }
};

}  // namespace

// query() answers while a stop is under way (it waited for the stop, and so
// for whatever the stop waited for: a send, a receiver's credits).
TEST(Lifecycle, QueryAnswersWhileAStopIsUnderWay) {
  auto* c = new SlowToStop({"slow-to-stop", ::testing::TempDir(), &host()});
  c->start();
  std::future<void> stopped = std::async(std::launch::async, [&] { c->stop(); });
  c->stopping.get_future().wait();
  CF::Properties q = props({{"level", integer(0)}});
  std::future<void> queried = std::async(std::launch::async, [&] { c->query(q); });
  const bool answered = within20s(queried);
  c->mayStop.set_value();
  stopped.wait();
  queried.wait();
  EXPECT_TRUE(answered) << "query() waited for the stop";
  CORBA::LongLong level = 0;
  q[0].value >>= level;
  EXPECT_EQ(level, 3);
}

// A paced producer waiting for its next slot stops at once: the wait is not
// the period's (it was: a producer one packet a minute took up to a minute
// to stop, and query waited with it). Started again, it goes on.
TEST(Lifecycle, StopDoesNotWaitForAPacedProducersNextSlot) {
  Component* p = make("producer", "slow-paced",
                      props({{"packets", integer(3)},
                             {"samples", integer(4)},
                             {"period_us", integer(60'000'000)},
                             {"record_capacity", integer(8)}}));
  Component* s = make("sink", "slow-paced-sink", props({{"record_capacity", integer(8)}}));
  CF::Port_var out = usesPort(p);
  scabench::dataDouble_var in = providesPort(s);
  out->connectPort(in, "paced");
  s->start();
  p->start();
  ASSERT_TRUE(waitForCompleted(s, 1));  // the first slot is now; the second a minute on
  std::future<void> stopped = std::async(std::launch::async, [&] { p->stop(); });
  const bool returned = within20s(stopped);
  stopped.wait();
  EXPECT_TRUE(returned) << "stop() waited for the producer's next slot";
  EXPECT_EQ(s->records().header().completed.load(), 1u);
  s->stop();
  out->disconnectPort("paced");
}

// ------------------------------------- a disconnect while a packet is in flight

namespace {

// A last stage whose upcall holds its first packet until the test lets it go:
// the sender of a two-way packet then waits in its send for the upcall's end.
class HeldSink final : public Component {
 public:
  explicit HeldSink(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>("in", [this](const PacketView<CORBA::Double>&) {
      if (held_.exchange(true)) return;
      entered.set_value();
      mayReturn_.wait();
    });
  }
  void letGo() { letGo_.set_value(); }
  std::promise<void> entered;

 private:
  std::atomic<bool> held_{false};
  std::promise<void> letGo_;
  std::shared_future<void> mayReturn_ = letGo_.get_future().share();
};

}  // namespace

// disconnectPort on an ORB thread while the component's own thread is in a
// send over the same connection: the send still holds its sender and its
// ring. (The disconnect freed the sender and unmapped the ring under the
// waiting send, and the process died of a segmentation fault: a producer
// reconnected after its end of stream crashed when its flush, still waiting
// to see the end taken, woke after the disconnect.) The send that the
// disconnect cut short is no failure of the producer's.
TEST(Reconnect, ADisconnectDuringASendLeavesTheSendItsConnection) {
  for (int round = 0; round < 5; ++round) {
    const std::string n = std::to_string(round);
    auto* sink = new HeldSink({"held-sink-" + n, ::testing::TempDir(), &host()});
    sink->configure(props({{"record_capacity", integer(8)}}));
    Component* p = make("producer", "held-producer-" + n,
                        props({{"packets", integer(3)},
                               {"samples", integer(4)},
                               {"out.call", text("twoway")},
                               {"out.transport", text("shm")},
                               {"record_capacity", integer(8)}}));
    CF::Port_var out = usesPort(p);
    scabench::dataDouble_var in = providesPort(sink);
    out->connectPort(in, "held");
    sink->start();
    p->start();
    sink->entered.get_future().wait();  // the producer's first packet is in the upcall: its send waits for it
    out->disconnectPort("held");
    p->stop();  // joins the producer's thread: its send ends before the upcall does, by the ring's closing
    sink->letGo();
    sink->stop();
    std::lock_guard lock(host().mutex);
    for (const auto& line : host().lines) EXPECT_NE(line.rfind("error held-producer-" + n + " ", 0), 0u) << line;
  }
}

// ------------------------------------------------------------- gauges

namespace {

uint64_t keywordOf(const BULKIO::PortStatistics& s, const char* id) {
  for (CORBA::ULong i = 0; i < s.keywords.length(); ++i)
    if (std::string(s.keywords[i].id.in()) == id) {
      CORBA::ULongLong v = 0;
      if (s.keywords[i].value >>= v) return v;
    }
  ADD_FAILURE() << "no keyword " << id;
  return 0;
}

// Waits until `gauge` reads `value`; false if not within 5 s (the releaser
// and worker threads move packets on their own time).
bool gaugeReaches(const std::atomic<int64_t>& gauge, int64_t value) {
  for (int i = 0; i < 500; ++i) {
    if (gauge.load() == value) return true;
    usleep(10'000);
  }
  return false;
}

}  // namespace

// A consumer whose worker is held on its first packet, behind a reorder
// buffer: the packets after it wait in the worker queue, and those after a
// missing link sequence in the reorder buffer. The record header's gauges
// and the port's statistics say so while it is held, and both go back to
// zero once it lets go and the gap is filled.
TEST(Gauges, AHeldWorkerFillsItsQueueAndAGapFillsTheReorderBuffer) {
  auto* sink = new HeldSink({"gauge-held", ::testing::TempDir(), &host()});
  sink->configure(props({{"in.worker", integer(8)},
                         {"in.ordering", text("resequence")},
                         {"in.reorder_capacity", integer(8)},
                         {"in.reorder_timeout_ms", real(60'000)},
                         {"record_capacity", integer(16)}}));
  scabench::dataDouble_var in = providesPort(sink);
  sink->start();
  RecordFileHeader& h = sink->records().header();
  push(in, 0, 0, 0);
  sink->entered.get_future().wait();  // the worker holds packet 0
  for (uint64_t n = 1; n <= 3; ++n) push(in, 0, n, n);
  EXPECT_TRUE(gaugeReaches(h.workerQueued, 3)) << h.workerQueued.load();
  push(in, 0, 5, 5);  // 4 is missing: 5 and 6 wait for it
  push(in, 0, 6, 6);
  EXPECT_TRUE(gaugeReaches(h.reorderHeld, 2)) << h.reorderHeld.load();
  EXPECT_EQ(h.workerQueued.load(), 3);
  EXPECT_EQ(h.upcalls.load(), 0);  // every call returned: the packets wait in the port, not in calls
  BULKIO::PortStatistics_var stats = in->statistics();
  EXPECT_EQ(keywordOf(stats.in(), "queued"), 3u);
  EXPECT_EQ(keywordOf(stats.in(), "reorder_held"), 2u);
  EXPECT_EQ(keywordOf(stats.in(), "pid"), uint64_t(getpid()));
  EXPECT_GE(keywordOf(stats.in(), "process_threads"), 2u);  // this test's and the worker at least
  EXPECT_GT(keywordOf(stats.in(), "process_cpu_us"), 0u);

  sink->letGo();
  push(in, 0, 4, 4);
  ASSERT_TRUE(waitForCompleted(sink, 7));
  EXPECT_TRUE(gaugeReaches(h.workerQueued, 0)) << h.workerQueued.load();
  EXPECT_TRUE(gaugeReaches(h.reorderHeld, 0)) << h.reorderHeld.load();
  stats = in->statistics();
  EXPECT_EQ(keywordOf(stats.in(), "reorder_held"), 0u);
  sink->stop();
}

// A producer under credits(2) whose receiver takes nothing: its first two
// packets are out, unacknowledged, and the third waits. The sender's gauge
// and its connection's statistics count the two; the disconnect takes them
// off the gauge (nothing will be sent on them).
TEST(Gauges, CreditsOutstandingAreCountedUntilTheConnectionGoes) {
  WaitingForCredits w("gauge-credits");
  EXPECT_TRUE(gaugeReaches(w.header().creditsOutstanding, 2)) << w.header().creditsOutstanding.load();
  CORBA::Object_var obj = w.producer->getPort("out");
  BULKIO::UsesPortStatisticsProvider_var provider = BULKIO::UsesPortStatisticsProvider::_narrow(obj);
  BULKIO::UsesPortStatisticsSequence_var stats = provider->statistics();
  ASSERT_EQ(stats->length(), 1u);
  EXPECT_EQ(keywordOf(stats[0].statistics, "credits_outstanding"), 2u);
  w.release();
  EXPECT_TRUE(gaugeReaches(w.header().creditsOutstanding, 0)) << w.header().creditsOutstanding.load();
  w.producer->stop();
}

// One-way packets over a shared-memory ring into a port served one call at
// a time, whose first upcall is held: the rest wait in the ring. Each send
// notes the messages ahead of it (the gauge), and the connection's
// statistics the ring's depth now.
TEST(Gauges, ARingBehindAHeldUpcallFillsAndTheSenderSaysHowDeep) {
  auto* sink = new HeldSink({"gauge-ring-sink", ::testing::TempDir(), &host()});
  sink->configure(props({{"in.dispatch", text("serial")}, {"record_capacity", integer(8)}}));
  Component* p = make("producer", "gauge-ring-producer",
                      props({{"packets", integer(5)},
                             {"samples", integer(4)},
                             {"out.call", text("oneway")},
                             {"out.transport", text("shm")},
                             {"record_capacity", integer(8)}}));
  CF::Port_var out = usesPort(p);
  scabench::dataDouble_var in = providesPort(sink);
  out->connectPort(in, "ring");
  sink->start();
  p->start();
  sink->entered.get_future().wait();
  // Packets 0..4 and the end of stream: the end's send finds the five ahead of it.
  RecordFileHeader& h = p->records().header();
  EXPECT_TRUE(gaugeReaches(h.ringDepth, 5)) << h.ringDepth.load();
  CORBA::Object_var obj = p->getPort("out");
  BULKIO::UsesPortStatisticsProvider_var provider = BULKIO::UsesPortStatisticsProvider::_narrow(obj);
  BULKIO::UsesPortStatisticsSequence_var stats = provider->statistics();
  ASSERT_EQ(stats->length(), 1u);
  EXPECT_EQ(keywordOf(stats[0].statistics, "ring_depth"), 6u);
  sink->letGo();
  ASSERT_TRUE(waitForCompleted(sink, 5));
  out->disconnectPort("ring");
  EXPECT_EQ(h.ringDepth.load(), 0);  // the connection's share left with it
  p->stop();
  sink->stop();
}
