// Copyright 2026 The Zeus C++ Authors.
//
// The C entry points of libzeus-amdsmi-emulator.so: every function in
// amdsmi_api.def with AMD SMI's ABI (amdsmi_abi.h), plus the zeusEmulator*
// control functions (emulator_control.h), over the same core as the NVML
// face. Behaviour is documented in the top-level README ("The AMD SMI face").
//
// This file holds the handle objects (amdsmi_emulator_internal.h, which also
// lists the other files) and the entry points for initialisation, the
// library version, status strings, sockets and processors, and identity.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "amdsmi_emulator_internal.h"
#include "api_functions.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "emulator_face.h"
#include "return_codes.h"
#include "scenario.h"

namespace zeus::emulator::amd {
namespace {

template <class Object>
std::array<Object, kMaxScenarioGpus> NumberedObjects() {
  std::array<Object, kMaxScenarioGpus> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i].index = static_cast<int>(i);
  return all;
}

// amdsmi_get_lib_version's build string (static: the caller keeps the pointer).
constexpr const char* kBuild = "zeus-emulator";

// Copies `text` into `out` (capacity `size`, NUL included), cut to fit.
template <std::size_t N>
void CopyTruncated(const std::string& text, char (&out)[N]) {
  const std::size_t length = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), length);
  out[length] = '\0';
}

}  // namespace

std::array<ProcessorObject, kMaxScenarioGpus>& ProcessorObjects() {
  static std::array<ProcessorObject, kMaxScenarioGpus> objects = NumberedObjects<ProcessorObject>();
  return objects;
}

std::array<SocketObject, kMaxScenarioGpus>& SocketObjects() {
  static std::array<SocketObject, kMaxScenarioGpus> objects = NumberedObjects<SocketObject>();
  return objects;
}

}  // namespace zeus::emulator::amd

using zeus::emulator::ApiFunction;
using zeus::emulator::Emulator;
using zeus::emulator::GpuSpec;
using zeus::emulator::LoadFailure;

extern "C" {

// ---- Initialisation, version, status strings ---------------------------------------

amdsmi_status_t amdsmi_init(uint64_t init_flags) {
  try {
    const zeus::emulator::Face face{zeus::emulator::Vendor::kAmd, zeus::emulator::amd::kConfigEnvs};
    LoadFailure failure = LoadFailure::kNone;
    if (zeus::emulator::InitialiseFace(face, init_flags, &failure)) return AMDSMI_STATUS_SUCCESS;
    switch (failure) {
      case LoadFailure::kRefused:
        return AMDSMI_STATUS_NO_PERM;
      case LoadFailure::kWrongVendor:
        return AMDSMI_STATUS_DRIVER_NOT_LOADED;  // no amdgpu driver on an NVIDIA machine
      default:
        return AMDSMI_STATUS_INIT_ERROR;
    }
  } catch (...) {
    return AMDSMI_STATUS_INTERNAL_EXCEPTION;
  }
}

amdsmi_status_t amdsmi_shut_down(void) {
  try {
    return zeus::emulator::ShutdownFace() ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_NOT_INIT;
  } catch (...) {
    return AMDSMI_STATUS_INTERNAL_EXCEPTION;
  }
}

amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t* version) {
  return zeus::emulator::amd::SystemCall(ApiFunction::amdsmi_get_lib_version,
                                         [&](Emulator& emulator) -> amdsmi_status_t {
                                           if (version == nullptr) return AMDSMI_STATUS_INVAL;
                                           const zeus::emulator::AmdSmiVersion& v = emulator.scenario().amdsmi_version;
                                           *version = amdsmi_version_t{v.year, v.major, v.minor, v.release,
                                                                       zeus::emulator::amd::kBuild};
                                           return AMDSMI_STATUS_SUCCESS;
                                         });
}

