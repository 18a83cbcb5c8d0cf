// The policy table and its parsers, without an ORB.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "scabench/runtime/policy_schema.hpp"

using namespace scabench;

namespace {

// The message of the std::invalid_argument that `f` throws ("" if none).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& ex) {
    return ex.what();
  }
  return "";
}

}  // namespace

TEST(FlowForm, ParsesEveryFormWithOptionalSpaces) {
  EXPECT_EQ(policy::parseFlow("none").kind, FlowKind::None);
  const policy::Flow w = policy::parseFlow("watermarks(2, 8)");
  EXPECT_EQ(w.kind, FlowKind::Watermarks);
  EXPECT_EQ(w.low, 2u);
  EXPECT_EQ(w.high, 8u);
  EXPECT_EQ(w.credits, 0u);
  EXPECT_EQ(policy::parseFlow(" watermarks ( 0 ,1 ) ").high, 1u);
  const policy::Flow c = policy::parseFlow("credits(32)");
  EXPECT_EQ(c.kind, FlowKind::Credits);
  EXPECT_EQ(c.credits, 32u);
  EXPECT_EQ(policy::parseFlow("credits( 007 )").credits, 7u);
  EXPECT_EQ(policy::parseFlow("credits(65536)").credits, 65536u);
  EXPECT_EQ(policy::parseFlow("watermarks(65535, 65536)").low, 65535u);
}

TEST(FlowForm, RefusesBadFormsAndSaysWhatIsValid) {
  for (const char* bad : {"", "NONE", "credit(3)", "credits", "credits()", "credits(1.5)", "credits(-1)", "credits(x)",
                          "credits(3)x", "watermarks(1)", "watermarks(1,2,3)", "watermarks(,2)"}) {
    const std::string why = refusal([&] { policy::parseFlow(bad); });
    EXPECT_NE(why.find("none, watermarks(lo, hi), credits(w)"), std::string::npos) << "'" << bad << "': " << why;
  }
}

TEST(FlowForm, ChecksRangesAndTheWatermarkOrder) {
  EXPECT_NE(refusal([] { policy::parseFlow("credits(0)"); }).find("w must be in [1, 65536]"), std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("credits(65537)"); }).find("w must be in [1, 65536]"), std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("credits(99999999999999999999999)"); }).find("w must be in"),
            std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("watermarks(2, 65537)"); }).find("hi must be in [1, 65536]"),
            std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("watermarks(65537, 2)"); }).find("lo must be in [0, 65536]"),
            std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("watermarks(8, 2)"); }).find("lo < hi"), std::string::npos);
  EXPECT_NE(refusal([] { policy::parseFlow("watermarks(5, 5)"); }).find("lo < hi"), std::string::npos);
}

TEST(DispatchForm, OnlySingleIsThePortsBusiness) {
  EXPECT_TRUE(policy::singleThreadDispatch("single"));
  for (const char* orb : {"pool", "pool:1", "pool:1000", "pool: 4", "serial"})
    EXPECT_FALSE(policy::singleThreadDispatch(orb)) << orb;
  for (const char* bad : {"orb", "pool:0", "pool:1001", "pool:", "pool:n", "threads"})
    EXPECT_THROW(policy::singleThreadDispatch(bad), std::invalid_argument) << bad;
}

TEST(WorkerResume, AutoIsHalfForTwoWayAndTheFirstFreeSlotForOneWay) {
  const policy::WorkerResume autoLevel("auto", 64);
  EXPECT_EQ(autoLevel.levelFor(CallKind::Twoway), 32u);
  EXPECT_EQ(autoLevel.levelFor(CallKind::Oneway), 63u);
  const policy::WorkerResume half("half", 9);
  EXPECT_EQ(half.levelFor(CallKind::Twoway), 4u);
  EXPECT_EQ(half.levelFor(CallKind::Oneway), 4u);
  const policy::WorkerResume level("3", 4);
  EXPECT_EQ(level.levelFor(CallKind::Twoway), 3u);
  EXPECT_EQ(level.levelFor(CallKind::Oneway), 3u);
  EXPECT_EQ(policy::WorkerResume("auto", 1).levelFor(CallKind::Twoway), 0u);
  EXPECT_NE(refusal([] { policy::WorkerResume("4", 4); }).find("0 <= r < 4"), std::string::npos);
  EXPECT_THROW(policy::WorkerResume("-1", 4), std::invalid_argument);
  EXPECT_THROW(policy::WorkerResume("most", 4), std::invalid_argument);
}

