// Merge: a fan-in of two named inputs. Every packet taken on `in_a` or
// `in_b` goes, after its work, to `out`, header unchanged: its stream id
// and sequence number stay its source's, so that a sink after the merge
// tells the sources apart and counts order per stream. (Two connections
// into one provides port merge as well; the merge's two ports make the
// two inputs named ends of a graph, each with its own receiving policy.)
//
// End of stream: once both inputs have ended (Component runs onEndOfStream
// when every in-port has), `out` ends, announcing every packet the merge
// forwarded in the stream, from both inputs, and carrying the stream id of
// the input that ended last.
#include "packet_work.hpp"
#include "scabench/runtime/registry.hpp"

namespace scabench {

template <class T>
class Merge final : public Component {
 public:
  explicit Merge(const ComponentContext& ctx) : Component(ctx), work_(properties(), "", 0) {
    out_ = &addOutPort<T>("out", "every packet of in_a and in_b, after its work, its header as it came");
    auto forward = [this](const PacketView<T>& p) {
      work_.run(p.header.sequence_number);
      out_->push(p.header, p.samples, p.count);
    };
    addInPort<T>("in_a", forward, "packets to forward to out (one input)");
    addInPort<T>("in_b", forward, "packets to forward to out (the other input)");
  }

 protected:
  void onStart() override { work_.read(properties()); }
  void onConfigure() override { work_.read(properties()); }

 private:
  PacketWork work_;
  OutPort<T>* out_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("merge", Merge);

}  // namespace scabench
