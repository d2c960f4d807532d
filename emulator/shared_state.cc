// Copyright 2026 The Zeus C++ Authors.

#include "shared_state.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "state_file.h"

namespace zeus::emulator {
namespace {

using Word = std::uint64_t;
constexpr std::size_t kWordBytes = sizeof(Word);
constexpr std::size_t kHeaderWords = sizeof(StateHeader) / kWordBytes;
constexpr std::size_t kGpuWords = sizeof(GpuState) / kWordBytes;
constexpr std::size_t kSequenceWord = offsetof(StateHeader, sequence) / kWordBytes;
// A GpuState's words before its kept limit changes, and per change.
constexpr std::size_t kGpuFixedWords = (offsetof(GpuState, limits) + offsetof(LimitHistory, changes)) / kWordBytes;
constexpr std::size_t kChangeWords = sizeof(LimitChange) / kWordBytes;

// How often a reader retries before falling back to the locked path (which
// waits for the writer instead of spinning).
constexpr int kReadAttempts = 256;

std::atomic_ref<Word> AtomicWord(Word& word) { return std::atomic_ref<Word>(word); }

// Copies `count` shared words into `out` (any trivially copyable object),
// with acquire loads: a reader that sees a value a writer stored also sees
// that writer's earlier odd sequence number (see TryReadSnapshot).
void LoadWords(Word* from, std::size_t count, void* out) {
  auto* bytes = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    const Word word = AtomicWord(from[i]).load(std::memory_order_acquire);
    std::memcpy(bytes + i * kWordBytes, &word, kWordBytes);
  }
}

// Stores the words of `in` that differ from the shared ones, with release
// stores. Only the (single) writer holding the locks calls this, so its
// relaxed loads see the current values.
void StoreWords(const void* in, std::size_t count, Word* to) {
  const auto* bytes = static_cast<const unsigned char*>(in);
  for (std::size_t i = 0; i < count; ++i) {
    Word word = 0;
    std::memcpy(&word, bytes + i * kWordBytes, kWordBytes);
    std::atomic_ref<Word> shared = AtomicWord(to[i]);
    if (shared.load(std::memory_order_relaxed) != word) shared.store(word, std::memory_order_release);
  }
}

// The words of GPU `index` in mapping `map`.
Word* GpuWords(Word* map, std::size_t index) { return map + kHeaderWords + index * kGpuWords; }

// The words of GPU `index`'s process table in mapping `map` of a file for
// `gpu_count` GPUs.
constexpr std::size_t kTableWords = sizeof(ProcessTable) / kWordBytes;
Word* TableWords(Word* map, std::size_t gpu_count, std::size_t index) {
  return map + kHeaderWords + gpu_count * kGpuWords + index * kTableWords;
}

// The kept changes in use that `gpu` (its fixed part loaded) claims, clamped:
// a torn count is caught by the reader's sequence check, and meanwhile the
// copy stays in bounds.
std::size_t ClampedCount(const GpuState& gpu) {
  return std::min<std::size_t>(gpu.limits.count, kLimitHistoryCapacity);
}

// GPU `index`'s state from mapping `map`, but only the kept limit changes in
// use (the rest of gpu->limits.changes is left as it was).
void LoadGpuInUseFrom(Word* map, std::size_t index, GpuState* gpu) {
  Word* from = GpuWords(map, index);
  LoadWords(from, kGpuFixedWords, gpu);
  LoadWords(from + kGpuFixedWords, ClampedCount(*gpu) * kChangeWords, gpu->limits.changes.data());
}

// GPU `index`'s state from mapping `map` with its limit history cut at
// `cut_ns(reset_captured)`: the last kept change at or before that instant
// becomes the base, and only the later ones are copied (see
// SharedState::ReadGpu). Work: the changes after the cut. Returns false if
// the stored count is out of range (the caller's sequence check or the header
// check decides what that means).
template <class CutNs>
bool LoadGpuCutFrom(Word* map, std::size_t index, CutNs cut_ns, GpuState* gpu) {
  Word* from = GpuWords(map, index);
  LoadWords(from, kGpuFixedWords, gpu);
  const bool count_ok = gpu->limits.count <= kLimitHistoryCapacity;
  const std::size_t count = ClampedCount(*gpu);
  const std::int64_t cut = cut_ns(gpu->limits.reset_captured != 0);
  Word* changes = from + kGpuFixedWords;
  // Past the last change at or before the cut, found from the newest.
  std::size_t first = count;
  while (first > 0) {
    const Word time = AtomicWord(changes[(first - 1) * kChangeWords]).load(std::memory_order_acquire);
    if (std::bit_cast<std::int64_t>(time) <= cut) break;
    --first;
  }
  if (first > 0) LoadWords(changes + (first - 1) * kChangeWords, kChangeWords, &gpu->limits.base);
  LoadWords(changes + first * kChangeWords, (count - first) * kChangeWords, gpu->limits.changes.data());
  gpu->limits.count = static_cast<std::uint32_t>(count - first);
  return count_ok;
}

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

std::int64_t MonotonicNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * kNsPerSecond + now.tv_nsec;
}

