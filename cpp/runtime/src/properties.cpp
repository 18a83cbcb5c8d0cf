#include "scabench/runtime/properties.hpp"

#include <sstream>
#include <stdexcept>

namespace scabench {
namespace {

const char* typeName(const PropertyValue& v) {
  switch (v.index()) {
    case 0: return "boolean";
    case 1: return "integer";
    case 2: return "real";
    default: return "string";
  }
}

// Converts an Any into the declared type of `target`; false if it cannot.
bool fromAny(const CORBA::Any& any, PropertyValue& target) {
  CORBA::Boolean b;
  CORBA::LongLong ll;
  CORBA::Long l;
  CORBA::ULong ul;
  CORBA::Double d;
  const char* s = nullptr;
  switch (target.index()) {
    case 0:
      if (any >>= CORBA::Any::to_boolean(b)) return target = bool(b), true;
      return false;
    case 1:
      if (any >>= ll) return target = int64_t(ll), true;
      if (any >>= l) return target = int64_t(l), true;
      if (any >>= ul) return target = int64_t(ul), true;
      return false;
    case 2:
      if (any >>= d) return target = double(d), true;
      if (any >>= ll) return target = double(ll), true;
      if (any >>= l) return target = double(l), true;
      return false;
    default:
      if (any >>= s) return target = std::string(s), true;
      return false;
  }
}

CORBA::Any toAny(const PropertyValue& v) {
  CORBA::Any any;
  switch (v.index()) {
    case 0: any <<= CORBA::Any::from_boolean(std::get<bool>(v)); break;
    case 1: any <<= CORBA::LongLong(std::get<int64_t>(v)); break;
    case 2: any <<= CORBA::Double(std::get<double>(v)); break;
    default: any <<= std::get<std::string>(v).c_str(); break;
  }
  return any;
}

}  // namespace

void PropertyBag::declare(const std::string& id, PropertyValue defaultValue, std::string description, Check check) {
  entries_[id] = Entry{std::move(defaultValue), std::move(description), std::move(check)};
}

void PropertyBag::configure(const CF::Properties& props) {
  std::map<std::string, PropertyValue> staged;
  CF::Properties invalid;
  std::ostringstream why;
  for (CORBA::ULong i = 0; i < props.length(); ++i) {
    const std::string id = props[i].id.in();
    auto it = entries_.find(id);
    if (it == entries_.end()) {
      why << "unknown property '" << id << "' (valid:";
      for (const auto& [known, _] : entries_) why << ' ' << known;
      why << "); ";
    } else {
      PropertyValue value = it->second.value;
      if (!fromAny(props[i].value, value)) {
        why << "property '" << id << "' must be a " << typeName(it->second.value) << "; ";
      } else {
        try {
          if (it->second.check) it->second.check(value);
          staged[id] = value;
          continue;
        } catch (const std::invalid_argument& ex) {
          why << "property '" << id << "': " << ex.what() << "; ";
        }
      }
    }
    const CORBA::ULong n = invalid.length();
    invalid.length(n + 1);
    invalid[n] = props[i];
  }
  if (invalid.length() > 0) throw CF::PropertySet::InvalidConfiguration(why.str().c_str(), invalid);
  for (auto& [id, value] : staged) entries_[id].value = std::move(value);
}

void PropertyBag::query(CF::Properties& props) const {
  if (props.length() == 0) {
    props.length(CORBA::ULong(entries_.size()));
    CORBA::ULong i = 0;
    for (const auto& [id, entry] : entries_) {
      props[i].id = id.c_str();
      props[i].value = toAny(entry.value);
      ++i;
    }
    return;
  }
  CF::Properties unknown;
  for (CORBA::ULong i = 0; i < props.length(); ++i) {
    auto it = entries_.find(props[i].id.in());
    if (it == entries_.end()) {
      const CORBA::ULong n = unknown.length();
      unknown.length(n + 1);
      unknown[n] = props[i];
    } else {
      props[i].value = toAny(it->second.value);
    }
  }
  if (unknown.length() > 0) throw CF::UnknownProperties(unknown);
}

const PropertyBag::Entry& PropertyBag::entry(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) throw std::logic_error("property '" + id + "' was never declared");
  return it->second;
}

bool PropertyBag::flag(const std::string& id) const { return std::get<bool>(entry(id).value); }
int64_t PropertyBag::integer(const std::string& id) const { return std::get<int64_t>(entry(id).value); }
double PropertyBag::real(const std::string& id) const { return std::get<double>(entry(id).value); }
const std::string& PropertyBag::text(const std::string& id) const { return std::get<std::string>(entry(id).value); }

}  // namespace scabench
