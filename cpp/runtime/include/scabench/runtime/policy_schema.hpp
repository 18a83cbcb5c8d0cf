// A connection's messaging policy as a spec writes it: the one table of its
// keys, with each key's side, type, valid values or forms, ranges, default
// and description (policy_schema.cpp).
//
// Everything else reads this table. The ports declare their properties from
// it (`<port>.<key>`, the spec's own key names and defaults; the properties'
// checks are the table's), `scabench-host --describe` publishes it as its
// "policy" object, and the spec checker validates a spec against that.
//
// Value types, as published:
//   choice   one of `values`
//   form     one of `forms`: a pattern whose words named in `args` stand for
//            whole numbers in the arg's [min, max]; spaces are optional;
//            `constraints` relate the args ("lo < hi")
//   depth    false (0: off), true (the `true` depth) or an integer in [min, max]
//   level    one of `values`, or an integer >= min and below the value of the
//            key named by `below`
//   integer, real   a number in [min, max]
// `only_with` says the key applies only when other keys have these values;
// `needs` says what a value of the key asks of the other keys (protocol =
// "bulkio": what BulkIO's wire carries), and why.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scabench/runtime/properties.hpp"

namespace scabench {

// The values of `call`, `sync` and `flow` as the runtime acts on them.
enum class CallKind { Twoway, Oneway };
enum class SyncScope { None, Transport, Server, Target };
enum class FlowKind { None, Watermarks, Credits };

namespace policy {

enum class Side { Uses, Provides, Both };
enum class Type { Choice, Form, Depth, Level, Integer, Real };

// A whole-number argument of a form, and its range.
struct Arg {
  std::string name;
  int64_t min, max;
};

// What one value of a key asks of the other keys: each must have the value
// given here, for the reason `why`.
struct Needs {
  std::map<std::string, std::string> keys;
  std::string why;
};

struct Key {
  std::string name;
  Side side = Side::Both;
  Type type = Type::Choice;
  std::vector<std::string> values;       // choice; level: its words
  std::vector<std::string> forms;        // form
  std::vector<Arg> args;                 // form
  std::vector<std::string> constraints;  // form: "a < b" between two args
  int64_t min = 0, max = 0;              // depth, integer, real; level: min only
  int64_t whenTrue = 0;                  // depth: the depth that `true` means
  std::string below;                     // level
  std::map<std::string, std::string> onlyWith;
  std::map<std::string, Needs> needs;  // by this key's value
  // The spec's default, which is also the port property's default; its
  // alternative (integer, real or string) is the property's type.
  PropertyValue defaultValue;
  std::string description;

  // Whether a port of this side (Uses or Provides) carries the key.
  bool on(Side port) const { return side == Side::Both || side == port; }
};

// Every key, in the spec's order.
const std::vector<Key>& schema();
// The key named `name`; throws std::logic_error if there is none.
const Key& key(const std::string& name);

// Checks one value of `key`, in the port property's type, on its own (a
// level is checked against `below` where both are known: WorkerResume).
// Throws std::invalid_argument saying what would be valid.
void check(const Key& key, const PropertyValue& value);

// Declares `<port>.<key>` in `bag` for every key on this side of a
// connection, with the key's default, description and check.
void declarePortProperties(PropertyBag& bag, const std::string& port, Side side);

// A form value taken apart: the index of its form in key.forms, and the
// value of each of that form's args. Throws std::invalid_argument for a value
// that matches no form, or whose args break a range or a constraint.
struct FormMatch {
  std::size_t form = 0;
  std::map<std::string, int64_t> args;
};
FormMatch matchForm(const Key& key, const std::string& text);

// `flow`: "none", "watermarks(lo, hi)" or "credits(w)". The one parser of
// the flow form, for the sending and the receiving port alike.
struct Flow {
  FlowKind kind = FlowKind::None;
  uint64_t low = 0, high = 0;  // watermarks
  uint64_t credits = 0;        // credits: the window
};
Flow parseFlow(const std::string& text);

// `dispatch`: whether the port is served by its own SINGLE_THREAD_MODEL POA.
// "pool", "pool:N" and "serial" are the ORB's threading, set per host process
// by an ORB option that the spec's translation computes, not by the port.
bool singleThreadDispatch(const std::string& dispatch);

CallKind parseCallKind(const std::string& text);

// `protocol`: what a port speaks on the wire. Scabench: scabench's own data
// ports (scabench.idl: the packet header, link sequence, token, one-way
// calls, flow control); Bulkio: BulkIO's data interfaces (bulkio.idl), as a
// REDHAWK component's ports speak them (docs/reference/bulkio.md).
enum class Protocol { Scabench, Bulkio };
Protocol parseProtocol(const std::string& text);
const char* protocolName(Protocol p);
// The other keys' values a protocol refuses, as one line naming the first
// (empty if none): `values` gives each key's value by name.
std::string protocolConflict(Protocol p, const std::map<std::string, std::string>& values);
SyncScope parseSyncScope(const std::string& text);

// `worker_resume` for a worker queue of `depth`: the level at which a caller
// blocked on the full queue resumes, by how the caller came in.
//   "auto"  depth / 2 for two-way callers (pushPacket); depth - 1, the first
//           free slot, for one-way callers (pushPacketOneway)
//   "half"  depth / 2 for every caller
//   "r"     r for every caller, 0 <= r < depth
// Why "auto" tells the callers apart: a two-way caller is one per connection,
// and resuming it at half the depth lets it sleep once per burst instead of
// once per packet (the depth note in policy_schema.cpp). One-way callers into
// a thread pool each hold an ORB thread while they wait, so during a long wait
// for half the queue dozens pile up, and they lose their order going back in:
// exp3 (one-way + worker) on 2 cores reordered 600-700 of 1000 packets at
// stage 3 with "half", against ~50 resuming at the first free slot.
// Throws std::invalid_argument for a level that is not below the depth.
class WorkerResume {
 public:
  WorkerResume(const std::string& text, std::size_t depth);
  std::size_t levelFor(CallKind call) const { return levels_[call == CallKind::Oneway]; }

 private:
  std::array<std::size_t, 2> levels_{};  // two-way, one-way
};

// The table as `scabench-host --describe` publishes it (its "policy" object).
nlohmann::ordered_json describe();

}  // namespace policy
}  // namespace scabench
