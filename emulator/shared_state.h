// Copyright 2026 The Zeus C++ Authors.
//
// The state that emulator processes share: a small file, memory-mapped by
// every process that loads the same scenario, so that a power limit set by one
// process is what another reads and its energy counter follows.
//
// File layout (fixed, native byte order; all fields fixed-width, every field
// inside an aligned 64-bit word):
//   StateHeader                   magic, layout version, scenario content
//                                 hash, GPU count, size, epoch, manual time,
//                                 sequence counter
//   GpuState[gpu_count]           per GPU: persistence, locked clocks, and
//                                 the power-limit history (physics.h)
//   ProcessTable[gpu_count]       per GPU: the processes attached at run time
//                                 (zeusEmulatorAttachProcess), read and
//                                 written only under the locks
//
// Opening: the file is opened as state_file.h describes (never through a
// symbolic link, only a regular file of this user's or root's unless the
// scenario shares it between users; a default file in a private per-user
// directory). Then, under an exclusive flock on the file, an existing file
// whose magic, layout version, scenario hash, GPU count and size match (and
// whose epoch is not in the future, i.e. not from before a reboot, and that no
// writer left half-updated) is reused; anything else is (re)initialised from
// the scenario. Two processes that start together therefore never both
// initialise it. The file only ever grows (to the size this scenario needs),
// so no process can find its mapping cut short by another. Its size is fixed
// for a scenario: each GPU's limit history has a fixed capacity (physics.h),
// however many limits are set.
//
// Writing (setters, advancing the manual clock, (re)initialisation) runs under
// a process-local mutex plus an exclusive flock, and re-validates the header
// first: if another process re-initialised the file for a different scenario,
// this process re-initialises it back. (Do not point two different scenarios
// at one state file.) After fork(), the first write in the child reopens the
// file, so that parent and child hold separate flock descriptions and exclude
// each other; the mapping stays the same.
//
// Reading takes no lock and makes no system call (the wall clock is read
// through the vDSO): the header's sequence counter is a seqlock. A writer
// makes it odd, stores what changed, and makes it even again, all with atomic
// 64-bit stores; a reader copies what it needs with atomic 64-bit loads and
// retries if the counter was odd or changed meanwhile, so it always gets one
// consistent snapshot. The words are only ever accessed through
// std::atomic_ref<std::uint64_t>, which is lock-free and therefore works
// across processes. A reader that keeps meeting a writer, or that finds the
// header wrong for its scenario, falls back to the locked path (which waits
// for the writer, or repairs the file). A writer takes the emulated time only
// after making the counter odd, so a limit change is never recorded at an
// instant before one a reader has already computed an energy for: energy
// readings never go backwards. A reader copies only the part of a GPU's
// limit history that its reading needs (ReadGpu's look-back), so the cost of
// a reading does not grow with the history.
//
// Thread-safety: all member functions may be called concurrently.

#ifndef ZEUS_EMULATOR_SHARED_STATE_H_
#define ZEUS_EMULATOR_SHARED_STATE_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "physics.h"
#include "scenario.h"

