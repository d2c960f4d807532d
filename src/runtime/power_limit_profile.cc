// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_profile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.h"

namespace zeus::runtime {
namespace {

using json = nlohmann::json;

std::uint32_t WattsToMw(double w) { return static_cast<std::uint32_t>(std::llround(w * 1000.0)); }

json LimitJson(double limit_w) {
  const std::uint32_t mw = WattsToMw(limit_w);
  if (mw % 1000 == 0) return json(mw / 1000);
  return json(limit_w);
}

// Parses the JSON document; throws nothing, reports in words.
Result<PowerLimitProfileFile> Parse(const json& doc, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("power-limit profile {}: {}", path, what));
  };
  if (!doc.is_object()) return bad("expected a JSON object");
  PowerLimitProfileFile out;
  for (const auto& [key, value] : doc.items()) {
    if (key == "measurements") continue;
    if (key == "gpu_model") {
      if (!value.is_string()) return bad("gpu_model: expected a string");
      out.gpu_model = value.get<std::string>();
    } else if (key == "min_power_limit_w" || key == "max_power_limit_w") {
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
        return bad(key + ": expected a positive number");
      }
      if (!out.constraints_mw) out.constraints_mw = device::PowerLimitConstraints{};
      (key == "min_power_limit_w" ? out.constraints_mw->min_mw : out.constraints_mw->max_mw) =
          WattsToMw(value.get<double>());
    } else if (key == "gpu_count") {
      if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 1'000'000) {
        return bad("gpu_count: expected a positive integer");
      }
      out.gpu_count = static_cast<int>(value.get<long long>());
    } else {
      return bad(fmt::format("unknown key \"{}\"", key));
    }
  }
  if (out.constraints_mw && (out.constraints_mw->min_mw == 0 || out.constraints_mw->max_mw == 0)) {
    return bad("min_power_limit_w and max_power_limit_w must be given together");
  }
  auto it = doc.find("measurements");
  if (it == doc.end() || !it->is_array()) return bad("\"measurements\": expected an array");
  if (it->empty()) return bad("\"measurements\" is empty");
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string where = fmt::format("measurements[{}]", i);
    if (!m.is_object()) return bad(where + ": expected an object");
    for (const auto& [key, value] : m.items()) {
      if (key != "power_limit" && key != "energy" && key != "time") {
        return bad(fmt::format("{}: unknown key \"{}\"", where, key));
      }
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return bad(fmt::format("{}.{}: expected a finite number", where, key));
      }
    }
    if (!m.contains("power_limit") || !m.contains("energy") || !m.contains("time")) {
      return bad(where + ": needs power_limit (W), energy (J) and time (s)");
    }
    optimizer::PowerLimitMeasurement pm{m["power_limit"].get<double>(), m["energy"].get<double>(),
                                        m["time"].get<double>()};
    if (pm.power_limit_w <= 0) return bad(where + ".power_limit: must be > 0 W");
    if (pm.energy_j < 0) return bad(where + ".energy: must be >= 0 J");
    if (pm.time_s <= 0) return bad(where + ".time: must be > 0 s");
    if (!seen.insert(WattsToMw(pm.power_limit_w)).second) {
      return bad(fmt::format("{}: power limit {} W appears twice", where, pm.power_limit_w));
    }
    out.measurements.push_back(pm);
  }
  return out;
}

// Reads the whole profile (base::ReadRegularFileAt). What is not a regular
// file (a directory, a FIFO, a device) is kInvalidArgument, judged without
// reading, so a FIFO without a writer never blocks; a missing file is
// kNotFound; others are ErrorFromErrno's code. Every message names the path.
Result<std::string> ReadProfileFile(const std::string& path) {
  // A profile is a few KiB; 64 MiB is past any.
  constexpr std::size_t kMaxProfileBytes = std::size_t{64} << 20;
  auto text = base::ReadRegularFileAt(AT_FDCWD, path.c_str(), kMaxProfileBytes);
  if (text) return std::move(*text);
  const base::FileReadFailure& failure = text.error();
  switch (failure.kind) {
    case base::FileReadFailure::Kind::kNotRegular:
      return Fail(ErrorCode::kInvalidArgument, fmt::format("power-limit profile {} is {}; it must be a regular file",
                                                           path, base::FileKind(failure.mode)));
    case base::FileReadFailure::Kind::kTooLarge:
      return Fail(ErrorFromErrno(EFBIG, fmt::format("power-limit profile {}", path)));
    case base::FileReadFailure::Kind::kErrno:
      break;
  }
  if (failure.errno_value == ENOENT) {
    return Fail(ErrorCode::kNotFound, fmt::format("power-limit profile {}: no such file", path));
  }
  return Fail(ErrorFromErrno(failure.errno_value, fmt::format("power-limit profile {}", path)));
}

}  // namespace

