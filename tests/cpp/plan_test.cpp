// The launcher's plan parser (cpp/programs/launcher/plan.cpp) on the
// published sample (docs/plan.example.json, which tests/python/unit/test_plan.py
// checks against docs/plan.schema.json), and on plans that break the schema.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include "launcher/plan.hpp"
#include "launcher/plan_schema.hpp"
#include "scabench/runtime/shm_ring.hpp"

using nlohmann::json;
using namespace scabench::launch;

namespace {

// The CPUs the tests' plans may name, whatever machine runs them.
const std::vector<int> kUsable = {0, 1, 2, 3};

json sample() {
  std::ifstream in(SCABENCH_PLAN_EXAMPLE);
  return json::parse(in);
}

// The PlanError a broken sample gets.
std::string refusal(const std::function<void(json&)>& breakIt) {
  json doc = sample();
  breakIt(doc);
  try {
    parsePlan(doc, kUsable);
  } catch (const PlanError& ex) {
    return ex.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(Plan, TheSampleParsesIntoProcessesAndHops) {
  const Plan plan = parsePlan(sample(), kUsable);
  EXPECT_EQ(plan.runDir, "/tmp/scabench-run");
  EXPECT_EQ(plan.timeoutS, 60.0);
  ASSERT_EQ(plan.hosts.size(), 2u);
  const HostPlan& here = plan.hosts[0];
  EXPECT_EQ(here.name, "host0-producer+stage1");
  EXPECT_EQ(here.placement.cores, (std::vector<int>{0, 1}));
  EXPECT_TRUE(here.placement.node.empty());
  EXPECT_FALSE(here.placement.batch);
  ASSERT_EQ(here.components.size(), 2u);
  EXPECT_EQ(here.components[0].name, "producer");
  EXPECT_EQ(std::get<int64_t>(here.components[0].properties.at("packets")), 5);
  EXPECT_EQ(std::get<std::string>(here.components[0].properties.at("out.call")), "twoway");
  EXPECT_EQ(std::get<double>(here.components[1].properties.at("in.reorder_timeout_ms")), 50.0);
  EXPECT_EQ(plan.hosts[1].placement.node, "n1");
  ASSERT_EQ(plan.nodes.size(), 1u);
  EXPECT_EQ(plan.nodes[0].memoryMib, 33);

  ASSERT_EQ(plan.externals.size(), 2u);
  const ExternalPlan* gain = plan.external("gain");
  ASSERT_NE(gain, nullptr);
  EXPECT_EQ(gain->process, "exec-gain");
  EXPECT_EQ(gain->exec, (std::vector<std::string>{"/usr/local/bin/gain", "--quiet"}));
  EXPECT_TRUE(gain->placement.batch);
  EXPECT_EQ(gain->parameters.at("SAMPLE_TYPE"), "double");
  const ExternalPlan* theirs = plan.external("theirs");
  ASSERT_NE(theirs, nullptr);
  EXPECT_EQ(theirs->ref, "corbaname::127.0.0.1:2809#lab/theirs");
  EXPECT_FALSE(theirs->release);
  EXPECT_EQ(plan.external("nobody"), nullptr);

  ASSERT_EQ(plan.hops.size(), 2u);
  const Hop& first = plan.hops[0];
  EXPECT_EQ(first.id, "producer.out->stage1.in");
  EXPECT_EQ(first.wiring, kConnectPort);
  EXPECT_EQ(first.transport, "collocated");
  EXPECT_EQ(first.uses.component, "producer");
  EXPECT_EQ(first.uses.port, "out");
  EXPECT_EQ(first.provides.component, "stage1");
  EXPECT_EQ(first.provides.port, "in");
  EXPECT_EQ(std::get<std::string>(first.uses.properties.at("out.call")), "twoway");
  ASSERT_TRUE(plan.naming.has_value());
  EXPECT_TRUE(plan.naming->shared);
}

TEST(Plan, AMalformedPlanIsRefusedNamingWhereAndWhatIsValid) {
  EXPECT_EQ(refusal([](json& p) { p.erase("hosts"); }), "plan: the plan: has no 'hosts' (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["hosts"][0]["cores"] = "all"; }),
            "plan: hosts[0].cores: is string, not an array (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["connections"][1]["uses"].erase("port"); }),
            "plan: connections[1].uses: has no 'port' (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["connections"][0]["wiring"] = "rtp"; }),
            "plan: connections[0].wiring: 'rtp' is not a wiring the launcher knows; it knows: connectPort "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["connections"][0].erase("wiring"); }),
            "plan: connections[0]: has no 'wiring' (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["hosts"][1]["node"] = "n9"; }),
            "plan: hosts[1].node: 'n9' is not among the plan's nodes (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["hosts"][0]["scheduler"] = "fifo"; }),
            "plan: hosts[0].scheduler: 'fifo' is not normal or batch (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["externals"][0]["ref"] = "IOR:00"; }),
            "plan: externals[0]: has both 'exec' and 'ref' (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["hosts"][0]["components"][0]["properties"]["packets"] = json::array(); }),
            "plan: hosts[0].components[0].properties.packets: is array, not a boolean, number, string, "
            "{\"sequence\": TYPE, \"values\": [...]} or {\"struct\": {...}} (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["externals"][0].erase("process"); }),
            "plan: externals[0]: has no 'process' (docs/plan.schema.json)");
}

// Each number is held to the bounds the published schema gives it (the
// runner's side checks the same values in the spec), before any process
// starts: the file, the key and what is valid, in one line.
TEST(Plan, ANumberOutsideTheSchemasBoundsIsRefusedNamingThem) {
  EXPECT_EQ(refusal([](json& p) { p["timeout_s"] = 0; }),
            "plan: timeout_s: 0 is out of bounds: it must be more than 0 and at most 1000000000 "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["timeout_s"] = 1e300; }),
            "plan: timeout_s: 1e+300 is out of bounds: it must be more than 0 and at most 1000000000 "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["externals"][0]["bind_timeout_s"] = 900; }),
            "plan: externals[0].bind_timeout_s: 900 is out of bounds: it must be more than 0 and at most 600 "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["externals"][0]["bind_timeout_s"] = -1; }),
            "plan: externals[0].bind_timeout_s: -1 is out of bounds: it must be more than 0 and at most 600 "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["nodes"][0]["memory_mib"] = -5; }),
            "plan: nodes[0].memory_mib: -5 is out of bounds: it must be at least 0 (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["connections"][0]["ring_bytes"] = 1; }),
            "plan: connections[0].ring_bytes: 1 is out of bounds: it must be at least 65536 and at most 1073741824 "
            "(docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["hosts"][0]["cores"][0] = -1; }),
            "plan: hosts[0].cores[0]: -1 is out of bounds: it must be at least 0 (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["measure_cores"][1] = 9; }),
            "plan: measure_cores[1]: CPU 9 is not usable here; usable CPUs: 0,1,2,3 (docs/plan.schema.json)");
  // A process on a node names its machine's CPUs, which are not known here.
  EXPECT_EQ(refusal([](json& p) { p["hosts"][1]["cores"] = json::array({9}); }), "(accepted)");
}

