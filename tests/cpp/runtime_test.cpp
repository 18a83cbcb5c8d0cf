// The component API over a real in-process omniORB.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "scabench/runtime/message_limit.hpp"
#include "scabench/runtime/policy_schema.hpp"
#include "scabench/runtime/registry.hpp"
#include "test_host.hpp"

using namespace scabench;

// Heap allocations made by the current thread, while counting is on: how the
// tests check that a packet's hop allocates nothing.
namespace {
thread_local bool countAllocations = false;
thread_local long allocations = 0;
// Of those, the ones of at least this many bytes (a packet's samples).
thread_local std::size_t largeFrom = SIZE_MAX;
thread_local long largeAllocations = 0;
}  // namespace

// These replace the global operators: new is malloc, so delete is free, which
// GCC's mismatched-new-delete check cannot see.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (countAllocations) {
    ++allocations;
    if (size >= largeFrom) ++largeAllocations;
  }
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

TEST(Registry, UnknownKindNamesTheValidOnes) {
  try {
    createComponent("mixer", "double", {"m", ::testing::TempDir(), &host()});
    FAIL();
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("stage"), std::string::npos);
  }
}

TEST(Properties, UnknownIdAndWrongTypeAreRejectedWithTheValidIds) {
  Component* stage = createComponent("stage", "double", {"s", ::testing::TempDir(), &host()});
  try {
    stage->configure(props({{"work_ms", integer(5)}}));
    FAIL();
  } catch (const CF::PropertySet::InvalidConfiguration& ex) {
    const std::string msg = ex.msg.in();
    EXPECT_NE(msg.find("work_ms"), std::string::npos);
    EXPECT_NE(msg.find("work_us"), std::string::npos);
  }
  EXPECT_THROW(stage->configure(props({{"work_us", text("five")}})), CF::PropertySet::InvalidConfiguration);
  stage->configure(props({{"work_us", integer(7)}}));
  CF::Properties q = props({{"work_us", CORBA::Any()}});
  stage->query(q);
  CORBA::ULong v = 0;
  EXPECT_TRUE(q[0].value >>= v);
  EXPECT_EQ(v, 7u);
  stage->_remove_ref();
}

namespace {

template <class T>
CORBA::Any anyOf(T v) {
  CORBA::Any a;
  a <<= v;
  return a;
}

// configure's refusal of one property: its message, which must name it.
std::string refusal(Component* c, const char* id, const CORBA::Any& value) {
  try {
    c->configure(props({{id, value}}));
  } catch (const CF::PropertySet::InvalidConfiguration& ex) {
    EXPECT_EQ(ex.invalidProperties.length(), 1u);
    EXPECT_STREQ(ex.invalidProperties[0].id.in(), id);
    return ex.msg.in();
  }
  ADD_FAILURE() << id << " was taken";
  return "";
}

}  // namespace

