// Copyright 2026 The Zeus C++ Authors.

#include "device/amdsmi/amdsmi_gpu.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/strings.h"
#include "device/amdsmi/amdsmi_error.h"

namespace zeus::device::amdsmi {
namespace {

constexpr std::uint64_t kUwPerMw = 1000;

bool Available(std::uint32_t value) { return value != AMDSMI_NOT_AVAILABLE_U32; }

}  // namespace

GpuArchitecture ArchitectureFromName(std::string_view name) {
  for (std::string_view model : {"MI300", "MI325", "MI308"}) {
    if (name.find(model) != std::string_view::npos) return GpuArchitecture::kCdna3;
  }
  for (std::string_view model : {"MI250", "MI210"}) {
    if (name.find(model) != std::string_view::npos) return GpuArchitecture::kCdna2;
  }
  if (name.find("MI100") != std::string_view::npos) return GpuArchitecture::kCdna;
  return GpuArchitecture::kUnknown;
}

AmdSmiGpu::AmdSmiGpu(std::shared_ptr<const AmdSmiLibrary> library, amdsmi_processor_handle handle,
                     unsigned int hip_index, std::string label)
    : library_(std::move(library)), api_(library_->api()), handle_(handle), hip_index_(hip_index),
      label_(std::move(label)) {}

Error AmdSmiGpu::QueryError(amdsmi_status_t rc, std::string_view what) const {
  return AmdSmiError(rc, fmt::format("reading the {} of {}", what, label_), AmdSmiOperation::kQuery);
}

Error AmdSmiGpu::SetterError(amdsmi_status_t rc, std::string_view what) const {
  return AmdSmiError(rc, fmt::format("changing the {} of {}", what, label_), AmdSmiOperation::kSetter);
}

Error AmdSmiGpu::NotReported(std::string_view what) const {
  if (no_power_reason_) {
    return Error(ErrorCode::kNotSupported, fmt::format("reading the {} of {}: {}", what, label_, *no_power_reason_));
  }
  return Error(ErrorCode::kNotSupported,
               fmt::format("reading the {} of {}: AMD SMI reports it as N/A on this GPU", what, label_));
}

Status AmdSmiGpu::Unsupported(std::string_view what) const {
  return Fail(ErrorCode::kNotSupported, fmt::format("{} of {}: not supported on AMD GPUs", what, label_));
}

Result<std::string> AmdSmiGpu::Name() {
  amdsmi_asic_info_t info{};
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_gpu_asic_info, handle_, &info);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "name"));
  }
  info.market_name[sizeof info.market_name - 1] = '\0';
  // A driver's bytes: valid UTF-8 from here on (JSON, labels, Python).
  return base::ValidUtf8(info.market_name);
}

Result<std::string> AmdSmiGpu::Uuid() {
  char buffer[AMDSMI_GPU_UUID_SIZE + 1] = {};
  unsigned int length = AMDSMI_GPU_UUID_SIZE;
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_gpu_device_uuid, handle_, &length, buffer);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "UUID"));
  }
  return std::string(buffer);
}

Result<std::string> AmdSmiGpu::PciBusId() {
  amdsmi_bdf_t bdf{};
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_gpu_device_bdf, handle_, &bdf);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "PCI bus id"));
  }
  const std::uint64_t v = bdf.as_uint;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", v >> 16, (v >> 8) & 0xff, (v >> 3) & 0x1f, v & 0x7);
}

Result<GpuArchitecture> AmdSmiGpu::Architecture() {
  auto name = Name();
  if (!name) return Fail(name.error());
  return ArchitectureFromName(*name);
}

Result<amdsmi_power_info_t> AmdSmiGpu::PowerInfo() {
  if (no_power_reason_) return Fail(NotReported("power"));
  amdsmi_power_info_t info{};
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_power_info, handle_, &info);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "power"));
  }
  return info;
}

Result<std::uint32_t> AmdSmiGpu::PowerUsageMw() {
  auto info = PowerInfo();
  if (!info) return Fail(info.error());
  if (Available(info->average_socket_power)) return info->average_socket_power * 1000;
  if (Available(info->current_socket_power)) return info->current_socket_power * 1000;
  return Fail(NotReported("power"));
}

Result<std::uint32_t> AmdSmiGpu::InstantPowerMw() {
  auto info = PowerInfo();
  if (!info) return Fail(info.error());
  if (!Available(info->current_socket_power)) return Fail(NotReported("instant power"));
  return info->current_socket_power * 1000;
}

Result<std::uint32_t> AmdSmiGpu::AveragePowerMw() {
  auto info = PowerInfo();
  if (!info) return Fail(info.error());
  if (!Available(info->average_socket_power)) return Fail(NotReported("average power"));
  return info->average_socket_power * 1000;
}

