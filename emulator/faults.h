// Copyright 2026 The Zeus C++ Authors.
//
// Fault injection and call counting. Every call to an emulated API function
// (NVML's after nvmlInit_v2, AMD SMI's after amdsmi_init) goes through
// FaultInjector::Decide, which counts it per (function, GPU) and decides
// whether a scenario fault rule makes it fail. Codes are the API's return
// codes as ints (an amdsmi_status_t's bits); 0 is success in both APIs.
//
// Counters are per process and per initialisation: they start at zero when a
// scenario is loaded and vanish when the last nvmlShutdown drops it.
//
// Rule semantics (first firing rule wins, in scenario order):
//   * A rule matches a call if its function matches (a named function, or
//     "*" = any device function: nvmlDevice*, or an AMD SMI function on a
//     processor handle) and its GPU matches: a rule without a GPU matches
//     every call; a rule with a GPU matches calls on that GPU, and, if it
//     names its function, calls of that function that address no GPU at all
//     (nvmlDeviceGetCount_v2, the nvmlSystem* functions,
//     amdsmi_get_socket_handles, amdsmi_get_lib_version). It never matches
//     calls with an unknown handle or on other GPUs. (So "*" with a GPU means
//     "this GPU is lost" without breaking nvmlDeviceGetCount_v2.)
//   * Each rule numbers its matching calls n = 0, 1, 2, ... The call fails if
//     n >= after_calls and U(seed, n) < probability, where U is a fixed hash
//     of (seed, n) onto [0, 1). Decisions therefore depend only on the seed
//     and the call's position, not on timing or threads.
//   * A rule with max_failures stops firing once it has failed that many
//     calls (e.g. after_calls 3, max_failures 1: only the 4th call fails).
//     Latency and hang rules count their firings the same way.
//   * A firing rule's action (FaultAction) is carried out by Perform: wait
//     the latency, block while it hangs, then fail or let the call proceed.
//     Hung calls block until ReleaseHungCalls; from then on hang rules no
//     longer block (a released hang stays released).
//
// Thread-safety: OnCall and CallCount may be called concurrently.

#ifndef ZEUS_EMULATOR_FAULTS_H_
#define ZEUS_EMULATOR_FAULTS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <memory>
#include <optional>
#include <vector>

#include "api_functions.h"
#include "device/nvml/nvml_abi.h"
#include "scenario.h"

namespace zeus::emulator {

// GPU designators for calls that do not address a valid GPU.
inline constexpr int kNoDevice = -1;       // the function takes no device
inline constexpr int kUnknownDevice = -2;  // a bad handle or index

// What a call must suffer: wait `latency_ns` (wall time), block if `hang`,
// then return `code` (0, success: do the call's work).
struct FaultAction {
  int code = 0;
  std::int64_t latency_ns = 0;
  bool hang = false;
};

class FaultInjector {
 public:
  // `gpu_count` is the number of GPUs calls may address (0..gpu_count-1).
  FaultInjector(std::vector<FaultSpec> rules, int gpu_count);

  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Counts a call to `function` addressing `gpu` (an index, kNoDevice or
  // kUnknownDevice) and returns the code it must fail with, or 0 (success).
  // Only the code: latency and hangs are ignored (for callers that do not
  // perform actions, and for tests of rule selection).
  int OnCall(ApiFunction function, int gpu) { return Decide(function, gpu).code; }

  // Counts the call and returns the action of the first firing rule (the
  // default action if none fires).
  FaultAction Decide(ApiFunction function, int gpu);

  // Carries out `action`'s latency and hang on the calling thread and returns
  // its code.
  int Perform(const FaultAction& action);

  // Unblocks every hung call, and makes later hangs return at once.
  void ReleaseHungCalls();
  // How many calls are blocked in a hang now.
  std::uint64_t HungCalls() const;

  // Calls counted so far to `function` (nullopt: all functions) on `gpu`;
  // gpu -1 sums all calls, including those that addressed no valid GPU.
  std::uint64_t CallCount(std::optional<ApiFunction> function, int gpu) const;

  // The fixed hash U(seed, n) onto [0, 1) that probabilistic rules use.
  static double Uniform(std::uint64_t seed, std::uint64_t n);

 private:
  struct Rule {
    FaultSpec spec;
    std::atomic<std::uint64_t> matched{0};
    std::atomic<std::uint64_t> failed{0};
  };

  std::size_t Slot(ApiFunction function, int gpu) const;

  std::vector<std::unique_ptr<Rule>> rules_;
  int gpu_count_;
  // [function][gpu 0..gpu_count-1, then one slot for calls without a GPU].
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;

  mutable std::mutex hang_mu_;
  std::condition_variable hang_cv_;
  bool hangs_released_ = false;  // guarded by hang_mu_
  std::uint64_t hung_calls_ = 0;  // guarded by hang_mu_
};

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_FAULTS_H_
