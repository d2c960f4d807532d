/* Copyright 2026 The Zeus C++ Authors.
 *
 * The control functions that libzeus-nvml-emulator.so exports next to the
 * NVML API, and libzeus-amdsmi-emulator.so next to the AMD SMI API (each over
 * its own loaded scenario: "init" below is nvmlInit_v2 or amdsmi_init, and a
 * GPU index is the GPU's place in the scenario), for tests and tools that
 * drive the emulator. Plain C, so that it can be used from any language's FFI.
 *
 * Functions that return int return ZEUS_EMULATOR_OK (0) on success and one of
 * the other codes below otherwise. All are thread-safe.
 */

#ifndef ZEUS_EMULATOR_EMULATOR_CONTROL_H_
#define ZEUS_EMULATOR_EMULATOR_CONTROL_H_

#ifdef __cplusplus
extern "C" {
#endif

enum {
  ZEUS_EMULATOR_OK = 0,
  ZEUS_EMULATOR_ERROR_UNINITIALIZED = 1, /* no nvmlInit_v2 (amdsmi_init) in force */
  ZEUS_EMULATOR_ERROR_WRONG_MODE = 2,    /* e.g. advancing a wall clock */
  ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT = 3,
  ZEUS_EMULATOR_ERROR_STATE = 4, /* the shared state file could not be locked */
};

/* The message of the latest failed nvmlInit_v2 (amdsmi_init), e.g.
 * "scenario /x/y.json: gpus[1].max_power_limit_w: expected a number, got \"abc\"",
 * or "" if the latest nvmlInit_v2 succeeded or none failed yet. Never NULL.
 * The string stays valid until the next nvmlInit_v2 call. */
const char* zeusEmulatorLastError(void);

/* How many calls this process has made to the NVML function named `function`
 * (NULL or "*": all functions) on GPU `gpu` (-1: all GPUs, plus calls that
 * addressed no GPU) since the scenario was loaded, failed and faulted calls
 * included. 0 when not initialised or the name is unknown. */
unsigned long long zeusEmulatorCallCount(const char* function, int gpu);

/* Unblocks every call this process has blocked in a "hang" fault, and makes
 * hang rules stop blocking until the scenario is loaded again (the next
 * nvmlInit_v2 after the last nvmlShutdown; that shutdown releases hangs too).
 * ZEUS_EMULATOR_ERROR_UNINITIALIZED when not initialised. */
int zeusEmulatorReleaseHungCalls(void);

/* How many of this process's calls are blocked in a "hang" fault now; 0 when
 * not initialised. A test waits for this to reach 1 (a readiness signal)
 * before checking what the rest of the program does meanwhile. */
unsigned long long zeusEmulatorHungCalls(void);

/* Moves the emulated clock forward by `ns` nanoseconds, for every process that
 * shares the state file. Only with "clock": "manual". Returns
 * ZEUS_EMULATOR_ERROR_UNINITIALIZED, ZEUS_EMULATOR_ERROR_WRONG_MODE (wall
 * clock), ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT (time would overflow) or
 * ZEUS_EMULATOR_ERROR_STATE on failure. */
int zeusEmulatorAdvanceTimeNs(unsigned long long ns);

/* The path of the shared state file of the loaded scenario, or "" when not
 * initialised. Never NULL; valid until the next nvmlInit_v2 call. */
const char* zeusEmulatorStatePath(void);

/* Marks GPU `gpu` (-1: every GPU) idle (`idle` != 0: it draws its idle power,
 * the scenario's idle_power_w, capped by its limit) or busy (0: its demand, as
 * every GPU does until this is called) from the emulated time now on, for
 * every process that shares the state file. A test or demo calls it around
 * the pauses of its emulated work, so that a thermal model can cool down.
 * ZEUS_EMULATOR_ERROR_UNINITIALIZED, ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT (no
 * such GPU) or ZEUS_EMULATOR_ERROR_STATE on failure. */
int zeusEmulatorSetIdle(int gpu, int idle);

/* Sets *now_ns to the emulated time: nanoseconds since the state epoch. */
int zeusEmulatorNowNs(unsigned long long* now_ns);

/* Sets *seconds to the time one iteration of GPU `gpu`'s workload takes at the
 * power limit now in force (the scenario's workload.iteration_time_s,
 * interpolated like the power). ZEUS_EMULATOR_ERROR_WRONG_MODE if that GPU has
 * no workload with iteration times. */
int zeusEmulatorIterationTimeS(unsigned int gpu, double* seconds);

/* Processes on emulated GPUs, answered by nvmlDeviceGetComputeRunningProcesses_v3
 * and nvmlDeviceGetProcessUtilization next to the scenario's "processes", for
 * every process that shares the state file. */

/* Attaches the live process `pid` to GPU `gpu` at `sm_util_percent` (0..100)
 * SM utilization from the emulated time now on. While a GPU has processes
 * attached (and is not idle, zeusEmulatorSetIdle), its power follows their
 * summed utilization (README, "Processes"). Once `pid` has exited
 * (kill(pid, 0) fails with ESRCH) the emulator ends the attachment when it
 * next looks: at the next per-process NVML call or process control on that
 * GPU, in any process. ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT: no such GPU, a
 * percent over 100, no such process, already attached to that GPU, or the
 * GPU's table is full; ZEUS_EMULATOR_ERROR_WRONG_MODE: the GPU does not
 * support per-process calls ("unsupported": ["processes"]). */
int zeusEmulatorAttachProcess(unsigned int gpu, unsigned int pid, unsigned int sm_util_percent);

/* Changes the SM utilization of `pid`, attached to GPU `gpu`, from now on.
 * ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT if it is not attached there. */
int zeusEmulatorSetProcessUtilization(unsigned int gpu, unsigned int pid, unsigned int sm_util_percent);

/* Detaches `pid` from GPU `gpu` now (its samples so far stay readable while
 * the history keeps them). ZEUS_EMULATOR_ERROR_INVALID_ARGUMENT if it is not
 * attached there. */
int zeusEmulatorDetachProcess(unsigned int gpu, unsigned int pid);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZEUS_EMULATOR_EMULATOR_CONTROL_H_ */