TEST(PolicySchema, ChecksEachTypeAgainstTheTable) {
  EXPECT_NO_THROW(policy::check(policy::key("worker"), int64_t{0}));
  EXPECT_NO_THROW(policy::check(policy::key("worker"), int64_t{65536}));
  EXPECT_THROW(policy::check(policy::key("worker"), int64_t{65537}), std::invalid_argument);
  EXPECT_THROW(policy::check(policy::key("worker"), int64_t{-1}), std::invalid_argument);
  EXPECT_THROW(policy::check(policy::key("reorder_capacity"), int64_t{65537}), std::invalid_argument);
  EXPECT_NO_THROW(policy::check(policy::key("reorder_timeout_ms"), 600000.0));
  EXPECT_THROW(policy::check(policy::key("reorder_timeout_ms"), 600000.5), std::invalid_argument);
  EXPECT_THROW(policy::check(policy::key("reorder_timeout_ms"), std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  EXPECT_THROW(policy::check(policy::key("reorder_timeout_ms"), std::nan("")), std::invalid_argument);
  EXPECT_NO_THROW(policy::check(policy::key("sync"), std::string("server")));
  EXPECT_THROW(policy::check(policy::key("ordering"), std::string("fifo")), std::invalid_argument);
  EXPECT_THROW(policy::check(policy::key("call"), int64_t{1}), std::invalid_argument);
  // Every default passes its own check.
  for (const auto& key : policy::schema()) EXPECT_NO_THROW(policy::check(key, key.defaultValue)) << key.name;
}

// What BulkIO cannot carry, said in one line naming the key.
TEST(PolicySchema, BulkioRefusesWhatItsWireCannotCarry) {
  EXPECT_EQ(policy::protocolConflict(policy::Protocol::Bulkio, {{"call", "twoway"}, {"flow", "none"}}), "");
  const std::string oneway = policy::protocolConflict(policy::Protocol::Bulkio, {{"call", "oneway"}});
  EXPECT_NE(oneway.find("call = 'oneway'"), std::string::npos) << oneway;
  EXPECT_NE(policy::protocolConflict(policy::Protocol::Bulkio, {{"flow", "credits(4)"}}).find("flow"),
            std::string::npos);
  EXPECT_EQ(policy::protocolConflict(policy::Protocol::Scabench, {{"call", "oneway"}}), "");
}

// What --describe publishes: the spec checker reads these fields.
TEST(PolicySchema, DescribesEveryKeyInTheSpecsOrder) {
  const nlohmann::ordered_json d = policy::describe();
  std::vector<std::string> names;
  for (const auto& [name, _] : d.items()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"call", "sync", "fanout", "fanout_depth", "dispatch", "worker",
                                             "worker_resume", "ordering", "reorder_capacity", "reorder_timeout_ms",
                                             "flow", "packet_length", "protocol"}));
  EXPECT_EQ(d["protocol"]["values"], nlohmann::ordered_json::array({"scabench", "bulkio"}));
  EXPECT_EQ(d["protocol"]["side"], "both");
  EXPECT_EQ(d["protocol"]["default"], "scabench");
  EXPECT_EQ(d["protocol"]["needs"]["bulkio"]["keys"],
            nlohmann::ordered_json({{"call", "twoway"}, {"flow", "none"}, {"ordering", "arrival"}}));
  EXPECT_EQ(d["fanout"]["values"], nlohmann::ordered_json::array({"sequential", "parallel", "drop"}));
  EXPECT_EQ(d["fanout"]["default"], "sequential");
  EXPECT_EQ(d["fanout_depth"]["min"], 1);
  EXPECT_EQ(d["fanout_depth"]["max"], 65536);
  EXPECT_EQ(d["fanout_depth"]["default"], 64);
  EXPECT_EQ(d["sync"]["only_with"], nlohmann::ordered_json({{"call", "oneway"}}));
  EXPECT_EQ(d["dispatch"]["args"]["N"]["max"], 1000);
  EXPECT_EQ(d["worker"]["type"], "depth");
  EXPECT_EQ(d["worker"]["true"], 64);
  EXPECT_EQ(d["worker"]["default"], 0);
  EXPECT_EQ(d["worker_resume"]["below"], "worker");
  EXPECT_EQ(d["reorder_timeout_ms"]["default"], 50.0);
  EXPECT_EQ(d["flow"]["side"], "both");
  EXPECT_EQ(d["flow"]["constraints"], nlohmann::ordered_json::array({"lo < hi"}));
  EXPECT_EQ(d["flow"]["args"]["w"]["min"], 1);
  EXPECT_EQ(d["packet_length"]["side"], "provides");
  EXPECT_EQ(d["packet_length"]["default"], 0);
  for (const auto& [name, entry] : d.items()) {
    EXPECT_TRUE(entry.contains("side") && entry.contains("type") && entry.contains("default") &&
                entry.contains("description"))
        << name;
  }
}
