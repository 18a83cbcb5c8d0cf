// Sink: receives packets and records them; the end of a pipeline.
//
// With `checksum` it also sums every sample it receives (in double, in the
// order it takes them) and reports the sum at end of stream ("stat NAME
// checksum VALUE"), which is how a run's output is checked against the
// standalone program's: numpy's `x.astype(np.float64).sum()` over the same
// samples in the same order, within rounding (a sum's order changes its
// last bits).
//
// With `capture` = NAME it writes every sample it receives, in the order it
// takes them, as a SigMF recording: NAME.sigmf-data (raw, the sample type's
// SigMF datatype) and, at end of stream, NAME.sigmf-meta; it reports "stat
// NAME capture NAME". start() opens them afresh (a second stream replaces
// the first), making its folder if need be. The launcher gives an absolute path; a relative one is from
// the process's working directory.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "scabench/runtime/registry.hpp"
#include "sigmf.hpp"

namespace scabench {

template <class T>
class Sink final : public Component {
 public:
  explicit Sink(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("checksum", false, "sum every sample received and report it at end of stream");
    properties().declare("capture", PropertyType::String, std::string(""),
                         "write every sample received to this SigMF recording (NAME.sigmf-data, NAME.sigmf-meta); "
                         "empty: none");
    addInPort<T>(
        "in",
        [this](const PacketView<T>& p) {
          if (!checksum_ && !capture_.is_open()) return;
          // A pool dispatches packets on several threads at once: one at a time
          // here, so that the sum and the recording see the same order.
          std::lock_guard<std::mutex> lock(mutex_);
          if (checksum_)
            for (std::size_t i = 0; i < p.count; ++i) sum_ += double(p.samples[i]);
          if (capture_.is_open())
            capture_.write(reinterpret_cast<const char*>(p.samples), std::streamsize(p.count * sizeof(T)));
        },
        "the packets to consume (checksum, capture)");
  }

 protected:
  void onStart() override {
    std::lock_guard<std::mutex> lock(mutex_);
    checksum_ = properties().flag("checksum");
    sum_ = 0;
    captureName_ = sigmf::base(properties().text("capture"));
    if (capture_.is_open()) capture_.close();
    if (!captureName_.empty()) {
      std::error_code ignored;  // a folder that cannot be made fails the open below, which names the file
      std::filesystem::create_directories(std::filesystem::path(captureName_).parent_path(), ignored);
      capture_.open(captureName_ + ".sigmf-data", std::ios::binary | std::ios::trunc);
      if (!capture_) throw std::invalid_argument("capture: cannot write " + captureName_ + ".sigmf-data");
    }
  }
  void onEndOfStream() override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (checksum_) {
      char value[64];
      std::snprintf(value, sizeof value, "%.17g", sum_);
      host().notify("stat " + name() + " checksum " + value);
    }
    if (capture_.is_open()) {
      capture_.flush();
      std::ofstream meta(captureName_ + ".sigmf-meta", std::ios::trunc);
      meta << sigmf::meta<T>("what " + name() + " received").dump(2) << "\n";
      if (!capture_ || !meta)
        host().notify("error " + name() + " capture: cannot write " + captureName_);
      else
        host().notify("stat " + name() + " capture " + captureName_);
    }
    lock.unlock();
    Component::onEndOfStream();
  }

 private:
  std::mutex mutex_;
  bool checksum_ = false;
  double sum_ = 0;
  std::string captureName_;
  std::ofstream capture_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("sink", Sink);

}  // namespace scabench
