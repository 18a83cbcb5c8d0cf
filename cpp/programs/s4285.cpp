// scabench-s4285: the STANAG 4285 transmitter as a plain program, with no
// middleware: the same blocks, pacing and audio output as the SCA
// assemblies in experiments/stanag4285/, in one thread. Its settings are the
// data source's and the sink's properties:
//
//   scabench-s4285 [--mode 2400L] [--packets 100] [--symbol_rate 2400]
//                  [--seed 4285] [--dither_us 0] [--audio_file out.raw]
//                  [--channel PROFILE [--snr_db X] [--channel_seed S] [--lead_samples N]]
//
// --dither_us delays each frame by the same pseudo-random offset as the data
// source's dither_us property (clock.hpp), so the two are paced alike.
// --channel sends the audio on through the channel (stanag4285_rx.hpp:
// PROFILE none, two-path or harsh; --snr_db in a 3 kHz band, "none" for no
// noise) into the receiver and the BER counter, as the transceiver
// assemblies do; the audio file and digest stay the transmitter's.
//
// Prints one JSON line: frames, audio samples and digest, and the process's
// own CPU (user, system), context switches and wall time; with --channel also
// the bits compared, bit errors and BER.
#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/dsp/stanag4285.hpp"
#include "scabench/dsp/stanag4285_rx.hpp"

namespace s4285 = scabench::s4285;

namespace {
const scabench::Usage kUsage{
    "scabench-s4285",
    "usage: scabench-s4285 [--mode NAME] [--packets N] [--symbol_rate R] [--seed S] [--dither_us D]"
    " [--audio_file PATH]\n"
    "       [--channel none|two-path|harsh [--snr_db X|none] [--channel_seed S] [--lead_samples N]]\n"
    "The STANAG 4285 transmitter without middleware (defaults: 2400L, 100 frames, 2400 symbols/s, seed 4285);\n"
    "prints one JSON line: frames, audio samples and digest, CPU, context switches and wall time.\n"
    "--channel: the audio goes on through the channel (SNR in a 3 kHz band; default none: no noise)\n"
    "into the receiver, and the line adds the bits compared, bit errors and BER.\n"};

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
  std::map<std::string, std::string> opt = {
      {"mode", "2400L"},  {"packets", "100"}, {"symbol_rate", "2400"}, {"seed", "4285"},      {"dither_us", "0"},
      {"audio_file", ""}, {"channel", ""},    {"snr_db", "none"},      {"channel_seed", "1"}, {"lead_samples", "0"}};
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
                          " (valid: --mode --packets --symbol_rate --seed --dither_us --audio_file --channel --snr_db"
                          " --channel_seed --lead_samples)");
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
  // The receiving side, with --channel.
  std::unique_ptr<s4285::Channel> channel;
  std::unique_ptr<s4285::Receiver> receiver;
  std::unique_ptr<s4285::BerCounter> ber;
  std::optional<double> snrDb;
  if (!opt["channel"].empty()) {
    if (opt["snr_db"] != "none") {
      try {
        std::size_t used = 0;
        snrDb = std::stod(opt["snr_db"], &used);
        if (used != opt["snr_db"].size() || !std::isfinite(*snrDb)) throw std::invalid_argument("not a number");
      } catch (const std::exception&) {
        kUsage.exitRefusing("--snr_db must be a number (dB in 3 kHz) or none, not '" + opt["snr_db"] + "'");
      }
    }
    const auto lead = int64_t(number("lead_samples", opt["lead_samples"]));
    if (lead > 959) kUsage.exitRefusing("--lead_samples must be 0..959, not '" + opt["lead_samples"] + "'");
    try {
      channel = std::make_unique<s4285::Channel>(opt["channel"], snrDb,
                                                 uint64_t(number("channel_seed", opt["channel_seed"])), int(lead));
    } catch (const std::invalid_argument& ex) {
      kUsage.exitRefusing(std::string("--channel: ") + ex.what());
    }
    receiver = std::make_unique<s4285::Receiver>(mode);
    ber = std::make_unique<s4285::BerCounter>(mode, seed);
  } else if (opt["snr_db"] != "none" || opt["channel_seed"] != "1" || opt["lead_samples"] != "0") {
    kUsage.exitRefusing("--snr_db, --channel_seed and --lead_samples need --channel");
  }

  try {
    s4285::ByteSource source(mode, seed);
    s4285::Transmitter tx(mode);
    s4285::AudioSink sink(opt["audio_file"]);
    std::vector<uint8_t> bytes;
    std::vector<int16_t> audio, heard;
    std::vector<uint8_t> decoded;
    const scabench::PacketSchedule schedule{scabench::monotonicNs(), periodNs, ditherNs};
    for (int64_t i = 0; i < frames; ++i) {
      schedule.waitFor(uint64_t(i));
      bytes.clear(), audio.clear();
      source.frame(bytes);
      tx.frame(bytes.data(), bytes.size(), audio);
      sink.process(audio.data(), audio.size());
      if (channel) {
        heard.clear(), decoded.clear();
        channel->process(audio.data(), audio.size(), heard);
        receiver->process(heard.data(), heard.size(), decoded);
        ber->process(decoded.data(), decoded.size());
      }
    }
    const double wall = (scabench::monotonicNs() - schedule.startNs) / 1e9;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto seconds = [](const timeval& tv) { return double(tv.tv_sec) + tv.tv_usec / 1e6; };
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(sink.digest()));
    nlohmann::json line{{"mode", mode.name},
                        {"frames", frames},
                        {"symbol_rate", rate},
                        {"audio_samples", sink.samples()},
                        {"sample_rate", s4285::kSampleRate},
                        {"audio_digest", digest},
                        {"user_s", seconds(ru.ru_utime)},
                        {"system_s", seconds(ru.ru_stime)},
                        {"voluntary_ctxsw", ru.ru_nvcsw},
                        {"involuntary_ctxsw", ru.ru_nivcsw},
                        {"wall_s", wall}};
    if (channel) {
      line["channel"] = opt["channel"];
      line["snr_db"] = snrDb ? nlohmann::json(*snrDb) : nlohmann::json(nullptr);
      line["esn0_db"] = snrDb ? nlohmann::json(s4285::esN0Db(*snrDb)) : nlohmann::json(nullptr);
      line["bits"] = ber->bits();
      line["bit_errors"] = ber->errors();
      line["ber"] = ber->ber();
      line["receiver_latency_frames"] = s4285::receiverLatencyFrames(mode);
    }
    std::cout << line.dump() << "\n";
  } catch (const std::exception& ex) {
    std::cerr << "scabench-s4285: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}