Result<std::uint32_t> AmdSmiGpu::MemoryPowerMw() {
  return Fail(ErrorCode::kNotSupported,
              fmt::format("reading the memory power of {}: AMD SMI has no memory power domain", label_));
}

void AmdSmiGpu::DistrustEnergyCounter(std::string reason) {
  if (counter_distrusted_.load(std::memory_order_acquire)) return;  // once
  counter_distrust_reason_ = std::move(reason);
  counter_distrusted_.store(true, std::memory_order_release);
}

void AmdSmiGpu::NoPowerOfItsOwn(std::string reason) { no_power_reason_ = std::move(reason); }

bool AmdSmiGpu::SupportsEnergyCounter() {
  if (counter_distrusted_.load(std::memory_order_acquire) || no_power_reason_) return false;
  std::uint64_t accumulator = 0;
  float resolution = 0;
  std::uint64_t timestamp = 0;
  return library_->Call(api_.amdsmi_get_energy_count, handle_, &accumulator, &resolution, &timestamp) ==
         AMDSMI_STATUS_SUCCESS;
}

Result<std::uint64_t> AmdSmiGpu::TotalEnergyMj() {
  if (no_power_reason_) return Fail(NotReported("energy counter"));
  if (counter_distrusted_.load(std::memory_order_acquire)) {
    return Fail(ErrorCode::kNotSupported,
                fmt::format("{}'s energy counter is not used: {}", label_, counter_distrust_reason_));
  }
  std::uint64_t accumulator = 0;
  float resolution_uj = 0;
  std::uint64_t timestamp_ns = 0;
  if (amdsmi_status_t rc =
          library_->Call(api_.amdsmi_get_energy_count, handle_, &accumulator, &resolution_uj, &timestamp_ns);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "energy counter"));
  }
  if (!(resolution_uj > 0) || !std::isfinite(resolution_uj)) {
    return Fail(ErrorCode::kInternal, fmt::format("reading the energy counter of {}: AMD SMI gave a counter "
                                                  "resolution of {} µJ, which cannot be right",
                                                  label_, resolution_uj));
  }
  // long double keeps every µJ of a 64-bit accumulator.
  const long double energy_uj = static_cast<long double>(accumulator) * static_cast<long double>(resolution_uj);
  return static_cast<std::uint64_t>(energy_uj / 1000.0L);
}

Result<amdsmi_power_cap_info_t> AmdSmiGpu::PowerCapInfo() {
  amdsmi_power_cap_info_t info{};
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_power_cap_info, handle_, 0u, &info);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "power cap"));
  }
  return info;
}

Result<std::uint32_t> AmdSmiGpu::PowerLimitMw() {
  auto info = PowerCapInfo();
  if (!info) return Fail(info.error());
  return static_cast<std::uint32_t>(info->power_cap / kUwPerMw);
}

Result<PowerLimitConstraints> AmdSmiGpu::PowerLimitConstraintsMw() {
  auto info = PowerCapInfo();
  if (!info) return Fail(info.error());
  return PowerLimitConstraints{static_cast<std::uint32_t>(info->min_power_cap / kUwPerMw),
                               static_cast<std::uint32_t>(info->max_power_cap / kUwPerMw)};
}

Result<std::uint32_t> AmdSmiGpu::DefaultPowerLimitMw() {
  auto info = PowerCapInfo();
  if (!info) return Fail(info.error());
  return static_cast<std::uint32_t>(info->default_power_cap / kUwPerMw);
}

Status AmdSmiGpu::SetPowerLimitMw(std::uint32_t limit_mw) {
  amdsmi_status_t rc = library_->Call(api_.amdsmi_set_power_cap, handle_, 0u, std::uint64_t{limit_mw} * kUwPerMw);
  if (rc == AMDSMI_STATUS_SUCCESS) return OkStatus();
  if (rc == AMDSMI_STATUS_INVAL || rc == AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS) {
    std::string range;
    if (auto constraints = PowerLimitConstraintsMw()) {
      range = fmt::format(" (allowed: {}-{} W)", constraints->min_mw / 1000.0, constraints->max_mw / 1000.0);
    }
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("changing the power limit of {} to {} W: AMD SMI rejected the value{}", label_,
                            limit_mw / 1000.0, range));
  }
  return Fail(SetterError(rc, "power limit"));
}

Status AmdSmiGpu::ResetPowerLimit() {
  auto default_mw = DefaultPowerLimitMw();
  if (!default_mw) return Fail(default_mw.error());
  return SetPowerLimitMw(*default_mw);
}