Result<PowerLimitProfileFile> LoadPowerLimitProfile(const std::string& path) {
  Result<std::string> text = ReadProfileFile(path);
  if (!text) return Fail(text.error());
  json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("power-limit profile {}: not valid JSON", path));
  }
  return Parse(doc, path);
}

Status CheckPowerLimitProfile(const PowerLimitProfileFile& profile, const PowerLimitProfileExpectation& expected,
                              const std::string& path) {
  auto mismatch = [&](const std::string& what) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("power-limit profile {} does not match this job: {}; delete the file to profile again, "
                            "or choose another --profile-path",
                            path, what));
  };
  if (profile.gpu_model && *profile.gpu_model != expected.gpu_model) {
    return mismatch(fmt::format("it was measured on \"{}\", these GPUs are \"{}\"", *profile.gpu_model,
                                expected.gpu_model));
  }
  if (profile.constraints_mw && (profile.constraints_mw->min_mw != expected.constraints_mw.min_mw ||
                                 profile.constraints_mw->max_mw != expected.constraints_mw.max_mw)) {
    return mismatch(fmt::format("it was measured with power limits {}-{} W, these GPUs allow {}-{} W",
                                profile.constraints_mw->min_mw / 1000.0, profile.constraints_mw->max_mw / 1000.0,
                                expected.constraints_mw.min_mw / 1000.0, expected.constraints_mw.max_mw / 1000.0));
  }
  if (profile.gpu_count && *profile.gpu_count != expected.gpu_count) {
    return mismatch(fmt::format("it was measured on {} GPU(s), this job has {}", *profile.gpu_count,
                                expected.gpu_count));
  }
  for (const auto& m : profile.measurements) {
    const std::uint32_t mw = WattsToMw(m.power_limit_w);
    if (mw < expected.constraints_mw.min_mw || mw > expected.constraints_mw.max_mw) {
      return mismatch(fmt::format("it has a measurement at {} W, outside these GPUs' {}-{} W", m.power_limit_w,
                                  expected.constraints_mw.min_mw / 1000.0, expected.constraints_mw.max_mw / 1000.0));
    }
  }
  if (!profile.gpu_model || !profile.constraints_mw) {
    std::vector<std::uint32_t> measured;
    for (const auto& m : profile.measurements) measured.push_back(WattsToMw(m.power_limit_w));
    std::vector<std::uint32_t> wanted = expected.power_limits_mw;
    std::sort(measured.begin(), measured.end());
    std::sort(wanted.begin(), wanted.end());
    if (measured != wanted) {
      return mismatch(
          "it does not say which GPU it was measured on, and its power limits are not the ones this job would "
          "profile");
    }
  }
  return OkStatus();
}

Status SavePowerLimitProfile(const std::string& path, const PowerLimitProfileFile& profile) {
  json doc;
  doc["measurements"] = json::array();
  for (const auto& m : profile.measurements) {
    doc["measurements"].push_back({{"power_limit", LimitJson(m.power_limit_w)}, {"energy", m.energy_j}, {"time", m.time_s}});
  }
  if (profile.gpu_model) doc["gpu_model"] = *profile.gpu_model;
  if (profile.constraints_mw) {
    doc["min_power_limit_w"] = LimitJson(profile.constraints_mw->min_mw / 1000.0);
    doc["max_power_limit_w"] = LimitJson(profile.constraints_mw->max_mw / 1000.0);
  }
  if (profile.gpu_count) doc["gpu_count"] = *profile.gpu_count;
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Fail(ErrorFromErrno(errno, tmp));
    out << doc.dump(4) << "\n";
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Fail(ErrorCode::kIoError, fmt::format("{}: write failed", tmp));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(tmp.c_str());
    return Fail(ErrorFromErrno(saved, path));
  }
  return OkStatus();
}

}  // namespace zeus::runtime
