#include "scabench/runtime/policy_schema.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "scabench/runtime/message_limit.hpp"

namespace scabench::policy {
namespace {

// Two-way + worker needs slack in each queue to keep both cores of a 2-core
// machine busy behind three equal stages. A two-way caller blocked on a full
// queue resumes at half the depth (worker_resume = "auto"), so it sleeps once
// per burst rather than once per packet. exp6 on 2 cores, 4 guarded runs each,
// x floor: depth 16 1.030-1.036, 64 1.024-1.028, 256 1.021-1.025, 1024
// 1.020-1.029; 64 resuming at the first free slot 1.032-1.053. So 64 is the
// knee (docs/architecture.md, "Worker queue"). It costs 64 packets of memory
// (512 KiB of doubles) per port; with a paced source the queue stays nearly
// empty and adds no latency.
constexpr int64_t kWorkerDepthWhenTrue = 64;

// Sane upper bounds: far above any setting that helps, low enough that a
// typo cannot ask for gigabytes of queue or a thousand threads per connection.
constexpr int64_t kMaxPackets = 65536;             // queue depths, buffers, windows, watermarks
constexpr int64_t kMaxPoolThreads = 1000;          // dispatch = "pool:N"
constexpr int64_t kMaxReorderTimeoutMs = 600'000;  // ten minutes
// The most samples a packet can have: no more elements of even one byte fit
// in the run's message limit (message_limit.hpp).
constexpr int64_t kMaxPacketSamples = maxPacketSamples(1);

Key newKey(std::string name, Side side, Type type) {
  Key k;
  k.name = std::move(name);
  k.side = side;
  k.type = type;
  return k;
}

std::vector<Key> makeSchema() {
  std::vector<Key> keys;
  auto add = [&](Key k) { keys.push_back(std::move(k)); };

  Key call = newKey("call", Side::Uses, Type::Choice);
  call.values = {"twoway", "oneway"};
  call.defaultValue = std::string("twoway");
  call.description =
      "how the uses port sends a packet: twoway (pushPacket: returns once the servant has run) or oneway "
      "(pushPacketOneway: returns as sync says)";
  add(call);

  Key sync = newKey("sync", Side::Uses, Type::Choice);
  sync.values = {"none", "transport", "server", "target"};
  sync.onlyWith = {{"call", "oneway"}};
  sync.defaultValue = std::string("transport");
  sync.description =
      "when a one-way send returns: none (at once: a client-side queue and sender thread), transport (the bytes "
      "are in the socket), server (the server ORB has read the request), target (the servant has run)";
  add(sync);

  // The uses port's connections (fan-out): how one packet reaches them all.
  Key fanout = newKey("fanout", Side::Uses, Type::Choice);
  fanout.values = {"sequential", "parallel", "drop"};
  fanout.defaultValue = std::string("sequential");
  fanout.description =
      "how a uses port with several connections sends each packet: sequential (to each connection in connect order, "
      "the caller waiting for each: a blocked consumer stalls all), parallel (a sender thread and a queue of "
      "fanout_depth packets per connection: a slow consumer holds the others back once its queue is full), drop (as "
      "parallel, but a full queue drops the packet for that connection only, counted)";
  add(fanout);

  // Not only_with: the table names one value per key there, and the depth
  // applies to two (parallel and drop); sequential has no queue to size.
  Key fanoutDepth = newKey("fanout_depth", Side::Uses, Type::Integer);
  fanoutDepth.min = 1;
  fanoutDepth.max = kMaxPackets;
  fanoutDepth.defaultValue = int64_t{64};
  fanoutDepth.description =
      "packets each connection's queue holds (fanout = parallel or drop); a full queue blocks the caller (parallel) "
      "or drops the packet for that connection (drop)";
  add(fanoutDepth);

  Key dispatch = newKey("dispatch", Side::Provides, Type::Form);
  dispatch.forms = {"pool", "pool:N", "serial", "single"};
  dispatch.args = {{"N", 1, kMaxPoolThreads}};
  dispatch.defaultValue = std::string("pool");
  dispatch.description =
      "the threads that run upcalls into the provides port: pool (the ORB's pool), pool:N (at most N per "
      "connection), serial (one per connection), single (one for the port: a SINGLE_THREAD_MODEL POA)";
  add(dispatch);

  Key worker = newKey("worker", Side::Provides, Type::Depth);
  worker.min = 1;
  worker.max = kMaxPackets;
  worker.whenTrue = kWorkerDepthWhenTrue;
  worker.defaultValue = int64_t{0};
  worker.description =
      "a worker thread behind a queue of this many packets runs the handler, and a full queue blocks the caller: "
      "false (none: the ORB thread runs it), true (" +
      std::to_string(kWorkerDepthWhenTrue) + ") or a queue depth";
  add(worker);

  Key resume = newKey("worker_resume", Side::Provides, Type::Level);
  resume.values = {"auto", "half"};
  resume.min = 0;
  resume.below = "worker";
  resume.defaultValue = std::string("auto");
  resume.description =
      "the queue level at which a caller blocked on the full worker queue resumes: auto (half the depth for "
      "two-way callers, the first free slot for one-way ones), half, or a level r below the depth";
  add(resume);

  Key ordering = newKey("ordering", Side::Provides, Type::Choice);
  ordering.values = {"arrival", "resequence"};
  ordering.defaultValue = std::string("arrival");
  ordering.description =
      "arrival: packets go on as the ORB delivers them; resequence: a reorder buffer puts them back in the "
      "sender's order";
  add(ordering);

  Key capacity = newKey("reorder_capacity", Side::Provides, Type::Integer);
  capacity.min = 1;
  capacity.max = kMaxPackets;
  capacity.defaultValue = int64_t{64};
  capacity.description = "packets the reorder buffer holds (ordering = resequence); the next one waits for room";
  add(capacity);

  Key timeout = newKey("reorder_timeout_ms", Side::Provides, Type::Real);
  timeout.min = 0;
  timeout.max = kMaxReorderTimeoutMs;
  timeout.defaultValue = 50.0;
  timeout.description =
      "milliseconds a gap in the sender's order is waited for before it is skipped (ordering = resequence)";
  add(timeout);

  Key flow = newKey("flow", Side::Both, Type::Form);
  flow.forms = {"none", "watermarks(lo, hi)", "credits(w)"};
  flow.args = {{"lo", 0, kMaxPackets}, {"hi", 1, kMaxPackets}, {"w", 1, kMaxPackets}};
  flow.constraints = {"lo < hi"};
  flow.defaultValue = std::string("none");
  flow.description =
      "flow control: none; watermarks(lo, hi): the receiver suspends the sender when it holds hi packets and "
      "resumes it at lo; credits(w): the sender keeps at most w packets unacknowledged";
  add(flow);

  Key length = newKey("packet_length", Side::Provides, Type::Integer);
  length.min = 0;
  length.max = kMaxPacketSamples;
  length.defaultValue = int64_t{0};
  length.description =
      "samples every packet into the provides port must have; a packet of another length is refused and counted "
      "(0: any length)";
  add(length);

  // One protocol per port: a provides port is a servant of one interface,
  // so every connection into it speaks the same. A uses port given
  // "scabench" still speaks BulkIO to a peer that is only a BulkIO port
  // (found at connectPort from the peer's repository id).
  Key protocol = newKey("protocol", Side::Both, Type::Choice);
  protocol.values = {"scabench", "bulkio"};
  protocol.defaultValue = std::string("scabench");
  protocol.needs["bulkio"] = {{{"call", "twoway"}, {"flow", "none"}, {"ordering", "arrival"}},
                              "BulkIO's pushPacket is two-way and carries no link sequence, token or flow signal"};
  protocol.description =
      "what the connection speaks on the wire: scabench (the project's data ports: link sequence, token, one-way "
      "calls, flow control) or bulkio (BulkIO's data interfaces, as REDHAWK's ports: pushPacket(data, T, EOS, "
      "streamID), pushSRI, state, statistics); a uses port speaks bulkio to a peer that is a BulkIO port either way";
  add(protocol);
  return keys;
}

const char* sideName(Side s) { return s == Side::Uses ? "uses" : s == Side::Provides ? "provides" : "both"; }

const char* typeName(Type t) {
  switch (t) {
    case Type::Choice: return "choice";
    case Type::Form: return "form";
    case Type::Depth: return "depth";
    case Type::Level: return "level";
    case Type::Integer: return "integer";
    default: return "real";
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string withoutSpaces(const std::string& text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A pattern as pieces: literal text, or the name of a whole-number arg. An arg
// is a whole word of the pattern ("w" in "credits(w)", not in "watermarks").
struct Piece {
  std::string text;
  bool isArg;
};

std::vector<Piece> piecesOf(const Key& key, const std::string& pattern) {
  const std::string p = withoutSpaces(pattern);
  std::vector<Piece> pieces;
  for (std::size_t i = 0; i < p.size();) {
    std::size_t j = i;
    if (isWordChar(p[i]))
      while (j < p.size() && isWordChar(p[j])) ++j;
    else
      ++j;
    const std::string token = p.substr(i, j - i);
    bool isArg = false;
    for (const Arg& a : key.args) isArg = isArg || a.name == token;
    if (!isArg && !pieces.empty() && !pieces.back().isArg)
      pieces.back().text += token;
    else
      pieces.push_back({token, isArg});
    i = j;
  }
  return pieces;
}

const Arg& argOf(const Key& key, const std::string& name) {
  for (const Arg& a : key.args)
    if (a.name == name) return a;
  throw std::logic_error("policy key " + key.name + " has no arg " + name);
}

// Matches `text` (spaces removed) against one pattern; the args' raw values,
// or false. A number of more than 18 digits is kept as "too large".
bool matchPattern(const std::vector<Piece>& pieces, const std::string& text, std::map<std::string, int64_t>& args,
                  std::string& tooLarge) {
  std::size_t pos = 0;
  for (const Piece& piece : pieces) {
    if (!piece.isArg) {
      if (text.compare(pos, piece.text.size(), piece.text) != 0) return false;
      pos += piece.text.size();
      continue;
    }
    std::size_t end = pos;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == pos) return false;
    if (end - pos > 18)
      tooLarge = piece.text;
    else
      args[piece.text] = std::stoll(text.substr(pos, end - pos));
    pos = end;
  }
  return pos == text.size();
}

// "a < b" or "a <= b" between two args.
void checkConstraint(const Key& key, const std::string& constraint, const FormMatch& m, const std::string& text) {
  const std::string c = withoutSpaces(constraint);
  const bool orEqual = c.find("<=") != std::string::npos;
  const std::size_t at = c.find('<');
  if (at == std::string::npos) throw std::logic_error("policy key " + key.name + ": bad constraint " + constraint);
  const std::string a = c.substr(0, at), b = c.substr(at + (orEqual ? 2 : 1));
  auto ia = m.args.find(a), ib = m.args.find(b);
  if (ia == m.args.end() || ib == m.args.end()) return;  // not this form's args
  if (orEqual ? ia->second <= ib->second : ia->second < ib->second) return;
  throw std::invalid_argument(quoted(text) + " is not valid: it needs " + constraint);
}

bool isDecimal(const std::string& text) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string numberText(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string rangeText(int64_t min, int64_t max) { return "[" + std::to_string(min) + ", " + std::to_string(max) + "]"; }

}  // namespace

const std::vector<Key>& schema() {
  static const std::vector<Key> keys = makeSchema();
  return keys;
}

const Key& key(const std::string& name) {
  for (const Key& k : schema())
    if (k.name == name) return k;
  throw std::logic_error("no policy key '" + name + "'");
}

FormMatch matchForm(const Key& key, const std::string& text) {
  const std::string compact = withoutSpaces(text);
  for (std::size_t f = 0; f < key.forms.size(); ++f) {
    FormMatch m{f, {}};
    std::string tooLarge;
    if (!matchPattern(piecesOf(key, key.forms[f]), compact, m.args, tooLarge)) continue;
    if (!tooLarge.empty()) {
      const Arg& a = argOf(key, tooLarge);
      throw std::invalid_argument(quoted(text) + " is not valid: " + a.name + " must be in " + rangeText(a.min, a.max));
    }
    for (const auto& [name, value] : m.args) {
      const Arg& a = argOf(key, name);
      if (value < a.min || value > a.max)
        throw std::invalid_argument(quoted(text) + " is not valid: " + name + " must be in " + rangeText(a.min, a.max));
    }
    for (const auto& c : key.constraints) checkConstraint(key, c, m, text);
    return m;
  }
  std::string ranges;
  for (const Arg& a : key.args) ranges += (ranges.empty() ? " (" : ", ") + a.name + " in " + rangeText(a.min, a.max);
  if (!ranges.empty()) ranges += ")";
  throw std::invalid_argument(quoted(text) + " is not valid; use one of: " + joined(key.forms) + ranges);
}

void check(const Key& key, const PropertyValue& value) {
  auto asInteger = [&]() -> int64_t {
    if (!std::holds_alternative<int64_t>(value)) throw std::invalid_argument("must be an integer");
    return std::get<int64_t>(value);
  };
  auto asText = [&]() -> const std::string& {
    if (!std::holds_alternative<std::string>(value)) throw std::invalid_argument("must be a string");
    return std::get<std::string>(value);
  };
  switch (key.type) {
    case Type::Choice: {
      const std::string& v = asText();
      for (const auto& allowed : key.values)
        if (v == allowed) return;
      throw std::invalid_argument(quoted(v) + " is not valid; use one of: " + joined(key.values));
    }
    case Type::Form: (void)matchForm(key, asText()); return;
    case Type::Depth: {
      const int64_t d = asInteger();
      if (d == 0 || (d >= key.min && d <= key.max)) return;
      throw std::invalid_argument(std::to_string(d) + " is not valid; use 0 (off) or a depth in " +
                                  rangeText(key.min, key.max));
    }
    case Type::Level: {
      const std::string& v = asText();
      for (const auto& allowed : key.values)
        if (v == allowed) return;
      if (isDecimal(v) && std::stoll(v) >= key.min) return;
      throw std::invalid_argument(quoted(v) + " is not valid; use " + joined(key.values) +
                                  " or a level r >= " + std::to_string(key.min) + " below " + key.below);
    }
    case Type::Integer: {
      const int64_t v = asInteger();
      if (v >= key.min && v <= key.max) return;
      throw std::invalid_argument(std::to_string(v) + " is not valid; use an integer in " +
                                  rangeText(key.min, key.max));
    }
    case Type::Real: {
      if (!std::holds_alternative<double>(value)) throw std::invalid_argument("must be a real number");
      const double v = std::get<double>(value);
      if (std::isfinite(v) && v >= double(key.min) && v <= double(key.max)) return;
      throw std::invalid_argument(numberText(v) + " is not valid; use a number in " + rangeText(key.min, key.max));
    }
  }
}

void declarePortProperties(PropertyBag& bag, const std::string& port, Side side) {
  for (const Key& k : schema()) {
    if (!k.on(side)) continue;
    // Depths, capacities and lengths are counts below 2^32 (kMaxPackets,
    // kMaxPacketSamples); the one real is a duration; the rest are words.
    const PropertyType type = std::holds_alternative<int64_t>(k.defaultValue)  ? PropertyType::ULong
                              : std::holds_alternative<double>(k.defaultValue) ? PropertyType::Double
                                                                               : PropertyType::String;
    // Every one is structural: a connection's policy is read when the port
    // connects or starts, so it cannot change while the component runs.
    auto& declared =
        bag.declare(port + "." + k.name, type, k.defaultValue, k.description).checkedBy([&k](const PropertyValue& v) {
          check(k, v);
        });
    // The key's range and words are the property's declaration too, so that
    // --describe publishes what configure enforces (a depth: 0, off, or up to max).
    if (k.type == Type::Integer || k.type == Type::Real) declared.within(k.min, k.max);
    if (k.type == Type::Depth) declared.within(0, k.max);
    if (k.type == Type::Choice) declared.oneOf(k.values);
  }
}

Flow parseFlow(const std::string& text) {
  const FormMatch m = matchForm(key("flow"), text);
  Flow flow;
  switch (m.form) {
    case 0: break;
    case 1:
      flow.kind = FlowKind::Watermarks;
      flow.low = uint64_t(m.args.at("lo"));
      flow.high = uint64_t(m.args.at("hi"));
      break;
    default: flow.kind = FlowKind::Credits; flow.credits = uint64_t(m.args.at("w"));
  }
  return flow;
}

bool singleThreadDispatch(const std::string& dispatch) {
  const Key& k = key("dispatch");
  return k.forms[matchForm(k, dispatch).form] == "single";
}

CallKind parseCallKind(const std::string& text) {
  check(key("call"), text);
  return text == "oneway" ? CallKind::Oneway : CallKind::Twoway;
}

SyncScope parseSyncScope(const std::string& text) {
  check(key("sync"), text);
  if (text == "none") return SyncScope::None;
  if (text == "server") return SyncScope::Server;
  if (text == "target") return SyncScope::Target;
  return SyncScope::Transport;
}

Protocol parseProtocol(const std::string& text) {
  check(key("protocol"), text);
  return text == "bulkio" ? Protocol::Bulkio : Protocol::Scabench;
}

const char* protocolName(Protocol p) { return p == Protocol::Bulkio ? "bulkio" : "scabench"; }

std::string protocolConflict(Protocol p, const std::map<std::string, std::string>& values) {
  const Key& k = key("protocol");
  const auto needs = k.needs.find(protocolName(p));
  if (needs == k.needs.end()) return {};
  for (const auto& [name, wanted] : needs->second.keys) {
    const auto given = values.find(name);
    if (given != values.end() && given->second != wanted)
      return name + " = " + quoted(given->second) + " cannot go with protocol = " + quoted(protocolName(p)) + " (use " +
             name + " = " + quoted(wanted) + "): " + needs->second.why;
  }
  return {};
}

WorkerResume::WorkerResume(const std::string& text, std::size_t depth) {
  check(key("worker_resume"), text);
  if (depth == 0) throw std::invalid_argument("worker_resume applies to a worker queue, and its depth is 0");
  const std::size_t half = depth / 2;
  if (text == "auto") {
    levels_ = {half, depth - 1};
  } else if (text == "half") {
    levels_ = {half, half};
  } else {
    const auto r = std::size_t(std::stoll(text));
    if (r >= depth)
      throw std::invalid_argument("worker_resume " + text + " is not valid with worker depth " + std::to_string(depth) +
                                  ": use auto, half or 0 <= r < " + std::to_string(depth));
    levels_ = {r, r};
  }
}

nlohmann::ordered_json describe() {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Key& k : schema()) {
    nlohmann::ordered_json j;
    j["side"] = sideName(k.side);
    j["type"] = typeName(k.type);
    switch (k.type) {
      case Type::Choice: j["values"] = k.values; break;
      case Type::Form: {
        j["forms"] = k.forms;
        nlohmann::ordered_json args = nlohmann::ordered_json::object();
        for (const Arg& a : k.args) args[a.name] = {{"min", a.min}, {"max", a.max}};
        j["args"] = args;
        if (!k.constraints.empty()) j["constraints"] = k.constraints;
        break;
      }
      case Type::Depth:
        j["min"] = k.min;
        j["max"] = k.max;
        j["true"] = k.whenTrue;
        break;
      case Type::Level:
        j["values"] = k.values;
        j["min"] = k.min;
        j["below"] = k.below;
        break;
      case Type::Integer:
      case Type::Real:
        j["min"] = k.min;
        j["max"] = k.max;
        break;
    }
    std::visit([&](const auto& v) { j["default"] = v; }, k.defaultValue);
    if (!k.onlyWith.empty()) {
      nlohmann::ordered_json with = nlohmann::ordered_json::object();
      for (const auto& [name, value] : k.onlyWith) with[name] = value;
      j["only_with"] = with;
    }
    if (!k.needs.empty()) {
      nlohmann::ordered_json needs = nlohmann::ordered_json::object();
      for (const auto& [value, n] : k.needs) {
        nlohmann::ordered_json keys = nlohmann::ordered_json::object();
        for (const auto& [name, wanted] : n.keys) keys[name] = wanted;
        needs[value] = {{"keys", keys}, {"why", n.why}};
      }
      j["needs"] = needs;
    }
    j["description"] = k.description;
    out[k.name] = j;
  }
  return out;
}

}  // namespace scabench::policy
