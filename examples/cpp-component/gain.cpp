// gain: multiplies every sample by the `gain` property and forwards the
// packet. A component written out of tree against the installed scabench
// runtime and loaded by scabench-host at run time (README.md here).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "scabench/runtime/registry.hpp"

namespace {

template <class T>
class Gain final : public scabench::Component {
 public:
  explicit Gain(const scabench::ComponentContext& ctx) : Component(ctx) {
    // Declared with its CORBA type (what query answers in; configure takes
    // any numeric type that fits), a default, a description and a check:
    // configure() refuses a value the check throws on, naming the property.
    properties()
        .declare("gain", scabench::PropertyType::Double, 1.0, "multiplies every sample")
        .checkedBy([](const scabench::PropertyValue& v) {
          if (!std::isfinite(std::get<double>(v))) throw std::invalid_argument("gain must be a finite number");
        });
    // An integer narrowed to a range, a boolean (its type from the default),
    // and a string that takes only some values (published by --describe, so
    // `scabench validate` checks a spec's value before any process starts).
    properties()
        .declare("bypass_first", scabench::PropertyType::ULong, int64_t{0},
                 "packets at the start of the stream passed on unscaled (sequence numbers below this)")
        .within(0, 1000000);
    properties().declare("saturate", true, "integer samples: clamp to the type's range (false: wrap)");
    properties()
        .declare("rounding", scabench::PropertyType::String, std::string("nearest"),
                 "integer samples: nearest or zero (toward zero)")
        .oneOf({"nearest", "zero"});
    out_ = &addOutPort<T>("out");
    // Runs on the thread that delivers the packet (an ORB thread, a worker,
    // or the sender's own thread when collocated), possibly several at once:
    // it keeps its output on its own stack.
    addInPort<T>("in", [this](const scabench::PacketView<T>& p) {
      if (p.header.sequence_number < bypassFirst_) return out_->push(p.header, p.samples, p.count);
      std::vector<T> y(p.count);
      for (std::size_t i = 0; i < p.count; ++i) y[i] = scale(p.samples[i]);
      out_->push(p.header, y.data(), y.size());
    });
  }

 protected:
  // Properties are final once the component starts: read them here, with the
  // bag's four getters (real, integer, flag, text), into what packets read.
  void onStart() override {
    gain_ = properties().real("gain");
    bypassFirst_ = uint64_t(properties().integer("bypass_first"));
    saturate_ = properties().flag("saturate");
    nearest_ = properties().text("rounding") == "nearest";
  }

 private:
  T scale(T x) const {
    const double y = gain_ * double(x);
    if constexpr (std::is_integral_v<T>) {
      const double lo = double(std::numeric_limits<T>::min()), hi = double(std::numeric_limits<T>::max());
      const double rounded = nearest_ ? std::round(y) : std::trunc(y);
      return saturate_ ? T(std::clamp(rounded, lo, hi)) : T(int64_t(rounded));
    } else {
      return T(y);
    }
  }

  double gain_ = 1.0;
  uint64_t bypassFirst_ = 0;
  bool saturate_ = true, nearest_ = true;
  scabench::OutPort<T>* out_;
};

}  // namespace

// Registers Gain<T> for every sample type (octet, short, float, double) when
// scabench-host loads this library.
SCABENCH_REGISTER_TYPED_COMPONENT("gain", Gain);
