// Copyright 2026 The Zeus C++ Authors.

#include "device/nvml/nvml_gpu.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "device/nvml/nvml_error.h"
#include "zeus/base/log.h"

namespace zeus::device::nvml {
namespace {

GpuArchitecture FromNvmlArch(nvmlDeviceArchitecture_t arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER: return GpuArchitecture::kKepler;
    case NVML_DEVICE_ARCH_MAXWELL: return GpuArchitecture::kMaxwell;
    case NVML_DEVICE_ARCH_PASCAL: return GpuArchitecture::kPascal;
    case NVML_DEVICE_ARCH_VOLTA: return GpuArchitecture::kVolta;
    case NVML_DEVICE_ARCH_TURING: return GpuArchitecture::kTuring;
    case NVML_DEVICE_ARCH_AMPERE: return GpuArchitecture::kAmpere;
    case NVML_DEVICE_ARCH_ADA: return GpuArchitecture::kAda;
    case NVML_DEVICE_ARCH_HOPPER: return GpuArchitecture::kHopper;
    case NVML_DEVICE_ARCH_BLACKWELL: return GpuArchitecture::kBlackwell;
    default: return GpuArchitecture::kUnknown;
  }
}

}  // namespace

NvmlGpu::NvmlGpu(std::shared_ptr<const NvmlLibrary> library, nvmlDevice_t device, unsigned int nvml_index,
                 std::string label)
    : library_(std::move(library)), api_(library_->api()), device_(device), nvml_index_(nvml_index),
      label_(std::move(label)) {}

Error NvmlGpu::QueryError(nvmlReturn_t rc, std::string_view what) const {
  return NvmlError(rc, fmt::format("reading the {} of {}", what, label_), NvmlOperation::kQuery);
}

Error NvmlGpu::SetterError(nvmlReturn_t rc, std::string_view what) const {
  return NvmlError(rc, fmt::format("changing the {} of {}", what, label_), NvmlOperation::kSetter);
}

Result<std::string> NvmlGpu::Name() {
  char buffer[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (nvmlReturn_t rc = api_.nvmlDeviceGetName(device_, buffer, sizeof buffer); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "name"));
  }
  buffer[sizeof buffer - 1] = '\0';
  // A driver's (or a scenario's) bytes: valid UTF-8 from here on (JSON, labels, Python).
  return base::ValidUtf8(buffer);
}

Result<std::string> NvmlGpu::Uuid() {
  char buffer[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (nvmlReturn_t rc = api_.nvmlDeviceGetUUID(device_, buffer, sizeof buffer); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "UUID"));
  }
  return std::string(buffer);
}

Result<std::string> NvmlGpu::PciBusId() {
  nvmlPciInfo_t pci{};
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetPciInfo_v3, device_, &pci); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "PCI bus id"));
  }
  return std::string(pci.busId);
}

Result<GpuArchitecture> NvmlGpu::Architecture() {
  nvmlDeviceArchitecture_t arch = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetArchitecture, device_, &arch); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "architecture"));
  }
  return FromNvmlArch(arch);
}

Result<bool> NvmlGpu::MigEnabled() {
  unsigned int current = 0;
  unsigned int pending = 0;
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetMigMode, device_, &current, &pending);
  // GPUs without MIG support answer NOT_SUPPORTED: they are not in MIG mode.
  if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) return false;
  if (rc != NVML_SUCCESS) return Fail(QueryError(rc, "MIG mode"));
  return current != 0;
}

Result<std::uint32_t> NvmlGpu::PowerUsageMw() {
  // The driver's 1 s average at the GPU's scope; the plain call only where
  // the driver has no average power field.
  auto average = AveragePowerMw();
  if (average || average.error().code() != ErrorCode::kNotSupported) return average;
  unsigned int power_mw = 0;
  if (nvmlReturn_t rc = api_.nvmlDeviceGetPowerUsage(device_, &power_mw); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "power usage"));
  }
  return power_mw;
}

