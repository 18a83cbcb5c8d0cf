#include "scabench/runtime/bulkio_port.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <limits>

namespace scabench::bulkio {

int64_t realtimeOffsetNs() {
  const int64_t before = monotonicNs();
  const int64_t real = readClockNs(CLOCK_REALTIME);
  const int64_t after = monotonicNs();
  return real - (before + (after - before) / 2);
}

BULKIO::PrecisionUTCTime utcTime(int64_t monotonicNs) {
  if (uint64_t(monotonicNs) == kNoSendTime) {
    BULKIO::PrecisionUTCTime notSet{};
    notSet.tcmode = BULKIO::TCM_CPU;
    notSet.tcstatus = BULKIO::TCS_INVALID;
    return notSet;
  }
  const int64_t utcNs = monotonicNs + realtimeOffsetNs();
  BULKIO::PrecisionUTCTime t{};
  t.tcmode = BULKIO::TCM_CPU;
  t.tcstatus = BULKIO::TCS_VALID;
  t.toff = 0;
  t.twsec = double(utcNs / 1'000'000'000);
  t.tfsec = double(utcNs % 1'000'000'000) * 1e-9;
  return t;
}

std::optional<int64_t> sendTime(const BULKIO::PrecisionUTCTime& t, int64_t arrivedNs) {
  if (t.tcstatus != BULKIO::TCS_VALID) return std::nullopt;
  // The ranges first (false for NaN too), so that nothing below overflows.
  constexpr double kMaxSeconds = double(int64_t(1) << 34);
  if (!(t.twsec >= 0 && t.twsec < kMaxSeconds) || !(t.tfsec >= 0 && t.tfsec < 1)) return std::nullopt;
  // Whole seconds and the fraction apart: a double holds today's seconds
  // since 1970 exactly, but not in nanoseconds. A twsec with a fraction of
  // its own keeps it.
  const double whole = std::floor(t.twsec);
  const int64_t utcNs = int64_t(whole) * 1'000'000'000 + std::llround((t.twsec - whole + t.tfsec) * 1e9);
  const int64_t monotonic = utcNs - realtimeOffsetNs();
  if (monotonic <= 0 || monotonic > arrivedNs + kFutureAllowanceNs) return std::nullopt;
  return monotonic;
}

std::string streamName(uint32_t streamId) { return std::to_string(streamId); }

bool parseStreamNumber(const std::string& name, uint32_t& number) {
  // Canonical decimal only ("7", not "07" or "+7"), so that one number is
  // one streamID; and below the named streams' numbers, so that a number
  // never takes a name's.
  if (name.empty() || name.size() > 5 || (name.size() > 1 && name[0] == '0')) return false;
  uint32_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + uint32_t(c - '0');
  }
  if (value >= kFirstNamedStream) return false;
  number = value;
  return true;
}

uint32_t Streams::numberFor(const std::string& name) {
  uint32_t number = 0;
  if (parseStreamNumber(name, number)) return number;
  const auto [it, added] = named_.try_emplace(name, nextNamed_);
  if (added) ++nextNamed_;
  return it->second;
}

Streams::Stream& Streams::openStream(const std::string& name) {
  const auto [it, added] = streams_.try_emplace(name);
  if (added) it->second.id = numberFor(name);
  return it->second;
}

Streams::Packet Streams::packet(const std::string& name, std::optional<int64_t> sentNs) {
  std::lock_guard lock(mutex_);
  Stream& s = openStream(name);
  if (!sentNs) {
    ++invalid_;
  } else {
    if (s.lastSentNs && *sentNs < *s.lastSentNs) ++backwards_;
    s.lastSentNs = sentNs;
  }
  return {s.id, s.next++};
}

Streams::End Streams::end(const std::string& name) {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(name);
  const uint32_t id = it != streams_.end() ? it->second.id : numberFor(name);
  if (it != streams_.end()) streams_.erase(it);
  return {id, streams_.empty()};
}

void Streams::pushSRI(const BULKIO::StreamSRI& sri) {
  std::lock_guard lock(mutex_);
  Stream& s = openStream(std::string(sri.streamID));
  s.sri = sri;
  s.hasSri = true;
}

void Streams::reset() {
  std::lock_guard lock(mutex_);
  streams_.clear();
}

BULKIO::StreamSRISequence* Streams::activeSRIs() const {
  std::lock_guard lock(mutex_);
  auto* out = new BULKIO::StreamSRISequence;
  for (const auto& [name, s] : streams_)
    if (s.hasSri) {
      out->length(out->length() + 1);
      (*out)[out->length() - 1] = s.sri;
    }
  return out;
}

std::vector<std::string> Streams::open() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, s] : streams_) names.push_back(name);
  return names;
}

bool Streams::anyOpen() const {
  std::lock_guard lock(mutex_);
  return !streams_.empty();
}

uint64_t Streams::backwards() const {
  std::lock_guard lock(mutex_);
  return backwards_;
}

uint64_t Streams::invalidTimes() const {
  std::lock_guard lock(mutex_);
  return invalid_;
}

namespace {

CF::DataType countKeyword(const std::string& id, uint64_t value) {
  CF::DataType k;
  k.id = id.c_str();
  k.value <<= CORBA::ULongLong(value);
  return k;
}

}  // namespace

std::map<std::string, uint64_t> processCounts() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return uint64_t(t.tv_sec) * 1'000'000 + uint64_t(t.tv_usec); };
  std::map<std::string, uint64_t> out{{"pid", uint64_t(::getpid())},
                                      {"process_cpu_us", us(usage.ru_utime) + us(usage.ru_stime)}};
  // num_threads: the 18th field after the command's closing parenthesis (proc(5)'s field 20).
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 1));
    std::string field;
    for (int i = 0; i < 18 && fields >> field; ++i) {
    }
    if (fields && !field.empty()) out["process_threads"] = std::strtoull(field.c_str(), nullptr, 10);
  }
  return out;
}

BULKIO::PortStatistics portStatistics(const std::string& portName, const PortTraffic& traffic,
                                      const std::vector<std::string>& streamIDs,
                                      const std::map<std::string, uint64_t>& extraCounts) {
  const PortTraffic::Snapshot s = traffic.snapshot(monotonicNs());
  BULKIO::PortStatistics out;
  out.portName = portName.c_str();
  out.elementsPerSecond = CORBA::Float(s.elementsPerSecond);
  out.bitsPerSecond = CORBA::Float(s.bitsPerSecond);
  out.callsPerSecond = CORBA::Float(s.callsPerSecond);
  out.streamIDs.length(CORBA::ULong(streamIDs.size()));
  for (CORBA::ULong i = 0; i < out.streamIDs.length(); ++i) out.streamIDs[i] = streamIDs[i].c_str();
  out.averageQueueDepth = CORBA::Float(s.averageQueueDepth);
  out.timeSinceLastCall = CORBA::Float(s.secondsSinceLastCall);
  std::map<std::string, uint64_t> counts{{"calls", s.calls}, {"elements", s.elements}};
  counts.insert(extraCounts.begin(), extraCounts.end());
  out.keywords.length(CORBA::ULong(counts.size()));
  CORBA::ULong i = 0;
  for (const auto& [id, value] : counts) out.keywords[i++] = countKeyword(id, value);
  return out;
}

}  // namespace scabench::bulkio
