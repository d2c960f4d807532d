// Copyright 2026 The Zeus C++ Authors.
//
// The device settings a process takes from its environment, read in this one
// place: which GPU vendor to open (ZEUS_GPU_VENDOR), which NVML or AMD SMI
// library to load (ZEUS_NVML_LIBRARY, ZEUS_AMDSMI_LIBRARY), where RAPL is read
// (ZEUS_POWERCAP_ROOT), where an SoC's files are looked for (ZEUS_SOC_ROOT),
// where processes are looked up (ZEUS_PROC_ROOT) and which GPUs are visible
// (CUDA_VISIBLE_DEVICES; on AMD also HIP_VISIBLE_DEVICES and
// ROCR_VISIBLE_DEVICES).
// OpenGpus and OpenCpus (discovery.h) consult them for the options left
// unset; commands use them to report what was chosen and to apply the rule
// for an NVML library that was named explicitly (MayContinueWithoutGpus).
//
// Thread-safety: these read or change the process environment; do not call
// them while another thread changes it.

#ifndef ZEUS_DEVICE_ENVIRONMENT_H_
#define ZEUS_DEVICE_ENVIRONMENT_H_

#include <optional>
#include <string>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"

namespace zeus::device {

inline constexpr char kNvmlLibraryVariable[] = "ZEUS_NVML_LIBRARY";
inline constexpr char kAmdSmiLibraryVariable[] = "ZEUS_AMDSMI_LIBRARY";
inline constexpr char kGpuVendorVariable[] = "ZEUS_GPU_VENDOR";
inline constexpr char kHipVisibleDevicesVariable[] = "HIP_VISIBLE_DEVICES";
inline constexpr char kRocrVisibleDevicesVariable[] = "ROCR_VISIBLE_DEVICES";
inline constexpr char kPowercapRootVariable[] = "ZEUS_POWERCAP_ROOT";
inline constexpr char kCudaVisibleDevicesVariable[] = "CUDA_VISIBLE_DEVICES";
// The directory that stands for "/" when looking for an SoC (NVIDIA Jetson's
// /etc/nv_tegra_release and /sys/bus/i2c/drivers/ina3221x, ...): a fake tree
// in tests, a host's root mounted into a container.
inline constexpr char kSocRootVariable[] = "ZEUS_SOC_ROOT";

// Where procfs is read to name the processes on a GPU (process_identity.h):
// a fake tree in tests, the host's /proc mounted into an exporter's container.
inline constexpr char kProcRootVariable[] = "ZEUS_PROC_ROOT";
// Whether zeusd, the exporter and zeus info check energy counters against
// power (zeus/monitor/counter_check.h); OpenGpus never does.
inline constexpr char kEnergyCounterCheckVariable[] = "ZEUS_ENERGY_COUNTER_CHECK";
inline constexpr char kDefaultProcRoot[] = "/proc";
// The library name the system driver installs.
inline constexpr char kSystemNvmlLibrary[] = "libnvidia-ml.so.1";
// AMD SMI as ROCm installs it: the name the dynamic linker finds (ROCm adds
// its library folder to ld.so.conf), then ROCm's default folder.
inline constexpr char kSystemAmdSmiLibrary[] = "libamd_smi.so";
inline constexpr char kRocmAmdSmiLibrary[] = "/opt/rocm/lib/libamd_smi.so";
// The kernel's powercap tree.
inline constexpr char kDefaultPowercapRoot[] = "/sys/class/powercap";
// The real file system's root.
inline constexpr char kDefaultSocRoot[] = "/";

// The GPU library (NVML or AMD SMI) a process loads, and how it was chosen.
struct GpuLibraryChoice {
  // What to dlopen: a path or a library name.
  std::string path;
  // Who named it, for messages: "the configured NVML library" (the caller's
  // option), "ZEUS_NVML_LIBRARY", or "" for the system library (likewise
  // for AMD SMI).
  std::string origin;
  // Whether it was named (by the caller or $ZEUS_NVML_LIBRARY) rather than
  // being the system default. A named library must load: see
  // MayContinueWithoutGpus.
  bool named_explicitly = false;
};

// `configured` when it is set and not empty, else $ZEUS_NVML_LIBRARY when it
// is set and not empty, else kSystemNvmlLibrary.
GpuLibraryChoice ChooseNvmlLibrary(const std::optional<std::string>& configured = std::nullopt);
// `configured` when it is set and not empty, else $ZEUS_AMDSMI_LIBRARY when
// it is set and not empty, else kSystemAmdSmiLibrary (the loader then also
// tries kRocmAmdSmiLibrary).
GpuLibraryChoice ChooseAmdSmiLibrary(const std::optional<std::string>& configured = std::nullopt);

// The vendor whose GPUs OpenGpus opens: `configured` when set, else
// $ZEUS_GPU_VENDOR when it is set and not empty ("nvidia" or "amd"; "auto"
// is nullopt; case-insensitive; any other value is kInvalidArgument naming
// it), else nullopt: NVIDIA where an NVIDIA driver has GPUs, else AMD.
Result<std::optional<GpuVendor>> ChooseGpuVendor(std::optional<GpuVendor> configured = std::nullopt);

// The rule for a command that has work to do without GPUs (CPUs to read, a
// listing to print) when opening the GPUs from `library` (the NVML choice)
// failed with `open_error`: it goes on without GPUs only when neither an
// NVML library (`library`) nor an AMD SMI library ($ZEUS_AMDSMI_LIBRARY)
// was named explicitly, no vendor was named ($ZEUS_GPU_VENDOR), and the
// error is kUnavailable (no GPU driver). Any other failure, and every
// failure of a library or vendor that was named, is the command's error.
bool MayContinueWithoutGpus(const Error& open_error, const GpuLibraryChoice& library);

// `configured` when it is set (even empty), else $ZEUS_POWERCAP_ROOT when it
// is set and not empty, else kDefaultPowercapRoot.
std::string ChoosePowercapRoot(const std::optional<std::string>& configured = std::nullopt);

// `configured` when it is set and not empty, else $ZEUS_SOC_ROOT when it is
// set and not empty, else kDefaultSocRoot.
std::string ChooseSocRoot(const std::optional<std::string>& configured = std::nullopt);
// `configured` when it is set and not empty, else $ZEUS_PROC_ROOT when it is
// set and not empty, else kDefaultProcRoot.
std::string ChooseProcRoot(const std::optional<std::string>& configured = std::nullopt);

// `configured` when it is set, else $ZEUS_ENERGY_COUNTER_CHECK when it is set
// and not empty ("1", "true", "on" or "yes"; "0", "false", "off" or "no";
// any other value is kInvalidArgument naming it), else true.
Result<bool> ChooseEnergyCounterCheck(std::optional<bool> configured = std::nullopt);

// `configured` when it is set, else $CUDA_VISIBLE_DEVICES when it is set
// (even empty: no GPU), else nullopt (every GPU, in NVML order).
std::optional<std::string> ChooseCudaVisibleDevices(const std::optional<std::string>& configured = std::nullopt);

// Which AMD GPUs are visible, as ROCm decides: ROCR_VISIBLE_DEVICES selects
// from every GPU (in HIP order), then HIP_VISIBLE_DEVICES, or
// CUDA_VISIBLE_DEVICES where that is unset, selects from what ROCR left.
struct AmdVisibleDevices {
  std::optional<std::string> rocr;  // $ROCR_VISIBLE_DEVICES, when set
  std::optional<std::string> hip;   // the HIP-level selection, when set
  std::string hip_origin;           // the variable (or option) it came from
};
// `configured` (GpuOptions::cuda_visible_devices) stands for the HIP level
// when set; ROCR_VISIBLE_DEVICES applies either way.
AmdVisibleDevices ChooseAmdVisibleDevices(const std::optional<std::string>& configured = std::nullopt);

// Unsets ZEUS_NVML_LIBRARY, ZEUS_AMDSMI_LIBRARY, ZEUS_GPU_VENDOR,
// ZEUS_POWERCAP_ROOT, ZEUS_SOC_ROOT, CUDA_VISIBLE_DEVICES,
// HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, so
// that the caller's environment chooses nothing for a privileged daemon (and
// the processes it starts).
void ClearDeviceEnvironment();

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_ENVIRONMENT_H_