Result<std::uint32_t> NvmlGpu::PowerField(unsigned int field_id, unsigned int scope, std::string_view what) {
  nvmlFieldValue_t value{};
  value.fieldId = field_id;
  value.scopeId = scope;
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetFieldValues, device_, 1, &value);
  if (rc == NVML_SUCCESS) rc = value.nvmlReturn;
  if (rc != NVML_SUCCESS) return Fail(QueryError(rc, what));
  switch (value.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT: return value.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: return static_cast<std::uint32_t>(value.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return static_cast<std::uint32_t>(value.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return static_cast<std::uint32_t>(value.value.sllVal);
    case NVML_VALUE_TYPE_DOUBLE: return static_cast<std::uint32_t>(value.value.dVal);
    default:
      return Fail(ErrorCode::kInternal,
                  fmt::format("reading the {} of {}: NVML returned value type {}", what, label_, value.valueType));
  }
}

Result<std::uint32_t> NvmlGpu::ScopedPowerField(unsigned int field_id, std::atomic<FieldScope>& resolved,
                                                 std::string_view what) {
  switch (resolved.load(std::memory_order_relaxed)) {
    case FieldScope::kGpu: return PowerField(field_id, NVML_POWER_SCOPE_GPU, what);
    case FieldScope::kModule: return PowerField(field_id, NVML_POWER_SCOPE_MODULE, what);
    case FieldScope::kNone: return Fail(QueryError(NVML_ERROR_NOT_SUPPORTED, what));
    case FieldScope::kUnresolved: break;
  }
  auto gpu_scope = PowerField(field_id, NVML_POWER_SCOPE_GPU, what);
  if (gpu_scope) {
    resolved.store(FieldScope::kGpu, std::memory_order_relaxed);
    return gpu_scope;
  }
  // Only a refusal of the scope moves to the module; other failures (a lost
  // GPU, a timeout) are returned and the scope stays unresolved.
  if (gpu_scope.error().code() != ErrorCode::kNotSupported) return gpu_scope;
  auto module_scope = PowerField(field_id, NVML_POWER_SCOPE_MODULE, what);
  if (module_scope) {
    resolved.store(FieldScope::kModule, std::memory_order_relaxed);
    // One warning per GPU, whichever field finds it first.
    LogOnce(fmt::format("nvml-module-power-scope:{}", nvml_index_),
            {.level = LogLevel::kWarning,
             .component = "device",
             .message = fmt::format("the driver does not report the power of {} alone (GPU scope not supported); "
                                    "reading its module's power instead, which on a superchip such as Grace Hopper "
                                    "includes the CPU and its memory. Do not add CPU energy on top of this GPU's",
                                    label_)});
    return module_scope;
  }
  if (module_scope.error().code() == ErrorCode::kNotSupported) resolved.store(FieldScope::kNone);
  return gpu_scope;  // the GPU scope's error names the field
}

Result<std::uint32_t> NvmlGpu::InstantPowerMw() {
  return ScopedPowerField(NVML_FI_DEV_POWER_INSTANT, instant_scope_, "instant power");
}

Result<std::uint32_t> NvmlGpu::AveragePowerMw() {
  return ScopedPowerField(NVML_FI_DEV_POWER_AVERAGE, average_scope_, "average power");
}

Result<PowerScope> NvmlGpu::PowerReadingScope() {
  for (auto* field : {&instant_scope_, &average_scope_}) {
    if (field->load(std::memory_order_relaxed) == FieldScope::kUnresolved) {
      auto read = field == &instant_scope_ ? InstantPowerMw() : AveragePowerMw();
      if (!read && read.error().code() != ErrorCode::kNotSupported) return Fail(read.error());
    }
    switch (field->load(std::memory_order_relaxed)) {
      case FieldScope::kGpu: return PowerScope::kGpu;
      case FieldScope::kModule: return PowerScope::kModule;
      case FieldScope::kNone:
      case FieldScope::kUnresolved: break;
    }
  }
  return PowerScope::kUnscoped;
}

Result<std::uint32_t> NvmlGpu::MemoryPowerMw() {
  return PowerField(NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY, "memory power");
}

void NvmlGpu::DistrustEnergyCounter(std::string reason) {
  if (counter_distrusted_.load(std::memory_order_acquire)) return;  // once
  counter_distrust_reason_ = std::move(reason);
  counter_distrusted_.store(true, std::memory_order_release);
}

bool NvmlGpu::SupportsEnergyCounter() {
  if (counter_distrusted_.load(std::memory_order_acquire)) return false;
  auto arch = Architecture();
  if (!arch || *arch == GpuArchitecture::kUnknown || *arch < GpuArchitecture::kVolta) return false;
  unsigned long long energy_mj = 0;
  return NvmlLibrary::Call(api_.nvmlDeviceGetTotalEnergyConsumption, device_, &energy_mj) == NVML_SUCCESS;
}

Result<std::uint64_t> NvmlGpu::TotalEnergyMj() {
  if (counter_distrusted_.load(std::memory_order_acquire)) {
    return Fail(ErrorCode::kNotSupported,
                fmt::format("{}'s energy counter is not used: {}", label_, counter_distrust_reason_));
  }
  unsigned long long energy_mj = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetTotalEnergyConsumption, device_, &energy_mj);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "energy counter"));
  }
  return static_cast<std::uint64_t>(energy_mj);
}

Result<std::uint32_t> NvmlGpu::PowerLimitMw() {
  unsigned int limit_mw = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetPowerManagementLimit, device_, &limit_mw);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "power limit"));
  }
  return limit_mw;
}

Result<PowerLimitConstraints> NvmlGpu::PowerLimitConstraintsMw() {
  PowerLimitConstraints constraints;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetPowerManagementLimitConstraints, device_,
                                          &constraints.min_mw, &constraints.max_mw);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "power limit constraints"));
  }
  return constraints;
}

Result<std::uint32_t> NvmlGpu::DefaultPowerLimitMw() {
  unsigned int limit_mw = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetPowerManagementDefaultLimit, device_, &limit_mw);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "default power limit"));
  }
  return limit_mw;
}

Result<std::uint32_t> NvmlGpu::EnforcedPowerLimitMw() {
  unsigned int limit_mw = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetEnforcedPowerLimit, device_, &limit_mw);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "enforced power limit"));
  }
  return limit_mw;
}

