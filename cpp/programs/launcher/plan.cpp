#include "plan.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "launcher/plan_schema.hpp"

namespace scabench::launch {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw PlanError("plan: " + where + ": " + what + " (docs/plan.schema.json)");
}

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key)) refuse(where, std::string("has no '") + key + "'");
  return object[key];
}

std::string text(const json& v, const std::string& where) {
  if (!v.is_string()) refuse(where, "is " + std::string(v.type_name()) + ", not a string");
  return v.get<std::string>();
}

std::string name(const json& v, const std::string& where) {
  std::string s = text(v, where);
  if (s.empty()) refuse(where, "is empty, not a name");
  return s;
}

double number(const json& v, const std::string& where) {
  if (!v.is_number()) refuse(where, "is " + std::string(v.type_name()) + ", not a number");
  return v.get<double>();
}

// The published schema's entry at `pointer` ("/properties/timeout_s"):
// where a value's bounds are written, for the runner and for this parser.
const json& schemaAt(const char* pointer) {
  static const json schema = json::parse(kPlanSchema);
  return schema.at(json::json_pointer(pointer));
}

std::string numberText(double v) {
  char out[32];
  std::snprintf(out, sizeof out, "%.15g", v);
  return out;
}

// `value` (read at `where`) within the bounds the schema gives the entry at
// `pointer` (minimum, exclusiveMinimum, maximum); refused, naming them, if not.
template <class Number>
Number within(Number value, const char* pointer, const std::string& where) {
  const json& entry = schemaAt(pointer);
  const auto v = double(value);
  bool ok = std::isfinite(v);
  std::string valid;
  const auto bound = [&](const char* key, const char* words, auto holds) {
    if (!entry.contains(key)) return;
    const double b = entry[key].get<double>();
    ok = ok && holds(v, b);
    valid += std::string(valid.empty() ? "" : " and ") + words + " " + numberText(b);
  };
  bound("minimum", "at least", [](double x, double b) { return x >= b; });
  bound("exclusiveMinimum", "more than", [](double x, double b) { return x > b; });
  bound("maximum", "at most", [](double x, double b) { return x <= b; });
  if (!ok) refuse(where, numberText(v) + " is out of bounds: it must be " + valid);
  return value;
}

int64_t integer(const json& v, const std::string& where) {
  if (!v.is_number_integer()) refuse(where, "is " + std::string(v.type_name()) + ", not an integer");
  return v.get<int64_t>();
}

bool boolean(const json& v, const std::string& where) {
  if (!v.is_boolean()) refuse(where, "is " + std::string(v.type_name()) + ", not true or false");
  return v.get<bool>();
}

const json& object(const json& v, const std::string& where) {
  if (!v.is_object()) refuse(where, "is " + std::string(v.type_name()) + ", not an object");
  return v;
}

const json& array(const json& v, const std::string& where) {
  if (!v.is_array()) refuse(where, "is " + std::string(v.type_name()) + ", not an array");
  return v;
}

// o[key] read by `parse`, which names it where + "." + key; refused if absent.
template <class Parse>
decltype(auto) required(const json& o, const char* key, const std::string& where, Parse parse) {
  return parse(field(o, key, where), where + "." + key);
}

// o[key] read by `parse` into `into` where it is there; left at its default where not.
template <class Parse, class T>
void optional(const json& o, const char* key, const std::string& where, Parse parse, T& into) {
  if (o.contains(key)) into = parse(o[key], where + "." + key);
}