std::size_t StateFileSize(std::size_t gpu_count) {
  return sizeof(StateHeader) + gpu_count * (sizeof(GpuState) + sizeof(ProcessTable));
}

SharedState::SharedState(const Scenario& scenario)
    : scenario_(scenario), path_(scenario.state_file), size_(StateFileSize(scenario.gpus.size())) {}

SharedState::~SharedState() { CloseFile(); }

std::unique_ptr<SharedState> SharedState::Open(const Scenario& scenario, std::string* error, bool* refused) {
  std::unique_ptr<SharedState> state(new SharedState(scenario));
  bool was_refused = false;
  const bool opened = state->OpenFile(error, &was_refused);
  if (refused != nullptr) *refused = was_refused;
  if (!opened) return nullptr;
  {
    Locked locked(state.get(), error);
    if (!locked.ok()) return nullptr;
  }
  return state;
}

// ---- Files and locks --------------------------------------------------------------------

bool SharedState::OpenFile(std::string* error, bool* refused) {
  StateFileError problem;
  fd_ = OpenStateFile(scenario_, &path_, &problem);
  if (fd_ < 0) {
    if (error != nullptr) *error = problem.message;
    *refused = problem.refused;
    return false;
  }
  owner_pid_ = ::getpid();
  return MapFile(error);
}

bool SharedState::MapFile(std::string* error) {
  void* map = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (map == MAP_FAILED) {
    if (error != nullptr) *error = fmt::format("state file {}: cannot map: {}", path_, std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  words_.store(static_cast<Word*>(map), std::memory_order_release);
  return true;
}

bool SharedState::ReopenAfterFork(std::string* error) {
  // A new open file description of the very file we have mapped (so the
  // mapping stays right, and lock-free readers in other threads keep using
  // it); the path only if /proc is unavailable.
  // (That file passed OpenStateFile's checks; the path passes them again.)
  const std::string self = fmt::format("/proc/self/fd/{}", fd_);
  int fd = ::open(self.c_str(), O_RDWR | O_CLOEXEC);
  bool same_file = fd >= 0;
  if (fd < 0) {
    StateFileError problem;
    fd = ReopenStateFile(path_, scenario_.state_file_shared, &problem);
    if (fd < 0) {
      if (error != nullptr) *error = problem.message;
      return false;
    }
  }
  if (!same_file) {
    struct stat old_info {};
    struct stat new_info {};
    same_file = ::fstat(fd_, &old_info) == 0 && ::fstat(fd, &new_info) == 0 && old_info.st_dev == new_info.st_dev &&
                old_info.st_ino == new_info.st_ino;
  }
  ::close(fd_);
  fd_ = fd;
  owner_pid_ = ::getpid();
  if (same_file) return true;
  // The path names another file now: map that one, keeping the old mapping
  // alive for readers still in it.
  retired_maps_.push_back(words());
  return MapFile(error);
}

void SharedState::CloseFile() {
  if (Word* map = words(); map != nullptr) ::munmap(map, size_);
  for (Word* map : retired_maps_) ::munmap(map, size_);
  retired_maps_.clear();
  if (fd_ >= 0) ::close(fd_);
  words_.store(nullptr, std::memory_order_release);
  fd_ = -1;
}

bool SharedState::LockFile(std::string* error) {
  auto fail = [&](std::string_view what) {
    if (error != nullptr) *error = fmt::format("state file {}: {}: {}", path_, what, std::strerror(errno));
    return false;
  };
  // We are a forked child: get our own open file description, so that our
  // flock excludes the parent's.
  if (owner_pid_ != ::getpid() && !ReopenAfterFork(error)) return false;
  if (fd_ < 0) return fail("not open");
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return fail("cannot lock");
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int saved = errno;
    UnlockFile();
    errno = saved;
    return fail("cannot stat");
  }
  if (static_cast<std::size_t>(info.st_size) < size_) {
    // Only ever grow the file: another process may be reading the part we do
    // not need (if it has a different scenario, which it should not).
    if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      const int saved = errno;
      UnlockFile();
      errno = saved;
      return fail("cannot resize");
    }
    Initialise();
  } else if (!HeaderMatches()) {
    Initialise();
  }
  return true;
}

