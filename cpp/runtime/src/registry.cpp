#include "scabench/runtime/registry.hpp"

#include <dlfcn.h>

#include <map>
#include <set>
#include <stdexcept>

namespace scabench {
namespace {
struct Kind {
  std::map<std::string, ComponentFactory> types;
  std::string library;  // "" : built into the program
};

std::map<std::string, Kind>& table() {
  static std::map<std::string, Kind> kinds;
  return kinds;
}

// While a library's static initialisers run (inside dlopen), what they
// register belongs to it. Only loadComponentLibrary sets it, on the main
// thread before any component exists, so it needs no lock.
struct Loading {
  std::string library;
  std::set<std::string> kinds;      // kinds it registered
  std::set<std::string> conflicts;  // kinds it tried to take from another origin
};
Loading* loading = nullptr;

// The kinds of each library loaded, by its dlopen handle.
std::map<void*, std::vector<std::string>>& loadedLibraries() {
  static std::map<void*, std::vector<std::string>> loaded;
  return loaded;
}
}  // namespace

bool registerComponent(const std::string& kind, const std::string& sampleType, ComponentFactory factory) {
  const std::string origin = loading ? loading->library : "";
  auto [it, added] = table().try_emplace(kind);
  if (added) it->second.library = origin;
  if (it->second.library != origin) {
    // A library cannot replace a kind the program or another library
    // registered: the spec checks and the running host would disagree.
    if (loading) loading->conflicts.insert(kind);
    return false;
  }
  it->second.types[sampleType] = std::move(factory);
  if (loading) loading->kinds.insert(kind);
  return true;
}

Component* createComponent(const std::string& kind, const std::string& sampleType, const ComponentContext& ctx) {
  auto k = table().find(kind);
  if (k == table().end()) {
    std::string valid;
    for (const auto& name : registeredKinds()) valid += " " + name;
    throw std::invalid_argument("unknown component kind '" + kind + "' (valid:" + valid + ")");
  }
  const auto& types = k->second.types;
  auto t = types.find(sampleType);
  if (t == types.end()) t = types.find("");
  if (t == types.end()) {
    std::string valid;
    for (const auto& [type, _] : types) valid += " " + type;
    throw std::invalid_argument("component kind '" + kind + "' has no sample type '" + sampleType +
                                "' (valid:" + valid + ")");
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
    for (const auto& [type, _] : k->second.types) types.push_back(type);
  return types;
}

std::string libraryOf(const std::string& kind) {
  auto k = table().find(kind);
  return k == table().end() ? "" : k->second.library;
}

std::vector<std::string> loadComponentLibrary(const std::string& path) {
  // A name without a slash would be looked up in the loader's search path;
  // a component library is a file, named as the spec names it.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Already loaded (a second component of the same library in this host):
  // dlopen hands back the same handle and runs no initialiser again.
  if (void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    auto it = loadedLibraries().find(handle);
    dlclose(handle);  // drops the reference RTLD_NOLOAD took
    if (it != loadedLibraries().end()) return it->second;
  }
  Loading state{path, {}, {}};
  loading = &state;
  // RTLD_NOW: a symbol the library needs and nothing provides is an error
  // here, named by the loader, rather than a crash at its first call.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  loading = nullptr;
  if (handle == nullptr) {
    // The loader's words usually begin with the file it tried.
    std::string why = dlerror() ?: "unknown error";
    if (why.rfind(file + ": ", 0) == 0) why.erase(0, file.size() + 2);
    throw std::runtime_error("cannot load " + path + ": " + why);
  }
  if (!state.conflicts.empty()) {
    const std::string& kind = *state.conflicts.begin();
    const std::string owner = libraryOf(kind);
    throw std::runtime_error(path + " registers component kind '" + kind + "', which " +
                             (owner.empty() ? "this program" : owner) + " already registers; give it another name");
  }
  if (state.kinds.empty()) {
    auto it = loadedLibraries().find(handle);
    if (it != loadedLibraries().end()) return it->second;  // the same file under another name
    throw std::runtime_error(path +
                             " registers no component kind: a component library registers its kinds "
                             "when it is loaded (SCABENCH_REGISTER_COMPONENT or "
                             "SCABENCH_REGISTER_TYPED_COMPONENT, registry.hpp) and links the scabench runtime "
                             "of the host that loads it (libscabench_runtime.so." +
                             std::string(SCABENCH_RUNTIME_SOVERSION) + ")");
  }
  return loadedLibraries()[handle] = {state.kinds.begin(), state.kinds.end()};
}

}  // namespace scabench
