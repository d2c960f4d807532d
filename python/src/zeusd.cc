// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.zeusd: the native zeusd client (zeus::zeusd::ZeusdClient)
// under zeus.utils.zeusd: its configuration (ZeusdConfig::FromEnv) and every
// typed call. Every call that talks to the daemon releases the GIL; errors go
// through ThrowError(..., kZeusd), the only way one reaches Python.

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "python/src/bindings.h"
#include "zeus/zeusd_client/client.h"

namespace zeus::python {
namespace {

using zeusd::ZeusdClient;
using zeusd::ZeusdConfig;

std::unique_ptr<ZeusdClient> ConnectNative(const std::optional<std::string>& socket_path,
                                           const std::optional<std::string>& host_port,
                                           const std::optional<std::string>& token, double timeout_s) {
  ZeusdConfig config;
  config.socket_path = socket_path.value_or("");
  if (config.socket_path.empty()) config.host_port = host_port.value_or("");
  config.token = token.value_or("");
  config.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000.0));
  Result<std::unique_ptr<ZeusdClient>> client = [&] {
    ReleaseGil release;
    return ZeusdClient::Connect(std::move(config));
  }();
  return Unwrap(std::move(client), ErrorDomain::kZeusd);
}

// The environment's daemon (ZeusdConfig::FromEnv); ZeusdConnectionError when
// none is configured.
std::unique_ptr<ZeusdClient> ConnectFromEnv(double timeout_s) {
  std::optional<ZeusdConfig> config = ZeusdConfig::FromEnv();
  if (!config) {
    ThrowError(Error(ErrorCode::kUnavailable,
                     "No Zeusd connection configured. Set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT, or pass a ZeusdConfig."),
               ErrorDomain::kZeusd);
  }
  return ConnectNative(config->socket_path, config->host_port, config->token, timeout_s);
}

// (socket_path, host_port, token), each None when empty.
py::tuple ConfigTuple(const ZeusdConfig& config) {
  auto or_none = [](const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(py::str(s)); };
  return py::make_tuple(or_none(config.socket_path), or_none(config.host_port), or_none(config.token));
}

template <class F>
auto Call(F&& f) {
  auto result = [&] {
    ReleaseGil release;
    return f();
  }();
  return Unwrap(std::move(result), ErrorDomain::kZeusd);
}

// A write: the ids, then `Status (ZeusdClient::*)(ids, ..., bool block)`'s
// other arguments.
template <class... Args>
auto Write(std::type_identity_t<Status (ZeusdClient::*)(const std::vector<int>&, Args..., bool)> method) {
  return [method](ZeusdClient& c, const std::vector<int>& ids, Args... args, bool block) {
    Call([&] { return (c.*method)(ids, args..., block); });
  };
}

void RegisterCalls(py::class_<ZeusdClient>& client) {
  client.def("set_power_limit", Write<std::uint32_t>(&ZeusdClient::SetPowerLimitMw))
      .def("set_persistence_mode", Write<bool>(&ZeusdClient::SetPersistenceMode))
      .def("set_gpu_locked_clocks", Write<std::uint32_t, std::uint32_t>(&ZeusdClient::SetGpuLockedClocks))
      .def("set_mem_locked_clocks", Write<std::uint32_t, std::uint32_t>(&ZeusdClient::SetMemLockedClocks))
      .def("reset_gpu_locked_clocks", Write<>(&ZeusdClient::ResetGpuLockedClocks))
      .def("reset_mem_locked_clocks", Write<>(&ZeusdClient::ResetMemLockedClocks))
      .def("reset_locked_clocks", Write<>(&ZeusdClient::ResetLockedClocks))
      .def("get_power_limit",
           [](ZeusdClient& c, const std::vector<int>& ids) { return Call([&] { return c.GetPowerLimitMw(ids); }); })
      .def("get_power_limit_constraints",
           [](ZeusdClient& c, const std::vector<int>& ids) {
             auto ranges = Call([&] { return c.GetPowerLimitRangeMw(ids); });
             py::dict out;
             for (const auto& [id, r] : ranges) out[py::int_(id)] = py::make_tuple(r.min_mw, r.max_mw);
             return out;
           })
      .def("get_persistence_mode",
           [](ZeusdClient& c, const std::vector<int>& ids) { return Call([&] { return c.GetPersistenceMode(ids); }); })
      .def("get_gpu_energy",
           [](ZeusdClient& c, const std::vector<int>& ids) { return Call([&] { return c.GetGpuEnergyMj(ids); }); })
      .def("get_gpu_power",
           [](ZeusdClient& c, const std::vector<int>& ids) {
             auto power = Call([&] { return c.GetGpuPower(ids); });
             return py::make_tuple(power.timestamp_ms, power.power_mw);
           })
      .def("get_cpu_energy",
           [](ZeusdClient& c, const std::vector<int>& ids, bool cpu, bool dram) {
             auto energy = Call([&] { return c.GetCpuEnergy(ids, cpu, dram); });
             py::dict out;
             for (const auto& [id, e] : energy) out[py::int_(id)] = py::make_tuple(e.cpu_energy_uj, e.dram_energy_uj);
             return out;
           })
      .def("get_cpu_power",
           [](ZeusdClient& c, const std::vector<int>& ids) {
             auto power = Call([&] { return c.GetCpuPower(ids); });
             py::dict readings;
             for (const auto& [id, p] : power.power_mw) readings[py::int_(id)] = py::make_tuple(p.cpu_mw, p.dram_mw);
             return py::make_tuple(power.timestamp_ms, readings);
           })
      .def("time_ms", [](ZeusdClient& c) { return Call([&] { return c.TimeMs(); }); });
}

}  // namespace

