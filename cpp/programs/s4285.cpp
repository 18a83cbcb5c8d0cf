// scabench-s4285: the STANAG 4285 transmitter as a plain program, with no
// middleware: the same blocks, pacing and audio output as the SCA
// assemblies in experiments/stanag4285/, in one thread. Its settings are the
// data source's and the sink's properties:
//
//   scabench-s4285 [--mode 2400L] [--packets 100] [--symbol_rate 2400]
//                  [--seed 4285] [--dither_us 0] [--audio_file out.raw]
//
// --dither_us delays each frame by the same pseudo-random offset as the data
// source's dither_us property (clock.hpp), so the two are paced alike.
//
// Prints one JSON line: frames, audio samples and digest, and the process's
// own CPU (user, system), context switches and wall time.
#include <sys/resource.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/dsp/stanag4285.hpp"

namespace s4285 = scabench::s4285;

namespace {
const scabench::Usage kUsage{
    "scabench-s4285",
    "usage: scabench-s4285 [--mode NAME] [--packets N] [--symbol_rate R] [--seed S] [--dither_us D]"
    " [--audio_file PATH]\n"
    "The STANAG 4285 transmitter without middleware (defaults: 2400L, 100 frames, 2400 symbols/s, seed 4285);\n"
    "prints one JSON line: frames, audio samples and digest, CPU, context switches and wall time.\n"};

double number(const std::string& key, const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  kUsage.exitRefusing("--" + key + " must be a number >= 0, not '" + text + "'");
}
}  // namespace

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  std::map<std::string, std::string> opt = {{"mode", "2400L"}, {"packets", "100"}, {"symbol_rate", "2400"},
                                            {"seed", "4285"},  {"dither_us", "0"}, {"audio_file", ""}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) kUsage.exitRefusing("unexpected argument '" + arg + "'");
    std::string key = arg.substr(2), value;
    if (const auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1), key = key.substr(0, eq);
    } else {
      if (i + 1 >= argc) kUsage.exitRefusing("--" + key + " needs a value");
      value = argv[++i];
    }
    if (!opt.count(key))
      kUsage.exitRefusing("unknown option --" + key +
                          " (valid: --mode --packets --symbol_rate --seed --dither_us --audio_file)");
    opt[key] = value;
  }
  s4285::Mode mode;
  try {
    mode = s4285::parseMode(opt["mode"]);
  } catch (const std::exception& ex) {
    kUsage.exitRefusing(std::string("--mode: ") + ex.what());
  }
  const auto frames = int64_t(number("packets", opt["packets"]));
  const double rate = number("symbol_rate", opt["symbol_rate"]);
  const auto seed = uint64_t(number("seed", opt["seed"]));
  const auto periodNs = int64_t(s4285::framePeriodS(rate) * 1e9);
  const auto ditherNs = int64_t(number("dither_us", opt["dither_us"])) * 1000;

  try {
    s4285::ByteSource source(mode, seed);
    s4285::Transmitter tx(mode);
    s4285::AudioSink sink(opt["audio_file"]);
    std::vector<uint8_t> bytes;
    std::vector<int16_t> audio;
    const scabench::PacketSchedule schedule{scabench::monotonicNs(), periodNs, ditherNs};
    for (int64_t i = 0; i < frames; ++i) {
      schedule.waitFor(uint64_t(i));
      bytes.clear(), audio.clear();
      source.frame(bytes);
      tx.frame(bytes.data(), bytes.size(), audio);
      sink.process(audio.data(), audio.size());
    }
    const double wall = (scabench::monotonicNs() - schedule.startNs) / 1e9;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + tv.tv_usec / 1e6; };
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(sink.digest()));
    std::cout << nlohmann::json{{"mode", mode.name},
                                {"frames", frames},
                                {"symbol_rate", rate},
                                {"audio_samples", sink.samples()},
                                {"sample_rate", s4285::kSampleRate},
                                {"audio_digest", digest},
                                {"user_s", seconds(ru.ru_utime)},
                                {"system_s", seconds(ru.ru_stime)},
                                {"voluntary_ctxsw", ru.ru_nvcsw},
                                {"involuntary_ctxsw", ru.ru_nivcsw},
                                {"wall_s", wall}}
                     .dump()
              << "\n";
  } catch (const std::exception& ex) {
    std::cerr << "scabench-s4285: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
