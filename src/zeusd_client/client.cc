// Copyright 2026 The Zeus C++ Authors.

#include "zeus/zeusd_client/client.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "http/http_status.h"
#include "zeusd_client/transport.h"

namespace zeus::zeusd {
namespace {

using nlohmann::json;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string IdList(const std::vector<int>& ids) { return fmt::format("{}", fmt::join(ids, ",")); }

// The daemon's error body ({"error": ...} or {"errors": {id: ...}}), or the
// raw body.
std::string ErrorText(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (auto it = j.find("error"); it != j.end() && it->is_string()) return it->get<std::string>();
    if (auto it = j.find("errors"); it != j.end() && it->is_object()) {
      std::vector<std::string> parts;
      for (const auto& [id, message] : it->items()) {
        parts.push_back(fmt::format("GPU/CPU {}: {}", id, message.is_string() ? message.get<std::string>() : message.dump()));
      }
      return fmt::format("{}", fmt::join(parts, "; "));
    }
  }
  return body.empty() ? std::string("(empty body)") : body;
}

// An error answer to a typed call, with the HTTP layer's reading of its
// status (src/http/http_status.h) and, for 401 and 404, what to do.
Error HttpError(std::string_view op, const ZeusdConfig& config, int status, const std::string& body) {
  std::string hint;
  if (status == 401) hint = " Set ZEUSD_TOKEN to a token from `zeusd token issue`.";
  if (status == 404) hint = " Enable the API group with zeusd serve --enable.";
  return Error(http::ErrorCodeForHttpStatus(status),
               fmt::format("zeusd at {}: failed to {} (HTTP {}): {}.{}", config.endpoint(), op, status,
                           ErrorText(body), hint),
               NativeSpace::kHttp, status);
}

class ClientImpl final : public ZeusdClient {
 public:
  explicit ClientImpl(ZeusdConfig config) : config_(std::move(config)) {}

