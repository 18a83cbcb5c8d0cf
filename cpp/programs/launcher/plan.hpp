// The deployment plan scabench-launch runs, as typed structs: what each
// process and each hop gets. Written by python/scabench/run/plan.py, in the
// form docs/plan.schema.json publishes; parsePlan is the one place the
// launcher reads JSON, and it refuses a plan that breaks the schema with a
// PlanError naming where and what is valid.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace scabench::launch {

// A plan the launcher cannot run: "plan: WHERE: what is wrong".
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A simple value as the plan gives it: a boolean, an integer, a real or a string.
using SimpleValue = std::variant<bool, int64_t, double, std::string>;
// A PRF simplesequence's value: its element type in the PRF's words
// ("double", "ulong", "string", ...) and its values; configure sends it as
// that CORBA sequence (CORBA::DoubleSeq, ...), as REDHAWK does.
struct SequenceValue {
  std::string type;
  std::vector<SimpleValue> values;
};
// A PRF struct's simple member: its PRF type ("float", "short", ...) and its
// value; configure sends it as that CORBA type, since a REDHAWK component
// extracts each member into its declared type and omniORB's extraction is
// strict about the type code.
struct TypedValue {
  std::string type;
  SimpleValue value;
};
// A PRF struct's value: its members, each a typed simple value or a
// sequence; configure sends it as REDHAWK does, a CF::Properties of its
// members in the any.
struct StructValue {
  std::map<std::string, std::variant<TypedValue, SequenceValue>> members;
};
// A property as configure sets it: a simple one as a CORBA boolean, long
// long, double or string; a sequence as its type's CORBA sequence; a struct
// as a CF::Properties.
using PropertyValue = std::variant<bool, int64_t, double, std::string, SequenceValue, StructValue>;
using Properties = std::map<std::string, PropertyValue>;

// Where a process runs. No node: forked here, on `cores` (empty: any CPU).
struct Placement {
  std::vector<int> cores;
  bool batch = false;  // SCHED_BATCH: its threads do not preempt on wake-up
  std::string node;
};

struct ComponentPlan {
  std::string name, kind, sampleType;
  Properties properties;  // every property configure sets: its own and its hops'
  std::string library;    // a plugin the host loads first; empty: a built-in kind
};

// A scabench-host process and the components it holds.
struct HostPlan {
  std::string name;
  Placement placement;
  std::vector<std::string> orbOptions;
  std::vector<ComponentPlan> components;
};

// A component the launcher does not host: a program it starts (exec) or a
// reference someone else started (ref).
struct ExternalPlan {
  ComponentPlan component;
  std::string process;  // the name of its process (exec'd)
  std::string ref;      // empty: exec'd
  bool release = true;
  std::vector<std::string> exec;
  std::string program;  // on a node: the node's own program of this name
  Placement placement;
  double bindTimeoutS = 30;
  std::map<std::string, std::string> parameters;  // the SCA exec parameters
  std::vector<std::string> orbOptions;
};

struct NodePlan {
  std::string name;
  long long memoryMib = 0;
  bool sameMachine = false;
};

struct HopEnd {
  std::string component, port;
  Properties properties;  // what this hop gives this port (in the component's properties too)
};

// A connection. A port may be an end of several hops.
struct Hop {
  std::string id, wiring, transport;
  HopEnd uses, provides;
  int64_t ringBytes = 0;  // shm: the ring's data area
};

struct NamingPlan {
  std::string corbaloc, context;
  bool shared = false;
};

// How the launcher joins a hop's ends (the hop's `wiring`): getPort on each,
// then the uses port's CF::Port::connectPort, the only way it knows. Plans
// written before named it `protocol`, "scabench" (kOldWiring): read as this.
inline constexpr const char* kConnectPort = "connectPort";
inline constexpr const char* kOldWiring = "scabench";

struct Plan {
  std::string runDir, hostBinary;
  double timeoutS = 0;
  std::vector<int> measureCores;
  std::vector<HostPlan> hosts;
  std::vector<ExternalPlan> externals;
  std::vector<NodePlan> nodes;
  std::vector<Hop> hops;  // in the order the launcher connects them
  // Every component, each once, in the order the launcher starts them; it
  // stops them in reverse, as an SCA application does.
  std::vector<std::string> startOrder;
  std::optional<NamingPlan> naming;
  bool announceStart = false;
  bool hold = false;

  const ExternalPlan* external(const std::string& name) const;
};

// The machine's online CPUs (/sys/devices/system/cpu/online; without it, this
// process's affinity): the plan's cores must be among them.
std::vector<int> usableCpus();
// Throws PlanError. Every number is checked against the bounds
// docs/plan.schema.json gives it (compiled in: plan_schema.hpp), and every
// CPU against `usable`, before anything is started.
Plan parsePlan(const nlohmann::json& doc, const std::vector<int>& usable = usableCpus());
// Reads and parses the file at `path`; PlanError if it is not JSON or not a plan.
Plan readPlan(const std::string& path);

}  // namespace scabench::launch