namespace zeus::emulator {

inline constexpr char kStateMagic[8] = {'Z', 'E', 'U', 'S', 'E', 'M', 'U', '1'};
// 2: the sequence counter (seqlock) in the header.
// 3: each kept limit change carries the energy drawn before it (physics.h).
// 4: and its activity (idle or busy) and the temperature at its instant.
// 5: the per-GPU process tables after the GPUs.
inline constexpr std::uint32_t kStateLayoutVersion = 5;
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
  std::uint64_t sequence;           // seqlock: odd while a writer is updating
  std::uint64_t reserved[3];
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

// How many attachment records a GPU's ProcessTable holds: attached processes
// plus ended ones kept for the sample history (kProcessSampleHistoryNs).
inline constexpr std::size_t kMaxAttachedSegments = 64;

// One attachment of a process to a GPU at a constant SM utilization, over
// [start_ns, end_ns) on the emulated clock; end_ns is kNeverNs while it lasts.
// Changing the utilization ends one record and starts another.
struct AttachedSegment {
  std::uint32_t pid;
  std::uint32_t sm_util_percent;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

struct ProcessTable {
  std::uint32_t count;  // <= kMaxAttachedSegments, oldest first
  std::uint32_t reserved;
  std::array<AttachedSegment, kMaxAttachedSegments> segments;
};

static_assert(std::is_trivially_copyable_v<StateHeader> && std::is_standard_layout_v<StateHeader>);
static_assert(std::is_trivially_copyable_v<ProcessTable> && sizeof(ProcessTable) % 8 == 0);
static_assert(std::is_trivially_copyable_v<GpuState> && std::is_standard_layout_v<GpuState>);
static_assert(sizeof(StateHeader) % 8 == 0 && sizeof(GpuState) % 8 == 0);
static_assert(alignof(StateHeader) == 8 && alignof(GpuState) == 8);
static_assert(offsetof(StateHeader, epoch_monotonic_ns) == 32 && offsetof(StateHeader, sequence) == 48);
// The part of a GpuState before the kept limit changes, and one change, in
// whole words (readers copy only the changes they need).
static_assert(offsetof(GpuState, limits) + offsetof(LimitHistory, changes) == 104);
static_assert(sizeof(LimitChange) == 40 && offsetof(LimitChange, time_ns) == 0);
// Shared memory is accessed only through lock-free 64-bit atomics: they work
// between processes, where a lock-based atomic would not.
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint64_t>::required_alignment <= alignof(GpuState));

// The state file's size for `gpu_count` GPUs.
std::size_t StateFileSize(std::size_t gpu_count);

class SharedState {
 public:
  // Opens (creating or re-initialising as described above) the state file
  // scenario.state_file for `scenario`, which must outlive the SharedState.
  // Returns null and sets *error to a one-line message naming the file on
  // failure; *refused (if not null) is then true for a refusal for safety or
  // permissions (state_file.h).
  static std::unique_ptr<SharedState> Open(const Scenario& scenario, std::string* error, bool* refused = nullptr);

  ~SharedState();
  SharedState(const SharedState&) = delete;
  SharedState& operator=(const SharedState&) = delete;

  // The state file in use (the default one may be in a private directory).
  const std::string& path() const { return path_; }

  // Copies GPU `index`'s state into *gpu and sets *now_ns to the emulated
  // time, as one consistent snapshot. The limit history is copied only as far
  // as readings at instants >= *now_ns - lookback_ns need:
  // gpu->limits is what ForgetLimitChangesBefore(that instant) would leave of
  // the whole history (kept changes beyond gpu->limits.count are left
  // untouched), except that while the GPU's counter-reset energy is not yet
  // captured the cut is made no later than the reset time, so that
  // CounterEnergyAt stays exact. The work is proportional to the changes
  // copied, not to the history. Lock-free unless the file needs repair or a
  // writer holds it for long. Returns false if the locked fallback fails.
  // Requires index < the scenario's GPU count, lookback_ns >= 0.
  bool ReadGpu(std::size_t index, std::int64_t lookback_ns, GpuState* gpu, std::int64_t* now_ns);

  // The emulated time now, in ns since the epoch. As ReadGpu.
  bool ReadNow(std::int64_t* now_ns);

  // Runs `fn(GpuState& gpu, std::int64_t now_ns)` on a copy of GPU `index`'s
  // state (the kept limit changes beyond gpu.limits.count are indeterminate),
  // holding both locks, and publishes what fn changed. Returns false,
  // without running fn, if the file cannot be locked, reopened or
  // re-validated.
  template <class Fn>
  bool UpdateGpu(std::size_t index, Fn&& fn) {
    Locked locked(this);
    if (!locked.ok()) return false;
    WriteSection section(this);
    GpuState gpu;
    LoadGpuInUse(index, &gpu);
    fn(gpu, LockedNowNs());
    StoreGpu(index, gpu);
    return true;
  }

  // Copies GPU `index`'s process table into *table and sets *now_ns, under
  // the locks. Returns false if the file cannot be locked.
  bool ReadProcesses(std::size_t index, ProcessTable* table, std::int64_t* now_ns);

  // Runs `fn(GpuState& gpu, ProcessTable& table, std::int64_t now_ns)` on
  // copies of GPU `index`'s state and process table, holding both locks, and
  // publishes what fn changed in either. As UpdateGpu.
  template <class Fn>
  bool UpdateProcesses(std::size_t index, Fn&& fn) {
    Locked locked(this);
    if (!locked.ok()) return false;
    WriteSection section(this);
    GpuState gpu;
    LoadGpuInUse(index, &gpu);
    ProcessTable table;
    LoadProcessTable(index, &table);
    fn(gpu, table, LockedNowNs());
    StoreGpu(index, gpu);
    StoreProcessTable(index, table);
    return true;
  }

