#include "scabench/runtime/properties.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace scabench {

const char* idlName(PropertyType type) {
  switch (type) {
    case PropertyType::Boolean: return "boolean";
    case PropertyType::Octet: return "octet";
    case PropertyType::Short: return "short";
    case PropertyType::UShort: return "unsigned short";
    case PropertyType::Long: return "long";
    case PropertyType::ULong: return "unsigned long";
    case PropertyType::LongLong: return "long long";
    case PropertyType::Float: return "float";
    case PropertyType::Double: return "double";
    default: return "string";
  }
}

const char* valueKind(PropertyType type) {
  if (type == PropertyType::Boolean) return "boolean";
  if (type == PropertyType::String) return "string";
  return isInteger(type) ? "integer" : "real";
}

bool isInteger(PropertyType type) {
  return type != PropertyType::Boolean && type != PropertyType::Float && type != PropertyType::Double &&
         type != PropertyType::String;
}

std::pair<int64_t, int64_t> integerRange(PropertyType type) {
  switch (type) {
    case PropertyType::Octet: return {0, 255};
    case PropertyType::Short: return {-32768, 32767};
    case PropertyType::UShort: return {0, 65535};
    case PropertyType::Long: return {INT32_MIN, INT32_MAX};
    case PropertyType::ULong: return {0, UINT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

namespace {

// A number as it came in an any, whatever its CORBA type.
struct Number {
  enum Kind { Signed, Unsigned, Real } kind;
  int64_t s = 0;
  uint64_t u = 0;
  double d = 0;
};

std::string text(const Number& n) {
  if (n.kind == Number::Signed) return std::to_string(n.s);
  if (n.kind == Number::Unsigned) return std::to_string(n.u);
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", n.d);
  return buffer;
}

CORBA::TCKind unaliasedKind(const CORBA::Any& any) {
  CORBA::TypeCode_var tc = any.type();
  while (tc->kind() == CORBA::tk_alias) tc = tc->content_type();  // a typedef'd number is still that number
  return tc->kind();
}

// The any's number; false if it holds no number.
bool numberOf(const CORBA::Any& any, Number& n) {
  CORBA::Short s;
  CORBA::UShort us;
  CORBA::Long l;
  CORBA::ULong ul;
  CORBA::LongLong ll;
  CORBA::ULongLong ull;
  CORBA::Octet o;
  CORBA::Float f;
  CORBA::Double d;
  switch (unaliasedKind(any)) {
    case CORBA::tk_short: return (any >>= s) ? (n = {Number::Signed, s}, true) : false;
    case CORBA::tk_long: return (any >>= l) ? (n = {Number::Signed, l}, true) : false;
    case CORBA::tk_longlong: return (any >>= ll) ? (n = {Number::Signed, ll}, true) : false;
    case CORBA::tk_ushort: return (any >>= us) ? (n = {Number::Unsigned, 0, us}, true) : false;
    case CORBA::tk_ulong: return (any >>= ul) ? (n = {Number::Unsigned, 0, ul}, true) : false;
    case CORBA::tk_ulonglong: return (any >>= ull) ? (n = {Number::Unsigned, 0, ull}, true) : false;
    case CORBA::tk_octet: return (any >>= CORBA::Any::to_octet(o)) ? (n = {Number::Unsigned, 0, o}, true) : false;
    case CORBA::tk_float: return (any >>= f) ? (n = {Number::Real, 0, 0, f}, true) : false;
    case CORBA::tk_double: return (any >>= d) ? (n = {Number::Real, 0, 0, d}, true) : false;
    default: return false;
  }
}

const char* kindName(CORBA::TCKind kind) {
  switch (kind) {
    case CORBA::tk_boolean: return "boolean";
    case CORBA::tk_string: return "string";
    case CORBA::tk_char: return "char";
    case CORBA::tk_wchar: return "wchar";
    case CORBA::tk_wstring: return "wstring";
    case CORBA::tk_null: return "null";
    case CORBA::tk_void: return "void";
    case CORBA::tk_struct: return "struct";
    case CORBA::tk_sequence: return "sequence";
    case CORBA::tk_enum: return "enum";
    case CORBA::tk_short:
    case CORBA::tk_ushort:
    case CORBA::tk_long:
    case CORBA::tk_ulong:
    case CORBA::tk_longlong:
    case CORBA::tk_ulonglong:
    case CORBA::tk_octet:
    case CORBA::tk_float:
    case CORBA::tk_double: return "number";
    default: return "value of another type";
  }
}

std::string article(const char* name) {
  const char c = name[0];
  return std::string(c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ? "an " : "a ") + name;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string rangeText(int64_t lo, int64_t hi) { return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }

// The range a value of this declaration must be in: the type's, narrowed by its bounds.
std::pair<int64_t, int64_t> integerLimits(const PropertyBag::Declaration& d) {
  auto [lo, hi] = integerRange(d.type);
  if (d.bounds) lo = std::max(lo, d.bounds->min), hi = std::min(hi, d.bounds->max);
  return {lo, hi};
}

// Converts an any into a value of the declared type; throws
// std::invalid_argument saying what the property takes.
PropertyValue fromAny(const CORBA::Any& any, const PropertyBag::Declaration& d) {
  const CORBA::TCKind kind = unaliasedKind(any);
  const std::string is = std::string("is ") + article(idlName(d.type));
  if (d.type == PropertyType::Boolean) {
    CORBA::Boolean b;
    if (kind == CORBA::tk_boolean && (any >>= CORBA::Any::to_boolean(b))) return bool(b);
    throw std::invalid_argument(is + ": it takes a boolean, not " + article(kindName(kind)));
  }
  if (d.type == PropertyType::String) {
    const char* s = nullptr;
    if (!(kind == CORBA::tk_string && (any >>= s)))
      throw std::invalid_argument(is + ": it takes a string, not " + article(kindName(kind)));
    if (!d.values.empty() && std::find(d.values.begin(), d.values.end(), s) == d.values.end())
      throw std::invalid_argument(is + ": '" + s + "' is not one of: " + joined(d.values));
    return std::string(s);
  }
  Number n{};
  if (!numberOf(any, n))
    throw std::invalid_argument(is + ": it takes a number of any CORBA numeric type, not " + article(kindName(kind)));
  if (isInteger(d.type)) {
    const auto [lo, hi] = integerLimits(d);
    const std::string valid = ": use a whole number in " + rangeText(lo, hi);
    int64_t v = 0;
    switch (n.kind) {
      case Number::Signed: v = n.s; break;
      case Number::Unsigned:
        if (n.u > uint64_t(INT64_MAX)) throw std::invalid_argument(is + ": " + text(n) + " does not fit" + valid);
        v = int64_t(n.u);
        break;
      case Number::Real:
        // 2^63 is the first double past int64_t; every double below it in
        // magnitude converts exactly once it is whole.
        if (!std::isfinite(n.d) || n.d != std::trunc(n.d))
          throw std::invalid_argument(is + ": " + text(n) + " is not a whole number" + valid);
        if (n.d < -9223372036854775808.0 || n.d >= 9223372036854775808.0)
          throw std::invalid_argument(is + ": " + text(n) + " does not fit" + valid);
        v = int64_t(n.d);
        break;
    }
    if (v < lo || v > hi) throw std::invalid_argument(is + ": " + std::to_string(v) + " does not fit" + valid);
    return v;
  }
  double v = n.kind == Number::Signed ? double(n.s) : n.kind == Number::Unsigned ? double(n.u) : n.d;
  if (d.type == PropertyType::Float) {
    if (std::isfinite(v) && std::fabs(v) > double(FLT_MAX))
      throw std::invalid_argument(is + ": " + text(n) + " is beyond the range of a float");
    v = double(float(v));  // held as query will answer it
  }
  if (d.bounds && !(v >= double(d.bounds->min) && v <= double(d.bounds->max)))
    throw std::invalid_argument(is + ": " + text(n) + " does not fit: use a number in " +
                                rangeText(d.bounds->min, d.bounds->max));
  return v;
}

CORBA::Any toAny(const PropertyValue& v, PropertyType type) {
  CORBA::Any any;
  switch (type) {
    case PropertyType::Boolean: any <<= CORBA::Any::from_boolean(std::get<bool>(v)); break;
    case PropertyType::Octet: any <<= CORBA::Any::from_octet(CORBA::Octet(std::get<int64_t>(v))); break;
    case PropertyType::Short: any <<= CORBA::Short(std::get<int64_t>(v)); break;
    case PropertyType::UShort: any <<= CORBA::UShort(std::get<int64_t>(v)); break;
    case PropertyType::Long: any <<= CORBA::Long(std::get<int64_t>(v)); break;
    case PropertyType::ULong: any <<= CORBA::ULong(std::get<int64_t>(v)); break;
    case PropertyType::LongLong: any <<= CORBA::LongLong(std::get<int64_t>(v)); break;
    case PropertyType::Float: any <<= CORBA::Float(std::get<double>(v)); break;
    case PropertyType::Double: any <<= CORBA::Double(std::get<double>(v)); break;
    default: any <<= std::get<std::string>(v).c_str(); break;
  }
  return any;
}

// Which alternative of PropertyValue holds a value of the type.
std::size_t storageIndex(PropertyType type) {
  if (type == PropertyType::Boolean) return 0;
  if (type == PropertyType::String) return 3;
  return isInteger(type) ? 1 : 2;
}

PropertyType typeOfDefault(const PropertyValue& v) {
  switch (v.index()) {
    case 0: return PropertyType::Boolean;
    case 1: return PropertyType::LongLong;
    case 2: return PropertyType::Double;
    default: return PropertyType::String;
  }
}

}  // namespace

PropertyBag::Declaration& PropertyBag::Declaration::within(int64_t min, int64_t max) {
  bounds = Bounds{min, max};
  const bool inside =
      isInteger(type) ? std::get<int64_t>(defaultValue) >= integerLimits(*this).first &&
                            std::get<int64_t>(defaultValue) <= integerLimits(*this).second
                      : std::get<double>(defaultValue) >= double(min) && std::get<double>(defaultValue) <= double(max);
  if (!inside)
    throw std::logic_error("the default of the property \"" + description + "\" is outside " + rangeText(min, max));
  return *this;
}

PropertyBag::Declaration& PropertyBag::Declaration::oneOf(std::vector<std::string> names) {
  if (type != PropertyType::String)
    throw std::logic_error("the property \"" + description + "\" is not a string: it cannot be one of names");
  if (std::find(names.begin(), names.end(), std::get<std::string>(defaultValue)) == names.end())
    throw std::logic_error("the default of the property \"" + description + "\" is not one of: " + joined(names));
  values = std::move(names);
  return *this;
}

std::optional<Bounds> PropertyBag::range(const Declaration& d) {
  if (isInteger(d.type)) {
    const auto [lo, hi] = integerLimits(d);
    return Bounds{lo, hi};
  }
  return d.type == PropertyType::Float || d.type == PropertyType::Double ? d.bounds : std::nullopt;
}

PropertyBag::Declaration& PropertyBag::declare(const std::string& id, PropertyType type, PropertyValue defaultValue,
                                               std::string description) {
  if (defaultValue.index() != storageIndex(type))
    throw std::logic_error("property '" + id + "': the default is not " + article(idlName(type)));
  if (isInteger(type)) {
    const auto [lo, hi] = integerRange(type);
    const int64_t v = std::get<int64_t>(defaultValue);
    if (v < lo || v > hi) throw std::logic_error("property '" + id + "': the default is outside " + rangeText(lo, hi));
  }
  Entry& e = entries_[id];
  e.value = defaultValue;
  e.declaration = Declaration();
  e.declaration.type = type;
  e.declaration.defaultValue = std::move(defaultValue);
  e.declaration.description = std::move(description);
  return e.declaration;
}

PropertyBag::Declaration& PropertyBag::declare(const std::string& id, PropertyValue defaultValue,
                                               std::string description, Check check) {
  const PropertyType type = typeOfDefault(defaultValue);
  return declare(id, type, std::move(defaultValue), std::move(description)).checkedBy(std::move(check));
}

void PropertyBag::configure(const CF::Properties& props, bool started) {
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
    } else if (started && it->second.declaration.configurable != Configurable::AnyTime) {
      why << "property '" << id << "' cannot change while the component is started (stop it first";
      std::string anyTime;
      for (const auto& [known, e] : entries_)
        if (e.declaration.configurable == Configurable::AnyTime) anyTime += ' ' + known;
      why << (anyTime.empty() ? "" : "; these can change while started:" + anyTime) << "); ";
    } else {
      try {
        PropertyValue value = fromAny(props[i].value, it->second.declaration);
        try {
          if (it->second.declaration.check) it->second.declaration.check(value);
          staged[id] = std::move(value);
          continue;
        } catch (const std::invalid_argument& ex) {
          why << "property '" << id << "': " << ex.what() << "; ";  // the check's own words
        }
      } catch (const std::invalid_argument& ex) {
        why << "property '" << id << "' " << ex.what() << "; ";  // "is a ...: ..."
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
      props[i].value = toAny(entry.value, entry.declaration.type);
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
      props[i].value = toAny(it->second.value, it->second.declaration.type);
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
