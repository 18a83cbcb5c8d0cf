// The graph kinds over a real in-process omniORB: the tee (fan-out), the
// merge (fan-in of two named inputs) and the duplex (two paths in one
// component). Their outputs go to a Tap, a data port servant of the test's
// own that keeps every header and sample it is given, end of stream
// included, so that the tests see what the kinds send rather than what a
// sink makes of it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "scabench/runtime/registry.hpp"
#include "test_host.hpp"

using namespace scabench;

namespace {

// A receiving data port that keeps what it is given, in arrival order.
class Tap final : public POA_scabench::dataDouble {
 public:
  struct Packet {
    PacketHeader header;
    std::vector<double> samples;
  };

  void pushPacket(const PacketHeader& h, const CORBA::DoubleSeq& data) override { keep(h, data); }
  void pushPacketOneway(const PacketHeader& h, const CORBA::DoubleSeq& data) override { keep(h, data); }
  void syncMarker() override {}
  BULKIO::PortUsageType state() override { return BULKIO::IDLE; }  // the test watches no statistics
  BULKIO::PortStatistics* statistics() override { return new BULKIO::PortStatistics(); }
  void attachSender(CORBA::ULongLong token, scabench::FlowControl_ptr) override {
    std::lock_guard lock(mutex_);
    tokens_.insert(token);
  }
  void attachSharedRing(CORBA::ULongLong, scabench::FlowControl_ptr, const char*) override {
    throw CF::Port::InvalidPort(1, "the test's tap takes no shared-memory ring");
  }
  void detachSender(CORBA::ULongLong token) override {
    std::lock_guard lock(mutex_);
    tokens_.erase(token);
  }

