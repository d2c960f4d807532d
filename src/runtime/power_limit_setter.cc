// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_setter.h"

#include <cstdio>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "zeus/base/log.h"

namespace zeus::runtime {
namespace {

// "00000000:01:00.0" or "0000:01:00.0" -> (domain, bus, device); the function
// is ignored (zeusd reports it as 0).
std::optional<std::tuple<unsigned, unsigned, unsigned>> PciKey(const std::string& address) {
  unsigned domain = 0, bus = 0, dev = 0, function = 0;
  char tail = 0;
  if (std::sscanf(address.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &function, &tail) != 4) return std::nullopt;
  return std::make_tuple(domain & 0xffffu, bus, dev);
}

}  // namespace

Status NvmlPowerLimitSetter::SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) {
  return gpu.SetPowerLimitMw(limit_mw);
}

Result<std::unique_ptr<ZeusdPowerLimitSetter>> ZeusdPowerLimitSetter::Create(zeusd::ZeusdConfig config,
                                                                              const device::GpuSet& gpus,
                                                                              std::span<const std::size_t> indices) {
  const std::string endpoint = config.endpoint();
  auto client = zeusd::ZeusdClient::Connect(std::move(config));
  if (!client) {
    return Fail(client.error().WithContext("changing power limits through zeusd (ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT is set)"));
  }
  const zeusd::ZeusdCapabilities& caps = (*client)->capabilities();
  std::unique_ptr<ZeusdPowerLimitSetter> setter(new ZeusdPowerLimitSetter());
  std::vector<int> ids;
  for (std::size_t i : indices) {
    device::Gpu& gpu = gpus.gpu(i);
    auto pci = gpu.PciBusId();
    if (!pci) return Fail(pci.error().WithContext(fmt::format("reading GPU {}'s PCI address", i)));
    auto key = PciKey(*pci);
    std::optional<int> found;
    for (const auto& g : caps.gpus) {
      if (key && PciKey(g.pci_address) == key) {
        found = g.id;
        break;
      }
    }
    if (!found) {
      return Fail(ErrorCode::kNotFound,
                  fmt::format("GPU {} (PCI {}) is not among the GPUs of zeusd at {}; run zeusd on this node, or "
                              "unset ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT",
                              i, *pci, endpoint));
    }
    setter->daemon_ids_.emplace_back(&gpu, *found);
    ids.push_back(*found);
  }
  if (Status s = (*client)->Require(/*control_gpu=*/true, false, false, ids); !s) {
    return Fail(s.error().WithContext("changing power limits through zeusd (ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT is set)"));
  }
  setter->client_ = std::move(*client);
  setter->name_ = fmt::format("zeusd at {}", endpoint);
  setter->emulated_ = gpus.driver_clock() != nullptr;
  return setter;
}

Status ZeusdPowerLimitSetter::SetPowerLimitMw(device::Gpu& gpu, std::uint32_t limit_mw) {
  for (const auto& [ours, id] : daemon_ids_) {
    if (ours != &gpu) continue;
    if (Status s = client_->SetPowerLimitMw({id}, limit_mw, /*block=*/true); !s) return s;
    if (emulated_) {
      // A real driver has one limit per GPU; two emulator states have two.
      const Result<std::uint32_t> ours_mw = gpu.PowerLimitMw();
      if (ours_mw && *ours_mw != limit_mw) {
        LogOnce(fmt::format("zeusd-emulator-state:{}", name_),
                {.level = LogLevel::kWarning,
                 .component = "runtime",
                 .message = fmt::format(
                     "the power limit set through {} ({} W) is not what this process's emulated GPU reports ({} W): "
                     "zeusd emulates other GPUs than this process (each user has their own emulator state unless "
                     "the scenario has \"state_file_shared\": true and a \"state_file\" both can open; README: "
                     "Shared state), so its limits never reach the GPUs measured here",
                     name_, limit_mw / 1000.0, *ours_mw / 1000.0)});
      }
    }
    return OkStatus();
  }
  return Fail(ErrorCode::kInvalidArgument, "ZeusdPowerLimitSetter: a GPU it was not created for");
}

Result<std::unique_ptr<PowerLimitSetter>> MakeDefaultPowerLimitSetter(const device::GpuSet& gpus,
                                                                      std::span<const std::size_t> indices) {
  if (auto config = zeusd::ZeusdConfig::FromEnv()) {
    auto setter = ZeusdPowerLimitSetter::Create(std::move(*config), gpus, indices);
    if (!setter) return Fail(setter.error());
    return std::unique_ptr<PowerLimitSetter>(std::move(*setter));
  }
  return std::unique_ptr<PowerLimitSetter>(std::make_unique<NvmlPowerLimitSetter>());
}

}  // namespace zeus::runtime
