// A component library for the loader's tests (plugin_test.cpp): it tries to
// register "stage", which the program already registers.
#include "scabench/runtime/registry.hpp"

namespace {
class NotTheStage final : public scabench::Component {
 public:
  explicit NotTheStage(const scabench::ComponentContext& ctx) : Component(ctx) {
    properties().declare("impostor", true, "tells this kind from the built-in stage");
  }
};
}  // namespace

SCABENCH_REGISTER_COMPONENT("stage", NotTheStage);