void SharedState::UnlockFile() {
  if (fd_ >= 0) ::flock(fd_, LOCK_UN);
}

SharedState::Locked::Locked(SharedState* state, std::string* error)
    : state_(state), guard_(state->mutex_), ok_(state->LockFile(error)) {}

SharedState::Locked::~Locked() {
  if (ok_) state_->UnlockFile();
}

SharedState::WriteSection::WriteSection(SharedState* state) : state_(state) {
  std::atomic_ref<Word> sequence = AtomicWord(state_->SequenceWord());
  // Normally even; odd only in a fresh (garbage) file, which Initialise
  // then overwrites.
  odd_ = sequence.load(std::memory_order_relaxed) | 1;
  // Sequentially consistent (a full barrier): the odd value is visible to
  // every reader before this writer reads the clock, so no reader that missed
  // this update can have computed with a later time than the writer records.
  sequence.exchange(odd_, std::memory_order_seq_cst);
}

SharedState::WriteSection::~WriteSection() {
  AtomicWord(state_->SequenceWord()).store(odd_ + 1, std::memory_order_release);
}

// ---- Word access --------------------------------------------------------------------------

SharedState::Word& SharedState::SequenceWord() const { return words()[kSequenceWord]; }

StateHeader SharedState::LoadHeader() const {
  StateHeader header;
  LoadWords(words(), kHeaderWords, &header);
  return header;
}

void SharedState::StoreHeader(const StateHeader& header) {
  // Never the sequence word: WriteSection owns it.
  StateHeader merged = header;
  merged.sequence = AtomicWord(SequenceWord()).load(std::memory_order_relaxed);
  StoreWords(&merged, kHeaderWords, words());
}

void SharedState::LoadGpuInUse(std::size_t index, GpuState* gpu) const { LoadGpuInUseFrom(words(), index, gpu); }

void SharedState::StoreGpu(std::size_t index, const GpuState& gpu) {
  // Only the changes in use: those beyond are never read.
  StoreWords(&gpu, kGpuFixedWords + ClampedCount(gpu) * kChangeWords, GpuWords(words(), index));
}

void SharedState::LoadProcessTable(std::size_t index, ProcessTable* table) const {
  LoadWords(TableWords(words(), scenario_.gpus.size(), index), kTableWords, table);
  table->count = std::min<std::uint32_t>(table->count, kMaxAttachedSegments);
}

void SharedState::StoreProcessTable(std::size_t index, const ProcessTable& table) {
  StoreWords(&table, kTableWords, TableWords(words(), scenario_.gpus.size(), index));
}

