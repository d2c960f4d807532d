// Copyright 2026 The Zeus C++ Authors.
//
// The state that emulator processes share: a small file, memory-mapped by
// every process that loads the same scenario, so that a power limit set by one
// process is what another reads and its energy counter follows.
//
// File layout (fixed, native byte order; all fields fixed-width):
//   StateHeader                   magic, layout version, scenario content
//                                 hash, GPU count, size, epoch, manual time
//   GpuState[gpu_count]           per GPU: persistence, locked clocks, and
//                                 the power-limit history (physics.h)
//
// Opening: under an exclusive flock on the file, an existing file whose
// magic, layout version, scenario hash, GPU count and size match (and whose
// epoch is not in the future, i.e. not from before a reboot) is reused;
// anything else is (re)initialised from the scenario. Two processes that start
// together therefore never both initialise it.
//
// Every access afterwards runs under a process-local mutex plus an exclusive
// flock, and re-validates the header first: if another process re-initialised
// the file for a different scenario, this process re-initialises it back. (Do
// not point two different scenarios at one state file.) After fork(), the
// first access in the child reopens the file, so that parent and child hold
// separate flock descriptions and exclude each other.
//
// Thread-safety: all member functions may be called concurrently.

#ifndef ZEUS_EMULATOR_SHARED_STATE_H_
#define ZEUS_EMULATOR_SHARED_STATE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "physics.h"
#include "scenario.h"

namespace zeus::emulator {

inline constexpr char kStateMagic[8] = {'Z', 'E', 'U', 'S', 'E', 'M', 'U', '1'};
inline constexpr std::uint32_t kStateLayoutVersion = 1;
// The latest emulated instant: far beyond any run, with headroom so that no
// time arithmetic can overflow.
inline constexpr std::int64_t kMaxEmulatedNs = std::numeric_limits<std::int64_t>::max() / 2;

struct StateHeader {
  char magic[8];
  std::uint32_t layout_version;
  std::uint32_t gpu_count;
  std::uint64_t scenario_hash;      // Scenario::content_hash
  std::uint64_t file_size;          // bytes, header included
  std::int64_t epoch_monotonic_ns;  // CLOCK_MONOTONIC at creation = emulated time 0
  std::int64_t manual_time_ns;      // emulated time under the manual clock
  std::uint64_t reserved[4];
};

// A locked-clock setting; unlocked when locked == 0.
struct ClockLock {
  std::uint32_t locked;
  std::uint32_t min_mhz;
  std::uint32_t max_mhz;
  std::uint32_t reserved;
};

struct GpuState {
  std::uint32_t persistence_mode;  // 0 or 1
  std::uint32_t reserved;
  ClockLock graphics_lock;
  ClockLock memory_lock;
  LimitHistory limits;  // the current limit is CurrentLimitMw(limits)
};

static_assert(std::is_trivially_copyable_v<StateHeader> && std::is_standard_layout_v<StateHeader>);
static_assert(std::is_trivially_copyable_v<GpuState> && std::is_standard_layout_v<GpuState>);
static_assert(sizeof(StateHeader) % 8 == 0 && sizeof(GpuState) % 8 == 0);

// The state file's size for `gpu_count` GPUs.
std::size_t StateFileSize(std::size_t gpu_count);

// Access to the shared state while it is locked. Only valid inside
// SharedState::WithLock's callback.
class StateView {
 public:
  StateView(StateHeader* header, GpuState* gpus, std::int64_t now_ns) : header_(header), gpus_(gpus), now_ns_(now_ns) {}

  // Emulated time now, in ns since the epoch, read once when the lock was
  // taken (so all work under one lock sees one instant).
  std::int64_t now_ns() const { return now_ns_; }
  StateHeader& header() { return *header_; }
  GpuState& gpu(std::size_t index) { return gpus_[index]; }

 private:
  StateHeader* header_;
  GpuState* gpus_;
  std::int64_t now_ns_;
};

class SharedState {
 public:
  // Opens (creating or re-initialising as described above) the state file
  // scenario.state_file for `scenario`, which must outlive the SharedState.
  // Returns null and sets *error to a one-line message naming the file on
  // failure.
  static std::unique_ptr<SharedState> Open(const Scenario& scenario, std::string* error);

  ~SharedState();
  SharedState(const SharedState&) = delete;
  SharedState& operator=(const SharedState&) = delete;

  const std::string& path() const { return path_; }

  // Runs `fn(StateView&)` holding both locks. Returns false, without running
  // fn, if the file cannot be locked, reopened or re-validated.
  template <class Fn>
  bool WithLock(Fn&& fn) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!LockFile()) return false;
    struct Unlocker {
      SharedState* self;
      ~Unlocker() { self->UnlockFile(); }
    } unlocker{this};
    StateView view(header(), gpus(), EmulatedNowNs());
    fn(view);
    return true;
  }

  enum class AdvanceResult { kOk, kOverflow, kLockFailed };
  // Advances the manual clock by `delta_ns` (>= 0), unless the emulated time
  // would pass kMaxEmulatedNs.
  AdvanceResult AdvanceManualClock(std::int64_t delta_ns);

 private:
  explicit SharedState(const Scenario& scenario);

  bool OpenFile(std::string* error);
  void CloseFile();
  // Takes the flock, reopening after fork and re-validating the header. On
  // failure returns false and, if `error` is not null, describes why.
  bool LockFile(std::string* error = nullptr);
  void UnlockFile();
  // True if the mapped file currently holds this scenario's state.
  bool HeaderMatches() const;
  // Writes a fresh state for the scenario. The flock must be held and the file
  // must already have the right size.
  void Initialise();

  StateHeader* header() const;
  GpuState* gpus() const;
  std::int64_t EmulatedNowNs() const;

  const Scenario& scenario_;
  const std::string path_;
  const std::size_t size_;
  std::mutex mutex_;
  int fd_ = -1;
  void* map_ = nullptr;
  pid_t owner_pid_ = 0;  // the process that opened fd_
};

// CLOCK_MONOTONIC now, in ns.
std::int64_t MonotonicNowNs();

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_SHARED_STATE_H_
