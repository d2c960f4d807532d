// Copyright 2026 The Zeus C++ Authors.
//
// The device settings a process takes from its environment, read in this one
// place: which NVML library to load (ZEUS_NVML_LIBRARY), where RAPL is read
// (ZEUS_POWERCAP_ROOT), where an SoC's files are looked for (ZEUS_SOC_ROOT),
// where processes are looked up (ZEUS_PROC_ROOT) and which GPUs are visible
// (CUDA_VISIBLE_DEVICES).
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

namespace zeus::device {

inline constexpr char kNvmlLibraryVariable[] = "ZEUS_NVML_LIBRARY";
inline constexpr char kPowercapRootVariable[] = "ZEUS_POWERCAP_ROOT";
inline constexpr char kCudaVisibleDevicesVariable[] = "CUDA_VISIBLE_DEVICES";
// The directory that stands for "/" when looking for an SoC (NVIDIA Jetson's
// /etc/nv_tegra_release and /sys/bus/i2c/drivers/ina3221x, ...): a fake tree
// in tests, a host's root mounted into a container.
inline constexpr char kSocRootVariable[] = "ZEUS_SOC_ROOT";

// Where procfs is read to name the processes on a GPU (process_identity.h):
// a fake tree in tests, the host's /proc mounted into an exporter's container.
inline constexpr char kProcRootVariable[] = "ZEUS_PROC_ROOT";
// Whether OpenGpus checks energy counters against power (counter_check.h).
inline constexpr char kEnergyCounterCheckVariable[] = "ZEUS_ENERGY_COUNTER_CHECK";
inline constexpr char kDefaultProcRoot[] = "/proc";
// The library name the system driver installs.
inline constexpr char kSystemNvmlLibrary[] = "libnvidia-ml.so.1";
// The kernel's powercap tree.
inline constexpr char kDefaultPowercapRoot[] = "/sys/class/powercap";
// The real file system's root.
inline constexpr char kDefaultSocRoot[] = "/";

// The NVML library a process loads, and how it was chosen.
struct NvmlLibraryChoice {
  // What to dlopen: a path or a library name.
  std::string path;
  // Who named it, for messages: "the configured NVML library" (the caller's
  // option), "ZEUS_NVML_LIBRARY", or "" for the system library.
  std::string origin;
  // Whether it was named (by the caller or $ZEUS_NVML_LIBRARY) rather than
  // being the system default. A named library must load: see
  // MayContinueWithoutGpus.
  bool named_explicitly = false;
};

// `configured` when it is set and not empty, else $ZEUS_NVML_LIBRARY when it
// is set and not empty, else kSystemNvmlLibrary.
NvmlLibraryChoice ChooseNvmlLibrary(const std::optional<std::string>& configured = std::nullopt);

// The rule for a command that has work to do without GPUs (CPUs to read, a
// listing to print) when opening the GPUs from `library` failed with
// `open_error`: it goes on without GPUs only when the library was not named
// explicitly and the system's is absent or did not initialise
// (kUnavailable: no NVIDIA driver). Any other failure, and every failure of a
// library that was named, is the command's error.
bool MayContinueWithoutGpus(const Error& open_error, const NvmlLibraryChoice& library);

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

// Unsets ZEUS_NVML_LIBRARY, ZEUS_POWERCAP_ROOT, ZEUS_SOC_ROOT and CUDA_VISIBLE_DEVICES, so
// that the caller's environment chooses nothing for a privileged daemon (and
// the processes it starts).
void ClearDeviceEnvironment();

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_ENVIRONMENT_H_
