// Copyright 2026 The Zeus C++ Authors.
//
// The processes attached to emulated GPUs at run time, as both faces see
// them: each GPU's shared ProcessTable (shared_state.h), changed by the
// process controls (zeusEmulatorAttachProcess, zeusEmulatorSetProcessUtilization,
// zeusEmulatorDetachProcess; emulator_process_controls.cc) and read by NVML's
// per-process calls (nvml_emulator_processes.cc). Attachments change the
// GPU's process load in its limit history (RecordProcessLoadChange), so power
// and energy follow them in either face.

#ifndef ZEUS_EMULATOR_EMULATOR_PROCESSES_H_
#define ZEUS_EMULATOR_EMULATOR_PROCESSES_H_

#include <cstddef>
#include <cstdint>

#include "emulator_face.h"
#include "physics.h"
#include "shared_state.h"

namespace zeus::emulator {

// Whether process `pid` has exited (kill(pid, 0) fails with ESRCH).
bool ProcessExited(std::uint32_t pid);

// Whether an attachment is still open (not detached or ended).
inline bool IsOpen(const AttachedSegment& segment) { return segment.end_ns == kNeverNs; }

// Ends the open attachments of GPU `index`'s processes that have exited,
// under the locks, and records the resulting load. A ZEUS_EMULATOR_* code.
int EndExitedProcesses(Emulator& emulator, std::size_t index);

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_EMULATOR_PROCESSES_H_
