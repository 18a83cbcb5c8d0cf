// BulkIO on the runtime's ports over a real in-process omniORB: a provides
// port whose protocol is bulkio, fed by a client as a REDHAWK uses port
// would feed it (pushSRI, pushPacket with T, EOS and streamID), and a uses
// port that finds a BulkIO peer at connectPort and speaks BulkIO to it.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "scabench/runtime/bulkio_port.hpp"
#include "scabench/runtime/latency_histogram.hpp"
#include "test_host.hpp"

using namespace scabench;

namespace {

constexpr auto kPatience = std::chrono::seconds(20);  // a failing test fails instead of hanging; nothing is timed

struct Got {
  uint32_t stream;
  uint64_t position;
  uint64_t sentNs;
  std::size_t samples;
};

// A last stage whose provides port speaks BulkIO, keeping what it received.
class Receiver final : public Component {
 public:
  explicit Receiver(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>("in", [this](const PacketView<CORBA::Double>& p) {
      std::lock_guard lock(mutex_);
      got_.push_back({p.header.stream_id, p.header.sequence_number, p.header.send_time_ns, p.count});
      changed_.notify_all();
    });
    configure(props({{"record_capacity", integer(64)}, {"in.protocol", text("bulkio")}}));
  }
  bool received(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return got_.size() >= n; });
  }
  std::vector<Got> got() {
    std::lock_guard lock(mutex_);
    return got_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Got> got_;
};

// A source the test drives through one uses port.
class Source final : public Component {
 public:
  Source(const ComponentContext& ctx, const char* protocol, const char* call = "twoway") : Component(ctx) {
    out = &addOutPort<CORBA::Double>("out");
    configure(props({{"record_capacity", integer(64)}, {"out.protocol", text(protocol)}, {"out.call", text(call)}}));
  }
  void send(uint32_t stream, uint64_t count) {
    const double samples[4] = {1, 2, 3, 4};
    for (uint64_t s = 0; s < count; ++s) {
      PacketHeader h{};
      h.stream_id = stream;
      h.sequence_number = s;
      h.send_time_ns = uint64_t(monotonicNs());
      out->push(h, samples, 4);
    }
  }
  void finish(uint32_t stream, uint64_t count) { endStream(count, stream); }
  CF::Port_ptr port() {
    CORBA::Object_var obj = getPort("out");
    return CF::Port::_narrow(obj);
  }
  OutPort<CORBA::Double>* out;
};

// A last stage of scabench's own protocol.
class Own final : public Component {
 public:
  explicit Own(const ComponentContext& ctx) : Component(ctx) {
    addInPort<CORBA::Double>("in", [](const PacketView<CORBA::Double>&) {});
  }
};

BULKIO::dataDouble_ptr bulkioPort(Component& c) {
  CORBA::Object_var obj = c.getPort("in");
  return BULKIO::dataDouble::_narrow(obj);
}

PortTypes::DoubleSequence samples(CORBA::ULong n) {
  PortTypes::DoubleSequence s(n);
  s.length(n);
  for (CORBA::ULong i = 0; i < n; ++i) s[i] = double(i);
  return s;
}

BULKIO::StreamSRI sriFor(const char* streamID) {
  BULKIO::StreamSRI sri{};
  sri.hversion = 1;
  sri.xdelta = 0.001;
  sri.streamID = streamID;
  return sri;
}

uint64_t keyword(const BULKIO::PortStatistics& s, const char* id) {
  for (CORBA::ULong i = 0; i < s.keywords.length(); ++i)
    if (std::string(s.keywords[i].id.in()) == id) {
      CORBA::ULongLong v = 0;
      if (s.keywords[i].value >>= v) return v;
    }
  ADD_FAILURE() << "no keyword " << id;
  return 0;
}

}  // namespace

