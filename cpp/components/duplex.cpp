// Duplex: one process with two paths that never meet, as a transceiver's
// TX and RX chains: `tx_in` -> work -> `tx_out`, `rx_in` -> work ->
// `rx_out`, each path with its own work (`tx_work`, `tx_work_us`,
// `tx_work_jitter_us`; `rx_...` the same) and each a stream of its own.
// Packets go through unchanged (header and samples), as the stage's do.
//
// End of stream, per path: when `tx_in` ends (every packet before its end
// forwarded), `tx_out` ends, announcing the packets the TX path forwarded
// in that stream and carrying the id of the stream that ended, whatever
// the RX path is doing; the same for RX (Component::onInPortEndOfStream).
// Once both paths have ended, the component's own end of stream has
// nothing left to send; it tells the launcher only when neither output is
// connected, announcing both paths' packets, as a sink would.
#include <atomic>

#include "packet_work.hpp"
#include "scabench/runtime/registry.hpp"

namespace scabench {

template <class T>
class Duplex final : public Component {
 public:
  explicit Duplex(const ComponentContext& ctx)
      : Component(ctx), tx_(properties(), "tx_", "TX path: "), rx_(properties(), "rx_", "RX path: ") {
    tx_.out = &addOutPort<T>("tx_out", "the TX path: every packet of tx_in, after the TX work");
    rx_.out = &addOutPort<T>("rx_out", "the RX path: every packet of rx_in, after the RX work");
    addInPort<T>(
        "tx_in", [this](const PacketView<T>& p) { tx_.forward(p); }, "the TX path's packets");
    addInPort<T>(
        "rx_in", [this](const PacketView<T>& p) { rx_.forward(p); }, "the RX path's packets");
  }

 protected:
  void onStart() override { readWork(); }
  void onConfigure() override { readWork(); }
  void onInPortEndOfStream(const std::string& port, uint32_t streamId) override {
    Path& path = port == "tx_in" ? tx_ : rx_;
    path.out->sendEndOfStream(streamId, path.handled.exchange(0));
  }
  void onEndOfStream() override {
    // Each path's output has ended already (above); only the launcher,
    // which waits for a component with no outgoing connection, is left to tell.
    if (!anyOutPortConnected()) endStream(packetsInStream());
  }

 private:
  void readWork() {
    tx_.work.read(properties());
    rx_.work.read(properties());
  }

  struct Path {
    Path(PropertyBag& properties, const std::string& prefix, const std::string& whose)
        : work(properties, prefix, 0, whose) {}
    void forward(const PacketView<T>& p) {
      work.run(p.header.sequence_number);
      out->push(p.header, p.samples, p.count);
      handled.fetch_add(1, std::memory_order_relaxed);
    }
    PacketWork work;
    OutPort<T>* out = nullptr;
    // Packets the path handled since its stream began: what its end of stream announces.
    std::atomic<uint64_t> handled{0};
  };
  Path tx_, rx_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("duplex", Duplex);

}  // namespace scabench
