// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/discovery.h"

#include <fmt/format.h>

#include "device/jetson/jetson_soc.h"
#include "device/nvml/nvml_error.h"
#include "device/nvml/nvml_gpu.h"
#include "device/nvml/nvml_library.h"
#include "device/nvml/visible_devices.h"
#include "device/rapl/rapl_cpu.h"
#include "zeus/base/log.h"
#include "zeus/device/counter_check.h"
#include "zeus/device/environment.h"

namespace zeus::device {

Error Gpu::NotSupportedError(std::string_view call) {
  return Error(ErrorCode::kNotSupported, fmt::format("{} is not supported by this GPU backend", call));
}

std::string_view GpuArchitectureName(GpuArchitecture arch) {
  switch (arch) {
    case GpuArchitecture::kKepler: return "kepler";
    case GpuArchitecture::kMaxwell: return "maxwell";
    case GpuArchitecture::kPascal: return "pascal";
    case GpuArchitecture::kVolta: return "volta";
    case GpuArchitecture::kTuring: return "turing";
    case GpuArchitecture::kAmpere: return "ampere";
    case GpuArchitecture::kAda: return "ada";
    case GpuArchitecture::kHopper: return "hopper";
    case GpuArchitecture::kBlackwell: return "blackwell";
    case GpuArchitecture::kUnknown: break;
  }
  return "unknown";
}

std::string_view PowerScopeName(PowerScope scope) {
  switch (scope) {
    case PowerScope::kGpu: return "gpu";
    case PowerScope::kModule: return "module";
    case PowerScope::kUnscoped: break;
  }
  return "unscoped";
}

Result<std::unique_ptr<GpuSet>> OpenGpus(const GpuOptions& options) {
  using nvml::NvmlError;
  using nvml::NvmlLibrary;
  using nvml::NvmlOperation;

  const Result<bool> check_counters = ChooseEnergyCounterCheck(options.check_energy_counters);
  if (!check_counters) return Fail(check_counters.error());
  auto library = NvmlLibrary::Load(options.nvml_library);
  if (!library) return Fail(library.error());
  const nvml::NvmlApi& api = (*library)->api();

  unsigned int count = 0;
  if (nvmlReturn_t rc = api.nvmlDeviceGetCount_v2(&count); rc != NVML_SUCCESS) {
    return Fail(NvmlError(rc, "counting GPUs", NvmlOperation::kQuery));
  }
  std::vector<nvmlDevice_t> handles(count);
  std::vector<std::string> uuids(count);
  for (unsigned int i = 0; i < count; ++i) {
    if (nvmlReturn_t rc = api.nvmlDeviceGetHandleByIndex_v2(i, &handles[i]); rc != NVML_SUCCESS) {
      return Fail(NvmlError(rc, fmt::format("opening GPU {}", i), NvmlOperation::kQuery));
    }
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (nvmlReturn_t rc = api.nvmlDeviceGetUUID(handles[i], uuid, sizeof uuid); rc != NVML_SUCCESS) {
      return Fail(NvmlError(rc, fmt::format("reading the UUID of GPU {}", i), NvmlOperation::kQuery));
    }
    uuids[i] = uuid;
  }

  auto visible = nvml::ResolveVisibleDevices(ChooseCudaVisibleDevices(options.cuda_visible_devices), uuids);
  if (!visible) return Fail(visible.error());

  std::string driver_version;
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (NvmlLibrary::Call(api.nvmlSystemGetDriverVersion, version, sizeof version) == NVML_SUCCESS) {
    driver_version = version;
  }

  std::vector<std::unique_ptr<Gpu>> gpus;
  std::vector<nvml::NvmlGpu*> nvml_gpus;
  for (std::size_t i = 0; i < visible->size(); ++i) {
    const unsigned int nvml_index = (*visible)[i];
    auto gpu = std::make_unique<nvml::NvmlGpu>(*library, handles[nvml_index], nvml_index,
                                               fmt::format("GPU {} ({})", i, uuids[nvml_index]));
    if (!options.allow_mig) {
      auto mig = gpu->MigEnabled();
      if (!mig) return Fail(mig.error());
      if (*mig) {
        return Fail(ErrorCode::kNotSupported,
                    fmt::format("GPU {} ({}) is in MIG mode, which is not supported: NVML cannot measure power or "
                                "energy of a single MIG instance; disable MIG (nvidia-smi -mig 0) or use another GPU",
                                i, uuids[nvml_index]));
      }
    }
    nvml_gpus.push_back(gpu.get());
    gpus.push_back(std::move(gpu));
  }
  // The clock shares the library's lifetime (an aliasing shared_ptr).
  std::shared_ptr<const Clock> driver_clock;
  if (const Clock* clock = (*library)->emulator_clock(); clock != nullptr) {
    driver_clock = std::shared_ptr<const Clock>(*library, clock);
  }
  auto set = std::make_unique<GpuSet>(std::move(driver_version), std::move(gpus), std::move(driver_clock));
  if (*check_counters) {
    const std::vector<EnergyCounterCheck> checks = CheckEnergyCounters(*set);
    for (std::size_t i = 0; i < checks.size(); ++i) {
      if (checks[i].verdict != CounterVerdict::kDisagrees) continue;
      nvml_gpus[i]->DistrustEnergyCounter(
          fmt::format("at start it disagreed with the GPU's power ({}), so energy is integrated from power instead",
                      checks[i].detail));
      LogWarning("device", fmt::format("GPU {}: the energy counter disagrees with the GPU's power ({}); measuring "
                                       "integrated power instead. zeus info shows the check; {}=0 turns it off",
                                       i, checks[i].detail, kEnergyCounterCheckVariable));
    }
  }
  return set;
}

Result<std::unique_ptr<CpuSet>> OpenCpus(const CpuOptions& options) {
  const std::string root = ChoosePowercapRoot(options.powercap_root);
  if (!(options.assumed_max_zone_power_w > 0)) {
    return Fail(ErrorCode::kInvalidArgument, "assumed_max_zone_power_w must be positive");
  }
  return rapl::OpenRaplCpus(root, options, options.clock != nullptr ? *options.clock : SteadyClock());
}

std::string_view SocRailKindName(SocRailKind kind) {
  switch (kind) {
    case SocRailKind::kCpu: return "cpu";
    case SocRailKind::kGpu: return "gpu";
    case SocRailKind::kTotal: return "total";
  }
  return "total";
}

Result<std::unique_ptr<Soc>> OpenSoc(const SocOptions& options) {
  const Clock& clock = options.clock != nullptr ? *options.clock : SteadyClock();
  return jetson::OpenJetson(ChooseSocRoot(options.root), options.sample_period, clock);
}

}  // namespace zeus::device