bool SharedState::ReadProcesses(std::size_t index, ProcessTable* table, std::int64_t* now_ns) {
  Locked locked(this);
  if (!locked.ok()) return false;
  LoadProcessTable(index, table);
  *now_ns = LockedNowNs();
  return true;
}

// ---- Validation and initialisation ------------------------------------------------------

bool SharedState::HeaderMatches() const {
  const StateHeader h = LoadHeader();
  if (std::memcmp(h.magic, kStateMagic, sizeof(kStateMagic)) != 0) return false;
  if (h.layout_version != kStateLayoutVersion || h.gpu_count != scenario_.gpus.size() ||
      h.scenario_hash != scenario_.content_hash || h.file_size != size_) {
    return false;
  }
  // Odd under the flock: a writer died half-way through an update.
  if (h.sequence % 2 != 0) return false;
  // An epoch in the future means the file outlived a reboot.
  if (scenario_.clock == ClockMode::kWall && h.epoch_monotonic_ns > MonotonicNowNs()) return false;
  if (h.manual_time_ns < 0 || h.epoch_monotonic_ns < 0) return false;
  for (std::size_t i = 0; i < scenario_.gpus.size(); ++i) {
    GpuState gpu;
    LoadWords(GpuWords(words(), i), kGpuFixedWords, &gpu);
    if (gpu.limits.count > kLimitHistoryCapacity) return false;
    ProcessTable table;
    LoadWords(TableWords(words(), scenario_.gpus.size(), i), kTableWords, &table);
    if (table.count > kMaxAttachedSegments) return false;
  }
  return true;
}

void SharedState::Initialise() {
  WriteSection section(this);
  StateHeader h{};
  h.layout_version = kStateLayoutVersion;
  h.gpu_count = static_cast<std::uint32_t>(scenario_.gpus.size());
  h.scenario_hash = scenario_.content_hash;
  h.file_size = size_;
  h.epoch_monotonic_ns = MonotonicNowNs();
  h.manual_time_ns = 0;
  // The magic last (a process that dies half-way leaves an invalid file, and
  // an odd sequence number besides).
  StoreHeader(h);
  for (std::size_t i = 0; i < scenario_.gpus.size(); ++i) {
    const GpuSpec& spec = scenario_.gpus[i];
    GpuState gpu{};
    gpu.persistence_mode = spec.persistence_mode ? 1 : 0;
    InitLimitHistory(&gpu.limits, spec.initial_limit_mw,
                     spec.power.thermal() ? spec.power.thermal()->ambient_c : 0.0);
    StoreGpu(i, gpu);
    StoreProcessTable(i, ProcessTable{});
  }
  std::memcpy(h.magic, kStateMagic, sizeof(kStateMagic));
  StoreHeader(h);
}

// ---- Time ----------------------------------------------------------------------------------

std::int64_t SharedState::EmulatedNowNs(const StateHeader& header, std::int64_t monotonic_ns) const {
  if (scenario_.clock == ClockMode::kManual) return header.manual_time_ns;
  const std::int64_t elapsed_ns = monotonic_ns - header.epoch_monotonic_ns;
  if (elapsed_ns <= 0) return 0;
  if (scenario_.time_scale == 1.0) return elapsed_ns;
  const double scaled = static_cast<double>(elapsed_ns) * scenario_.time_scale;
  if (scaled >= static_cast<double>(kMaxEmulatedNs)) return kMaxEmulatedNs;
  return std::llround(scaled);
}

std::int64_t SharedState::LockedNowNs() const {
  const bool wall = scenario_.clock == ClockMode::kWall;
  return EmulatedNowNs(LoadHeader(), wall ? MonotonicNowNs() : 0);
}

// ---- Reading ------------------------------------------------------------------------------

std::int64_t SharedState::CutNs(std::size_t index, std::int64_t since_ns, bool reset_captured) const {
  const std::optional<std::int64_t>& reset_ns = scenario_.gpus[index].counter_reset_ns;
  return reset_ns && !reset_captured ? std::min(since_ns, *reset_ns) : since_ns;
}

