// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.zeusd: the native zeusd client (zeus::zeusd::ZeusdClient)
// under zeus.utils.zeusd. Every call that talks to the daemon releases the
// GIL; errors go through ThrowError(..., kZeusd).

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "zeus/zeusd/client.h"

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
    py::gil_scoped_release release;
    return ZeusdClient::Connect(std::move(config));
  }();
  return Unwrap(std::move(client), ErrorDomain::kZeusd);
}

template <class F>
auto Call(F&& f) {
  auto result = [&] {
    py::gil_scoped_release release;
    return f();
  }();
  return Unwrap(std::move(result), ErrorDomain::kZeusd);
}

}  // namespace

void RegisterZeusd(py::module_& m) {
  py::module_ z = m.def_submodule("zeusd", "The native zeusd client (zeus.utils.zeusd is the API).");
  py::class_<ZeusdClient>(z, "Client")
      .def(py::init(&ConnectNative), py::arg("socket_path"), py::arg("host_port"), py::arg("token"),
           py::arg("timeout_s") = 10.0,
           "Connects (GET /discover, and /auth/whoami when the daemon requires tokens).")
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
      .def(
          "require",
          [](const ZeusdClient& c, bool control_gpu, bool read_gpu, bool read_cpu, const std::vector<int>& gpu_ids,
             const std::vector<int>& cpu_ids) {
            Unwrap(c.Require(control_gpu, read_gpu, read_cpu, gpu_ids, cpu_ids), ErrorDomain::kZeusd);
          },
          py::arg("control_gpu"), py::arg("read_gpu"), py::arg("read_cpu"), py::arg("gpu_ids"), py::arg("cpu_ids"))
      .def("set_power_limit",
           [](ZeusdClient& c, const std::vector<int>& ids, std::uint32_t mw, bool block) {
             Call([&] { return c.SetPowerLimitMw(ids, mw, block); });
           })
      .def("set_persistence_mode",
           [](ZeusdClient& c, const std::vector<int>& ids, bool enabled, bool block) {
             Call([&] { return c.SetPersistenceMode(ids, enabled, block); });
           })
      .def("get_power_limit",
           [](ZeusdClient& c, const std::vector<int>& ids) { return Call([&] { return c.GetPowerLimitMw(ids); }); })
      .def("get_gpu_energy",
           [](ZeusdClient& c, const std::vector<int>& ids) { return Call([&] { return c.GetGpuEnergyMj(ids); }); })
      .def("get_cpu_energy",
           [](ZeusdClient& c, const std::vector<int>& ids, bool cpu, bool dram) {
             auto energy = Call([&] { return c.GetCpuEnergy(ids, cpu, dram); });
             py::dict out;
             for (const auto& [id, e] : energy) out[py::int_(id)] = py::make_tuple(e.cpu_energy_uj, e.dram_energy_uj);
             return out;
           })
      .def("time_ms", [](ZeusdClient& c) { return Call([&] { return c.TimeMs(); }); })
      .def(
          "request",
          [](ZeusdClient& c, const std::string& method, const std::string& target) {
            return Call([&] { return c.Request(method, target); });
          },
          "A raw request: (HTTP status, body).");
}

}  // namespace zeus::python
