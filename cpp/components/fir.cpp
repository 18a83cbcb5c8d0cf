// FIR: runs `filters` FIR filters of `taps` taps in cascade over each packet
// of float samples and forwards the result: the seed's synthetic component
// load (W3 holds all nine filters in one FIR component, W5 three in each of
// three, W11 one in each of nine). The output buffer is the component's own
// and the port lends it to the ORB, so a hop converts nothing.
#include <memory>

#include "scabench/dsp/fir.hpp"
#include "scabench/runtime/registry.hpp"

namespace scabench {

class Fir final : public Component {
 public:
  explicit Fir(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("filters", PropertyType::ULong, int64_t{1}, "FIR filters in cascade in this component");
    properties().declare("taps", PropertyType::ULong, int64_t{10}, "taps of each FIR filter").within(1, UINT32_MAX);
    out_ = &addOutPort<CORBA::Float>("out", "the filtered samples");
    addInPort<CORBA::Float>(
        "in",
        [this](const PacketView<CORBA::Float>& p) {
          output_.resize(p.count);
          chain_->process(p.samples, output_.data(), p.count);
          out_->push(p.header, output_.data(), output_.size());
        },
        "the samples to filter");
  }

 protected:
  void onStart() override {
    const int64_t filters = properties().integer("filters"), taps = properties().integer("taps");
    chain_ = std::make_unique<FirChain>(std::size_t(filters), std::size_t(taps));
  }

 private:
  OutPort<CORBA::Float>* out_;
  std::unique_ptr<FirChain> chain_;
  std::vector<float> output_;
};

static const bool registered = registerComponent("fir", "float", [](const ComponentContext& c) { return new Fir(c); });

}  // namespace scabench