// The ring's bounds in the schema are the runtime's (every uses port's
// shm_bytes, which the runner reads from scabench-host --describe).
TEST(Plan, TheSchemasRingBoundsAreTheRuntimes) {
  const json schema = json::parse(kPlanSchema);
  const json& ring = schema["$defs"]["hop"]["properties"]["ring_bytes"];
  EXPECT_EQ(ring["minimum"].get<uint64_t>(), scabench::shm::kMinDataBytes);
  EXPECT_EQ(ring["maximum"].get<uint64_t>(), scabench::shm::kMaxDataBytes);
}

// The start order names every component once: one left out would never start.
TEST(Plan, TheStartOrderNamesEveryComponentOnce) {
  EXPECT_EQ(parsePlan(sample(), kUsable).startOrder,
            (std::vector<std::string>{"stage2", "stage1", "gain", "theirs", "producer"}));
  EXPECT_EQ(refusal([](json& p) { p.erase("start_order"); }),
            "plan: the plan: has no 'start_order' (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["start_order"][0] = "nobody"; }),
            "plan: start_order[0]: 'nobody' is not a component of the plan (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["start_order"][1] = "stage2"; }),
            "plan: start_order[1]: 'stage2' is named twice (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) { p["start_order"].erase(p["start_order"].size() - 1); }),
            "plan: start_order: does not name component 'producer' (docs/plan.schema.json)");
}

TEST(Plan, AFileThatIsNotJsonIsRefused) { EXPECT_THROW(readPlan("/nonexistent/plan.json"), PlanError); }

// A uses port that feeds several hops (fan-out) is one end of each: the plan
// keeps every hop, in its order, each with its own id, which the launcher
// connects as that connection's id.
TEST(Plan, AUsesPortMayBeTheEndOfSeveralHops) {
  json doc = sample();
  json second = doc["connections"][0];
  second["id"] = "producer.out->stage2.in";
  second["provides"]["component"] = "stage2";
  doc["connections"].insert(doc["connections"].begin() + 1, second);
  const Plan plan = parsePlan(doc, kUsable);
  ASSERT_GE(plan.hops.size(), 2u);
  EXPECT_EQ(plan.hops[0].id, "producer.out->stage1.in");
  EXPECT_EQ(plan.hops[1].id, "producer.out->stage2.in");
  EXPECT_EQ(plan.hops[0].uses.component, plan.hops[1].uses.component);
  EXPECT_EQ(plan.hops[0].uses.port, plan.hops[1].uses.port);
  EXPECT_EQ(plan.hops[1].provides.component, "stage2");
}

