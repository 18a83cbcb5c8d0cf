// A component library for the loader's tests (plugin_test.cpp): one kind,
// for no particular sample type, that forwards what it gets.
#include "scabench/runtime/registry.hpp"

namespace {
class Echo final : public scabench::Component {
 public:
  explicit Echo(const scabench::ComponentContext& ctx) : Component(ctx) {
    properties().declare("echo_marker", int64_t{7}, "tells this kind from any other");
    auto* out = &addOutPort<CORBA::Double>("out");
    addInPort<CORBA::Double>(
        "in", [out](const scabench::PacketView<CORBA::Double>& p) { out->push(p.header, p.samples, p.count); });
  }
};
}  // namespace

SCABENCH_REGISTER_COMPONENT("test-echo", Echo);