// What a property declares is what configure enforces, and what --describe
// publishes (PropertyBag::range, Declaration::values): the runtime's own port
// keys, the policy keys and the sizes of a stream carry their real range, not
// their CORBA type's, and a value one past it is refused.
TEST(Properties, DeclaredRangesAreTheOnesConfigureEnforces) {
  Component* producer = createComponent("producer", "double", {"ranges", ::testing::TempDir(), &host()});
  Component* stage = createComponent("stage", "float", {"ranges2", ::testing::TempDir(), &host()});
  auto range = [](Component* c, const std::string& id) {
    const auto r = PropertyBag::range(c->properties().entries().at(id).declaration);
    EXPECT_TRUE(r.has_value()) << id;
    return r ? std::make_pair(r->min, r->max) : std::make_pair(int64_t{0}, int64_t{0});
  };
  const std::map<std::string, std::pair<int64_t, int64_t>> expected = {
      {"packets", {1, UINT32_MAX}},
      // 8,388,096 doubles: what fits in the run's message limit, less the headers' room.
      {"samples", {1, int64_t((kRunMessageLimit - kMessageHeaderRoom) / sizeof(CORBA::Double))}},
      {"drop_packet", {-1, INT64_MAX}},
      {"out.sync_none_depth", {1, INT64_MAX}},
      {"out.shm_bytes", {int64_t(64) << 10, int64_t(1) << 30}},
  };
  for (const auto& [id, want] : expected) {
    EXPECT_EQ(range(producer, id), want) << id;
    if (want.first > INT32_MIN) EXPECT_FALSE(refusal(producer, id.c_str(), integer(want.first - 1)).empty()) << id;
    if (want.second < INT64_MAX) EXPECT_FALSE(refusal(producer, id.c_str(), integer(want.second + 1)).empty()) << id;
  }
  EXPECT_EQ(range(producer, "samples").second, 8'388'096);
  producer->configure(props({{"drop_packet", integer(-1)}}));  // the documented "none" is taken
  EXPECT_EQ(range(stage, "in.max_calls"), std::make_pair(int64_t{1}, int64_t{100'000}));
  EXPECT_EQ(range(stage, "in.reorder_capacity"), std::make_pair(int64_t{1}, int64_t{65536}));
  EXPECT_EQ(range(stage, "in.worker"), std::make_pair(int64_t{0}, int64_t{65536}));
  EXPECT_EQ(range(stage, "in.packet_length"), std::make_pair(int64_t{0}, maxPacketSamples(1)));
  EXPECT_EQ(range(stage, "in.reorder_timeout_ms"), std::make_pair(int64_t{0}, int64_t{600'000}));
  EXPECT_FALSE(refusal(stage, "in.max_calls", integer(0)).empty());
  EXPECT_FALSE(refusal(stage, "in.max_calls", integer(100'001)).empty());
  // A choice declares its names, and configure takes no other.
  EXPECT_EQ(stage->properties().entries().at("work").declaration.values,
            (std::vector<std::string>{"none", "cpu", "sleep"}));
  EXPECT_EQ(stage->properties().entries().at("in.ordering").declaration.values,
            (std::vector<std::string>{"arrival", "resequence"}));
  EXPECT_NE(refusal(stage, "work", text("gpu")).find("none, cpu, sleep"), std::string::npos);
  stage->_remove_ref();
  producer->_remove_ref();
}

TEST(Properties, OneOfRefusesADefaultOutsideItsNames) {
  PropertyBag bag;
  EXPECT_THROW(bag.declare("mode", std::string("fast"), "a mode").oneOf({"slow", "steady"}), std::logic_error);
  EXPECT_THROW(bag.declare("count", int64_t{1}, "a count").oneOf({"1"}), std::logic_error);
}

// A numeric property takes a value of any numeric CORBA type that fits its
// declared type and range, and query answers in the declared type, whatever
// type configure came with.
TEST(Properties, EveryNumericTypeThatFitsIsTakenAndQueryAnswersInTheDeclaredType) {
  Component* stage = createComponent("stage", "double", {"typed", ::testing::TempDir(), &host()});
  CORBA::Any asOctet;
  asOctet <<= CORBA::Any::from_octet(200);
  // An alias of unsigned long, as an IDL typedef would send it.
  CORBA::TypeCode_var alias =
      host().orb->create_alias_tc("IDL:test/Microseconds:1.0", "Microseconds", CORBA::_tc_ulong);
  CORBA::Any aliased = anyOf(CORBA::ULong(1510));
  aliased.type(alias);
  const std::vector<std::pair<CORBA::Any, CORBA::ULong>> taken = {{anyOf(CORBA::Short(1500)), 1500},
                                                                  {anyOf(CORBA::UShort(1501)), 1501},
                                                                  {anyOf(CORBA::Long(1502)), 1502},
                                                                  {anyOf(CORBA::ULong(1503)), 1503},
                                                                  {anyOf(CORBA::LongLong(1504)), 1504},
                                                                  {anyOf(CORBA::ULongLong(1505)), 1505},
                                                                  {asOctet, 200},
                                                                  {anyOf(CORBA::Double(1506.0)), 1506},
                                                                  {anyOf(CORBA::Float(1507.0f)), 1507},
                                                                  {aliased, 1510}};
  for (const auto& [value, expected] : taken) {
    stage->configure(props({{"work_us", value}}));
    CF::Properties q = props({{"work_us", CORBA::Any()}});
    stage->query(q);
    CORBA::TypeCode_var tc = q[0].value.type();
    EXPECT_EQ(tc->kind(), CORBA::tk_ulong);
    CORBA::ULong got = 0;
    EXPECT_TRUE(q[0].value >>= got);
    EXPECT_EQ(got, expected);
  }
  // What does not fit an unsigned long, or is no number, is refused, naming the property and what it takes.
  EXPECT_NE(refusal(stage, "work_us", anyOf(CORBA::Double(1.5))).find("not a whole number"), std::string::npos);
  for (const CORBA::Any& big : {anyOf(CORBA::LongLong(-1)), anyOf(CORBA::LongLong(1LL << 32)),
                                anyOf(CORBA::ULongLong(UINT64_MAX)), anyOf(CORBA::Double(1e10))}) {
    const std::string msg = refusal(stage, "work_us", big);
    EXPECT_NE(msg.find("'work_us' is an unsigned long"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 4294967295]"), std::string::npos) << msg;
  }
  EXPECT_NE(refusal(stage, "work_us", text("5000")).find("not a string"), std::string::npos);
  CORBA::Any yes;
  yes <<= CORBA::Any::from_boolean(true);
  EXPECT_NE(refusal(stage, "work_us", yes).find("not a boolean"), std::string::npos);
  // The declared range narrows the type's: record_capacity is at least 1.
  EXPECT_NE(refusal(stage, "record_capacity", anyOf(CORBA::Short(0))).find("[1, 4294967295]"), std::string::npos);
  // A double property takes integers, and answers as a double.
  stage->configure(props({{"in.reorder_timeout_ms", anyOf(CORBA::Short(20))}}));
  CF::Properties q = props({{"in.reorder_timeout_ms", CORBA::Any()}});
  stage->query(q);
  CORBA::Double timeout = 0;
  EXPECT_TRUE(q[0].value >>= timeout);
  EXPECT_EQ(timeout, 20.0);
  // A string is a string: a number is not spelled for it.
  EXPECT_NE(refusal(stage, "work", anyOf(CORBA::Long(1))).find("is a string: it takes a string, not a number"),
            std::string::npos);
  stage->_remove_ref();
}

// The catalogue's types: every property declares one, and query of all of
// them answers each in its own.
TEST(Properties, QueryOfEverythingAnswersEachInItsDeclaredType) {
  Component* producer = createComponent("producer", "float", {"types", ::testing::TempDir(), &host()});
  CF::Properties all;
  producer->query(all);
  std::map<std::string, CORBA::TCKind> kinds;
  for (CORBA::ULong i = 0; i < all.length(); ++i) {
    CORBA::TypeCode_var tc = all[i].value.type();
    kinds[all[i].id.in()] = tc->kind();
  }
  EXPECT_EQ(kinds.size(), producer->properties().entries().size());
  EXPECT_EQ(kinds["packets"], CORBA::tk_ulong);
  EXPECT_EQ(kinds["drop_packet"], CORBA::tk_longlong);
  EXPECT_EQ(kinds["record_capacity"], CORBA::tk_ulong);
  EXPECT_EQ(kinds["out.call"], CORBA::tk_string);
  EXPECT_EQ(kinds["out.sync_none_depth"], CORBA::tk_longlong);
  producer->_remove_ref();
}

// The paper's section 4.1: in one address space a oneway is a direct call on
// the caller's thread, so the caller waits for the servant's work.
TEST(Collocation, OnewayBlocksTheCallerForTheServantsWork) {
  Component* stage = createComponent("stage", "double", {"colloc", ::testing::TempDir(), &host()});
  stage->configure(props({{"work", text("sleep")}, {"work_us", integer(50'000)}, {"record_capacity", integer(4)}}));
  stage->start();
  CORBA::Object_var port = stage->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  ASSERT_FALSE(CORBA::is_nil(in));
  PacketHeader h{};
  CORBA::DoubleSeq samples;
  samples.length(16);
  const int64_t before = monotonicNs();
  in->pushPacketOneway(h, samples);
  EXPECT_GE(monotonicNs() - before, 50'000'000);
  stage->stop();
}

// A started stage in this process whose packets take 50 ms of sleep each,
// behind a worker queue with the given extra properties; returns its input.
scabench::dataDouble_ptr startSleepingWorkerStage(Component*& stage, const char* name, CF::Properties extra) {
  stage = createComponent("stage", "double", {name, ::testing::TempDir(), &host()});
  CF::Properties p = props({{"work", text("sleep")}, {"work_us", integer(50'000)}, {"record_capacity", integer(8)}});
  const CORBA::ULong n = p.length();
  p.length(n + extra.length());
  for (CORBA::ULong i = 0; i < extra.length(); ++i) p[n + i] = extra[i];
  stage->configure(p);
  stage->start();
  CORBA::Object_var port = stage->getPort("in");
  return scabench::dataDouble::_narrow(port);
}

TEST(Collocation, WorkerThreadReturnsControlBeforeTheWork) {
  Component* stage = nullptr;
  scabench::dataDouble_var in = startSleepingWorkerStage(stage, "worker", props({{"in.worker", integer(4)}}));
  PacketHeader h{};
  CORBA::DoubleSeq samples;
  samples.length(16);
  const int64_t before = monotonicNs();
  in->pushPacket(h, samples);
  EXPECT_LT(monotonicNs() - before, 40'000'000);
  h.end_of_stream = true;
  h.sequence_number = h.link_sequence = 1;
  in->pushPacket(h, CORBA::DoubleSeq());
  stage->stop();  // drains the worker: the packet is processed, then EOS
  std::lock_guard lock(host().mutex);
  EXPECT_EQ(host().lines.back(), "eos worker 1");
}

// worker_resume reaches the queue: with depth 2 and resume level 0, a caller
// that finds the queue full waits until the worker has taken both queued
// packets (about two packets' work, 100 ms), not until the first one (50 ms).
TEST(Collocation, FullWorkerQueueResumesTheCallerAtItsResumeLevel) {
  Component* stage = nullptr;
  scabench::dataDouble_var in =
      startSleepingWorkerStage(stage, "resume", props({{"in.worker", integer(2)}, {"in.worker_resume", text("0")}}));
  PacketHeader h{};
  CORBA::DoubleSeq samples;
  samples.length(16);
  in->pushPacket(h, samples);
  usleep(20'000);                            // the worker takes packet 0 and works on it until t = 50 ms
  for (uint64_t seq = 1; seq <= 2; ++seq) {  // they fill the queue
    h.sequence_number = h.link_sequence = seq;
    in->pushPacket(h, samples);
  }
  h.sequence_number = h.link_sequence = 3;
  const int64_t before = monotonicNs();
  in->pushPacket(h, samples);  // resumes when packet 2 is taken, at t = 100 ms
  EXPECT_GE(monotonicNs() - before, 70'000'000);
  h.end_of_stream = true;
  h.sequence_number = h.link_sequence = 4;
  in->pushPacket(h, CORBA::DoubleSeq());
  stage->stop();
}

// worker_resume = "auto" (the default) resolves per call: a caller blocked on
// the full queue resumes at d / 2 if it came through pushPacket, and at the
// first free slot, d - 1, if it came through pushPacketOneway. Depth 4 and
// 100 ms a packet: packet 0 is being worked on and 1-4 fill the queue; when
// the blocked call for packet 5 returns, the worker has finished one packet
// if it resumed at 3 queued (it took packet 1), two if at 2 (it took packet 2).
TEST(Collocation, AutoResumeLevelFollowsTheCallType) {
  for (const bool oneway : {false, true}) {
    Component* stage = nullptr;
    scabench::dataDouble_var in =
        startSleepingWorkerStage(stage, oneway ? "auto-oneway" : "auto-twoway",
                                 props({{"in.worker", integer(4)}, {"work_us", integer(100'000)}}));
    PacketHeader h{};
    CORBA::DoubleSeq samples;
    samples.length(16);
    in->pushPacket(h, samples);
    usleep(30'000);  // the worker takes packet 0
    for (uint64_t seq = 1; seq <= 4; ++seq) {
      h.sequence_number = h.link_sequence = seq;
      in->pushPacket(h, samples);
    }
    h.sequence_number = h.link_sequence = 5;
    if (oneway)
      in->pushPacketOneway(h, samples);
    else
      in->pushPacket(h, samples);
    EXPECT_EQ(stage->records().header().completed.load(), oneway ? 1u : 2u) << (oneway ? "one-way" : "two-way");
    h.end_of_stream = true;
    h.sequence_number = h.link_sequence = 6;
    in->pushPacket(h, CORBA::DoubleSeq());
    stage->stop();
  }
}

// The ports declare their policy properties from the policy table: every key
// of a side is a `<port>.<key>` property of that side's ports, with the
// table's default, and the ports declare no other policy property (beyond
// the sender's own sync_none_depth, transport and shm_bytes, and the
// receiver's own max_calls).
TEST(PolicySchema, PortsDeclareEveryKeyOfTheirSideWithItsDefault) {
  Component* stage = createComponent("stage", "double", {"schema", ::testing::TempDir(), &host()});
  const auto& declared = stage->properties().entries();
  // And the runtime's own, not spec keys: the sync=none queue, the calls in
  // progress, and the transport the runner picks for the connection.
  std::set<std::string> expected{"out.sync_none_depth", "in.max_calls", "out.transport", "out.shm_bytes"};
  for (const auto& key : policy::schema()) {
    for (const auto& [port, side] : {std::pair{"in", policy::Side::Provides}, std::pair{"out", policy::Side::Uses}}) {
      const std::string id = std::string(port) + "." + key.name;
      if (!key.on(side)) {
        EXPECT_EQ(declared.count(id), 0u) << id;
        continue;
      }
      expected.insert(id);
      auto it = declared.find(id);
      ASSERT_NE(it, declared.end()) << id;
      EXPECT_EQ(it->second.value, key.defaultValue) << id;
      EXPECT_EQ(it->second.declaration.description, key.description) << id;
      // A connection's policy is read when the port connects or starts.
      EXPECT_EQ(it->second.declaration.configurable, Configurable::WhileStopped) << id;
    }
  }
  std::set<std::string> portProperties;
  for (const auto& [id, _] : declared)
    if (id.find('.') != std::string::npos) portProperties.insert(id);
  EXPECT_EQ(portProperties, expected);
  stage->_remove_ref();
}

// A port property's value is checked by its key when it is configured: the
// whole configuration is refused, naming the property and what is valid.
TEST(PolicySchema, BadPolicyValuesAreRefusedAtConfigure) {
  Component* stage = createComponent("stage", "double", {"refuse", ::testing::TempDir(), &host()});
  auto refused = [&](const char* id, CORBA::Any value, const char* hint) {
    try {
      stage->configure(props({{id, value}}));
      ADD_FAILURE() << id << " was accepted";
    } catch (const CF::PropertySet::InvalidConfiguration& ex) {
      const std::string msg = ex.msg.in();
      EXPECT_NE(msg.find(id), std::string::npos) << msg;
      EXPECT_NE(msg.find(hint), std::string::npos) << msg;
    }
  };
  refused("in.flow", text("credits(0)"), "w must be in [1, 65536]");
  refused("out.flow", text("watermarks(8, 2)"), "lo < hi");
  refused("in.dispatch", text("orb"), "pool, pool:N, serial, single");
  refused("in.worker", integer(70'000), "[0, 65536]");  // 0: no worker
  refused("in.worker_resume", text("-1"), "auto, half");
  refused("in.reorder_capacity", integer(0), "[1, 65536]");
  refused("in.reorder_timeout_ms", real(-1), "[0, 600000]");
  refused("out.call", text("twice"), "twoway, oneway");
  stage->configure(props({{"in.flow", text(" credits( 8 )")},
                          {"in.dispatch", text("pool:4")},
                          {"in.worker", integer(8)},
                          {"in.worker_resume", text("7")},
                          {"in.reorder_timeout_ms", real(0.5)}}));
  stage->_remove_ref();
}

// worker_resume is checked against the depth when the port starts.
TEST(PolicySchema, ResumeLevelAtOrAboveTheDepthFailsTheStart) {
  Component* stage = createComponent("stage", "double", {"deep-resume", ::testing::TempDir(), &host()});
  stage->configure(
      props({{"in.worker", integer(4)}, {"in.worker_resume", text("4")}, {"record_capacity", integer(4)}}));
  try {
    stage->start();
    ADD_FAILURE() << "started";
  } catch (const CF::Resource::StartError& ex) {
    EXPECT_NE(std::string(ex.msg.in()).find("0 <= r < 4"), std::string::npos) << ex.msg.in();
  }
  stage->_remove_ref();
}

// A uses port takes several connections, each by its own id.
TEST(OutPort, ConnectingAnIdTwiceIsAnOccupiedPort) {
  Component* a = createComponent("stage", "double", {"a", ::testing::TempDir(), &host()});
  Component* b = createComponent("sink", "double", {"b", ::testing::TempDir(), &host()});
  Component* f = createComponent("sink", "float", {"f", ::testing::TempDir(), &host()});
  CORBA::Object_var out = a->getPort("out");
  CF::Port_var port = CF::Port::_narrow(out);
  CORBA::Object_var floatIn = f->getPort("in");
  EXPECT_THROW(port->connectPort(floatIn, "wrong-type"), CF::Port::InvalidPort);
  CORBA::Object_var in = b->getPort("in");
  port->connectPort(in, "c1");
  EXPECT_THROW(port->connectPort(in, "c1"), CF::Port::OccupiedPort);
  EXPECT_THROW(port->disconnectPort("c2"), CF::Port::InvalidPort);
  port->disconnectPort("c1");
  EXPECT_THROW(port->disconnectPort("c1"), CF::Port::InvalidPort);
}

// A two-way push between components of one process: fir -> sink, driven
// like the upstream component would. Once the buffers have their size, a
// packet's hops allocate nothing (no sequence, no call descriptor, no
// closure): the runtime's share of a collocated hop is plain calls.
TEST(Collocation, AHopAllocatesNothingOnceWarm) {
  Component* fir = createComponent("fir", "float", {"alloc-fir", ::testing::TempDir(), &host()});
  Component* snk = createComponent("sink", "float", {"alloc-snk", ::testing::TempDir(), &host()});
  fir->configure(props({{"record_capacity", integer(16)}}));
  snk->configure(props({{"record_capacity", integer(16)}}));
  CORBA::Object_var out = fir->getPort("out");
  CF::Port_var uses = CF::Port::_narrow(out);
  CORBA::Object_var snkIn = snk->getPort("in");
  uses->connectPort(snkIn, "fir-snk");
  snk->start();
  fir->start();
  CORBA::Object_var port = fir->getPort("in");
  scabench::dataFloat_var in = scabench::dataFloat::_narrow(port);
  PacketHeader h{};
  CORBA::FloatSeq samples;
  samples.length(256);
  for (CORBA::ULong i = 0; i < samples.length(); ++i) samples[i] = float(i);
  in->pushPacket(h, samples);  // sizes the filter's and the port's buffers
  countAllocations = true;
  for (int i = 1; i <= 8; ++i) {
    h.sequence_number = h.link_sequence = uint64_t(i);
    in->pushPacket(h, samples);
  }
  countAllocations = false;
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(snk->records().header().completed.load(), 9u);
  fir->stop();
  snk->stop();
}

// One two-way packet of four samples into a port, with the next link
// sequence of `link`, as the sending port would number it.
void pushFourSamples(scabench::dataDouble_ptr in, std::atomic<uint64_t>& link) {
  PacketHeader h{};
  h.link_sequence = link++;
  CORBA::DoubleSeq samples;
  samples.length(4);
  in->pushPacket(h, samples);
}

// A call from the same process goes straight to a port's servant: it does
// not wait on the POA manager, as a dispatch through the POA would. omniORB
// opens the shortcut on a reference's first call, which the POA dispatches.
TEST(Collocation, ACallFromTheSameProcessSkipsThePoa) {
  Component* snk = createComponent("sink", "double", {"shortcut", ::testing::TempDir(), &host()});
  snk->configure(props({{"record_capacity", integer(4)}}));
  snk->start();
  CORBA::Object_var port = snk->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  std::atomic<uint64_t> link{0};
  auto push = [&] { pushFourSamples(in, link); };
  push();
  PortableServer::POAManager_var manager = host().root->the_POAManager();
  manager->hold_requests(false);
  auto call = std::async(std::launch::async, push);
  const bool returned = call.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  manager->activate();  // a call held by the POA goes on now
  call.get();
  EXPECT_TRUE(returned);
  EXPECT_EQ(snk->records().header().completed.load(), 2u);
  snk->stop();
}

// dispatch=single still serialises calls: those ports are served through a
// SINGLE_THREAD_MODEL POA, never by the shortcut. Two threads push a packet
// that takes 100 ms at once; the second enters only when the first has left.
TEST(Collocation, SingleThreadDispatchStillSerialisesCollocatedCalls) {
  Component* stage = createComponent("stage", "double", {"single", ::testing::TempDir(), &host()});
  stage->configure(props({{"work", text("sleep")},
                          {"work_us", integer(100'000)},
                          {"in.dispatch", text("single")},
                          {"record_capacity", integer(4)}}));
  stage->start();
  CORBA::Object_var port = stage->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  std::atomic<uint64_t> link{0};
  auto push = [&] { pushFourSamples(in, link); };
  std::thread a(push), b(push);
  a.join();
  b.join();
  EXPECT_EQ(stage->records().header().completed.load(), 2u);
  EXPECT_EQ(stage->records().header().maxConcurrent.load(), 1u);
  stage->stop();
}

// ------------------------------------------------ what a provides port takes

namespace {

uint32_t refused(Component* c, Refusal why) { return c->records().header().refused[std::size_t(why)].load(); }

// A started sink whose input has `token` as its connection's (attached as a
// sending port would), with the extra properties; returns its input.
scabench::dataDouble_ptr startAttachedSink(Component*& sink, const char* name, uint64_t token,
                                           CF::Properties extra = {}) {
  sink = createComponent("sink", "double", {name, ::testing::TempDir(), &host()});
  CF::Properties p = props({{"record_capacity", integer(16)}});
  const CORBA::ULong n = p.length();
  p.length(n + extra.length());
  for (CORBA::ULong i = 0; i < extra.length(); ++i) p[n + i] = extra[i];
  sink->configure(p);
  CORBA::Object_var port = sink->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  in->attachSender(token, scabench::FlowControl::_nil());
  sink->start();
  return in._retn();
}

void push(scabench::dataDouble_ptr in, uint64_t token, uint64_t link, CORBA::ULong samples = 4) {
  PacketHeader h{};
  h.sequence_number = h.link_sequence = link;
  h.connection_token = token;
  CORBA::DoubleSeq data;
  data.length(samples);
  in->pushPacket(h, data);
}

void pushEndOfStream(scabench::dataDouble_ptr in, uint64_t token, uint64_t link) {
  PacketHeader h{};
  h.sequence_number = h.link_sequence = link;
  h.connection_token = token;
  h.end_of_stream = true;
  in->pushPacket(h, CORBA::DoubleSeq());
}

bool reportedEndOfStream(const std::string& name) { return host().ends(name) > 0; }

}  // namespace

// A connected port takes packets only with its connection's token; anything
// else is refused and counted, and does not reach the handler.
TEST(InPortChecks, TakesOnlyTheConnectionsOwnPackets) {
  constexpr uint64_t kToken = 0x1234'5678'9abc'def0;
  Component* sink = nullptr;
  scabench::dataDouble_var in = startAttachedSink(sink, "own-only", kToken);
  push(in, kToken, 0);
  push(in, 0, 1);           // no token: not the connection's
  push(in, kToken + 1, 1);  // a guess
  push(in, kToken, 1);
  EXPECT_EQ(sink->records().header().completed.load(), 2u);
  EXPECT_EQ(refused(sink, Refusal::Sender), 2u);
  // Once started, nobody can attach as the sender: the port is occupied.
  EXPECT_THROW(in->attachSender(42, scabench::FlowControl::_nil()), CF::Port::OccupiedPort);
  EXPECT_EQ(refused(sink, Refusal::Sender), 3u);
  push(in, kToken, 2);  // the real sender still gets through
  EXPECT_EQ(sink->records().header().completed.load(), 3u);
  sink->stop();
}

// packet_length: a packet of another length is refused, whoever sent it; a
// refused packet of the connection's own uses up its link number, so the
// stream (and its end) goes on past it.
TEST(InPortChecks, RefusesPacketsOfAnotherLength) {
  constexpr uint64_t kToken = 77;
  Component* sink = nullptr;
  scabench::dataDouble_var in = startAttachedSink(sink, "length", kToken, props({{"in.packet_length", integer(4)}}));
  push(in, kToken, 0, 4);
  push(in, kToken, 1, 5);
  push(in, kToken, 2, 0);
  push(in, kToken + 1, 3, 4000);
  push(in, kToken, 3, 4);
  EXPECT_EQ(sink->records().header().completed.load(), 2u);
  EXPECT_EQ(refused(sink, Refusal::Length), 3u);
  pushEndOfStream(in, kToken, 4);
  EXPECT_TRUE(reportedEndOfStream("length"));
  sink->stop();
}

// A packet a port keeps past its upcall (the reorder buffer, the worker
// queue) is copied once, when a collocated caller lends it its samples, and
// moved after that: omniORB's sequences have no move constructor, and the
// buffer and the queue move a packet several times (port_types.hpp,
// handOver). Counted on the caller's thread, which runs the upcall and files
// the packet; the releaser and the worker take it from there.
TEST(InPortKeeps, AKeptPacketsSamplesAreCopiedOnceAndThenMoved) {
  constexpr CORBA::ULong kSamples = 1024;
  constexpr int kPackets = 8;
  const std::pair<const char*, CF::Properties> setups[] = {
      {"keep-reorder", props({{"in.ordering", text("resequence")}})},
      {"keep-worker", props({{"in.worker", integer(4)}})},
      {"keep-both", props({{"in.ordering", text("resequence")}, {"in.worker", integer(4)}})},
  };
  for (const auto& [name, extra] : setups) {
    SCOPED_TRACE(name);
    Component* sink = nullptr;
    scabench::dataDouble_var in = startAttachedSink(sink, name, 9, extra);
    // Lent, as a sending port lends its component's buffer.
    std::vector<CORBA::Double> buffer(kSamples, 1.0);
    const CORBA::DoubleSeq data(kSamples, kSamples, buffer.data(), false);
    largeFrom = kSamples * sizeof(double);
    largeAllocations = 0;
    for (int i = 0; i < kPackets; ++i) {
      PacketHeader h{};
      h.sequence_number = h.link_sequence = uint64_t(i);
      h.connection_token = 9;
      countAllocations = true;
      in->pushPacketOneway(h, data);
      countAllocations = false;
    }
    largeFrom = SIZE_MAX;
    EXPECT_EQ(largeAllocations, kPackets);
    for (int i = 0; i < 500 && sink->records().header().completed.load() < uint64_t(kPackets); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(sink->records().header().completed.load(), uint64_t(kPackets));
    sink->stop();
  }
}

// The holder a kept packet's samples travel in (port_types.hpp): a move takes
// the buffer along and leaves the one moved from empty; a lent buffer is
// copied, since it is not the holder's to keep.
TEST(MovableSeq, AMoveTakesTheBufferAlongAndALentOneIsCopied) {
  static_assert(!std::is_copy_constructible_v<MovableSeq<CORBA::DoubleSeq>>);
  std::vector<CORBA::Double> lent{1.0, 2.0, 3.0};
  MovableSeq<CORBA::DoubleSeq> kept(CORBA::DoubleSeq(3, 3, lent.data(), false));
  ASSERT_NE(kept->get_buffer(), lent.data());
  EXPECT_EQ(std::vector<CORBA::Double>(kept->get_buffer(), kept->get_buffer() + kept->length()), lent);
  const CORBA::Double* buffer = kept->get_buffer();
  MovableSeq<CORBA::DoubleSeq> moved(std::move(kept));
  EXPECT_EQ(moved->get_buffer(), buffer);
  EXPECT_EQ(moved->length(), 3u);
  EXPECT_EQ(kept->length(), 0u);  // NOLINT(bugprone-use-after-move): what a move leaves is the point
}

// A link sequence far ahead of the window is refused before it is filed or
// acknowledged; with credits and a reorder buffer one near 2^64 would
// otherwise have been skipped up to, a range of 2^64 numbers.
TEST(InPortChecks, RefusesALinkSequenceBeyondTheWindow) {
  constexpr uint64_t kToken = 5;
  Component* sink = nullptr;
  scabench::dataDouble_var in = startAttachedSink(
      sink, "window", kToken,
      props(
          {{"in.ordering", text("resequence")}, {"in.flow", text("credits(4)")}, {"in.reorder_timeout_ms", real(5)}}));
  push(in, kToken, 0);
  push(in, kToken, 1'000'000);
  push(in, kToken, UINT64_MAX - 16);
  push(in, kToken, 1);
  pushEndOfStream(in, kToken, 2);
  for (int i = 0; i < 200 && !reportedEndOfStream("window"); ++i) usleep(10'000);  // the releaser hands them on
  EXPECT_TRUE(reportedEndOfStream("window"));
  EXPECT_EQ(refused(sink, Refusal::Sequence), 2u);
  sink->stop();
  EXPECT_EQ(sink->records().header().completed.load(), 2u);
  EXPECT_EQ(sink->records().header().skipped.load(), 0u);  // nothing was skipped to reach them
}

// End of stream counts only from the connection, once, and only when every
// packet before it (by link sequence) is done: a spoofed or early one cannot
// end the measurement.
TEST(InPortChecks, EndOfStreamCountsOnlyFromTheSenderAndInSequence) {
  constexpr uint64_t kToken = 9;
  Component* sink = nullptr;
  scabench::dataDouble_var in = startAttachedSink(sink, "eos-order", kToken);
  pushEndOfStream(in, 0, 0);               // a stranger's, announcing nothing
  pushEndOfStream(in, kToken, 1'000'000);  // the connection's, far out of sequence
  EXPECT_EQ(refused(sink, Refusal::EndOfStream), 2u);
  push(in, kToken, 0);
  push(in, kToken, 2);             // 1 is still on its way (one-way packets overtake)
  pushEndOfStream(in, kToken, 3);  // the real one: waits for 1
  EXPECT_FALSE(reportedEndOfStream("eos-order"));
  pushEndOfStream(in, kToken, 3);  // a second one is refused
  EXPECT_EQ(refused(sink, Refusal::EndOfStream), 3u);
  push(in, kToken, 1);
  EXPECT_TRUE(reportedEndOfStream("eos-order"));
  EXPECT_EQ(sink->records().header().completed.load(), 3u);
  sink->stop();
}

// max_calls: calls of the connection beyond it are refused at once instead of
// taking one more ORB thread into the port. Two calls sleep in the stage; the
// third is refused while they are still there, without waiting for a slot.
TEST(InPortChecks, RefusesACallBeyondMaxCalls) {
  Component* stage = createComponent("stage", "double", {"max-calls", ::testing::TempDir(), &host()});
  stage->configure(props({{"work", text("sleep")},
                          {"work_us", integer(1'000'000)},
                          {"in.max_calls", integer(2)},
                          {"record_capacity", integer(8)}}));
  stage->start();
  CORBA::Object_var port = stage->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  std::thread a([&] { push(in, 0, 0); }), b([&] { push(in, 0, 1); });
  while (stage->records().header().maxConcurrent.load() < 2) usleep(1'000);
  push(in, 0, 2);
  EXPECT_EQ(stage->records().header().completed.load(), 0u);  // both calls still sleeping: it did not wait
  a.join();
  b.join();
  EXPECT_EQ(refused(stage, Refusal::Threads), 1u);
  EXPECT_EQ(stage->records().header().completed.load(), 2u);
  EXPECT_EQ(stage->records().header().maxConcurrent.load(), 2u);
  stage->stop();
}

// A packet before start is not the connection's (the launcher starts
// receivers first): refused, and counted once the records exist.
TEST(InPortChecks, APacketBeforeStartIsRefusedAndCounted) {
  Component* sink = createComponent("sink", "double", {"early", ::testing::TempDir(), &host()});
  sink->configure(props({{"record_capacity", integer(4)}}));
  CORBA::Object_var port = sink->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  push(in, 0, 0);
  sink->start();
  EXPECT_EQ(refused(sink, Refusal::Sender), 1u);
  EXPECT_EQ(sink->records().header().completed.load(), 0u);
  sink->stop();
}

// ------------------------------------------------------------------ lifecycle

namespace {

// A stage in this process, its out port connected to a sink in this process
// (both configured with `extra`, record_capacity 16 and no work), neither
// started; returns the stage's input.
scabench::dataDouble_ptr wiredStage(Component*& stage, Component*& sink, const std::string& name) {
  stage = createComponent("stage", "double", {name, ::testing::TempDir(), &host()});
  sink = createComponent("sink", "double", {name + "-sink", ::testing::TempDir(), &host()});
  stage->configure(props({{"work", text("none")}, {"record_capacity", integer(16)}}));
  sink->configure(props({{"record_capacity", integer(16)}}));
  CORBA::Object_var out = stage->getPort("out");
  CF::Port_var uses = CF::Port::_narrow(out);
  CORBA::Object_var sinkIn = sink->getPort("in");
  uses->connectPort(sinkIn, (name + "-to-sink").c_str());
  CORBA::Object_var port = stage->getPort("in");
  return scabench::dataDouble::_narrow(port);
}

}  // namespace

// A start that fails leaves the component stopped: it takes no packets, it
// can be configured, and the next start tries again (and fails again while
// nothing changed) instead of doing nothing.
TEST(Lifecycle, AFailedStartLeavesTheComponentStopped) {
  Component* stage = createComponent("stage", "double", {"failed-start", ::testing::TempDir(), &host()});
  stage->configure(props({{"in.worker", integer(4)},
                          {"in.worker_resume", text("4")},
                          {"record_capacity", integer(4)},
                          {"work", text("none")}}));
  EXPECT_THROW(stage->start(), CF::Resource::StartError);
  EXPECT_FALSE(stage->running());
  CORBA::Object_var port = stage->getPort("in");
  scabench::dataDouble_var in = scabench::dataDouble::_narrow(port);
  push(in, 0, 0);  // refused: the component is not started
  EXPECT_EQ(stage->records().header().completed.load(), 0u);
  EXPECT_EQ(refused(stage, Refusal::Sender), 1u);
  EXPECT_THROW(stage->start(), CF::Resource::StartError);  // tried again, not skipped
  stage->configure(props({{"in.worker_resume", text("1")}}));
  stage->start();
  EXPECT_TRUE(stage->running());
  push(in, 0, 0);
  stage->stop();  // the worker finishes the packet
  EXPECT_EQ(stage->records().header().completed.load(), 1u);
  stage->_remove_ref();
}

// A stopped stage neither processes nor forwards: a packet that arrives
// while it is stopped is refused and counted (as before start), and after a
// new start the stream goes on.
TEST(Lifecycle, AStoppedStageNeitherProcessesNorForwards) {
  Component *stage = nullptr, *sink = nullptr;
  scabench::dataDouble_var in = wiredStage(stage, sink, "stopped");
  sink->start();
  stage->start();
  push(in, 0, 0);
  EXPECT_EQ(sink->records().header().completed.load(), 1u);
  stage->stop();
  push(in, 0, 1);
  EXPECT_EQ(stage->records().header().completed.load(), 1u);
  EXPECT_EQ(sink->records().header().completed.load(), 1u);
  EXPECT_EQ(refused(stage, Refusal::Sender), 1u);
  stage->start();
  push(in, 0, 1);  // its link number was not used up by the refusal
  EXPECT_EQ(sink->records().header().completed.load(), 2u);
  stage->stop();
  sink->stop();
  stage->_remove_ref();
  sink->_remove_ref();
}

// configure on a started component: the properties declared changeable while
// started take effect from the next packet; structural ones (the ports'
// policy, the records) are refused with the reason, and with them the whole
// configuration.
TEST(Lifecycle, ConfigureWhileStartedChangesOnlyWhatMayChange) {
  Component *stage = nullptr, *sink = nullptr;
  scabench::dataDouble_var in = wiredStage(stage, sink, "reconfigured");
  sink->start();
  stage->start();
  stage->configure(props({{"work", text("sleep")}, {"work_us", integer(200'000)}}));
  const int64_t before = monotonicNs();
  push(in, 0, 0);
  EXPECT_GE(monotonicNs() - before, 200'000'000);  // slept: the new work applied to this packet
  for (const char* structural : {"in.worker", "record_capacity"}) {
    const std::string msg = refusal(stage, structural, integer(8));
    EXPECT_NE(msg.find("cannot change while the component is started"), std::string::npos) << msg;
    EXPECT_NE(msg.find("work_us"), std::string::npos) << msg;  // what can
  }
  try {
    stage->configure(props({{"work_us", integer(1)}, {"out.call", text("oneway")}}));
    ADD_FAILURE() << "out.call changed while started";
  } catch (const CF::PropertySet::InvalidConfiguration& ex) {
    ASSERT_EQ(ex.invalidProperties.length(), 1u);
    EXPECT_STREQ(ex.invalidProperties[0].id.in(), "out.call");
  }
  EXPECT_EQ(stage->properties().integer("work_us"), 200'000);  // all or nothing
  stage->stop();
  stage->configure(props({{"in.worker", integer(8)}}));  // stopped: anything goes
  sink->stop();
  stage->_remove_ref();
  sink->_remove_ref();
}

// A source's stop stops it sending, before its next packet, with no end of
// stream; a new start goes on with the next packet, and the stream ends once,
// with every packet sent once.
TEST(Lifecycle, AStoppedProducerSendsNothingUntilStartedAgain) {
  Component* producer = createComponent("producer", "double", {"paused", ::testing::TempDir(), &host()});
  Component* sink = createComponent("sink", "double", {"paused-sink", ::testing::TempDir(), &host()});
  // 100 packets, one every 10 ms: a second's stream, stopped after its first few.
  producer->configure(props({{"packets", integer(100)},
                             {"samples", integer(4)},
                             {"period_us", integer(10'000)},
                             {"record_capacity", integer(128)}}));
  sink->configure(props({{"record_capacity", integer(128)}}));
  CORBA::Object_var out = producer->getPort("out");
  CF::Port_var uses = CF::Port::_narrow(out);
  CORBA::Object_var sinkIn = sink->getPort("in");
  uses->connectPort(sinkIn, "paused-to-sink");
  sink->start();
  producer->start();
  for (int i = 0; i < 10'000 && sink->records().header().completed.load() < 3; ++i) usleep(1'000);
  producer->stop();
  const uint64_t sent = sink->records().header().completed.load();
  EXPECT_GE(sent, 3u);
  EXPECT_LT(sent, 100u);
  usleep(100'000);  // ten periods
  EXPECT_EQ(sink->records().header().completed.load(), sent);
  EXPECT_FALSE(reportedEndOfStream("paused-sink"));
  producer->start();
  for (int i = 0; i < 1000 && !reportedEndOfStream("paused-sink"); ++i) usleep(10'000);
  EXPECT_TRUE(reportedEndOfStream("paused-sink"));
  EXPECT_EQ(sink->records().header().completed.load(), 100u);
  EXPECT_EQ(sink->records().header().duplicates.load(), 0u);
  {
    std::lock_guard lock(host().mutex);
    EXPECT_EQ(std::count(host().lines.begin(), host().lines.end(), "eos paused-sink 100"), 1);
  }
  producer->stop();
  sink->stop();
  producer->_remove_ref();
  sink->_remove_ref();
}

// ------------------------------------------------------------ message limit

// This process's ORB has omniORB's default limit, 2 MiB. A packet that does
// not fit is refused by the sending port, naming the limit, before it is
// sent: here the peer is in the same process, where omniORB itself would
// make no message and check nothing.
TEST(MessageLimit, ASendingPortRefusesAPacketOverTheLimitBeforeSending) {
  ASSERT_EQ(messageLimit(), 2u << 20);
  Component *stage = nullptr, *sink = nullptr;
  scabench::dataDouble_var in = wiredStage(stage, sink, "too-large");
  sink->start();
  stage->start();
  const CORBA::ULong fits = CORBA::ULong(((2u << 20) - kMessageHeaderRoom) / sizeof(CORBA::Double));
  push(in, 0, 0, fits);
  EXPECT_EQ(sink->records().header().completed.load(), 1u);
  push(in, 0, 1, fits + 1);
  EXPECT_EQ(sink->records().header().completed.load(), 1u);
  {
    std::lock_guard lock(host().mutex);
    const std::string expected = "error too-large port in: port out: a packet of " + std::to_string(fits + 1) +
                                 " double samples (" + std::to_string(8 * (fits + 1)) +
                                 " bytes) does not fit in the ORB's message limit of 2097152 bytes";
    EXPECT_TRUE(std::any_of(host().lines.begin(), host().lines.end(), [&](const std::string& l) {
      return l.rfind(expected, 0) == 0;
    })) << expected;
  }
  stage->stop();
  sink->stop();
  stage->_remove_ref();
  sink->_remove_ref();
}