// Works before amdsmi_init, like nvmlErrorString. A code AMD SMI does not
// define gets a text too, and AMDSMI_STATUS_UNKNOWN_ERROR (as AMD SMI does).
amdsmi_status_t amdsmi_status_code_to_string(amdsmi_status_t status, const char** status_string) {
  if (status_string == nullptr) return AMDSMI_STATUS_INVAL;
  if (const char* text = zeus::emulator::AmdSmiStatusText(status)) {
    *status_string = text;
    return AMDSMI_STATUS_SUCCESS;
  }
  *status_string = "unknown AMD SMI status code";
  return AMDSMI_STATUS_UNKNOWN_ERROR;
}

// ---- Sockets and processors -----------------------------------------------------------

// AMD SMI's count protocol (as the library implements it): no array: *count
// becomes the number of sockets; an array: up to *count handles are written
// and *count becomes how many were (no error when the array is too short).
amdsmi_status_t amdsmi_get_socket_handles(uint32_t* socket_count, amdsmi_socket_handle* socket_handles) {
  return zeus::emulator::amd::SystemCall(
      ApiFunction::amdsmi_get_socket_handles, [&](Emulator& emulator) -> amdsmi_status_t {
        if (socket_count == nullptr) return AMDSMI_STATUS_INVAL;
        const auto sockets = static_cast<uint32_t>(zeus::emulator::amd::VisibleGpus(emulator));
        if (socket_handles == nullptr) {
          *socket_count = sockets;
          return AMDSMI_STATUS_SUCCESS;
        }
        *socket_count = std::min(*socket_count, sockets);
        for (uint32_t i = 0; i < *socket_count; ++i) socket_handles[i] = &zeus::emulator::amd::SocketObjects()[i];
        return AMDSMI_STATUS_SUCCESS;
      });
}

// The same protocol; each socket holds one GPU. A fault rule naming this
// function with a "gpu" hits the calls on that GPU's socket.
amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle socket_handle, uint32_t* processor_count,
                                             amdsmi_processor_handle* processor_handles) {
  return zeus::emulator::amd::Dispatch(
      ApiFunction::amdsmi_get_processor_handles,
      [socket_handle](const Emulator& emulator) -> int {
        return zeus::emulator::amd::IndexOfSocket(emulator, socket_handle);
      },
      [&](Emulator&, int gpu) -> amdsmi_status_t {
        if (processor_count == nullptr || gpu < 0) return AMDSMI_STATUS_INVAL;
        if (processor_handles == nullptr) {
          *processor_count = 1;
          return AMDSMI_STATUS_SUCCESS;
        }
        *processor_count = std::min<uint32_t>(*processor_count, 1);
        if (*processor_count == 1) {
          processor_handles[0] = &zeus::emulator::amd::ProcessorObjects()[static_cast<std::size_t>(gpu)];
        }
        return AMDSMI_STATUS_SUCCESS;
      });
}

amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle processor_handle, processor_type_t* processor_type) {
  return zeus::emulator::amd::ProcessorCall(ApiFunction::amdsmi_get_processor_type, processor_handle,
                                            [&](Emulator&, const GpuSpec&, std::size_t) -> amdsmi_status_t {
                                              if (processor_type == nullptr) return AMDSMI_STATUS_INVAL;
                                              *processor_type = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
                                              return AMDSMI_STATUS_SUCCESS;
                                            });
}

// ---- Identity ---------------------------------------------------------------------------

amdsmi_status_t amdsmi_get_gpu_kfd_info(amdsmi_processor_handle processor_handle, amdsmi_kfd_info_t* info) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_gpu_kfd_info, processor_handle,
      [&](Emulator&, const GpuSpec& spec, std::size_t) -> amdsmi_status_t {
        if (info == nullptr) return AMDSMI_STATUS_INVAL;
        *info = amdsmi_kfd_info_t{};
        // The KFD's GPU id: a made-up, stable, non-zero 16-bit value.
        info->kfd_id = zeus::emulator::Fnv1a64("kfd:" + spec.uuid) % 0xFFFFu + 1;
        info->node_id = spec.kfd_node_id;
        info->current_partition_id = 0;  // SPX: the whole GPU is one partition
        return AMDSMI_STATUS_SUCCESS;
      });
}