void RegisterZeusd(py::module_& m) {
  py::module_ z = m.def_submodule("zeusd", "The native zeusd client (zeus.utils.zeusd is the API).");
  py::class_<ZeusdClient> client(z, "Client");
  client
      .def(py::init(&ConnectNative), py::arg("socket_path"), py::arg("host_port"), py::arg("token"),
           py::arg("timeout_s") = 10.0,
           "Connects (GET /discover, and /auth/whoami when the daemon requires tokens).")
      .def_static("from_env", &ConnectFromEnv, py::arg("timeout_s") = 10.0,
                  "Connects to the environment's daemon (ZEUSD_SOCK_PATH, else ZEUSD_HOST_PORT; ZEUSD_TOKEN).")
      .def_property_readonly("config", [](const ZeusdClient& c) { return ConfigTuple(c.config()); })
      .def_property_readonly("endpoint", [](const ZeusdClient& c) { return c.config().endpoint(); })
      .def_property_readonly("gpus",
                             [](const ZeusdClient& c) {
                               py::list out;
                               for (const auto& g : c.capabilities().gpus) {
                                 out.append(py::make_tuple(g.id, g.name, g.pci_address, g.cumulative_energy_available));
                               }
                               return out;
                             })
      .def_property_readonly("cpus",
                             [](const ZeusdClient& c) {
                               py::list out;
                               for (const auto& cpu : c.capabilities().cpus) {
                                 out.append(py::make_tuple(cpu.id, cpu.dram_available));
                               }
                               return out;
                             })
      .def_property_readonly("enabled_api_groups",
                             [](const ZeusdClient& c) { return c.capabilities().enabled_api_groups; })
      .def_property_readonly("auth_required", [](const ZeusdClient& c) { return c.capabilities().auth_required; })
      .def_property_readonly("scopes", [](const ZeusdClient& c) { return c.capabilities().scopes; })
      .def_property_readonly("subject",
                             [](const ZeusdClient& c) -> std::optional<std::string> {
                               if (c.capabilities().subject.empty()) return std::nullopt;
                               return c.capabilities().subject;
                             })
      .def_property_readonly("expires_unix_s", [](const ZeusdClient& c) { return c.capabilities().expires_unix_s; })
      .def_property_readonly("auth_error",
                             [](const ZeusdClient& c) -> std::optional<std::string> {
                               const auto& e = c.capabilities().auth_error;
                               if (!e) return std::nullopt;
                               return e->message();
                             })
      .def("can", [](const ZeusdClient& c, const std::string& group) { return c.capabilities().Can(group); })
      .def("require",
           [](const ZeusdClient& c, bool control_gpu, bool read_gpu, bool read_cpu, const std::vector<int>& gpu_ids,
              const std::vector<int>& cpu_ids) {
             Unwrap(c.Require(control_gpu, read_gpu, read_cpu, gpu_ids, cpu_ids), ErrorDomain::kZeusd);
           },
           py::arg("control_gpu"), py::arg("read_gpu"), py::arg("read_cpu"), py::arg("gpu_ids"), py::arg("cpu_ids"));
  RegisterCalls(client);
  z.def(
      "config_from_env",
      []() -> std::optional<py::tuple> {
        std::optional<ZeusdConfig> config = ZeusdConfig::FromEnv();
        if (!config) return std::nullopt;
        return ConfigTuple(*config);
      },
      "ZeusdConfig::FromEnv(): (socket_path, host_port, token), each None when empty; None when no daemon is "
      "configured.");
}

}  // namespace zeus::python
