// Copyright 2026 The Zeus C++ Authors.

#include "device/jetson/ina3221_rails.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "device/rapl/rapl_counter.h"  // ReadSysfsFile: the device layer's one small-file reader

namespace zeus::device::jetson {
namespace fs = std::filesystem;
using rapl::ReadSysfsFile;

namespace {

bool IsFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The sub-folders of `dir` (following links, as sysfs device entries are),
// sorted by name; none when `dir` cannot be listed.
std::vector<fs::path> SubFolders(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (fs::is_directory(it->path(), type_ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The files of `dir` whose names start with `prefix` and end with `suffix`,
// with what lies between (the channel index), sorted by index.
std::vector<std::pair<std::string, fs::path>> ChannelFiles(const fs::path& dir, std::string_view prefix,
                                                           std::string_view suffix) {
  std::vector<std::pair<std::string, fs::path>> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) continue;
    std::string index = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (!std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) continue;
    out.emplace_back(std::move(index), it->path());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  return out;
}

Result<double> ReadNumber(const std::string& path) {
  auto text = ReadSysfsFile(path);
  if (!text) return Fail(text.error());
  double value = 0.0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  auto [parsed_end, ec] = std::from_chars(begin, end, value);
  if (text->empty() || ec != std::errc() || parsed_end != end || !std::isfinite(value)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: expected a number, read '{}'; the INA3221 driver wrote something this reader does "
                            "not understand (is the file a power rail's?)",
                            path, *text));
  }
  return value;
}

// One folder's channels under one naming scheme.
void ScanFolder(const fs::path& folder, RailDiscovery& out) {
  struct Scheme {
    std::string_view name_prefix, name_suffix;
    std::string_view power_prefix, voltage_prefix, current_prefix;
  };
  static constexpr Scheme kSchemes[] = {
      {"in", "_label", "power", "in", "curr"},                                // hwmon ina3221
      {"rail_name_", "", "in_power", "in_voltage", "in_current"},             // IIO ina3221x
  };
  for (const Scheme& scheme : kSchemes) {
    for (const auto& [index, name_path] : ChannelFiles(folder, scheme.name_prefix, scheme.name_suffix)) {
      auto name = ReadSysfsFile(name_path.string());
      if (!name) {
        out.problems.push_back(Error(name.error().code(), fmt::format("rail name {}: {}", name_path.string(),
                                                                      name.error().message())));
        continue;
      }
      std::optional<SocRailKind> kind = RailKindOf(*name);
      if (!kind) continue;  // SOC, CV, DDR, the shunt sum: not measured (as Zeus)
      const fs::path power = folder / fmt::format("{}{}_input", scheme.power_prefix, index);
      const fs::path voltage = folder / fmt::format("{}{}_input", scheme.voltage_prefix, index);
      const fs::path current = folder / fmt::format("{}{}_input", scheme.current_prefix, index);
      Ina3221Rail rail;
      rail.rail.kind = *kind;
      rail.rail.name = *name;
      if (IsFile(power)) {
        rail.source.power_path = power.string();
        rail.rail.sources = power.string();
      } else if (IsFile(voltage) && IsFile(current)) {
        rail.source.voltage_path = voltage.string();
        rail.source.current_path = current.string();
        rail.rail.sources = fmt::format("{} x {}", voltage.string(), current.string());
      } else {
        out.problems.push_back(Error(
            ErrorCode::kNotFound,
            fmt::format("rail '{}' ({}): neither {} nor both {} and {} exist, so its power cannot be read", *name,
                        name_path.string(), power.string(), voltage.string(), current.string())));
        continue;
      }
      out.rails.push_back(std::move(rail));
    }
  }
}

}  // namespace

std::optional<SocRailKind> RailKindOf(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("cpu") != std::string::npos) return SocRailKind::kCpu;
  if (lower.find("gpu") != std::string::npos) return SocRailKind::kGpu;
  for (std::string_view total : {"system", "_in", "total"}) {
    if (lower.find(total) != std::string::npos) return SocRailKind::kTotal;
  }
  return std::nullopt;
}

Result<double> ReadRailPowerMw(const RailSource& source) {
  if (!source.power_path.empty()) return ReadNumber(source.power_path);
  auto voltage_mv = ReadNumber(source.voltage_path);
  if (!voltage_mv) return Fail(voltage_mv.error());
  auto current_ma = ReadNumber(source.current_path);
  if (!current_ma) return Fail(current_ma.error());
  return *voltage_mv * *current_ma / 1000.0;
}

RailDiscovery DiscoverIna3221Rails(const std::string& root) {
  RailDiscovery out;
  const fs::path drivers = fs::path(root) / "sys/bus/i2c/drivers";
  for (std::string_view driver : {"ina3221x", "ina3221"}) {
    const fs::path dir = drivers / driver;
    out.searched.push_back(dir.string());
    for (const fs::path& device : SubFolders(dir)) {
      // The device itself, its folders (iio:device0, hwmon), and hwmon/hwmon*.
      std::vector<fs::path> folders = {device};
      for (const fs::path& sub : SubFolders(device)) {
        folders.push_back(sub);
        if (sub.filename() == "hwmon") {
          for (const fs::path& hwmon : SubFolders(sub)) folders.push_back(hwmon);
        }
      }
      for (const fs::path& folder : folders) ScanFolder(folder, out);
    }
  }
  return out;
}

}  // namespace zeus::device::jetson