  Status Init() {
    auto discover = Request("GET", "/discover");
    if (!discover) return Fail(discover.error());
    if (discover->first != 200) {
      return Fail(Error(ErrorCode::kUnavailable,
                        fmt::format("zeusd at {} answered /discover with HTTP {}: {}", config_.endpoint(),
                                    discover->first, ErrorText(discover->second)),
                        NativeSpace::kHttp, discover->first));
    }
    json j = json::parse(discover->second, nullptr, false);
    if (!j.is_object()) return Fail(ErrorCode::kIoError, "zeusd's /discover answer is not a JSON object");
    try {
      for (const auto& g : j.at("gpus")) {
        caps_.gpus.push_back(ZeusdGpuInfo{g.at("id").get<int>(), g.at("name").get<std::string>(),
                                          g.at("pci_address").get<std::string>(),
                                          g.at("cumulative_energy_available").get<bool>()});
      }
      for (const auto& c : j.value("cpus", json::array())) {
        caps_.cpus.push_back(ZeusdCpuInfo{c.at("id").get<int>(), c.value("dram_available", false)});
      }
      caps_.enabled_api_groups = j.at("enabled_api_groups").get<std::vector<std::string>>();
      caps_.auth_required = j.value("auth_required", false);
    } catch (const json::exception& e) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("zeusd at {} sent a /discover answer without the fields this client needs ({}). "
                              "Upgrade zeusd",
                              config_.endpoint(), e.what()));
    }
    if (!caps_.auth_required) return OkStatus();
    if (config_.token.empty()) {
      caps_.auth_error = Error(ErrorCode::kPermissionDenied,
                               fmt::format("zeusd at {} requires a token, but no token was provided; set "
                                           "ZEUSD_TOKEN to one from `zeusd token issue`",
                                           config_.endpoint()));
      return OkStatus();
    }
    auto whoami = Request("GET", "/auth/whoami");
    if (!whoami) return Fail(whoami.error());
    if (whoami->first == 401) {
      caps_.auth_error = Error(ErrorCode::kPermissionDenied,
                               fmt::format("zeusd at {}: token rejected: {}", config_.endpoint(),
                                           ErrorText(whoami->second)),
                               NativeSpace::kHttp, 401);
    } else if (whoami->first != 200) {
      caps_.auth_error = HttpError("check the token (/auth/whoami)", config_, whoami->first, whoami->second);
    } else {
      json w = json::parse(whoami->second, nullptr, false);
      if (w.is_object()) {
        caps_.subject = w.value("sub", "");
        if (auto it = w.find("scopes"); it != w.end() && it->is_array()) {
          for (const auto& s : *it) {
            if (s.is_string()) caps_.scopes.push_back(s.get<std::string>());
          }
        }
        if (auto it = w.find("exp"); it != w.end() && it->is_number_integer()) caps_.expires_unix_s = it->get<std::int64_t>();
      }
    }
    return OkStatus();
  }

  const ZeusdConfig& config() const override { return config_; }
  const ZeusdCapabilities& capabilities() const override { return caps_; }

  Status Require(bool control_gpu, bool read_gpu, bool read_cpu, const std::vector<int>& gpu_ids,
                 const std::vector<int>& cpu_ids) const override {
    if (caps_.auth_error) return Fail(*caps_.auth_error);
    std::vector<std::string> unmet;
    auto need = [&](bool wanted, std::string_view group) {
      if (!wanted) return;
      if (!caps_.GroupEnabled(group)) {
        unmet.push_back(fmt::format("API group '{}' is not enabled on the daemon", group));
      } else if (!caps_.Can(group)) {
        unmet.push_back(fmt::format("the token lacks the '{}' scope (it has: {})", group,
                                    caps_.scopes.empty() ? "none" : fmt::format("{}", fmt::join(caps_.scopes, ", "))));
      }
    };
    need(control_gpu, "gpu-control");
    need(read_gpu, "gpu-read");
    need(read_cpu, "cpu-read");
    for (int id : gpu_ids) {
      if (std::none_of(caps_.gpus.begin(), caps_.gpus.end(), [&](const ZeusdGpuInfo& g) { return g.id == id; })) {
        unmet.push_back(fmt::format("GPU {} is not available on the daemon", id));
      }
    }
    for (int id : cpu_ids) {
      if (std::none_of(caps_.cpus.begin(), caps_.cpus.end(), [&](const ZeusdCpuInfo& c) { return c.id == id; })) {
        unmet.push_back(fmt::format("CPU {} is not available on the daemon", id));
      }
    }
    if (unmet.empty()) return OkStatus();
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("zeusd at {} cannot do what is needed: {}", config_.endpoint(), fmt::join(unmet, "; ")));
  }

  Status SetPowerLimitMw(const std::vector<int>& gpu_ids, std::uint32_t limit_mw, bool block) override {
    return Post("set the power limit",
                fmt::format("/gpu/set_power_limit?gpu_ids={}&power_limit_mw={}&block={}", IdList(gpu_ids), limit_mw,
                            block ? "true" : "false"));
  }

  Status SetPersistenceMode(const std::vector<int>& gpu_ids, bool enabled, bool block) override {
    return Post("set persistence mode",
                fmt::format("/gpu/set_persistence_mode?gpu_ids={}&enabled={}&block={}", IdList(gpu_ids),
                            enabled ? "true" : "false", block ? "true" : "false"));
  }

  Result<std::map<int, std::uint32_t>> GetPowerLimitMw(const std::vector<int>& gpu_ids) override {
    auto j = GetJson("get the power limit", WithIds("/gpu/get_power_limit", "gpu_ids", gpu_ids));
    if (!j) return Fail(j.error());
    return PerId<std::uint32_t>(*j, "power_limit_mw");
  }

  Result<std::map<int, std::uint64_t>> GetGpuEnergyMj(const std::vector<int>& gpu_ids) override {
    auto j = GetJson("get GPU energy", WithIds("/gpu/get_cumulative_energy", "gpu_ids", gpu_ids));
    if (!j) return Fail(j.error());
    return PerId<std::uint64_t>(*j, "energy_mj");
  }

  Status SetGpuLockedClocks(const std::vector<int>& gpu_ids, std::uint32_t min_clock_mhz, std::uint32_t max_clock_mhz,
                            bool block) override {
    return Post("lock the GPU clocks", LockedClocksTarget("/gpu/set_gpu_locked_clocks", gpu_ids, min_clock_mhz,
                                                          max_clock_mhz, block));
  }

  Status SetMemLockedClocks(const std::vector<int>& gpu_ids, std::uint32_t min_clock_mhz, std::uint32_t max_clock_mhz,
                            bool block) override {
    return Post("lock the memory clocks", LockedClocksTarget("/gpu/set_mem_locked_clocks", gpu_ids, min_clock_mhz,
                                                             max_clock_mhz, block));
  }

  Status ResetGpuLockedClocks(const std::vector<int>& gpu_ids, bool block) override {
    return Post("reset the GPU clocks", ResetTarget("/gpu/reset_gpu_locked_clocks", gpu_ids, block));
  }

  Status ResetMemLockedClocks(const std::vector<int>& gpu_ids, bool block) override {
    return Post("reset the memory clocks", ResetTarget("/gpu/reset_mem_locked_clocks", gpu_ids, block));
  }

  Status ResetLockedClocks(const std::vector<int>& gpu_ids, bool block) override {
    return Post("reset the GPU and memory clocks", ResetTarget("/gpu/reset_locked_clocks", gpu_ids, block));
  }

  Result<std::map<int, ZeusdPowerLimitRange>> GetPowerLimitRangeMw(const std::vector<int>& gpu_ids) override {
    auto j = GetJson("get the power limit constraints", WithIds("/gpu/get_power_limit_constraints", "gpu_ids", gpu_ids));
    if (!j) return Fail(j.error());
    return EachId<ZeusdPowerLimitRange>(*j, "/gpu/get_power_limit_constraints", [](const json& v) {
      return ZeusdPowerLimitRange{v.at("min_power_limit_mw").get<std::uint32_t>(),
                                  v.at("max_power_limit_mw").get<std::uint32_t>()};
    });
  }

  Result<std::map<int, bool>> GetPersistenceMode(const std::vector<int>& gpu_ids) override {
    auto j = GetJson("get persistence mode", WithIds("/gpu/get_persistence_mode", "gpu_ids", gpu_ids));
    if (!j) return Fail(j.error());
    return PerId<bool>(*j, "enabled");
  }

  Result<ZeusdGpuPower> GetGpuPower(const std::vector<int>& gpu_ids) override {
    auto j = GetJson("get GPU power", WithIds("/gpu/get_power", "gpu_ids", gpu_ids));
    if (!j) return Fail(j.error());
    ZeusdGpuPower out;
    auto time = TimestampMs(*j, "/gpu/get_power");
    if (!time) return Fail(time.error());
    out.timestamp_ms = *time;
    auto power = EachId<std::uint32_t>(j->value("power_mw", json()), "/gpu/get_power",
                                       [](const json& v) { return v.get<std::uint32_t>(); });
    if (!power) return Fail(power.error());
    out.power_mw = std::move(*power);
    return out;
  }

  Result<ZeusdCpuPower> GetCpuPower(const std::vector<int>& cpu_ids) override {
    auto j = GetJson("get CPU power", WithIds("/cpu/get_power", "cpu_ids", cpu_ids));
    if (!j) return Fail(j.error());
    ZeusdCpuPower out;
    auto time = TimestampMs(*j, "/cpu/get_power");
    if (!time) return Fail(time.error());
    out.timestamp_ms = *time;
    auto power = EachId<ZeusdCpuPowerMw>(j->value("power_mw", json()), "/cpu/get_power", [](const json& v) {
      ZeusdCpuPowerMw p;
      p.cpu_mw = v.at("cpu_mw").get<std::uint32_t>();
      if (v.contains("dram_mw") && !v.at("dram_mw").is_null()) p.dram_mw = v.at("dram_mw").get<std::uint32_t>();
      return p;
    });
    if (!power) return Fail(power.error());
    out.power_mw = std::move(*power);
    return out;
  }

  Result<std::map<int, ZeusdCpuEnergy>> GetCpuEnergy(const std::vector<int>& cpu_ids, bool cpu, bool dram) override {
    std::string target = WithIds("/cpu/get_cumulative_energy", "cpu_ids", cpu_ids);
    target += fmt::format("{}cpu={}&dram={}", cpu_ids.empty() ? "?" : "&", cpu ? "true" : "false",
                          dram ? "true" : "false");
    auto j = GetJson("get CPU energy", target);
    if (!j) return Fail(j.error());
    std::map<int, ZeusdCpuEnergy> out;
    try {
      for (const auto& [id, v] : j->items()) {
        ZeusdCpuEnergy e;
        if (v.contains("cpu_energy_uj") && !v.at("cpu_energy_uj").is_null()) {
          e.cpu_energy_uj = v.at("cpu_energy_uj").get<std::uint64_t>();
        }
        if (v.contains("dram_energy_uj") && !v.at("dram_energy_uj").is_null()) {
          e.dram_energy_uj = v.at("dram_energy_uj").get<std::uint64_t>();
        }
        out[std::stoi(id)] = e;
      }
    } catch (const std::exception& e) {
      return Fail(ErrorCode::kIoError, fmt::format("zeusd's CPU energy answer is malformed: {}", e.what()));
    }
    return out;
  }

  Result<std::int64_t> TimeMs() override {
    auto j = GetJson("get the time", "/time");
    if (!j) return Fail(j.error());
    if (!j->contains("timestamp_ms") || !j->at("timestamp_ms").is_number()) {
      return Fail(ErrorCode::kIoError, "zeusd's /time answer has no timestamp_ms");
    }
    return j->at("timestamp_ms").get<std::int64_t>();
  }

  Result<std::pair<int, std::string>> Request(std::string_view method, std::string_view target) override {
    auto r = internal::SendRequest(config_.socket_path, config_.host_port, config_.token, method, target,
                                   config_.timeout);
    if (!r) return Fail(r.error());
    return std::make_pair(r->status, std::move(r->body));
  }

 private:
  static std::string WithIds(std::string_view path, std::string_view field, const std::vector<int>& ids) {
    if (ids.empty()) return std::string(path);
    return fmt::format("{}?{}={}", path, field, IdList(ids));
  }

  Status Post(std::string_view op, const std::string& target) {
    auto r = Request("POST", target);
    if (!r) return Fail(r.error());
    if (r->first != 200) return Fail(HttpError(op, config_, r->first, r->second));
    return OkStatus();
  }

  Result<json> GetJson(std::string_view op, const std::string& target) {
    auto r = Request("GET", target);
    if (!r) return Fail(r.error());
    if (r->first != 200) return Fail(HttpError(op, config_, r->first, r->second));
    json j = json::parse(r->second, nullptr, false);
    if (!j.is_object()) {
      return Fail(ErrorCode::kIoError, fmt::format("zeusd's answer to {} is not a JSON object", target));
    }
    return j;
  }

  template <class T>
  static Result<std::map<int, T>> PerId(const json& j, const char* field) {
    std::map<int, T> out;
    try {
      for (const auto& [id, v] : j.items()) out[std::stoi(id)] = v.at(field).template get<T>();
    } catch (const std::exception& e) {
      return Fail(ErrorCode::kIoError, fmt::format("zeusd's answer lacks '{}': {}", field, e.what()));
    }
    return out;
  }

  // {"<id>": value, ...} -> id -> decode(value); kIoError naming `route` when
  // it is not that.
  template <class T, class Decode>
  static Result<std::map<int, T>> EachId(const json& j, std::string_view route, Decode decode) {
    std::map<int, T> out;
    try {
      if (!j.is_object()) throw std::invalid_argument("not an object of ids");
      for (const auto& [id, v] : j.items()) out[std::stoi(id)] = decode(v);
    } catch (const std::exception& e) {
      return Fail(ErrorCode::kIoError, fmt::format("zeusd's {} answer is malformed: {}", route, e.what()));
    }
    return out;
  }

  static Result<std::int64_t> TimestampMs(const json& j, std::string_view route) {
    if (!j.contains("timestamp_ms") || !j.at("timestamp_ms").is_number_integer()) {
      return Fail(ErrorCode::kIoError, fmt::format("zeusd's {} answer has no timestamp_ms", route));
    }
    return j.at("timestamp_ms").get<std::int64_t>();
  }

  static std::string ResetTarget(std::string_view path, const std::vector<int>& gpu_ids, bool block) {
    return fmt::format("{}?gpu_ids={}&block={}", path, IdList(gpu_ids), block ? "true" : "false");
  }

  static std::string LockedClocksTarget(std::string_view path, const std::vector<int>& gpu_ids,
                                        std::uint32_t min_clock_mhz, std::uint32_t max_clock_mhz, bool block) {
    return fmt::format("{}?gpu_ids={}&min_clock_mhz={}&max_clock_mhz={}&block={}", path, IdList(gpu_ids),
                       min_clock_mhz, max_clock_mhz, block ? "true" : "false");
  }

  ZeusdConfig config_;
  ZeusdCapabilities caps_;
};

}  // namespace

