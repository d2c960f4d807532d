// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/discovery.h"

#include <fmt/format.h>

#include "device/amdsmi/amdsmi_discovery.h"
#include "device/jetson/jetson_soc.h"
#include "device/nvml/nvml_error.h"
#include "device/nvml/nvml_gpu.h"
#include "device/nvml/nvml_library.h"
#include "device/rapl/rapl_cpu.h"
#include "device/visible_devices.h"
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
    case GpuArchitecture::kCdna: return "cdna";
    case GpuArchitecture::kCdna2: return "cdna2";
    case GpuArchitecture::kCdna3: return "cdna3";
    case GpuArchitecture::kUnknown: break;
  }
  return "unknown";
}

std::string_view GpuVendorName(GpuVendor vendor) { return vendor == GpuVendor::kAmd ? "amd" : "nvidia"; }

std::string_view PowerScopeName(PowerScope scope) {
  switch (scope) {
    case PowerScope::kGpu: return "gpu";
    case PowerScope::kModule: return "module";
    case PowerScope::kUnscoped: break;
  }
  return "unscoped";
}

namespace {

Result<std::unique_ptr<GpuSet>> OpenNvmlGpus(const GpuOptions& options) {
  using nvml::NvmlError;
  using nvml::NvmlLibrary;
  using nvml::NvmlOperation;

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

  auto visible = ResolveVisibleDevices(ChooseCudaVisibleDevices(options.cuda_visible_devices), uuids);
  if (!visible) return Fail(visible.error());

  std::string driver_version;
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (NvmlLibrary::Call(api.nvmlSystemGetDriverVersion, version, sizeof version) == NVML_SUCCESS) {
    driver_version = version;
  }

  std::vector<std::unique_ptr<Gpu>> gpus;
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
    gpus.push_back(std::move(gpu));
  }
  // The clock shares the library's lifetime (an aliasing shared_ptr).
  std::shared_ptr<const Clock> driver_clock;
  if (const Clock* clock = (*library)->emulator_clock(); clock != nullptr) {
    driver_clock = std::shared_ptr<const Clock>(*library, clock);
  }
  return std::make_unique<GpuSet>(std::move(driver_version), std::move(gpus), std::move(driver_clock),
                                  GpuVendor::kNvidia);
}

Result<std::unique_ptr<GpuSet>> OpenAmdGpus(const GpuOptions& options) {
  auto amd = amdsmi::OpenAmdSmiGpus(options);
  if (!amd) return Fail(amd.error());
  return std::move(amd->set);
}

// Auto mode: NVIDIA where NVML loads and has GPUs, else AMD.
Result<std::unique_ptr<GpuSet>> OpenAnyGpus(const GpuOptions& options) {
  auto nvidia = OpenNvmlGpus(options);
  if (nvidia && !(*nvidia)->empty()) return nvidia;
  if (!nvidia && (ChooseNvmlLibrary(options.nvml_library).named_explicitly ||
                  nvidia.error().code() != ErrorCode::kUnavailable)) {
    return nvidia;
  }
  auto amd = OpenAmdGpus(options);
  if (amd && !(*amd)->empty()) return amd;
  if (nvidia) return nvidia;  // NVML with no GPUs: the honest answer
  if (amd) return amd;
  if (amd.error().code() != ErrorCode::kUnavailable) return amd;
  return Fail(ErrorCode::kUnavailable,
              fmt::format("{}; and {}", nvidia.error().message(), amd.error().message()));
}

}  // namespace

Result<std::unique_ptr<GpuSet>> OpenGpus(const GpuOptions& options) {
  // No energy counter check here (zeus/monitor/counter_check.h): opening
  // GPUs waits for no measurement.
  const Result<std::optional<GpuVendor>> vendor = ChooseGpuVendor(options.vendor);
  if (!vendor) return Fail(vendor.error());
  Result<std::unique_ptr<GpuSet>> opened = !vendor->has_value()              ? OpenAnyGpus(options)
                                           : **vendor == GpuVendor::kNvidia ? OpenNvmlGpus(options)
                                                                             : OpenAmdGpus(options);
  if (!opened) return Fail(opened.error());
  return std::move(*opened);
}

Result<std::size_t> CountNvmlGpus(const GpuOptions& options) {
  auto library = nvml::NvmlLibrary::Load(options.nvml_library);
  if (!library) return Fail(library.error());
  unsigned int count = 0;
  if (nvmlReturn_t rc = (*library)->api().nvmlDeviceGetCount_v2(&count); rc != NVML_SUCCESS) {
    return Fail(nvml::NvmlError(rc, "counting GPUs", nvml::NvmlOperation::kQuery));
  }
  return static_cast<std::size_t>(count);
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