// A PRF simplesequence travels typed: its element type and its values, each
// of that type's kind; configure sends it as that CORBA sequence.
TEST(Plan, ASequencePropertyIsTyped) {
  json doc = sample();
  doc["externals"][0]["properties"]["gains"] = {{"sequence", "double"}, {"values", {1.0, 2, 0.5}}};
  const Plan plan = parsePlan(doc, kUsable);
  const auto& gains = std::get<SequenceValue>(plan.external("gain")->component.properties.at("gains"));
  EXPECT_EQ(gains.type, "double");
  ASSERT_EQ(gains.values.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(gains.values[1]), 2);
  EXPECT_EQ(refusal([](json& p) {
              p["externals"][0]["properties"]["names"] = {{"sequence", "string"}, {"values", {"a", 1}}};
            }),
            "plan: externals[0].properties.names.values[1]: is number, not a string (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) {
              p["externals"][0]["properties"]["x"] = {{"sequence", "objref"}, {"values", json::array()}};
            }),
            "plan: externals[0].properties.x.sequence: 'objref' is not a PRF simple type (docs/plan.schema.json)");
}

// A PRF struct travels as its members, each a typed simple value (sent as
// its PRF type: REDHAWK extracts each member strictly) or a sequence;
// configure sends it as a CF::Properties in the any.
TEST(Plan, AStructPropertyHoldsItsTypedMembers) {
  json doc = sample();
  doc["externals"][0]["properties"]["scale"] = {{"struct",
                                                 {{"factor", {{"type", "float"}, {"value", 2.5}}},
                                                  {"n", {{"type", "short"}, {"value", 3}}},
                                                  {"taps", {{"sequence", "long"}, {"values", {1, 2}}}}}}};
  const Plan plan = parsePlan(doc, kUsable);
  const auto& scale = std::get<StructValue>(plan.external("gain")->component.properties.at("scale"));
  ASSERT_EQ(scale.members.size(), 3u);
  const auto& factor = std::get<TypedValue>(scale.members.at("factor"));
  EXPECT_EQ(factor.type, "float");
  EXPECT_EQ(std::get<double>(factor.value), 2.5);
  const auto& n = std::get<TypedValue>(scale.members.at("n"));
  EXPECT_EQ(n.type, "short");
  EXPECT_EQ(std::get<int64_t>(n.value), 3);
  EXPECT_EQ(std::get<SequenceValue>(scale.members.at("taps")).values.size(), 2u);
  EXPECT_EQ(refusal([](json& p) {
              p["externals"][0]["properties"]["scale"] = {{"struct", {{"x", 2.0}}}};
            }),
            "plan: externals[0].properties.scale.struct.x: is number, not {\"type\": TYPE, \"value\": ...} or "
            "{\"sequence\": TYPE, \"values\": [...]} (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) {
              p["externals"][0]["properties"]["scale"] = {{"struct", {{"x", {{"type", "short"}, {"value", 2.5}}}}}};
            }),
            "plan: externals[0].properties.scale.struct.x.value: is number, not a short (docs/plan.schema.json)");
  EXPECT_EQ(refusal([](json& p) {
              p["externals"][0]["properties"]["scale"] = {{"struct", {{"x", {{"type", "objref"}, {"value", 1}}}}}};
            }),
            "plan: externals[0].properties.scale.struct.x.type: 'objref' is not a PRF simple type "
            "(docs/plan.schema.json)");
}

// A plan written before the hop's `wiring` had its name said "protocol":
// "scabench" for the same connectPort; such a plan is still read.
TEST(Plan, APlanWrittenBeforeWiringIsReadAsConnectPort) {
  json doc = sample();
  for (json& hop : doc["connections"]) {
    hop.erase("wiring");
    hop["protocol"] = "scabench";
  }
  const Plan plan = parsePlan(doc, kUsable);
  ASSERT_FALSE(plan.hops.empty());
  for (const Hop& hop : plan.hops) EXPECT_EQ(hop.wiring, kConnectPort);
  doc["connections"][0]["protocol"] = "bulkio";  // a policy's word in the old place: not a wiring
  try {
    parsePlan(doc, kUsable);
    ADD_FAILURE() << "accepted";
  } catch (const PlanError& ex) {
    EXPECT_STREQ(ex.what(),
                 "plan: connections[0].protocol: 'bulkio' is not a wiring the launcher knows; it knows: scabench "
                 "(docs/plan.schema.json)");
  }
}