bool SharedState::TryReadSnapshot(std::size_t index, std::int64_t lookback_ns, GpuState* gpu,
                                  std::int64_t* now_ns) const {
  const bool wall = scenario_.clock == ClockMode::kWall;
  Word* const map = words();
  std::atomic_ref<Word> sequence = AtomicWord(map[kSequenceWord]);
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const Word before = sequence.load(std::memory_order_acquire);
    if (before % 2 != 0) {  // a writer is at work
      CpuRelax();
      continue;
    }
    // The clock is read after `before`: if the sequence is unchanged below,
    // any writer that follows reads its clock later (see WriteSection).
    const std::int64_t monotonic_ns = wall ? MonotonicNowNs() : 0;
    StateHeader header;
    LoadWords(map, kHeaderWords, &header);
    // Is it this scenario's state? (HeaderMatches, without system calls;
    // anything wrong goes to the locked path, which repairs it.) The time is
    // needed to know how much history to copy; a torn header is caught below.
    const bool header_ok = std::memcmp(header.magic, kStateMagic, sizeof(kStateMagic)) == 0 &&
                           header.layout_version == kStateLayoutVersion &&
                           header.gpu_count == scenario_.gpus.size() &&
                           header.scenario_hash == scenario_.content_hash && header.file_size == size_ &&
                           header.manual_time_ns >= 0 && header.epoch_monotonic_ns >= 0 &&
                           !(wall && header.epoch_monotonic_ns > monotonic_ns);
    const std::int64_t now = header_ok ? EmulatedNowNs(header, monotonic_ns) : 0;
    bool gpu_ok = true;
    if (gpu != nullptr) {
      gpu_ok = LoadGpuCutFrom(
          map, index, [&](bool reset_captured) { return CutNs(index, now - lookback_ns, reset_captured); }, gpu);
    }
    // Not reordered before the acquire loads above.
    if (sequence.load(std::memory_order_relaxed) != before) continue;
    // A consistent snapshot.
    if (!header_ok || !gpu_ok) return false;
    *now_ns = now;
    return true;
  }
  return false;
}

bool SharedState::LockedRead(std::size_t index, std::int64_t lookback_ns, GpuState* gpu, std::int64_t* now_ns) {
  Locked locked(this);
  if (!locked.ok()) return false;
  // No writer can be at work: other processes' writers hold the flock, ours
  // mutex_ too. The header matches (LockFile), so the count is in range.
  const std::int64_t now = LockedNowNs();
  if (gpu != nullptr) {
    (void)LoadGpuCutFrom(
        words(), index, [&](bool reset_captured) { return CutNs(index, now - lookback_ns, reset_captured); }, gpu);
  }
  *now_ns = now;
  return true;
}

bool SharedState::ReadGpu(std::size_t index, std::int64_t lookback_ns, GpuState* gpu, std::int64_t* now_ns) {
  return TryReadSnapshot(index, lookback_ns, gpu, now_ns) || LockedRead(index, lookback_ns, gpu, now_ns);
}

bool SharedState::ReadNow(std::int64_t* now_ns) {
  return TryReadSnapshot(0, 0, nullptr, now_ns) || LockedRead(0, 0, nullptr, now_ns);
}

// ---- Writing ------------------------------------------------------------------------------

SharedState::AdvanceResult SharedState::AdvanceManualClock(std::int64_t delta_ns) {
  Locked locked(this);
  if (!locked.ok()) return AdvanceResult::kLockFailed;
  StateHeader header = LoadHeader();
  if (delta_ns < 0 || header.manual_time_ns > kMaxEmulatedNs - delta_ns) return AdvanceResult::kOverflow;
  WriteSection section(this);
  header.manual_time_ns += delta_ns;
  StoreHeader(header);
  return AdvanceResult::kOk;
}

}  // namespace zeus::emulator