TEST(Bulkio, AProvidesPortAnswersBulkioAndItsStreamsEndItsStream) {
  // Made for the test program's life, as the other runtime tests' are: their
  // servants stay active in the host's POAs.
  Receiver& r = *new Receiver({"bulkio-rx", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  ASSERT_FALSE(CORBA::is_nil(port));
  EXPECT_TRUE(port->_is_a("IDL:BULKIO/dataDouble:1.0"));
  EXPECT_FALSE(port->_is_a("IDL:scabench/dataDouble:1.0"));  // one protocol per port
  CF::PortSet::PortInfoSequence_var listed = r.getPortSet();
  ASSERT_EQ(listed->length(), 1u);
  EXPECT_STREQ(listed[0].repid.in(), "IDL:BULKIO/dataDouble:1.0");  // getPortSet answers as getPort does
  r.start();
  EXPECT_EQ(port->state(), BULKIO::IDLE);

  // The SRI opens its stream and is kept.
  port->pushSRI(sriFor("7"));
  EXPECT_EQ(port->state(), BULKIO::ACTIVE);
  {
    BULKIO::StreamSRISequence_var sris = port->activeSRIs();
    ASSERT_EQ(sris->length(), 1u);
    EXPECT_STREQ(sris[0].streamID.in(), "7");
    EXPECT_DOUBLE_EQ(sris[0].xdelta, 0.001);
  }

  // Stream "7" (a number: its own id) and stream "voice" (a name: the
  // port's first named id); the fourth packet of "7" was sent before the
  // third: T went backwards.
  const int64_t base = monotonicNs();
  const auto at = [&](int64_t ms) { return bulkio::utcTime(base + ms * 1'000'000); };
  port->pushPacket(samples(4), at(1), false, "7");
  port->pushPacket(samples(4), at(2), false, "7");
  port->pushPacket(samples(8), at(3), false, "voice");
  port->pushPacket(samples(4), at(5), false, "7");
  port->pushPacket(samples(4), at(4), false, "7");
  ASSERT_TRUE(r.received(5));
  const std::vector<Got> got = r.got();
  const std::vector<std::pair<uint32_t, uint64_t>> expected = {
      {7, 0}, {7, 1}, {bulkio::kFirstNamedStream, 0}, {7, 2}, {7, 3}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i].stream, expected[i].first) << i;
    EXPECT_EQ(got[i].position, expected[i].second) << i;  // its place in its stream as received
  }
  // T back on this machine's monotonic clock (the realtime offset read at
  // each end: within a millisecond of each other).
  EXPECT_NEAR(double(got[0].sentNs), double(base + 1'000'000), 1e6);
  EXPECT_EQ(got[2].samples, 8u);

  // EOS ends its stream; the port's stream ends once every stream has.
  port->pushPacket(PortTypes::DoubleSequence(), at(6), true, "7");
  EXPECT_EQ(host().ends("bulkio-rx"), 0);
  {
    BULKIO::StreamSRISequence_var sris = port->activeSRIs();
    EXPECT_EQ(sris->length(), 0u);  // the SRI went with its stream
  }
  port->pushPacket(PortTypes::DoubleSequence(), at(7), true, "voice");
  EXPECT_TRUE(host().waitForEnds("bulkio-rx", 1));
  EXPECT_EQ(port->state(), BULKIO::IDLE);

  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_STREQ(stats->portName.in(), "in");
  EXPECT_EQ(keyword(stats.in(), "calls"), 7u);  // five packets, two ends
  EXPECT_EQ(keyword(stats.in(), "elements"), 24u);
  EXPECT_EQ(keyword(stats.in(), "t_backwards"), 1u);
  EXPECT_GT(stats->callsPerSecond, 0.0f);
  EXPECT_GT(stats->bitsPerSecond, stats->elementsPerSecond);  // 64 bits an element
  EXPECT_EQ(stats->streamIDs.length(), 0u);
  r.stop();
}

TEST(Bulkio, AUsesPortFindsABulkioPeerAndSpeaksBulkioToIt) {
  Receiver& r = *new Receiver({"bulkio-peer", ::testing::TempDir(), &host()});
  Source& s = *new Source({"bulkio-src", ::testing::TempDir(), &host()}, "scabench");
  BULKIO::dataDouble_var port = bulkioPort(r);
  CF::Port_var out = s.port();
  out->connectPort(port, "c1");
  r.start();
  s.start();
  s.send(3, 5);
  s.finish(3, 5);
  ASSERT_TRUE(r.received(5));
  EXPECT_TRUE(host().waitForEnds("bulkio-peer", 1));
  for (const Got& g : r.got()) EXPECT_EQ(g.stream, 3u);
  EXPECT_EQ(r.got().back().position, 4u);

  const std::vector<UsesConnectionCounts> counts = s.out->connectionCounts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].protocol, "bulkio");
  EXPECT_EQ(counts[0].sent, 5u);

  CORBA::Object_var obj = s.getPort("out");
  BULKIO::UsesPortStatisticsProvider_var provider = BULKIO::UsesPortStatisticsProvider::_narrow(obj);
  ASSERT_FALSE(CORBA::is_nil(provider));
  BULKIO::UsesPortStatisticsSequence_var stats = provider->statistics();
  ASSERT_EQ(stats->length(), 1u);
  EXPECT_STREQ(stats[0].connectionId.in(), "c1");
  EXPECT_EQ(keyword(stats[0].statistics, "calls"), 5u);
  EXPECT_EQ(keyword(stats[0].statistics, "elements"), 20u);
  s.stop();
  r.stop();
}

