// A component's configurable properties: declared once with a CORBA type, a
// default, a description, optionally a range and a check of the value, and
// whether configure may change it while the component is started; set
// through CF::PropertySet::configure, read by the component.
//
// What configure takes. Values arrive as CORBA anys typed by whoever sent
// them: a launcher may send 5000 as a short, an unsigned long, a long long
// or a double. A numeric property takes a value of any numeric CORBA type
// (octet, short, unsigned short, long, unsigned long, long long, unsigned
// long long, float, double) if it fits the declared type and range: an
// integer property takes a floating value only if it is a whole number, a
// float property a double only within float's range. A boolean takes only
// a boolean, a string only a string. query answers in the declared type.
//
// A configure is all or nothing: unknown ids, values that do not fit, values
// a check refuses and, on a started component, properties that cannot
// change while it is started, are rejected together with
// CF::PropertySet::InvalidConfiguration, whose message names each id and
// what would be valid, and nothing changes. So PartialConfiguration is never
// raised: a component never runs with half a configuration (half a
// connection's policy, say).
//
// Not thread-safe: Component serialises configure, query, start and stop.
// A property that may change while started (Configurable::AnyTime) must not
// be read from the bag by packet threads: the component copies it where its
// threads read it, in onStart and in onConfigure (component.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cf.hh"

namespace scabench {

// How a value is held: integer types as int64_t, float and double as double.
using PropertyValue = std::variant<bool, int64_t, double, std::string>;

// The declared type: the IDL type that query answers in. No unsigned long
// long: the runtime's integers are 64-bit signed, and no property needs more.
enum class PropertyType { Boolean, Octet, Short, UShort, Long, ULong, LongLong, Float, Double, String };

// The IDL name ("unsigned long"), as `scabench-host --describe` publishes it.
const char* idlName(PropertyType type);
// "boolean", "integer", "real" or "string": how a spec writes a value of it.
const char* valueKind(PropertyType type);
bool isInteger(PropertyType type);
// The values an integer type holds.
std::pair<int64_t, int64_t> integerRange(PropertyType type);

// When configure may change a property. Structural ones (ports, buffers,
// records) are read once at start; AnyTime ones take effect on the next
// packet, and the component must say so by reading them in onConfigure.
enum class Configurable { WhileStopped, AnyTime };

// A range narrower than the type's: [min, max], for integer or real types.
struct Bounds {
  int64_t min, max;
};

class PropertyBag {
 public:
  // Throws std::invalid_argument, saying what would be valid, for a value
  // of the declared type and range that the property does not take.
  using Check = std::function<void(const PropertyValue&)>;

  // A property's declaration. declare() returns it to be narrowed:
  //   bag.declare("taps", PropertyType::ULong, int64_t{10}, "taps of each filter").within(1, UINT32_MAX);
  //   bag.declare("work_us", PropertyType::ULong, int64_t{5000}, "work per packet").whileStarted();
  //   bag.declare("signal", PropertyType::String, std::string("sine"), "what it sends").oneOf({"sine", "ramp"});
  struct Declaration {
    PropertyType type = PropertyType::LongLong;
    PropertyValue defaultValue;
    std::string description;
    std::optional<Bounds> bounds;
    std::vector<std::string> values;  // a string property's enumeration; empty: any string
    Check check;
    Configurable configurable = Configurable::WhileStopped;

    // Narrows the type's range to [min, max]; throws std::logic_error if the
    // default is outside it.
    Declaration& within(int64_t min, int64_t max);
    // A string property that takes only these values (published by
    // `scabench-host --describe` as "values", so a spec is checked before
    // any process starts); throws std::logic_error if the default is not one.
    Declaration& oneOf(std::vector<std::string> allowed);
    Declaration& checkedBy(Check c) {
      check = std::move(c);
      return *this;
    }
    // Configurable::AnyTime.
    Declaration& whileStarted() {
      configurable = Configurable::AnyTime;
      return *this;
    }
  };

  // Throws std::logic_error if the default is not of the type, or outside it.
  Declaration& declare(const std::string& id, PropertyType type, PropertyValue defaultValue, std::string description);
  // The type follows the default: boolean, long long, double or string.
  Declaration& declare(const std::string& id, PropertyValue defaultValue, std::string description, Check check = {});

  // Applies CF properties, all or nothing (above). `started`: only AnyTime
  // properties may change.
  void configure(const CF::Properties& props, bool started = false);
  void query(CF::Properties& props) const;

  bool flag(const std::string& id) const;
  int64_t integer(const std::string& id) const;
  double real(const std::string& id) const;
  const std::string& text(const std::string& id) const;

  struct Entry {
    PropertyValue value;
    Declaration declaration;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  const Entry& entry(const std::string& id) const;
  std::map<std::string, Entry> entries_;
};

}  // namespace scabench