Result<bool> AmdSmiGpu::PersistenceMode() {
  return Fail(ErrorCode::kNotSupported,
              fmt::format("reading the persistence mode of {}: AMD GPUs have no persistence mode (the amdgpu "
                          "driver keeps its state without one)",
                          label_));
}

Status AmdSmiGpu::SetPersistenceMode(bool enabled) {
  (void)enabled;
  return Fail(ErrorCode::kNotSupported,
              fmt::format("changing the persistence mode of {}: AMD GPUs have no persistence mode (the amdgpu "
                          "driver keeps its state without one)",
                          label_));
}

Result<unsigned int> AmdSmiGpu::TemperatureC() {
  std::int64_t reading = 0;
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_temp_metric, handle_,
                                          amdsmi_temperature_type_t{AMDSMI_TEMPERATURE_TYPE_HOTSPOT},
                                          amdsmi_temperature_metric_t{AMDSMI_TEMP_CURRENT}, &reading);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, "temperature"));
  }
  // AMD SMI 24.7 returns whole °C though its header documents millidegrees;
  // a reading of 1000 or more can only be millidegrees (a library that
  // follows its header).
  reading = std::max<std::int64_t>(0, reading);
  return static_cast<unsigned int>(reading >= 1000 ? reading / 1000 : reading);
}

Result<amdsmi_frequencies_t> AmdSmiGpu::Frequencies(amdsmi_clk_type_t type, std::string_view what) {
  amdsmi_frequencies_t frequencies{};
  if (amdsmi_status_t rc = library_->Call(api_.amdsmi_get_clk_freq, handle_, type, &frequencies);
      rc != AMDSMI_STATUS_SUCCESS) {
    return Fail(QueryError(rc, what));
  }
  if (frequencies.num_supported > AMDSMI_MAX_NUM_FREQUENCIES) frequencies.num_supported = AMDSMI_MAX_NUM_FREQUENCIES;
  return frequencies;
}

namespace {

Result<unsigned int> CurrentMhz(const Result<amdsmi_frequencies_t>& f) {
  if (!f) return Fail(f.error());
  if (f->current >= f->num_supported) {
    return Fail(ErrorCode::kNotSupported, "AMD SMI gave no current clock level");
  }
  return static_cast<unsigned int>(f->frequency[f->current] / 1'000'000);
}

Result<std::vector<unsigned int>> ListMhz(const Result<amdsmi_frequencies_t>& f) {
  if (!f) return Fail(f.error());
  std::vector<unsigned int> mhz;
  for (std::uint32_t i = 0; i < f->num_supported; ++i) mhz.push_back(static_cast<unsigned int>(f->frequency[i] / 1'000'000));
  // Descending, as NVML lists them.
  std::sort(mhz.rbegin(), mhz.rend());
  return mhz;
}

}  // namespace

Result<unsigned int> AmdSmiGpu::SmClockMhz() { return CurrentMhz(Frequencies(AMDSMI_CLK_TYPE_GFX, "graphics clock")); }

Result<unsigned int> AmdSmiGpu::MemoryClockMhz() {
  return CurrentMhz(Frequencies(AMDSMI_CLK_TYPE_MEM, "memory clock"));
}

Result<std::vector<unsigned int>> AmdSmiGpu::SupportedMemoryClocksMhz() {
  return ListMhz(Frequencies(AMDSMI_CLK_TYPE_MEM, "supported memory clocks"));
}

Result<std::vector<unsigned int>> AmdSmiGpu::SupportedGraphicsClocksMhz(unsigned int memory_clock_mhz) {
  (void)memory_clock_mhz;  // AMD's graphics levels do not depend on the memory clock
  return ListMhz(Frequencies(AMDSMI_CLK_TYPE_GFX, "supported graphics clocks"));
}

Status AmdSmiGpu::SetGpuLockedClocks(unsigned int min_mhz, unsigned int max_mhz) {
  (void)min_mhz;
  (void)max_mhz;
  return Unsupported("locking the graphics clocks");
}

Status AmdSmiGpu::ResetGpuLockedClocks() {
  return Unsupported("resetting the graphics clocks alone (AMD resets both clock domains at once)");
}

Status AmdSmiGpu::SetMemoryLockedClocks(unsigned int min_mhz, unsigned int max_mhz) {
  (void)min_mhz;
  (void)max_mhz;
  return Unsupported("locking the memory clocks");
}

Status AmdSmiGpu::ResetMemoryLockedClocks() {
  return Unsupported("resetting the memory clocks alone (AMD resets both clock domains at once)");
}

}  // namespace zeus::device::amdsmi
