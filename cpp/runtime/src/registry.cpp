#include "scabench/runtime/registry.hpp"

#include <map>
#include <stdexcept>

namespace scabench {
namespace {
std::map<std::string, std::map<std::string, ComponentFactory>>& table() {
  static std::map<std::string, std::map<std::string, ComponentFactory>> kinds;
  return kinds;
}
}  // namespace

bool registerComponent(const std::string& kind, const std::string& sampleType, ComponentFactory factory) {
  table()[kind][sampleType] = std::move(factory);
  return true;
}

Component* createComponent(const std::string& kind, const std::string& sampleType, const ComponentContext& ctx) {
  auto k = table().find(kind);
  if (k == table().end()) {
    std::string valid;
    for (const auto& name : registeredKinds()) valid += " " + name;
    throw std::invalid_argument("unknown component kind '" + kind + "' (valid:" + valid + ")");
  }
  auto t = k->second.find(sampleType);
  if (t == k->second.end()) t = k->second.find("");
  if (t == k->second.end()) {
    std::string valid;
    for (const auto& [type, _] : k->second) valid += " " + type;
    throw std::invalid_argument("component kind '" + kind + "' has no sample type '" + sampleType + "' (valid:" +
                                valid + ")");
  }
  return t->second(ctx);
}

std::vector<std::string> registeredKinds() {
  std::vector<std::string> names;
  for (const auto& [kind, _] : table()) names.push_back(kind);
  return names;
}

std::vector<std::string> sampleTypesOf(const std::string& kind) {
  std::vector<std::string> types;
  auto k = table().find(kind);
  if (k != table().end())
    for (const auto& [type, _] : k->second) types.push_back(type);
  return types;
}

}  // namespace scabench
