// Copyright 2026 The Zeus C++ Authors.
//
// Opening real (or emulated) devices. Only composition roots (the CLI, service
// mains, bindings) include this header; library code receives a GpuSet or
// CpuSet from them.

#ifndef ZEUS_DEVICE_DISCOVERY_H_
#define ZEUS_DEVICE_DISCOVERY_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "zeus/base/clock.h"
#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/gpu.h"
#include "zeus/device/soc.h"

namespace zeus::device {

struct GpuOptions {
  // Whose GPUs to open. Unset: $ZEUS_GPU_VENDOR (ChooseGpuVendor), else
  // auto: NVIDIA where NVML loads and has GPUs, else AMD, as Zeus does.
  std::optional<GpuVendor> vendor;
  // The NVML library to dlopen. Unset: $ZEUS_NVML_LIBRARY, else the system's
  // libnvidia-ml.so.1 (ChooseNvmlLibrary, environment.h).
  std::optional<std::string> nvml_library;
  // The AMD SMI library to dlopen. Unset: $ZEUS_AMDSMI_LIBRARY, else the
  // system's libamd_smi.so, else /opt/rocm/lib/libamd_smi.so.
  std::optional<std::string> amdsmi_library;
  // Which GPUs, in which order. Unset: $CUDA_VISIBLE_DEVICES
  // (ChooseCudaVisibleDevices); when that is unset too, every GPU in NVML
  // order. Entries are NVML indices or GPU UUIDs (a unique prefix suffices,
  // as in CUDA). "-1" alone is no GPU, and a trailing -1 ends the list, as
  // in CUDA; entries after a -1 are an error. MIG UUIDs are kNotSupported.
  // On AMD, as ROCm: $ROCR_VISIBLE_DEVICES selects from every GPU in HIP
  // order, then this (unset: $HIP_VISIBLE_DEVICES, else
  // $CUDA_VISIBLE_DEVICES) selects from what it left
  // (ChooseAmdVisibleDevices).
  std::optional<std::string> cuda_visible_devices;
  // Whether a GPU in MIG mode may be opened (for read-only listing). Measuring
  // such a GPU measures the whole device, not the caller's MIG instance.
  bool allow_mig = false;
};

// Loads NVML or AMD SMI (GpuOptions::vendor) and opens the visible GPUs.
// It makes no measurement: the energy counter check
// (zeus/monitor/counter_check.h) is run by zeusd, the exporter and zeus
// info, never here, so opening costs only the driver's enumeration calls.
// In auto mode an NVML that is absent, fails to initialise or has no GPUs
// gives way to AMD SMI, unless the NVML library was named explicitly.
// Errors:
//   kUnavailable - no library at the default path ("no NVIDIA driver found",
//                  "no AMD GPU driver found"; in auto mode both), or the
//                  library failed to initialise;
//   kNotFound    - the explicitly named library does not exist or cannot load;
//   kFailedPrecondition - an AMD SMI older than ROCm 6.3;
//   kInvalidArgument - a malformed $ZEUS_GPU_VENDOR;
//   kInvalidArgument - a malformed CUDA_VISIBLE_DEVICES;
//   kNotSupported - a MIG instance or MIG-mode GPU (unless allow_mig).
Result<std::unique_ptr<GpuSet>> OpenGpus(const GpuOptions& options = {});

// How many GPUs NVML reports: loads NVML as OpenGpus does
// (options.nvml_library, else $ZEUS_NVML_LIBRARY, else the system's
// libnvidia-ml.so.1), calls nvmlDeviceGetCount and unloads it. A probe:
// opens no GPU (no GpuSet, no energy-counter check, no MIG check), applies
// neither CUDA_VISIBLE_DEVICES nor $ZEUS_GPU_VENDOR, and never falls back to
// AMD SMI. Errors: those of loading NVML (kUnavailable: no driver or init
// failed; kNotFound: the explicitly named library cannot be loaded;
// kInternal: not a usable NVML), or NVML's error counting the GPUs.
Result<std::size_t> CountNvmlGpus(const GpuOptions& options = {});

struct CpuOptions {
  // The powercap root. Unset: $ZEUS_POWERCAP_ROOT, else /sys/class/powercap
  // (ChoosePowercapRoot, environment.h).
  std::optional<std::string> powercap_root;
  // The highest power a RAPL zone is assumed to draw, which bounds how far
  // apart two reads may be before a wrap can be missed.
  double assumed_max_zone_power_w = 1000.0;
  // Run a background thread that reads every counter at half the safe read
  // interval, so wraps are never missed however rarely the caller reads.
  bool wrap_guard = true;
  // Time source for the safe-interval checks and the guard thread. Must
  // outlive the CpuSet. Null: SteadyClock().
  const Clock* clock = nullptr;
};

// Opens the RAPL packages under the powercap root. No RAPL at all is an empty
// set, not an error; a root that cannot be listed is. Per-package failures
// are data: a package that cannot be opened (an unreadable name, a missing or
// non-numeric max_energy_range_uj, also of its DRAM subzone) or whose counter
// cannot be read (root-only since Linux 5.10, garbage content) is still
// listed, and its TotalEnergy() returns the error naming the file and the
// fix; the other packages are served as usual.
Result<std::unique_ptr<CpuSet>> OpenCpus(const CpuOptions& options = {});

struct SocOptions {
  // The directory standing for "/" (a fake tree in tests). Unset:
  // $ZEUS_SOC_ROOT, else "/" (ChooseSocRoot, environment.h).
  std::optional<std::string> root;
  // How often the sampler thread integrates the rails' power (Zeus: ~0.1 s).
  // Zero: no thread; the energy is integrated only when TotalEnergy() is
  // called (tests drive it by hand).
  std::chrono::nanoseconds sample_period = std::chrono::milliseconds(100);
  // The clock energy is integrated on. Must outlive the Soc. Null:
  // SteadyClock(). The sampler waits on real time whatever the clock.
  const Clock* clock = nullptr;
};

// Opens the SoC of this machine. NVIDIA Jetson is recognised, as in Zeus, by
// <root>/etc/nv_tegra_release or <root>/usr/lib/aarch64-linux-gnu/tegra
// (and, under the real root "/", an aarch64 Linux machine); its rails are
// the INA3221 channels under <root>/sys/bus/i2c/drivers/ina3221x and
// .../ina3221 (each device, its subfolders and hwmon/hwmon*), named by
// in<i>_label (power<i>_input in mW, or in<i>_input mV x curr<i>_input mA
// / 1000) or rail_name_<i> (in_power<i>_input mW, or in_voltage<i>_input x
// in_current<i>_input / 1000), kinds as SocRailKind says; the first rail of
// each kind (in path order) is measured. A rail whose file is missing or
// unreadable at open is listed in problems() and not measured.
// Errors: kUnavailable - no SoC ("not an NVIDIA Jetson: neither ... exists"),
// or a Jetson without one readable CPU, GPU or total rail (the message lists
// what was found and why each rail was skipped).
// Apple silicon is never found (macOS only).
Result<std::unique_ptr<Soc>> OpenSoc(const SocOptions& options = {});

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_DISCOVERY_H_