  std::vector<Packet> packets() {
    std::lock_guard lock(mutex_);
    return packets_;
  }
  std::vector<PacketHeader> ends() {
    std::lock_guard lock(mutex_);
    return ends_;
  }
  // Waits until `n` ends of stream came; false if not within 20 s (the test
  // fails instead of hanging; nothing here is timed).
  bool waitForEnds(std::size_t n) {
    for (int i = 0; i < 2000; ++i) {
      if (ends().size() >= n) return true;
      usleep(10'000);
    }
    return false;
  }
  // What came after the last end of stream: a packet there came too late.
  bool endIsLast() {
    std::lock_guard lock(mutex_);
    return !order_.empty() && order_.back();
  }
  // Packets or ends from a connection that is not attached.
  int strangers() {
    std::lock_guard lock(mutex_);
    return strangers_;
  }

 private:
  void keep(const PacketHeader& h, const CORBA::DoubleSeq& data) {
    std::lock_guard lock(mutex_);
    if (!tokens_.count(h.connection_token)) ++strangers_;
    order_.push_back(h.end_of_stream);
    if (h.end_of_stream) {
      ends_.push_back(h);
      return;
    }
    packets_.push_back({h, std::vector<double>(data.get_buffer(), data.get_buffer() + data.length())});
  }

  std::mutex mutex_;
  std::set<uint64_t> tokens_;
  std::vector<Packet> packets_;
  std::vector<PacketHeader> ends_;
  std::vector<bool> order_;  // per arrival: an end of stream?
  int strangers_ = 0;
};

// A tap activated on the test host's root POA, held for the test's life.
struct ActiveTap {
  ActiveTap() {
    PortableServer::ObjectId_var id = host().root->activate_object(tap);
    CORBA::Object_var obj = host().root->id_to_reference(id);
    ref = scabench::dataDouble::_narrow(obj);
  }
  Tap* tap = new Tap;  // owned by the POA once activated (reference counted)
  scabench::dataDouble_var ref;
  Tap* operator->() { return tap; }
};

Component* make(const char* kind, const std::string& name, CF::Properties p = {}) {
  Component* c = createComponent(kind, "double", {name, ::testing::TempDir(), &host()});
  c->configure(p);
  return c;
}

CF::Port_ptr usesPort(Component* c, const char* port) {
  CORBA::Object_var obj = c->getPort(port);
  return CF::Port::_narrow(obj);
}

scabench::dataDouble_ptr providesPort(Component* c, const char* port) {
  CORBA::Object_var obj = c->getPort(port);
  return scabench::dataDouble::_narrow(obj);
}

// A packet of 4 samples, each its sequence number, pushed by hand as the
// connection `token` would send it.
void push(scabench::dataDouble_ptr in, uint64_t token, uint64_t link, uint64_t sequence, uint32_t stream) {
  PacketHeader h{};
  h.stream_id = stream;
  h.sequence_number = sequence;
  h.send_time_ns = 1000 + sequence;
  h.link_sequence = link;
  h.connection_token = token;
  CORBA::DoubleSeq data;
  data.length(4);
  for (CORBA::ULong i = 0; i < 4; ++i) data[i] = double(sequence);
  in->pushPacket(h, data);
}

void pushEndOfStream(scabench::dataDouble_ptr in, uint64_t token, uint64_t link, uint64_t count, uint32_t stream) {
  PacketHeader h{};
  h.stream_id = stream;
  h.sequence_number = count;
  h.link_sequence = link;
  h.connection_token = token;
  h.end_of_stream = true;
  in->pushPacket(h, CORBA::DoubleSeq());
}

// The sequence numbers of a tap's packets of one stream, in arrival order.
std::vector<uint64_t> sequencesOf(const std::vector<Tap::Packet>& packets, uint32_t stream) {
  std::vector<uint64_t> out;
  for (const auto& p : packets)
    if (p.header.stream_id == stream) out.push_back(p.header.sequence_number);
  return out;
}

std::vector<uint64_t> upTo(uint64_t n) {
  std::vector<uint64_t> out;
  for (uint64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

uint32_t refusals(Component* c) {
  uint32_t n = 0;
  for (const auto& r : c->records().header().refused) n += r.load();
  return n;
}

}  // namespace

// A producer into a tee into two taps: each tap gets every packet once, in
// order, with the producer's header (stream id, sequence number, send
// time) and samples, and one end of stream announcing them all.
TEST(Tee, EachPacketGoesToBothOutputsWithItsHeader) {
  constexpr int kPackets = 12, kSamples = 4;
  Component* p = make("producer", "tee-producer",
                      props({{"packets", integer(kPackets)},
                             {"samples", integer(kSamples)},
                             {"stream_id", integer(7)},
                             {"signal", text("ramp")},
                             {"record_capacity", integer(64)}}));
  Component* tee = make("tee", "tee", props({{"work", text("none")}, {"record_capacity", integer(64)}}));
  ActiveTap a, b;
  CF::Port_var pOut = usesPort(p, "out"), outA = usesPort(tee, "out_a"), outB = usesPort(tee, "out_b");
  scabench::dataDouble_var teeIn = providesPort(tee, "in");
  outA->connectPort(a.ref, "tee-a");
  outB->connectPort(b.ref, "tee-b");
  pOut->connectPort(teeIn, "producer-tee");
  tee->start();
  p->start();
  ASSERT_TRUE(a->waitForEnds(1));
  ASSERT_TRUE(b->waitForEnds(1));
  p->stop();
  tee->stop();

  const auto fromA = a->packets(), fromB = b->packets();
  ASSERT_EQ(fromA.size(), std::size_t(kPackets));
  ASSERT_EQ(fromB.size(), std::size_t(kPackets));
  EXPECT_EQ(sequencesOf(fromA, 7), upTo(kPackets));
  for (int k = 0; k < kPackets; ++k) {
    // The same header on both outputs, stamped once by the producer.
    EXPECT_EQ(fromA[k].header.stream_id, 7u);
    EXPECT_EQ(fromB[k].header.stream_id, 7u);
    EXPECT_EQ(fromA[k].header.sequence_number, fromB[k].header.sequence_number);
    EXPECT_EQ(fromA[k].header.send_time_ns, fromB[k].header.send_time_ns);
    EXPECT_GT(fromA[k].header.send_time_ns, 0u);
    // The producer's ramp: sample j of the stream is 100 j / (packets * samples).
    ASSERT_EQ(fromA[k].samples.size(), std::size_t(kSamples));
    for (int i = 0; i < kSamples; ++i)
      EXPECT_DOUBLE_EQ(fromA[k].samples[i], 100.0 * double(k * kSamples + i) / double(kPackets * kSamples));
    EXPECT_EQ(fromA[k].samples, fromB[k].samples);
  }
  for (ActiveTap* t : {&a, &b}) {
    const auto ends = (*t)->ends();
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_EQ(ends[0].sequence_number, uint64_t(kPackets));  // the count it announces
    EXPECT_EQ(ends[0].stream_id, 7u);
    EXPECT_TRUE((*t)->endIsLast());
    EXPECT_EQ((*t)->strangers(), 0);
  }
  // One record per packet handled; its outputs connected, the tee tells
  // the launcher nothing.
  EXPECT_EQ(tee->records().header().completed.load(), uint64_t(kPackets));
  EXPECT_EQ(host().ends("tee"), 0);
  EXPECT_EQ(refusals(tee), 0u);
}

// Two producers into a merge's two inputs: every packet of both reaches the
// output with its own stream id and sequence number, and one end of stream
// after both inputs ended, announcing all of them.
TEST(Merge, ForwardsBothInputsWithTheirStreamIds) {
  Component* p1 = make("producer", "merge-p1",
                       props({{"packets", integer(10)},
                              {"samples", integer(4)},
                              {"stream_id", integer(1)},
                              {"record_capacity", integer(32)}}));
  Component* p2 = make("producer", "merge-p2",
                       props({{"packets", integer(15)},
                              {"samples", integer(4)},
                              {"stream_id", integer(2)},
                              {"record_capacity", integer(32)}}));
  Component* merge = make("merge", "merge", props({{"record_capacity", integer(64)}}));
  ActiveTap tap;
  CF::Port_var out1 = usesPort(p1, "out"), out2 = usesPort(p2, "out"), mergeOut = usesPort(merge, "out");
  scabench::dataDouble_var inA = providesPort(merge, "in_a"), inB = providesPort(merge, "in_b");
  mergeOut->connectPort(tap.ref, "merge-tap");
  out1->connectPort(inA, "p1-merge");
  out2->connectPort(inB, "p2-merge");
  merge->start();
  p1->start();
  p2->start();
  ASSERT_TRUE(tap->waitForEnds(1));
  p1->stop();
  p2->stop();
  merge->stop();

  const auto packets = tap->packets();
  EXPECT_EQ(packets.size(), 25u);
  EXPECT_EQ(sequencesOf(packets, 1), upTo(10));
  EXPECT_EQ(sequencesOf(packets, 2), upTo(15));
  const auto ends = tap->ends();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].sequence_number, 25u);
  EXPECT_TRUE(tap->endIsLast());
  EXPECT_EQ(merge->records().header().completed.load(), 25u);
  EXPECT_EQ(host().ends("merge"), 0);
  EXPECT_EQ(refusals(merge), 0u);
}

// The merge's end of stream waits for both inputs, whichever ends first,
// and each stream after a start is counted afresh.
TEST(Merge, EndsOnlyOnceBothInputsEnded) {
  constexpr uint64_t kA = 0xa, kB = 0xb;
  Component* merge = make("merge", "merge-by-hand", props({{"record_capacity", integer(32)}}));
  ActiveTap tap;
  CF::Port_var out = usesPort(merge, "out");
  out->connectPort(tap.ref, "merge-by-hand-tap");
  scabench::dataDouble_var inA = providesPort(merge, "in_a"), inB = providesPort(merge, "in_b");
  inA->attachSender(kA, scabench::FlowControl::_nil());
  inB->attachSender(kB, scabench::FlowControl::_nil());
  merge->start();
  push(inB, kB, 0, 0, 2);
  push(inA, kA, 0, 0, 1);
  push(inA, kA, 1, 1, 1);
  pushEndOfStream(inA, kA, 2, 2, 1);
  EXPECT_EQ(tap->ends().size(), 0u);  // in_b's stream goes on
  push(inB, kB, 1, 1, 2);
  push(inB, kB, 2, 2, 2);
  EXPECT_EQ(tap->ends().size(), 0u);
  pushEndOfStream(inB, kB, 3, 3, 2);
  ASSERT_EQ(tap->ends().size(), 1u);
  EXPECT_EQ(tap->ends()[0].sequence_number, 5u);
  // The packets went on as they came, each with its own header.
  const auto packets = tap->packets();
  ASSERT_EQ(packets.size(), 5u);
  EXPECT_EQ(packets[0].header.stream_id, 2u);
  EXPECT_EQ(packets[0].header.send_time_ns, 1000u);
  EXPECT_EQ(packets[0].samples, std::vector<double>(4, 0.0));
  EXPECT_EQ(sequencesOf(packets, 1), upTo(2));
  EXPECT_EQ(sequencesOf(packets, 2), upTo(3));
  // A second stream, after a stop and a start: its own count.
  merge->stop();
  merge->start();
  push(inA, kA, 3, 0, 1);
  pushEndOfStream(inA, kA, 4, 1, 1);
  pushEndOfStream(inB, kB, 4, 0, 2);
  ASSERT_EQ(tap->ends().size(), 2u);
  EXPECT_EQ(tap->ends()[1].sequence_number, 1u);
  EXPECT_EQ(refusals(merge), 0u);
  merge->stop();
}

// The duplex keeps its paths apart: what comes in on tx_in leaves on
// tx_out only, rx_in's on rx_out only, and each path's end of stream goes
// down its own output when its own input ends, announcing its own packets
// with its own stream id, while the other path goes on.
TEST(Duplex, KeepsItsPathsApartAndEndsEachOnItsOwn) {
  constexpr uint64_t kTx = 0x7, kRx = 0x8;
  constexpr uint32_t kTxStream = 3, kRxStream = 4;
  Component* duplex = make("duplex", "duplex", props({{"record_capacity", integer(32)}}));
  ActiveTap txTap, rxTap;
  CF::Port_var txOut = usesPort(duplex, "tx_out"), rxOut = usesPort(duplex, "rx_out");
  txOut->connectPort(txTap.ref, "duplex-tx");
  rxOut->connectPort(rxTap.ref, "duplex-rx");
  scabench::dataDouble_var txIn = providesPort(duplex, "tx_in"), rxIn = providesPort(duplex, "rx_in");
  txIn->attachSender(kTx, scabench::FlowControl::_nil());
  rxIn->attachSender(kRx, scabench::FlowControl::_nil());
  duplex->start();
  for (uint64_t k = 0; k < 3; ++k) push(txIn, kTx, k, k, kTxStream);
  push(rxIn, kRx, 0, 0, kRxStream);
  push(rxIn, kRx, 1, 1, kRxStream);
  pushEndOfStream(txIn, kTx, 3, 3, kTxStream);
  // TX has ended; RX goes on.
  ASSERT_EQ(txTap->ends().size(), 1u);
  EXPECT_EQ(txTap->ends()[0].sequence_number, 3u);
  EXPECT_EQ(txTap->ends()[0].stream_id, kTxStream);
  EXPECT_TRUE(rxTap->ends().empty());
  push(rxIn, kRx, 2, 2, kRxStream);
  push(rxIn, kRx, 3, 3, kRxStream);
  pushEndOfStream(rxIn, kRx, 4, 4, kRxStream);
  ASSERT_EQ(rxTap->ends().size(), 1u);
  EXPECT_EQ(rxTap->ends()[0].sequence_number, 4u);
  EXPECT_EQ(rxTap->ends()[0].stream_id, kRxStream);
  EXPECT_EQ(txTap->ends().size(), 1u);  // not ended a second time when RX ended

  const auto tx = txTap->packets(), rx = rxTap->packets();
  EXPECT_EQ(tx.size(), 3u);
  EXPECT_EQ(rx.size(), 4u);
  EXPECT_EQ(sequencesOf(tx, kTxStream), upTo(3));
  EXPECT_EQ(sequencesOf(rx, kRxStream), upTo(4));
  EXPECT_EQ(tx[2].samples, std::vector<double>(4, 2.0));
  EXPECT_EQ(rx[3].header.send_time_ns, 1003u);
  EXPECT_TRUE(txTap->endIsLast());
  EXPECT_TRUE(rxTap->endIsLast());
  EXPECT_EQ(host().ends("duplex"), 0);  // its outputs connected: nothing for the launcher

  // Each start's streams end anew, each path counting its own from 0.
  duplex->stop();
  duplex->start();
  push(txIn, kTx, 4, 0, kTxStream);
  pushEndOfStream(txIn, kTx, 5, 1, kTxStream);
  pushEndOfStream(rxIn, kRx, 5, 0, kRxStream);
  ASSERT_EQ(txTap->ends().size(), 2u);
  ASSERT_EQ(rxTap->ends().size(), 2u);
  EXPECT_EQ(txTap->ends()[1].sequence_number, 1u);
  EXPECT_EQ(rxTap->ends()[1].sequence_number, 0u);
  EXPECT_EQ(duplex->records().header().completed.load(), 8u);  // one record per packet, both paths
  EXPECT_EQ(refusals(duplex), 0u);
  duplex->stop();
}

// A duplex with neither output connected ends the run's stream for the
// launcher once both paths have ended, announcing both paths' packets.
TEST(Duplex, WithNoOutputConnectedTellsTheLauncherOnceBothPathsEnded) {
  constexpr uint64_t kTx = 0x17, kRx = 0x18;
  Component* duplex = make("duplex", "duplex-alone", props({{"record_capacity", integer(32)}}));
  scabench::dataDouble_var txIn = providesPort(duplex, "tx_in"), rxIn = providesPort(duplex, "rx_in");
  txIn->attachSender(kTx, scabench::FlowControl::_nil());
  rxIn->attachSender(kRx, scabench::FlowControl::_nil());
  duplex->start();
  push(txIn, kTx, 0, 0, 1);
  push(txIn, kTx, 1, 1, 1);
  pushEndOfStream(txIn, kTx, 2, 2, 1);
  EXPECT_EQ(host().ends("duplex-alone"), 0);
  push(rxIn, kRx, 0, 0, 2);
  pushEndOfStream(rxIn, kRx, 1, 1, 2);
  EXPECT_EQ(host().ends("duplex-alone"), 1);
  {
    std::lock_guard lock(host().mutex);
    EXPECT_NE(std::find(host().lines.begin(), host().lines.end(), "eos duplex-alone 3"), host().lines.end());
  }
  duplex->stop();
}

// Each path's work is its own set of properties, changeable while the
// component runs as the stage's; the tee's and the merge's are the stage's
// own keys, with no work by default.
TEST(GraphKinds, DeclareTheStagesWorkPropertiesWithNoWorkByDefault) {
  Component* duplex = make("duplex", "duplex-props");
  Component* tee = make("tee", "tee-props");
  Component* merge = make("merge", "merge-props");
  for (const char* prefix : {"tx_", "rx_"})
    for (const char* key : {"work", "work_us", "work_jitter_us"}) {
      const auto& entries = duplex->properties().entries();
      const auto it = entries.find(std::string(prefix) + key);
      ASSERT_NE(it, entries.end()) << prefix << key;
      EXPECT_EQ(it->second.declaration.configurable, Configurable::AnyTime) << prefix << key;
    }
  for (Component* c : {tee, merge}) {
    EXPECT_EQ(c->properties().integer("work_us"), 0);
    EXPECT_EQ(c->properties().entries().at("work_us").declaration.configurable, Configurable::AnyTime);
    EXPECT_EQ(c->properties().entries().at("work").declaration.values,
              (std::vector<std::string>{"none", "cpu", "sleep"}));
  }
  duplex->start();
  duplex->configure(props({{"tx_work_us", integer(7)}, {"rx_work", text("sleep")}}));
  EXPECT_EQ(duplex->properties().integer("tx_work_us"), 7);
  EXPECT_EQ(duplex->properties().integer("rx_work_us"), 0);
  EXPECT_EQ(duplex->properties().text("rx_work"), "sleep");
  EXPECT_EQ(duplex->properties().text("tx_work"), "cpu");
  duplex->stop();
  EXPECT_EQ(duplex->providesPorts(), (std::vector<std::string>{"tx_in", "rx_in"}));
  EXPECT_EQ(duplex->usesPorts(), (std::vector<std::string>{"tx_out", "rx_out"}));
  EXPECT_EQ(tee->usesPorts(), (std::vector<std::string>{"out_a", "out_b"}));
  EXPECT_EQ(merge->providesPorts(), (std::vector<std::string>{"in_a", "in_b"}));
  for (Component* c : {duplex, tee, merge}) c->_remove_ref();
}
