// A component's configurable properties: declared once with a default, a
// description and optionally a check of the value, set through
// CF::PropertySet::configure, read by the component.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <variant>

#include "cf.hh"

namespace scabench {

using PropertyValue = std::variant<bool, int64_t, double, std::string>;

class PropertyBag {
 public:
  // Throws std::invalid_argument, saying what would be valid, for a value
  // of the declared type that the property does not take.
  using Check = std::function<void(const PropertyValue&)>;

  void declare(const std::string& id, PropertyValue defaultValue, std::string description, Check check = {});

  // Applies CF properties. Unknown ids, values of the wrong type and values
  // their check refuses are rejected as a whole with
  // CF::PropertySet::InvalidConfiguration, whose message names the id and
  // what would be valid.
  void configure(const CF::Properties& props);
  void query(CF::Properties& props) const;

  bool flag(const std::string& id) const;
  int64_t integer(const std::string& id) const;
  double real(const std::string& id) const;
  const std::string& text(const std::string& id) const;

  struct Entry {
    PropertyValue value;
    std::string description;
    Check check;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  const Entry& entry(const std::string& id) const;
  std::map<std::string, Entry> entries_;
};

}  // namespace scabench