// The market name is the scenario's name; numbers the scenario does not
// give are AMD SMI's "N/A" (all ones).
amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_processor_handle processor_handle, amdsmi_asic_info_t* info) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_gpu_asic_info, processor_handle,
      [&](Emulator&, const GpuSpec& spec, std::size_t) -> amdsmi_status_t {
        if (info == nullptr) return AMDSMI_STATUS_INVAL;
        *info = amdsmi_asic_info_t{};
        zeus::emulator::amd::CopyTruncated(spec.name, info->market_name);
        info->vendor_id = 0x1002;  // AMD's PCI vendor id
        zeus::emulator::amd::CopyTruncated("Advanced Micro Devices Inc.", info->vendor_name);
        info->subvendor_id = 0x1002;
        info->device_id = UINT64_MAX;
        info->rev_id = AMDSMI_NOT_AVAILABLE_U32;
        zeus::emulator::amd::CopyTruncated(fmt::format("{:016X}", zeus::emulator::Fnv1a64("serial:" + spec.uuid)),
                                           info->asic_serial);
        info->oam_id = AMDSMI_NOT_AVAILABLE_U32;
        info->num_of_compute_units = AMDSMI_NOT_AVAILABLE_U32;
        info->target_graphics_version = UINT64_MAX;
        return AMDSMI_STATUS_SUCCESS;
      });
}

// *uuid_length in: the buffer's size, which must be at least
// AMDSMI_GPU_UUID_SIZE (else AMDSMI_STATUS_INVAL, as AMD SMI); a buffer that
// cannot hold this UUID and its NUL gives AMDSMI_STATUS_INSUFFICIENT_SIZE with
// *uuid_length set to the size needed. Out: the UUID's length (without NUL).
amdsmi_status_t amdsmi_get_gpu_device_uuid(amdsmi_processor_handle processor_handle, unsigned int* uuid_length,
                                           char* uuid) {
  return zeus::emulator::amd::ProcessorCall(
      ApiFunction::amdsmi_get_gpu_device_uuid, processor_handle,
      [&](Emulator&, const GpuSpec& spec, std::size_t) -> amdsmi_status_t {
        if (uuid_length == nullptr || uuid == nullptr || *uuid_length < AMDSMI_GPU_UUID_SIZE) {
          return AMDSMI_STATUS_INVAL;
        }
        const auto needed = static_cast<unsigned int>(spec.uuid.size() + 1);
        if (*uuid_length < needed) {
          *uuid_length = needed;
          return AMDSMI_STATUS_INSUFFICIENT_SIZE;
        }
        std::memcpy(uuid, spec.uuid.c_str(), needed);
        *uuid_length = needed - 1;
        return AMDSMI_STATUS_SUCCESS;
      });
}

amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_processor_handle processor_handle, amdsmi_bdf_t* bdf) {
  return zeus::emulator::amd::ProcessorCall(ApiFunction::amdsmi_get_gpu_device_bdf, processor_handle,
                                            [&](Emulator&, const GpuSpec& spec, std::size_t) -> amdsmi_status_t {
                                              if (bdf == nullptr) return AMDSMI_STATUS_INVAL;
                                              // Function bits 0-2, device 3-7, bus 8-15, domain 16-63.
                                              bdf->as_uint = (uint64_t{spec.pci_domain} << 16) |
                                                             (uint64_t{spec.pci_bus} << 8) |
                                                             (uint64_t{spec.pci_device} << 3) | spec.pci_function;
                                              return AMDSMI_STATUS_SUCCESS;
                                            });
}

}  // extern "C"