std::optional<ZeusdConfig> ZeusdConfig::FromEnv() {
  ZeusdConfig config;
  config.socket_path = Env("ZEUSD_SOCK_PATH");
  if (config.socket_path.empty()) config.host_port = Env("ZEUSD_HOST_PORT");
  if (config.socket_path.empty() && config.host_port.empty()) return std::nullopt;
  config.token = Env("ZEUSD_TOKEN");
  return config;
}

std::string ZeusdConfig::endpoint() const { return socket_path.empty() ? host_port : socket_path; }

bool ZeusdCapabilities::GroupEnabled(std::string_view group) const {
  return std::find(enabled_api_groups.begin(), enabled_api_groups.end(), group) != enabled_api_groups.end();
}

bool ZeusdCapabilities::Can(std::string_view group) const {
  if (!GroupEnabled(group)) return false;
  if (!auth_required) return true;
  if (auth_error) return false;
  return std::find(scopes.begin(), scopes.end(), group) != scopes.end();
}

Result<std::unique_ptr<ZeusdClient>> ZeusdClient::Connect(ZeusdConfig config) {
  auto client = std::make_unique<ClientImpl>(std::move(config));
  if (Status s = client->Init(); !s) return Fail(s.error());
  return std::unique_ptr<ZeusdClient>(std::move(client));
}

}  // namespace zeus::zeusd