Status NvmlGpu::SetPowerLimitMw(std::uint32_t limit_mw) {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceSetPowerManagementLimit, device_, limit_mw);
  if (rc == NVML_SUCCESS) return OkStatus();
  if (rc == NVML_ERROR_INVALID_ARGUMENT) {
    std::string range;
    if (auto constraints = PowerLimitConstraintsMw()) {
      range = fmt::format(" (allowed: {}-{} W)", constraints->min_mw / 1000.0, constraints->max_mw / 1000.0);
    }
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("changing the power limit of {} to {} W: the driver rejected the value{}", label_,
                            limit_mw / 1000.0, range));
  }
  return Fail(SetterError(rc, "power limit"));
}

Status NvmlGpu::ResetPowerLimit() {
  auto default_mw = DefaultPowerLimitMw();
  if (!default_mw) return Fail(default_mw.error());
  return SetPowerLimitMw(*default_mw);
}

Result<bool> NvmlGpu::PersistenceMode() {
  nvmlEnableState_t mode = NVML_FEATURE_DISABLED;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetPersistenceMode, device_, &mode); rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "persistence mode"));
  }
  return mode == NVML_FEATURE_ENABLED;
}

Status NvmlGpu::SetPersistenceMode(bool enabled) {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceSetPersistenceMode, device_,
                                      enabled ? nvmlEnableState_t{NVML_FEATURE_ENABLED}
                                              : nvmlEnableState_t{NVML_FEATURE_DISABLED});
  if (rc != NVML_SUCCESS) return Fail(SetterError(rc, "persistence mode"));
  return OkStatus();
}

Result<unsigned int> NvmlGpu::TemperatureC() {
  unsigned int temp_c = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetTemperature, device_,
                                          nvmlTemperatureSensors_t{NVML_TEMPERATURE_GPU}, &temp_c);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "temperature"));
  }
  return temp_c;
}

Result<unsigned int> NvmlGpu::SmClockMhz() {
  unsigned int mhz = 0;
  if (nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceGetClockInfo, device_, nvmlClockType_t{NVML_CLOCK_SM}, &mhz);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "SM clock"));
  }
  return mhz;
}

Result<unsigned int> NvmlGpu::MemoryClockMhz() {
  unsigned int mhz = 0;
  if (nvmlReturn_t rc =
          NvmlLibrary::Call(api_.nvmlDeviceGetClockInfo, device_, nvmlClockType_t{NVML_CLOCK_MEM}, &mhz);
      rc != NVML_SUCCESS) {
    return Fail(QueryError(rc, "memory clock"));
  }
  return mhz;
}

Result<std::vector<unsigned int>> NvmlGpu::ClockList(std::string_view what, unsigned int memory_clock_mhz,
                                                     bool graphics) {
  // NVML's protocol: ask with a buffer; on INSUFFICIENT_SIZE, count holds the
  // size needed. Retry a few times in case the list grows in between.
  std::vector<unsigned int> clocks(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(clocks.size());
    nvmlReturn_t rc = graphics ? NvmlLibrary::Call(api_.nvmlDeviceGetSupportedGraphicsClocks, device_,
                                                   memory_clock_mhz, &count, clocks.data())
                               : NvmlLibrary::Call(api_.nvmlDeviceGetSupportedMemoryClocks, device_, &count,
                                                   clocks.data());
    if (rc == NVML_SUCCESS) {
      clocks.resize(count);
      return clocks;
    }
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE) return Fail(QueryError(rc, what));
    clocks.resize(std::max<std::size_t>(count, clocks.size() * 2));
  }
  return Fail(QueryError(NVML_ERROR_INSUFFICIENT_SIZE, what));
}

Result<std::vector<unsigned int>> NvmlGpu::SupportedMemoryClocksMhz() {
  return ClockList("supported memory clocks", 0, false);
}

Result<std::vector<unsigned int>> NvmlGpu::SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) {
  return ClockList("supported graphics clocks", memory_clock_mhz, true);
}

Status NvmlGpu::SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceSetGpuLockedClocks, device_, min_mhz, max_mhz);
  if (rc != NVML_SUCCESS) return Fail(SetterError(rc, "locked SM clocks"));
  return OkStatus();
}

Status NvmlGpu::ResetGpuLockedClocks() {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceResetGpuLockedClocks, device_);
  if (rc != NVML_SUCCESS) return Fail(SetterError(rc, "locked SM clocks"));
  return OkStatus();
}

Status NvmlGpu::SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceSetMemoryLockedClocks, device_, min_mhz, max_mhz);
  if (rc != NVML_SUCCESS) return Fail(SetterError(rc, "locked memory clocks"));
  return OkStatus();
}

Status NvmlGpu::ResetMemoryLockedClocks() {
  nvmlReturn_t rc = NvmlLibrary::Call(api_.nvmlDeviceResetMemoryLockedClocks, device_);
  if (rc != NVML_SUCCESS) return Fail(SetterError(rc, "locked memory clocks"));
  return OkStatus();
}

}  // namespace zeus::device::nvml
