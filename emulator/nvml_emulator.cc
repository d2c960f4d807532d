// Copyright 2026 The Zeus C++ Authors.
//
// The C entry points of libzeus-nvml-emulator.so: every function in
// nvml_api.def with NVML's ABI, plus the zeusEmulator* control functions
// (emulator_control.h). Behaviour is documented in the top-level README.
//
// This file holds the handle objects (nvml_emulator_internal.h, which also
// lists the other files; the structure: emulator_face.h) and the entry points
// for initialisation, the system queries, enumeration and identity.

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "nvml_emulator_internal.h"
#include "return_codes.h"
#include "scenario.h"

namespace zeus::emulator {

std::array<nvmlDevice_st, kMaxScenarioGpus>& DeviceObjects() {
  static std::array<nvmlDevice_st, kMaxScenarioGpus> devices = [] {
    std::array<nvmlDevice_st, kMaxScenarioGpus> all{};
    for (std::size_t i = 0; i < all.size(); ++i) all[i].index = static_cast<int>(i);
    return all;
  }();
  return devices;
}

nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace zeus::emulator

using zeus::emulator::ApiFunction;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::LoadFailure;

extern "C" {

// ---- Initialisation ------------------------------------------------------------

nvmlReturn_t nvmlInit_v2(void) {
  try {
    static constexpr std::array<const char*, 1> kConfigEnvs = {zeus::emulator::kConfigEnv};
    const zeus::emulator::Face face{zeus::emulator::Vendor::kNvidia, kConfigEnvs};
    LoadFailure failure = LoadFailure::kNone;
    if (zeus::emulator::InitialiseFace(face, 0, &failure)) return NVML_SUCCESS;
    switch (failure) {
      case LoadFailure::kRefused:
        return NVML_ERROR_NO_PERMISSION;
      case LoadFailure::kWrongVendor:
        return NVML_ERROR_DRIVER_NOT_LOADED;  // no NVIDIA driver on an AMD machine
      default:
        return NVML_ERROR_UNKNOWN;
    }
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

nvmlReturn_t nvmlShutdown(void) {
  try {
    return zeus::emulator::ShutdownFace() ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
  } catch (...) {
    return NVML_ERROR_UNKNOWN;
  }
}

const char* nvmlErrorString(nvmlReturn_t result) { return zeus::emulator::ReturnCodeText(result); }

// ---- System -----------------------------------------------------------------------

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlSystemGetDriverVersion, [&](Emulator& emulator) -> nvmlReturn_t {
    return zeus::emulator::CopyString(emulator.scenario().driver_version, version, length);
  });
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlSystemGetNVMLVersion, [&](Emulator& emulator) -> nvmlReturn_t {
    return zeus::emulator::CopyString(emulator.scenario().nvml_version, version, length);
  });
}

// ---- Enumeration --------------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* device_count) {
  return zeus::emulator::SystemCall(ApiFunction::nvmlDeviceGetCount_v2, [&](Emulator& emulator) -> nvmlReturn_t {
    if (device_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *device_count = static_cast<unsigned int>(emulator.gpu_count());
    return NVML_SUCCESS;
  });
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return zeus::emulator::Dispatch(
      ApiFunction::nvmlDeviceGetHandleByIndex_v2,
      [index](const Emulator& emulator) -> int {
        return index < static_cast<unsigned int>(emulator.gpu_count()) ? static_cast<int>(index)
                                                                       : zeus::emulator::kUnknownDevice;
      },
      [&](Emulator&, int gpu) -> nvmlReturn_t {
        if (device == nullptr || gpu < 0) return NVML_ERROR_INVALID_ARGUMENT;
        *device = zeus::emulator::Handle(static_cast<std::size_t>(gpu));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return zeus::emulator::Dispatch(
      ApiFunction::nvmlDeviceGetHandleByUUID,
      [uuid](const Emulator& emulator) -> int {
        if (uuid == nullptr) return zeus::emulator::kUnknownDevice;
        const auto& gpus = emulator.scenario().gpus;
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          if (gpus[i].uuid == uuid) return static_cast<int>(i);
        }
        return zeus::emulator::kUnknownDevice;
      },
      [&](Emulator&, int gpu) -> nvmlReturn_t {
        if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        if (gpu < 0) return NVML_ERROR_NOT_FOUND;
        *device = zeus::emulator::Handle(static_cast<std::size_t>(gpu));
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetIndex, device,
                                    [&](Emulator&, const GpuSpec&, std::size_t gpu) -> nvmlReturn_t {
                                      if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      *index = static_cast<unsigned int>(gpu);
                                      return NVML_SUCCESS;
                                    });
}

// ---- Identity -----------------------------------------------------------------------

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetName, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      return zeus::emulator::CopyString(spec.name, name, length);
                                    });
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetUUID, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      return zeus::emulator::CopyString(spec.uuid, uuid, length);
                                    });
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return zeus::emulator::DeviceCall(
      ApiFunction::nvmlDeviceGetPciInfo_v3, device,
      [&](Emulator&, const GpuSpec& spec, std::size_t index) -> nvmlReturn_t {
        if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
        *pci = nvmlPciInfo_t{};
        std::memcpy(pci->busIdLegacy, spec.pci_bus_id_legacy.c_str(),
                    std::min(spec.pci_bus_id_legacy.size(), sizeof(pci->busIdLegacy) - 1));
        std::memcpy(pci->busId, spec.pci_bus_id.c_str(), std::min(spec.pci_bus_id.size(), sizeof(pci->busId) - 1));
        pci->domain = spec.pci_domain;
        pci->bus = spec.pci_bus;
        pci->device = spec.pci_device;
        // (device id << 16) | NVIDIA's vendor id; the device id is made up.
        pci->pciDeviceId = ((0x2000u + static_cast<unsigned int>(index)) << 16) | 0x10DEu;
        pci->pciSubSystemId = (0x1000u << 16) | 0x10DEu;
        return NVML_SUCCESS;
      });
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetArchitecture, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
                                      *arch = spec.architecture;
                                      return NVML_SUCCESS;
                                    });
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current_mode, unsigned int* pending_mode) {
  return zeus::emulator::DeviceCall(ApiFunction::nvmlDeviceGetMigMode, device,
                                    [&](Emulator&, const GpuSpec& spec, std::size_t) -> nvmlReturn_t {
                                      if (current_mode == nullptr || pending_mode == nullptr) {
                                        return NVML_ERROR_INVALID_ARGUMENT;
                                      }
                                      *current_mode = spec.mig ? 1u : 0u;
                                      *pending_mode = spec.mig ? 1u : 0u;
                                      return NVML_SUCCESS;
                                    });
}

}  // extern "C"
