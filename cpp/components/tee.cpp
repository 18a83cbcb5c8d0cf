// Tee: a fan-out. Each packet it takes on `in` goes, after its work, to
// both `out_a` and `out_b`, header and samples unchanged (the source's
// stream id and sequence number, so that each branch's sink counts order
// per stream as it would straight after the source). Either output may
// also fan out on its own, as any uses port with several connections.
//
// End of stream: once `in` has ended (every packet before the end
// forwarded), both outputs end, each announcing the packets the tee
// forwarded in the stream, which is the same count on each (Component's
// default onEndOfStream).
#include "packet_work.hpp"
#include "scabench/runtime/registry.hpp"

namespace scabench {

template <class T>
class Tee final : public Component {
 public:
  explicit Tee(const ComponentContext& ctx) : Component(ctx), work_(properties(), "", 0) {
    outA_ = &addOutPort<T>("out_a", "every packet taken in, after its work (first)");
    outB_ = &addOutPort<T>("out_b", "every packet taken in, after its work (then)");
    addInPort<T>(
        "in",
        [this](const PacketView<T>& p) {
          work_.run(p.header.sequence_number);
          // One after the other on this thread: a blocked out_a holds back
          // out_b, as one uses port's sequential fan-out does.
          outA_->push(p.header, p.samples, p.count);
          outB_->push(p.header, p.samples, p.count);
        },
        "the packets to copy to out_a and out_b");
  }

 protected:
  void onStart() override { work_.read(properties()); }
  void onConfigure() override { work_.read(properties()); }

 private:
  PacketWork work_;
  OutPort<T>* outA_;
  OutPort<T>* outB_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("tee", Tee);

}  // namespace scabench
