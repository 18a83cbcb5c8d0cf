// Component kinds by name, so a host can create what the assembly asks for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scabench/runtime/component.hpp"

namespace scabench {

using ComponentFactory = std::function<Component*(const ComponentContext&)>;

// `sampleType` is "octet", "short", "float", "double", or "" for a kind
// that does not depend on it.
bool registerComponent(const std::string& kind, const std::string& sampleType, ComponentFactory factory);

// Throws std::invalid_argument naming the valid kinds and types.
Component* createComponent(const std::string& kind, const std::string& sampleType, const ComponentContext& ctx);

std::vector<std::string> registeredKinds();
std::vector<std::string> sampleTypesOf(const std::string& kind);

// Component libraries (plugins): a shared library that links this runtime
// (libscabench_runtime.so, the one copy in the process) and registers its
// kinds from static initialisers, as the built-in components do. Loads it
// (dlopen, every symbol bound now) and returns the kinds it registered.
// Loading the same file again returns them again. Throws
// std::runtime_error, one line naming the library, when it cannot be
// loaded (the loader's own words), registers no kind, or registers a kind
// that is already registered (the kind keeps its first registration). Call
// it before the ORB's threads create components; a library is never
// unloaded, since its components' code lives in it.
std::vector<std::string> loadComponentLibrary(const std::string& path);

// The library that registered `kind`, as given to loadComponentLibrary;
// "" for a kind built into the program.
std::string libraryOf(const std::string& kind);

// Registers `Template<T>` for every element type.
template <template <class> class Template>
bool registerForEveryType(const std::string& kind) {
  registerComponent(kind, "octet", [](const ComponentContext& c) { return new Template<CORBA::Octet>(c); });
  registerComponent(kind, "short", [](const ComponentContext& c) { return new Template<CORBA::Short>(c); });
  registerComponent(kind, "float", [](const ComponentContext& c) { return new Template<CORBA::Float>(c); });
  registerComponent(kind, "double", [](const ComponentContext& c) { return new Template<CORBA::Double>(c); });
  return true;
}

}  // namespace scabench

#define SCABENCH_CONCAT_(a, b) a##b
#define SCABENCH_CONCAT(a, b) SCABENCH_CONCAT_(a, b)
// Registers a component class (one element type, or none) at load time.
#define SCABENCH_REGISTER_COMPONENT(kind, Class)                                            \
  static const bool SCABENCH_CONCAT(registered_, __LINE__) = ::scabench::registerComponent( \
      kind, "", [](const ::scabench::ComponentContext& c) -> ::scabench::Component* { return new Class(c); })
// Registers a component class template for all element types at load time.
#define SCABENCH_REGISTER_TYPED_COMPONENT(kind, Template) \
  static const bool SCABENCH_CONCAT(registered_, __LINE__) = ::scabench::registerForEveryType<Template>(kind)
