// SigMF recordings (https://sigmf.org): a recording is two files, NAME.sigmf-data
// (the samples, raw, little-endian) and NAME.sigmf-meta (JSON: the datatype,
// the format's version, captures and annotations). The capture sink writes
// one; the producer's `signal = "file"` plays one. Only real samples of the
// four sample types: rf64_le (double), rf32_le (float), ri16_le (short), ru8
// (octet).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "cf.hh"

namespace scabench::sigmf {

template <class T>
constexpr const char* datatype() {
  if constexpr (std::is_same_v<T, CORBA::Double>) return "rf64_le";
  if constexpr (std::is_same_v<T, CORBA::Float>) return "rf32_le";
  if constexpr (std::is_same_v<T, CORBA::Short>) return "ri16_le";
  return "ru8";
}

// "rec", "rec.sigmf-data", "rec.sigmf-meta" and "rec.sigmf" all name the recording "rec".
inline std::string base(const std::string& path) {
  for (const char* ext : {".sigmf-data", ".sigmf-meta", ".sigmf"}) {
    const std::string e(ext);
    if (path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0)
      return path.substr(0, path.size() - e.size());
  }
  return path;
}

// The samples of a recording of type T; throws std::invalid_argument, naming
// the file, for one that is missing, of another datatype, empty or cut short.
// (Samples are read as this machine holds them: the runtime runs on
// little-endian machines only.)
template <class T>
std::vector<T> read(const std::string& path) {
  const std::string name = base(path);
  std::ifstream metaFile(name + ".sigmf-meta");
  if (!metaFile) throw std::invalid_argument("cannot read " + name + ".sigmf-meta");
  std::string datatype;
  try {
    datatype = nlohmann::json::parse(metaFile).at("global").at("core:datatype").get<std::string>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(name + ".sigmf-meta is not SigMF metadata with global core:datatype");
  }
  if (datatype != sigmf::datatype<T>())
    throw std::invalid_argument(name + ".sigmf-meta: datatype " + datatype + "; this sample type plays " +
                                sigmf::datatype<T>());
  std::ifstream data(name + ".sigmf-data", std::ios::binary);
  if (!data) throw std::invalid_argument("cannot read " + name + ".sigmf-data");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(data)), std::istreambuf_iterator<char>());
  if (bytes.empty() || bytes.size() % sizeof(T) != 0)
    throw std::invalid_argument(name + ".sigmf-data holds " + std::to_string(bytes.size()) + " bytes, not a whole " +
                                "number (at least one) of " + std::to_string(sizeof(T)) + "-byte samples");
  std::vector<T> samples(bytes.size() / sizeof(T));
  std::memcpy(samples.data(), bytes.data(), bytes.size());
  return samples;
}

// The metadata of a recording of samples of type T: the least that
// SigMF 1.x requires (datatype, version) and one capture from sample 0.
template <class T>
nlohmann::json meta(const std::string& description) {
  return {{"global",
           {{"core:datatype", datatype<T>()},
            {"core:version", "1.0.0"},
            {"core:recorder", "scabench"},
            {"core:description", description},
            {"core:num_channels", 1}}},
          {"captures", nlohmann::json::array({{{"core:sample_start", 0}}})},
          {"annotations", nlohmann::json::array()}};
}

}  // namespace scabench::sigmf
