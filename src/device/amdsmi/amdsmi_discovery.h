// Copyright 2026 The Zeus C++ Authors.
//
// Opening AMD GPUs through AMD SMI: the AMD half of OpenGpus (discovery.h).

#ifndef ZEUS_DEVICE_AMDSMI_AMDSMI_DISCOVERY_H_
#define ZEUS_DEVICE_AMDSMI_AMDSMI_DISCOVERY_H_

#include <memory>
#include <vector>

#include "device/amdsmi/amdsmi_gpu.h"
#include "zeus/device/discovery.h"

namespace zeus::device::amdsmi {

struct OpenedAmdGpus {
  std::unique_ptr<GpuSet> set;
  std::vector<AmdSmiGpu*> gpus;  // set->gpu(i), as its concrete type
};

// Loads AMD SMI (options.amdsmi_library), lists its GPUs in HIP order (by
// KFD node id, as HIP numbers them) and opens the visible ones
// (ChooseAmdVisibleDevices(options.cuda_visible_devices)). Each die of a
// dual-die MI250 whose power reads zero is marked NoPowerOfItsOwn, and a
// die that reports its board's power is named in one warning. The energy
// counter check is the caller's.
// Errors: those of AmdSmiLibrary::Load; kInvalidArgument for a malformed
// visible-devices setting; an AMD SMI error when the GPUs cannot be listed
// or ordered.
Result<OpenedAmdGpus> OpenAmdSmiGpus(const GpuOptions& options);

}  // namespace zeus::device::amdsmi

#endif  // ZEUS_DEVICE_AMDSMI_AMDSMI_DISCOVERY_H_