std::vector<std::string> texts(const json& v, const std::string& where) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < array(v, where).size(); ++i)
    out.push_back(text(v[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

std::string cpuList(const std::vector<int>& cpus) {
  std::string out;
  for (const int c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

// CPU numbers, each among `usable` (parsePlan's: this machine's), unless
// null (a process on a node: its machine's CPUs are not known here).
std::vector<int> cores(const json& v, const std::string& where, const std::vector<int>* usable) {
  std::vector<int> out;
  for (std::size_t i = 0; i < array(v, where).size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const int64_t core = within(integer(v[i], at), "/$defs/cores/items", at);
    if (usable && std::find(usable->begin(), usable->end(), core) == usable->end())
      refuse(at, "CPU " + std::to_string(core) + " is not usable here; usable CPUs: " + cpuList(*usable));
    out.push_back(int(core));
  }
  return out;
}

// The element types of a sequence, in the PRF's words: what configure can send.
const std::set<std::string> kSequenceTypes = {"boolean",  "octet",     "short", "ushort", "long",  "ulong",
                                              "longlong", "ulonglong", "float", "double", "string"};

std::optional<SimpleValue> simple(const json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return value.get<std::string>();
  return std::nullopt;
}

// A value of the PRF simple type `type` (checked to be one), at `at`.
SimpleValue typed(const std::string& type, const json& value, const std::string& at) {
  const bool fits = type == "boolean"                     ? value.is_boolean()
                    : type == "string"                    ? value.is_string()
                    : type == "float" || type == "double" ? value.is_number()
                                                          : value.is_number_integer();
  if (!fits) refuse(at, "is " + std::string(value.type_name()) + ", not a " + type);
  return *simple(value);
}

// The PRF simple type at o[key], one configure can send.
std::string simpleType(const json& o, const char* key, const std::string& where) {
  std::string type = required(o, key, where, text);
  if (!kSequenceTypes.count(type)) refuse(where + "." + key, "'" + type + "' is not a PRF simple type");
  return type;
}

// {"sequence": TYPE, "values": [...]}: each value of the type's kind.
SequenceValue sequence(const json& v, const std::string& where) {
  SequenceValue out;
  out.type = simpleType(v, "sequence", where);
  const json& values = required(v, "values", where, array);
  for (std::size_t i = 0; i < values.size(); ++i)
    out.values.push_back(typed(out.type, values[i], where + ".values[" + std::to_string(i) + "]"));
  return out;
}

// {"struct": {MEMBER: {"type": TYPE, "value": v} or a sequence}}.
StructValue structure(const json& v, const std::string& where) {
  StructValue out;
  const json& members = required(v, "struct", where, object);
  for (const auto& [id, value] : members.items()) {
    const std::string at = where + ".struct." + id;
    if (value.is_object() && value.contains("sequence"))
      out.members[id] = sequence(value, at);
    else if (value.is_object() && value.contains("type")) {
      TypedValue member;
      member.type = simpleType(value, "type", at);
      member.value = typed(member.type, field(value, "value", at), at + ".value");
      out.members[id] = member;
    } else
      refuse(at, "is " + std::string(value.type_name()) +
                     ", not {\"type\": TYPE, \"value\": ...} or {\"sequence\": TYPE, \"values\": [...]}");
  }
  return out;
}

Properties properties(const json& v, const std::string& where) {
  Properties out;
  for (const auto& [key, value] : object(v, where).items()) {
    if (auto one = simple(value))
      std::visit([&](const auto& x) { out[key] = x; }, *one);
    else if (value.is_object() && value.contains("sequence"))
      out[key] = sequence(value, where + "." + key);
    else if (value.is_object() && value.contains("struct"))
      out[key] = structure(value, where + "." + key);
    else
      refuse(where + "." + key, "is " + std::string(value.type_name()) +
                                    ", not a boolean, number, string, {\"sequence\": TYPE, \"values\": [...]} or "
                                    "{\"struct\": {...}}");
  }
  return out;
}

// `cores`, `scheduler` and `node` of a process's entry.
Placement placement(const json& entry, const std::string& where, bool coresRequired, const std::vector<int>& usable) {
  Placement p;
  if (coresRequired || entry.contains("cores"))
    p.cores = cores(field(entry, "cores", where), where + ".cores", entry.contains("node") ? nullptr : &usable);
  if (entry.contains("scheduler")) {
    const std::string scheduler = text(entry["scheduler"], where + ".scheduler");
    if (scheduler != "normal" && scheduler != "batch")
      refuse(where + ".scheduler", "'" + scheduler + "' is not normal or batch");
    p.batch = scheduler == "batch";
  }
  if (entry.contains("node")) p.node = name(entry["node"], where + ".node");
  return p;
}

ComponentPlan component(const json& c, const std::string& where) {
  object(c, where);
  ComponentPlan out;
  out.name = required(c, "name", where, name);
  out.kind = required(c, "kind", where, name);
  out.sampleType = required(c, "sample_type", where, name);
  out.properties = required(c, "properties", where, properties);
  optional(c, "library", where, name, out.library);
  return out;
}

HostPlan host(const json& h, const std::string& where, const std::vector<int>& usable) {
  object(h, where);
  HostPlan out;
  out.name = required(h, "name", where, name);
  out.placement = placement(h, where, /*coresRequired=*/true, usable);
  out.orbOptions = required(h, "orb_options", where, texts);
  const json& components = required(h, "components", where, array);
  if (components.empty()) refuse(where + ".components", "is empty: a host holds one component at least");
  for (std::size_t i = 0; i < components.size(); ++i)
    out.components.push_back(component(components[i], where + ".components[" + std::to_string(i) + "]"));
  return out;
}

ExternalPlan external(const json& e, const std::string& where, const std::vector<int>& usable) {
  ExternalPlan out;
  out.component = component(e, where);
  const bool byRef = e.contains("ref"), byExec = e.contains("exec");
  if (byRef == byExec) refuse(where, byRef ? "has both 'exec' and 'ref'" : "has neither 'exec' nor 'ref'");
  if (byRef) {
    out.ref = name(e["ref"], where + ".ref");
    optional(e, "release", where, boolean, out.release);
    return out;
  }
  out.process = required(e, "process", where, name);
  out.exec = texts(e["exec"], where + ".exec");
  if (out.exec.empty()) refuse(where + ".exec", "is empty: it names the program first");
  out.placement = placement(e, where, /*coresRequired=*/false, usable);
  optional(e, "program", where, name, out.program);
  optional(e, "bind_timeout_s", where, number, out.bindTimeoutS);
  if (e.contains("bind_timeout_s"))
    within(out.bindTimeoutS, "/$defs/external/properties/bind_timeout_s", where + ".bind_timeout_s");
  if (e.contains("parameters"))
    for (const auto& [key, value] : object(e["parameters"], where + ".parameters").items())
      out.parameters[key] = text(value, where + ".parameters." + key);
  optional(e, "orb_options", where, texts, out.orbOptions);
  return out;
}

HopEnd end(const json& v, const std::string& where) {
  object(v, where);
  HopEnd out;
  out.component = required(v, "component", where, name);
  out.port = required(v, "port", where, name);
  optional(v, "properties", where, properties, out.properties);
  return out;
}

Hop hop(const json& c, const std::string& where) {
  object(c, where);
  Hop out;
  out.id = required(c, "id", where, name);
  if (!c.contains("wiring") && c.contains("protocol")) {
    // A plan written before `wiring` had its name: its one value meant connectPort.
    const std::string old = text(c["protocol"], where + ".protocol");
    if (old != kOldWiring)
      refuse(where + ".protocol", "'" + old + "' is not a wiring the launcher knows; it knows: " + kOldWiring);
    out.wiring = kConnectPort;
  } else {
    out.wiring = required(c, "wiring", where, text);
    if (out.wiring != kConnectPort)
      refuse(where + ".wiring", "'" + out.wiring + "' is not a wiring the launcher knows; it knows: " + kConnectPort);
  }
  out.transport = required(c, "transport", where, text);
  if (out.transport != "shm" && out.transport != "unix" && out.transport != "tcp" && out.transport != "collocated")
    refuse(where + ".transport", "'" + out.transport + "' is not one of shm, unix, tcp, collocated");
  out.uses = required(c, "uses", where, end);
  out.provides = required(c, "provides", where, end);
  optional(c, "ring_bytes", where, integer, out.ringBytes);
  if (c.contains("ring_bytes")) within(out.ringBytes, "/$defs/hop/properties/ring_bytes", where + ".ring_bytes");
  return out;
}

std::string at(const char* list, std::size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

}  // namespace

const ExternalPlan* Plan::external(const std::string& name) const {
  for (const auto& e : externals)
    if (e.component.name == name) return &e;
  return nullptr;
}

std::vector<int> usableCpus() {
  // The machine's online CPUs, not this process's affinity: a launcher may
  // run narrower than the hosts it pins (the granularity lab takes the
  // measured cores out of its harness's mask, and so out of the launcher's,
  // and then places hosts on exactly those cores). What the check guards
  // against is a CPU the machine does not have; one a cgroup withholds fails
  // at the host's sched_setaffinity, named there.
  std::vector<int> out;
  std::ifstream online("/sys/devices/system/cpu/online");
  std::string ranges;
  if (std::getline(online, ranges)) {
    std::size_t at = 0;
    while (at < ranges.size()) {
      const std::size_t comma = ranges.find(',', at);
      const std::string range = ranges.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      const std::size_t dash = range.find('-');
      try {
        const int first = std::stoi(range.substr(0, dash));
        const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
        for (int cpu = first; cpu <= last; ++cpu) out.push_back(cpu);
      } catch (const std::exception&) {
        out.clear();
        break;
      }
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  if (!out.empty()) return out;
  cpu_set_t set;  // no sysfs (a container without it): this process's affinity
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

Plan parsePlan(const json& doc, const std::vector<int>& usable) {
  object(doc, "the plan");
  Plan plan;
  plan.runDir = name(field(doc, "run_dir", "the plan"), "run_dir");
  plan.hostBinary = name(field(doc, "host_binary", "the plan"), "host_binary");
  plan.timeoutS =
      within(number(field(doc, "timeout_s", "the plan"), "timeout_s"), "/properties/timeout_s", "timeout_s");
  plan.measureCores = cores(field(doc, "measure_cores", "the plan"), "measure_cores", &usable);
  if (doc.contains("nodes")) {
    const json& nodes = array(doc["nodes"], "nodes");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string where = at("nodes", i);
      NodePlan node;
      node.name = name(field(object(nodes[i], where), "name", where), where + ".name");
      if (nodes[i].contains("memory_mib"))
        node.memoryMib = within(integer(nodes[i]["memory_mib"], where + ".memory_mib"),
                                "/$defs/node/properties/memory_mib", where + ".memory_mib");
      if (nodes[i].contains("same_machine"))
        node.sameMachine = boolean(nodes[i]["same_machine"], where + ".same_machine");
      plan.nodes.push_back(node);
    }
  }
  auto known = [&](const Placement& p, const std::string& where) {
    if (p.node.empty()) return;
    for (const auto& n : plan.nodes)
      if (n.name == p.node) return;
    refuse(where + ".node", "'" + p.node + "' is not among the plan's nodes");
  };
  const json& hosts = array(field(doc, "hosts", "the plan"), "hosts");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    plan.hosts.push_back(host(hosts[i], at("hosts", i), usable));
    known(plan.hosts.back().placement, at("hosts", i));
  }
  if (doc.contains("externals")) {
    const json& externals = array(doc["externals"], "externals");
    for (std::size_t i = 0; i < externals.size(); ++i) {
      plan.externals.push_back(external(externals[i], at("externals", i), usable));
      known(plan.externals.back().placement, at("externals", i));
    }
  }
  const json& connections = array(field(doc, "connections", "the plan"), "connections");
  for (std::size_t i = 0; i < connections.size(); ++i) plan.hops.push_back(hop(connections[i], at("connections", i)));
  // The start order names every component of the plan once: the launcher
  // starts exactly those, and a component left out would never start.
  std::set<std::string> components, named;
  for (const auto& h : plan.hosts)
    for (const auto& c : h.components) components.insert(c.name);
  for (const auto& e : plan.externals) components.insert(e.component.name);
  plan.startOrder = texts(field(doc, "start_order", "the plan"), "start_order");
  for (std::size_t i = 0; i < plan.startOrder.size(); ++i) {
    const std::string& name = plan.startOrder[i];
    if (!components.count(name)) refuse(at("start_order", i), "'" + name + "' is not a component of the plan");
    if (!named.insert(name).second) refuse(at("start_order", i), "'" + name + "' is named twice");
  }
  for (const auto& name : components)
    if (!named.count(name)) refuse("start_order", "does not name component '" + name + "'");
  if (doc.contains("naming")) {
    const json& n = object(doc["naming"], "naming");
    NamingPlan naming;
    naming.corbaloc = name(field(n, "corbaloc", "naming"), "naming.corbaloc");
    naming.context = name(field(n, "context", "naming"), "naming.context");
    if (n.contains("shared")) naming.shared = boolean(n["shared"], "naming.shared");
    plan.naming = naming;
  }
  if (doc.contains("announce_start")) plan.announceStart = boolean(doc["announce_start"], "announce_start");
  if (doc.contains("hold")) plan.hold = boolean(doc["hold"], "hold");
  return plan;
}

Plan readPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PlanError("cannot open");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& ex) {
    throw PlanError(ex.what());
  }
  return parsePlan(doc);
}

}  // namespace scabench::launch
