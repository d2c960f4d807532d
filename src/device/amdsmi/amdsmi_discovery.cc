// Copyright 2026 The Zeus C++ Authors.

#include "device/amdsmi/amdsmi_discovery.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "device/amdsmi/amdsmi_error.h"
#include "device/visible_devices.h"
#include "zeus/base/log.h"
#include "zeus/device/environment.h"

namespace zeus::device::amdsmi {
namespace {

// AMD SMI's two-call protocol: the count with a null array, then the array.
Result<std::vector<void*>> ListHandles(const AmdSmiLibrary& library, std::string_view what,
                                       const std::function<amdsmi_status_t(std::uint32_t*, void**)>& list) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::uint32_t count = 0;
    if (amdsmi_status_t rc = list(&count, nullptr); rc != AMDSMI_STATUS_SUCCESS) {
      return Fail(AmdSmiError(rc, fmt::format("counting {}", what), AmdSmiOperation::kQuery));
    }
    std::vector<void*> handles(count);
    std::uint32_t filled = count;
    amdsmi_status_t rc = count == 0 ? AMDSMI_STATUS_SUCCESS : list(&filled, handles.data());
    if (rc == AMDSMI_STATUS_SUCCESS) {
      handles.resize(std::min(filled, count));
      return handles;
    }
    if (rc != AMDSMI_STATUS_INSUFFICIENT_SIZE) {
      return Fail(AmdSmiError(rc, fmt::format("listing {}", what), AmdSmiOperation::kQuery));
    }
  }
  (void)library;
  return Fail(ErrorCode::kUnavailable, fmt::format("listing {}: the list kept changing", what));
}

struct Found {
  amdsmi_processor_handle handle;
  std::uint32_t node_id;
  std::string uuid;
};

}  // namespace

Result<OpenedAmdGpus> OpenAmdSmiGpus(const GpuOptions& options) {
  auto library = AmdSmiLibrary::Load(options.amdsmi_library);
  if (!library) return Fail(library.error());
  const AmdSmiLibrary& lib = **library;
  const AmdSmiApi& api = lib.api();

  auto sockets = ListHandles(lib, "AMD SMI sockets", [&](std::uint32_t* count, void** handles) {
    return lib.Call(api.amdsmi_get_socket_handles, count, handles);
  });
  if (!sockets) return Fail(sockets.error());
  std::vector<Found> found;
  for (void* socket : *sockets) {
    auto processors = ListHandles(lib, "the processors of an AMD SMI socket", [&](std::uint32_t* count, void** handles) {
      return lib.Call(api.amdsmi_get_processor_handles, socket, count, handles);
    });
    if (!processors) return Fail(processors.error());
    for (void* processor : *processors) {
      processor_type_t type = AMDSMI_PROCESSOR_TYPE_UNKNOWN;
      if (lib.Call(api.amdsmi_get_processor_type, processor, &type) != AMDSMI_STATUS_SUCCESS ||
          type != AMDSMI_PROCESSOR_TYPE_AMD_GPU) {
        continue;
      }
      amdsmi_kfd_info_t kfd{};
      if (amdsmi_status_t rc = lib.Call(api.amdsmi_get_gpu_kfd_info, processor, &kfd); rc != AMDSMI_STATUS_SUCCESS) {
        return Fail(AmdSmiError(rc,
                                fmt::format("reading the KFD node of AMD GPU {} (HIP numbers GPUs by it; {} is "
                                            "needed)",
                                            found.size(), "ROCm 6.3 or newer"),
                                AmdSmiOperation::kQuery));
      }
      if (kfd.node_id == AMDSMI_NOT_AVAILABLE_U32) {
        return Fail(ErrorCode::kFailedPrecondition,
                    fmt::format("AMD GPU {} has no KFD node id, so its HIP index is unknown; ROCm 6.3 or newer "
                                "is needed",
                                found.size()));
      }
      char uuid[AMDSMI_GPU_UUID_SIZE + 1] = {};
      unsigned int length = AMDSMI_GPU_UUID_SIZE;
      // A GPU without a UUID can still be chosen by index.
      if (lib.Call(api.amdsmi_get_gpu_device_uuid, processor, &length, uuid) != AMDSMI_STATUS_SUCCESS) uuid[0] = '\0';
      found.push_back({processor, kfd.node_id, uuid});
    }
  }
  // HIP's order: by KFD node id.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.node_id < b.node_id; });
  std::vector<std::string> uuids;
  for (const Found& gpu : found) uuids.push_back(gpu.uuid);

  const AmdVisibleDevices choice = ChooseAmdVisibleDevices(options.cuda_visible_devices);
  auto visible = ResolveAmdVisibleDevices(choice.rocr, choice.hip, choice.hip_origin, uuids);
  if (!visible) return Fail(visible.error());

  OpenedAmdGpus opened;
  std::vector<std::unique_ptr<Gpu>> gpus;
  for (std::size_t i = 0; i < visible->size(); ++i) {
    const unsigned int hip_index = (*visible)[i];
    const std::string label = uuids[hip_index].empty() ? fmt::format("GPU {}", i)
                                                       : fmt::format("GPU {} ({})", i, uuids[hip_index]);
    auto gpu = std::make_unique<AmdSmiGpu>(*library, found[hip_index].handle, hip_index, label);
    // A dual-die MI250: one die reports the board's power, the other none.
    if (auto name = gpu->Name(); name && name->find("MI250") != std::string::npos) {
      auto power = gpu->PowerUsageMw();
      auto instant = gpu->InstantPowerMw();
      const bool silent = (!power || *power == 0) && (!instant || *instant == 0);
      if (silent) {
        gpu->NoPowerOfItsOwn(fmt::format(
            "this die of a dual-die MI250 reports no power of its own; the other die of its board (HIP index {}) "
            "reports the power and energy of both",
            hip_index ^ 1u));
      } else {
        LogOnce(fmt::format("amd-mi250-board-power:{}", hip_index),
                {.level = LogLevel::kWarning,
                 .component = "device",
                 .message = fmt::format("GPU {} is one die of a dual-die MI250: its power and energy cover both dies "
                                        "of its board (HIP indices {} and {})",
                                        i, hip_index & ~1u, hip_index | 1u)});
      }
    }
    opened.gpus.push_back(gpu.get());
    gpus.push_back(std::move(gpu));
  }
  std::shared_ptr<const Clock> driver_clock;
  if (const Clock* clock = lib.emulator_clock(); clock != nullptr) {
    driver_clock = std::shared_ptr<const Clock>(*library, clock);
  }
  opened.set = std::make_unique<GpuSet>(lib.version(), std::move(gpus),
                                        std::move(driver_clock), GpuVendor::kAmd);
  return opened;
}

}  // namespace zeus::device::amdsmi
