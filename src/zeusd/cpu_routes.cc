// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/cpu_routes.h"

#include <map>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "zeusd/answers.h"
#include "zeusd/gpu_calls.h"

namespace zeus::zeusd {

using json = nlohmann::json;

Result<CpuReading> ReadCpu(const device::CpuSet& cpus, std::size_t id) {
  auto energy = cpus.cpu(id).TotalEnergy();
  if (!energy) return Fail(energy.error());
  return CpuReading{energy->package_mj, energy->dram_mj};
}

std::uint64_t PowerMw(double delta_mj, double elapsed_s) {
  if (!(delta_mj > 0) || !(elapsed_s > 0)) return 0;
  return static_cast<std::uint64_t>(delta_mj / elapsed_s + 0.5);
}

CpuRoutes::CpuRoutes(const device::CpuSet* cpus, std::chrono::microseconds power_window,
                     std::function<std::int64_t()> unix_time_ms)
    : cpus_(cpus), power_window_(power_window), unix_time_ms_(std::move(unix_time_ms)) {}

http::HttpResponse CpuRoutes::Energy(const Target& target) {
  QueryFields fields(target, {"cpu_ids", "cpu", "dram"});
  auto ids = OptionalIdList(fields, "cpu_ids", count(), "CPU");
  if (!ids) return ErrorAnswer(ids.error());
  auto want_cpu = fields.RequireBool("cpu");
  if (!want_cpu) return ErrorAnswer(want_cpu.error());
  auto want_dram = fields.RequireBool("dram");
  if (!want_dram) return ErrorAnswer(want_dram.error());
  if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
  json answer = json::object();
  std::map<std::size_t, Error> errors;
  for (std::size_t id : *ids) {
    auto reading = ReadCpu(*cpus_, id);
    if (!reading) {
      errors.emplace(id, reading.error());
      continue;
    }
    json entry = {{"cpu_energy_uj", nullptr}, {"dram_energy_uj", nullptr}};
    if (*want_cpu) entry["cpu_energy_uj"] = static_cast<std::uint64_t>(reading->package_mj * 1000.0 + 0.5);
    if (*want_dram && reading->dram_mj) {
      entry["dram_energy_uj"] = static_cast<std::uint64_t>(*reading->dram_mj * 1000.0 + 0.5);
    }
    answer[std::to_string(id)] = entry;
  }
  if (!errors.empty()) return DeviceErrors(errors);
  return JsonAnswer(200, answer);
}

http::HttpResponse CpuRoutes::Power(const Target& target) {
  QueryFields fields(target, {"cpu_ids"});
  auto ids = OptionalIdList(fields, "cpu_ids", count(), "CPU");
  if (!ids) return ErrorAnswer(ids.error());
  if (Status done = fields.Finish(); !done) return ErrorAnswer(done.error());
  std::map<std::size_t, Error> errors;
  std::map<std::size_t, CpuReading> first;
  for (std::size_t id : *ids) {
    auto reading = ReadCpu(*cpus_, id);
    if (!reading) {
      errors.emplace(id, reading.error());
      continue;
    }
    first.emplace(id, *reading);
  }
  if (!errors.empty()) return DeviceErrors(errors);
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(power_window_);
  json power = json::object();
  for (std::size_t id : *ids) {
    auto reading = ReadCpu(*cpus_, id);
    if (!reading) {
      errors.emplace(id, reading.error());
      continue;
    }
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const CpuReading& before = first[id];
    json entry = {{"cpu_mw", PowerMw(reading->package_mj - before.package_mj, elapsed_s)}, {"dram_mw", nullptr}};
    if (reading->dram_mj && before.dram_mj) entry["dram_mw"] = PowerMw(*reading->dram_mj - *before.dram_mj, elapsed_s);
    power[std::to_string(id)] = entry;
  }
  if (!errors.empty()) return DeviceErrors(errors);
  return JsonAnswer(200, json{{"timestamp_ms", UnixNowMs(unix_time_ms_)}, {"power_mw", power}});
}

}  // namespace zeus::zeusd