  enum class AdvanceResult { kOk, kOverflow, kLockFailed };
  // Advances the manual clock by `delta_ns` (>= 0), unless the emulated time
  // would pass kMaxEmulatedNs.
  AdvanceResult AdvanceManualClock(std::int64_t delta_ns);

 private:
  using Word = std::uint64_t;

  // Holds mutex_ and the flock (LockFile) while alive, if ok().
  class Locked {
   public:
    explicit Locked(SharedState* state, std::string* error = nullptr);
    ~Locked();
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;
    bool ok() const { return ok_; }

   private:
    SharedState* state_;
    std::lock_guard<std::mutex> guard_;
    bool ok_;
  };

  // Keeps the sequence counter odd while alive (a seqlock write). Requires
  // Locked.
  class WriteSection {
   public:
    explicit WriteSection(SharedState* state);
    ~WriteSection();
    WriteSection(const WriteSection&) = delete;
    WriteSection& operator=(const WriteSection&) = delete;

   private:
    SharedState* state_;
    Word odd_;
  };

  explicit SharedState(const Scenario& scenario);

  bool OpenFile(std::string* error, bool* refused);
  // Maps fd_; on failure closes it and returns false.
  bool MapFile(std::string* error);
  // Gives this process its own open file description after fork().
  bool ReopenAfterFork(std::string* error);
  void CloseFile();
  // Takes the flock, reopening after fork and re-validating the header (and
  // re-initialising if needed). On failure returns false and, if `error` is
  // not null, describes why.
  bool LockFile(std::string* error = nullptr);
  void UnlockFile();
  // True if the mapped file currently holds this scenario's state. The flock
  // must be held.
  bool HeaderMatches() const;
  // Writes a fresh state for the scenario. The flock must be held and the file
  // must already be big enough.
  void Initialise();

  // The lock-free snapshot: false if the header does not match this scenario
  // or the retries ran out. `gpu` may be null (time only).
  bool TryReadSnapshot(std::size_t index, std::int64_t lookback_ns, GpuState* gpu, std::int64_t* now_ns) const;
  // The same under the locks.
  bool LockedRead(std::size_t index, std::int64_t lookback_ns, GpuState* gpu, std::int64_t* now_ns);
  // Where ReadGpu cuts GPU `index`'s history (see there), given the copied
  // reset flag.
  std::int64_t CutNs(std::size_t index, std::int64_t since_ns, bool reset_captured) const;

  // Word access to the mapping (atomic; see above).
  Word* words() const { return words_.load(std::memory_order_acquire); }
  Word& SequenceWord() const;
  StateHeader LoadHeader() const;
  // A GPU's state with the kept changes in use (the rest of
  // gpu->limits.changes is left as it was).
  void LoadGpuInUse(std::size_t index, GpuState* gpu) const;
  // Stores the words of `gpu`, up to its kept changes in use, that differ
  // from the file's. Inside a WriteSection only.
  void StoreGpu(std::size_t index, const GpuState& gpu);
  void StoreHeader(const StateHeader& header);
  // GPU `index`'s process table (its count clamped to the capacity); storing
  // only inside a WriteSection.
  void LoadProcessTable(std::size_t index, ProcessTable* table) const;
  void StoreProcessTable(std::size_t index, const ProcessTable& table);

  // The emulated time for `header`, given CLOCK_MONOTONIC `monotonic_ns`.
  std::int64_t EmulatedNowNs(const StateHeader& header, std::int64_t monotonic_ns) const;
  // The emulated time now; the flock must be held.
  std::int64_t LockedNowNs() const;

  const Scenario& scenario_;
  std::string path_;  // set by OpenFile, then constant
  const std::size_t size_;
  std::mutex mutex_;  // orders this process's lockers; guards the members below
  int fd_ = -1;
  std::atomic<Word*> words_{nullptr};  // the mapping, size_ bytes
  // Mappings replaced after fork (if the file had been replaced meanwhile);
  // kept until destruction because lock-free readers may still be in them.
  std::vector<Word*> retired_maps_;
  pid_t owner_pid_ = 0;  // the process that opened fd_
};

// CLOCK_MONOTONIC now, in ns.
std::int64_t MonotonicNowNs();

}  // namespace zeus::emulator

#endif  // ZEUS_EMULATOR_SHARED_STATE_H_