TEST(Bulkio, WhatBulkioCannotCarryIsRefusedAtConnect) {
  Receiver& r = *new Receiver({"bulkio-refuser", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  Source& oneway = *new Source({"bulkio-oneway", ::testing::TempDir(), &host()}, "scabench", "oneway");
  CF::Port_var out = oneway.port();
  EXPECT_THROW(out->connectPort(port, "c1"), CF::Port::InvalidPort);

  // A port told to speak BulkIO refuses a peer that is scabench's own.
  Source& asked = *new Source({"bulkio-asked", ::testing::TempDir(), &host()}, "bulkio");
  Component& own = *new Own({"bulkio-own", ::testing::TempDir(), &host()});
  CORBA::Object_var ownPort = own.getPort("in");
  CF::Port_var askedOut = asked.port();
  EXPECT_THROW(askedOut->connectPort(ownPort, "c1"), CF::Port::InvalidPort);
}

TEST(Bulkio, TheEndOfAUsesPortsOutputEndsEveryStreamItSent) {
  // A stage that forwards two streams ends its output once; the BulkIO peer
  // ends only once both streams have.
  Receiver& r = *new Receiver({"bulkio-two-streams", ::testing::TempDir(), &host()});
  Source& s = *new Source({"bulkio-two-src", ::testing::TempDir(), &host()}, "bulkio");
  BULKIO::dataDouble_var port = bulkioPort(r);
  CF::Port_var out = s.port();
  out->connectPort(port, "c1");
  r.start();
  s.start();
  s.send(3, 2);
  s.send(4, 2);
  s.finish(4, 4);
  ASSERT_TRUE(r.received(4));
  EXPECT_TRUE(host().waitForEnds("bulkio-two-streams", 1));
  s.stop();
  r.stop();
}

TEST(Bulkio, AStartClosesTheStreamsLeftOpenAndAStoppedPortOpensNone) {
  Receiver& r = *new Receiver({"bulkio-restart", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  r.start();
  const auto now = [] { return bulkio::utcTime(monotonicNs()); };
  port->pushPacket(samples(4), now(), false, "5");  // its sender never ends it
  ASSERT_TRUE(r.received(1));
  r.stop();

  // Stopped: an SRI opens no stream (its EOS would be refused).
  port->pushSRI(sriFor("9"));
  {
    BULKIO::StreamSRISequence_var sris = port->activeSRIs();
    EXPECT_EQ(sris->length(), 0u);
  }

  // Started again: stream "5" is closed, so one stream and its EOS end the
  // port's stream.
  r.start();
  EXPECT_EQ(port->state(), BULKIO::IDLE);
  port->pushSRI(sriFor("6"));
  port->pushPacket(samples(4), now(), false, "6");
  ASSERT_TRUE(r.received(2));
  port->pushPacket(PortTypes::DoubleSequence(), now(), true, "6");
  EXPECT_TRUE(host().waitForEnds("bulkio-restart", 1));
  {
    BULKIO::StreamSRISequence_var sris = port->activeSRIs();
    EXPECT_EQ(sris->length(), 0u);
  }
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(stats->streamIDs.length(), 0u);
  r.stop();
}

TEST(Bulkio, OnlyCanonicalNumbersBelowTheNamedStreamsAreNumbers) {
  uint32_t n = 99;
  EXPECT_TRUE(bulkio::parseStreamNumber("0", n));
  EXPECT_EQ(n, 0u);
  EXPECT_TRUE(bulkio::parseStreamNumber("7", n));
  EXPECT_EQ(n, 7u);
  EXPECT_TRUE(bulkio::parseStreamNumber("32767", n));
  EXPECT_FALSE(bulkio::parseStreamNumber("07", n));
  EXPECT_FALSE(bulkio::parseStreamNumber("32768", n));
  EXPECT_FALSE(bulkio::parseStreamNumber("+7", n));
  EXPECT_FALSE(bulkio::parseStreamNumber("", n));

  // "32768" and the first named stream, "07" and "7": each its own id.
  bulkio::Streams streams;
  const uint32_t big = streams.packet("32768", 0).streamId;
  const uint32_t voice = streams.packet("voice", 0).streamId;
  const uint32_t padded = streams.packet("07", 0).streamId;
  const uint32_t seven = streams.packet("7", 0).streamId;
  EXPECT_NE(big, voice);
  EXPECT_NE(padded, seven);
  EXPECT_EQ(seven, 7u);
  EXPECT_GE(padded, bulkio::kFirstNamedStream);
}

TEST(Bulkio, ATIsASendTimeOnlyWithinBootAndArrival) {
  const int64_t now = monotonicNs();
  const BULKIO::PrecisionUTCTime valid = bulkio::utcTime(now - 1'000'000);  // a millisecond before
  const std::optional<int64_t> sent = bulkio::sendTime(valid, now);
  ASSERT_TRUE(sent.has_value());
  EXPECT_NEAR(double(*sent), double(now - 1'000'000), 1e5);  // the realtime offset read twice

  const auto with = [&](auto change) {
    BULKIO::PrecisionUTCTime t = valid;
    change(t);
    return bulkio::sendTime(t, now);
  };
  EXPECT_FALSE(with([](auto& t) { t.tcstatus = BULKIO::TCS_INVALID; }));
  EXPECT_FALSE(with([](auto& t) { t.twsec = 1e300; }));
  EXPECT_FALSE(with([](auto& t) { t.twsec = std::numeric_limits<double>::quiet_NaN(); }));
  EXPECT_FALSE(with([](auto& t) { t.tfsec = std::numeric_limits<double>::quiet_NaN(); }));
  EXPECT_FALSE(with([](auto& t) { t.twsec = std::numeric_limits<double>::infinity(); }));
  EXPECT_FALSE(with([](auto& t) { t.twsec = -1; }));
  EXPECT_FALSE(with([](auto& t) { t.tfsec = -0.25; }));
  EXPECT_FALSE(with([](auto& t) { t.tfsec = 1.0; }));
  EXPECT_FALSE(with([](auto& t) { t.twsec = 0; }));  // 1970: before this machine booted
  // Before boot by a second: the monotonic clock's zero in UTC, less one.
  const BULKIO::PrecisionUTCTime boot = bulkio::utcTime(1);
  EXPECT_FALSE(with([&](auto& t) { t = boot, t.twsec -= 1; }));
  // Ahead of the arrival: within the allowance a send time, beyond it none.
  const int64_t within = now + bulkio::kFutureAllowanceNs / 2, beyond = now + 2 * bulkio::kFutureAllowanceNs;
  EXPECT_TRUE(bulkio::sendTime(bulkio::utcTime(within), now));
  EXPECT_FALSE(bulkio::sendTime(bulkio::utcTime(beyond), now));
  // No send time goes out as a T that is not set, and comes back as none.
  const BULKIO::PrecisionUTCTime none = bulkio::utcTime(int64_t(bulkio::kNoSendTime));
  EXPECT_EQ(none.tcstatus, BULKIO::TCS_INVALID);
  EXPECT_FALSE(bulkio::sendTime(none, now));
}

TEST(Bulkio, APacketWhoseTIsNoTimeIsDeliveredWithoutASendTimeAndCounted) {
  Receiver& r = *new Receiver({"bulkio-bad-t", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  r.start();
  BULKIO::PrecisionUTCTime bad = bulkio::utcTime(monotonicNs());
  bad.twsec = 1e300;
  port->pushPacket(samples(4), bulkio::utcTime(monotonicNs()), false, "1");
  port->pushPacket(samples(4), bad, false, "1");
  BULKIO::PrecisionUTCTime unset = bulkio::utcTime(monotonicNs());
  unset.tcstatus = BULKIO::TCS_INVALID;
  port->pushPacket(samples(4), unset, false, "1");
  port->pushPacket(samples(4), bulkio::utcTime(monotonicNs()), false, "1");
  ASSERT_TRUE(r.received(4));
  const std::vector<Got> got = r.got();
  EXPECT_NE(got[0].sentNs, bulkio::kNoSendTime);
  EXPECT_EQ(got[1].sentNs, bulkio::kNoSendTime);
  EXPECT_EQ(got[2].sentNs, bulkio::kNoSendTime);
  EXPECT_NE(got[3].sentNs, bulkio::kNoSendTime);
  EXPECT_EQ(got[3].position, 3u);                                   // still its stream's packets, in their places
  port->pushPacket(PortTypes::DoubleSequence(), unset, true, "1");  // an end's T is not judged
  EXPECT_TRUE(host().waitForEnds("bulkio-bad-t", 1));
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(keyword(stats.in(), "t_invalid"), 2u);
  EXPECT_EQ(keyword(stats.in(), "t_backwards"), 0u);  // judged against the last packet that had a time
  EXPECT_EQ(keyword(stats.in(), "calls"), 5u);
  r.stop();
}

TEST(Bulkio, ACallWhileStoppedCountsAsRefusedNotAsACall) {
  Receiver& r = *new Receiver({"bulkio-stopped-calls", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  port->pushPacket(samples(4), bulkio::utcTime(monotonicNs()), false, "1");  // before any start
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(keyword(stats.in(), "calls"), 0u);
  EXPECT_EQ(keyword(stats.in(), "elements"), 0u);
  EXPECT_EQ(keyword(stats.in(), "refused"), 1u);
  r.start();
  port->pushPacket(samples(4), bulkio::utcTime(monotonicNs()), false, "1");
  ASSERT_TRUE(r.received(1));
  stats = port->statistics();
  EXPECT_EQ(keyword(stats.in(), "calls"), 1u);
  EXPECT_EQ(keyword(stats.in(), "elements"), 4u);
  r.stop();
}

TEST(Bulkio, ADisconnectEndsTheStreamsOpenOnTheConnection) {
  // As BulkIO's uses ports do: disconnectPort sends an empty EOS for every
  // stream open on the connection, so the peer's streams end.
  Receiver& r = *new Receiver({"bulkio-disconnect", ::testing::TempDir(), &host()});
  Source& s = *new Source({"bulkio-disconnect-src", ::testing::TempDir(), &host()}, "bulkio");
  BULKIO::dataDouble_var port = bulkioPort(r);
  CF::Port_var out = s.port();
  out->connectPort(port, "c1");
  r.start();
  s.start();
  s.send(3, 2);
  s.send(4, 1);
  ASSERT_TRUE(r.received(3));
  EXPECT_EQ(port->state(), BULKIO::ACTIVE);
  EXPECT_EQ(host().ends("bulkio-disconnect"), 0);
  out->disconnectPort("c1");
  EXPECT_TRUE(host().waitForEnds("bulkio-disconnect", 1));
  EXPECT_EQ(port->state(), BULKIO::IDLE);
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(stats->streamIDs.length(), 0u);
  s.stop();
  r.stop();
}

TEST(Bulkio, ARestartWithoutAWorkerHandsPacketsToTheHandler) {
  // A restart replaces the worker queue, or, with worker = 0 configured
  // since the stop, leaves none: the closed queue of the last start must
  // not take the packets.
  Receiver& r = *new Receiver({"bulkio-worker-restart", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  const auto now = [] { return bulkio::utcTime(monotonicNs()); };
  r.configure(props({{"in.worker", integer(4)}}));
  r.start();
  port->pushPacket(samples(4), now(), false, "1");
  ASSERT_TRUE(r.received(1));
  r.stop();
  r.configure(props({{"in.worker", integer(0)}}));
  r.start();
  port->pushPacket(samples(4), now(), false, "1");
  ASSERT_TRUE(r.received(2));
  r.stop();
  r.configure(props({{"in.worker", integer(2)}}));  // a new queue again
  r.start();
  port->pushPacket(samples(4), now(), false, "1");
  ASSERT_TRUE(r.received(3));
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(keyword(stats.in(), "calls"), 3u);
  r.stop();
}

TEST(LatencyHistogram, EachLatencyFallsInTheBinWhoseUpperEdgeIsTheFirstNotBelowIt) {
  const auto& edges = LatencyHistogram::edges();
  EXPECT_DOUBLE_EQ(edges.front(), 1e3);   // 1 µs
  EXPECT_NEAR(edges.back(), 1e12, 1e-3);  // 1000 s
  for (std::size_t k = 0; k < LatencyHistogram::kEdges; ++k) {
    const auto at = int64_t(std::floor(edges[k]));
    EXPECT_EQ(LatencyHistogram::binOf(at), k) << k;  // on or just below its edge
    EXPECT_EQ(LatencyHistogram::binOf(at + 1), k + 1) << k;
  }
  EXPECT_EQ(LatencyHistogram::binOf(-5), 0u);  // a negative latency counts as below 1 µs
  EXPECT_EQ(LatencyHistogram::binOf(2'000'000'000'000), LatencyHistogram::kBins - 1);
}

TEST(LatencyHistogram, ItsQuantilesAreTheUpperEdgesOfTheirBins) {
  LatencyHistogram h;
  EXPECT_EQ(h.summary().count, 0u);
  // 50 packets at 5 µs, 49 at 100 µs (an edge: it is its own bin's upper
  // edge) and one at 2 ms.
  for (int i = 0; i < 50; ++i) h.add(5'000);
  for (int i = 0; i < 49; ++i) h.add(100'000);
  h.add(2'000'000);
  const LatencyHistogram::Summary s = h.summary();
  EXPECT_EQ(s.count, 100u);
  const double bin = std::pow(10.0, 1.0 / LatencyHistogram::kPerDecade);  // one bin's ratio, 1.122
  EXPECT_GE(s.p50Ns, 5'000);
  EXPECT_LE(s.p50Ns, int64_t(std::ceil(5'000 * bin)));
  EXPECT_GE(s.p99Ns, 100'000);
  EXPECT_LE(s.p99Ns, 100'001);
  EXPECT_GE(s.maxNs, 2'000'000);
  EXPECT_LE(s.maxNs, int64_t(std::ceil(2'000'000 * bin)));
  // Beyond the last edge: the last edge, a floor.
  h.add(5'000'000'000'000);
  EXPECT_EQ(h.summary().maxNs, 1'000'000'000'000);
}

TEST(Bulkio, APortCountsTheLatencyOfThePacketsThatCarryASendTime) {
  // Sent a second before they arrive (T set back a second): each latency is
  // 1 s and what the call took, so p50, p99 and max are the upper edge of
  // the bin just above 1 s, 1.122 s. Packets whose T is none are not counted.
  Receiver& r = *new Receiver({"bulkio-latency", ::testing::TempDir(), &host()});
  BULKIO::dataDouble_var port = bulkioPort(r);
  r.start();
  {
    BULKIO::PortStatistics_var stats = port->statistics();
    EXPECT_EQ(keyword(stats.in(), "latency_count"), 0u);
  }
  BULKIO::PrecisionUTCTime unset{};
  unset.tcstatus = BULKIO::TCS_INVALID;
  for (int i = 0; i < 3; ++i) port->pushPacket(samples(4), bulkio::utcTime(monotonicNs() - 1'000'000'000), false, "1");
  port->pushPacket(samples(4), unset, false, "1");
  ASSERT_TRUE(r.received(4));
  BULKIO::PortStatistics_var stats = port->statistics();
  EXPECT_EQ(keyword(stats.in(), "latency_count"), 3u);
  for (const char* q : {"latency_p50_ns", "latency_p99_ns", "latency_max_ns"}) {
    EXPECT_GE(keyword(stats.in(), q), 1'000'000'000u) << q;
    EXPECT_LE(keyword(stats.in(), q), 1'122'018'455u) << q;  // within the bin above 1 s
  }
  r.stop();
}

TEST(Bulkio, AScabenchPortCountsTheLatencyFromItsHeadersSendTime) {
  Own& r = *new Own({"own-latency", ::testing::TempDir(), &host()});
  Source& s = *new Source({"own-latency-src", ::testing::TempDir(), &host()}, "scabench");
  CORBA::Object_var in = r.getPort("in");
  CF::Port_var out = s.port();
  out->connectPort(in, "c1");
  r.start();
  s.start();
  s.send(1, 5);
  s.finish(1, 5);
  ASSERT_TRUE(host().waitForEnds("own-latency", 1));
  BULKIO::ProvidesPortStatisticsProvider_var provider = BULKIO::ProvidesPortStatisticsProvider::_narrow(in);
  BULKIO::PortStatistics_var stats = provider->statistics();
  EXPECT_EQ(keyword(stats.in(), "latency_count"), 5u);  // the five packets; not their end
  EXPECT_GT(keyword(stats.in(), "latency_p50_ns"), 0u);
  EXPECT_LE(keyword(stats.in(), "latency_p50_ns"), keyword(stats.in(), "latency_p99_ns"));
  EXPECT_LE(keyword(stats.in(), "latency_p99_ns"), keyword(stats.in(), "latency_max_ns"));
  s.stop();
  r.stop();
}
