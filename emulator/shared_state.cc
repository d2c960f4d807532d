// Copyright 2026 The Zeus C++ Authors.

#include "shared_state.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

namespace zeus::emulator {

std::int64_t MonotonicNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * kNsPerSecond + now.tv_nsec;
}

std::size_t StateFileSize(std::size_t gpu_count) { return sizeof(StateHeader) + gpu_count * sizeof(GpuState); }

SharedState::SharedState(const Scenario& scenario)
    : scenario_(scenario), path_(scenario.state_file), size_(StateFileSize(scenario.gpus.size())) {}

SharedState::~SharedState() { CloseFile(); }

std::unique_ptr<SharedState> SharedState::Open(const Scenario& scenario, std::string* error) {
  std::unique_ptr<SharedState> state(new SharedState(scenario));
  if (!state->OpenFile(error)) return nullptr;
  std::lock_guard<std::mutex> guard(state->mutex_);
  if (!state->LockFile(error)) return nullptr;
  state->UnlockFile();
  return state;
}

bool SharedState::OpenFile(std::string* error) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    if (error != nullptr) *error = fmt::format("state file {}: cannot open: {}", path_, std::strerror(errno));
    return false;
  }
  map_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (map_ == MAP_FAILED) {
    if (error != nullptr) *error = fmt::format("state file {}: cannot map: {}", path_, std::strerror(errno));
    map_ = nullptr;
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  owner_pid_ = ::getpid();
  return true;
}

void SharedState::CloseFile() {
  if (map_ != nullptr) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
  map_ = nullptr;
  fd_ = -1;
}

bool SharedState::LockFile(std::string* error) {
  auto fail = [&](std::string_view what) {
    if (error != nullptr) *error = fmt::format("state file {}: {}: {}", path_, what, std::strerror(errno));
    return false;
  };
  if (owner_pid_ != ::getpid()) {
    // We are a forked child: get our own open file description, so that our
    // flock excludes the parent's.
    CloseFile();
    if (!OpenFile(error)) return false;
  }
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
  if (static_cast<std::size_t>(info.st_size) != size_) {
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

StateHeader* SharedState::header() const { return static_cast<StateHeader*>(map_); }

GpuState* SharedState::gpus() const {
  return static_cast<GpuState*>(static_cast<void*>(static_cast<char*>(map_) + sizeof(StateHeader)));
}

bool SharedState::HeaderMatches() const {
  const StateHeader& h = *header();
  if (std::memcmp(h.magic, kStateMagic, sizeof(kStateMagic)) != 0) return false;
  if (h.layout_version != kStateLayoutVersion || h.gpu_count != scenario_.gpus.size() ||
      h.scenario_hash != scenario_.content_hash || h.file_size != size_) {
    return false;
  }
  // An epoch in the future means the file outlived a reboot.
  if (scenario_.clock == ClockMode::kWall && h.epoch_monotonic_ns > MonotonicNowNs()) return false;
  if (h.manual_time_ns < 0) return false;
  for (std::size_t i = 0; i < scenario_.gpus.size(); ++i) {
    if (gpus()[i].limits.count > kLimitHistoryCapacity) return false;
  }
  return true;
}

void SharedState::Initialise() {
  std::memset(map_, 0, size_);
  StateHeader& h = *header();
  h.layout_version = kStateLayoutVersion;
  h.gpu_count = static_cast<std::uint32_t>(scenario_.gpus.size());
  h.scenario_hash = scenario_.content_hash;
  h.file_size = size_;
  h.epoch_monotonic_ns = MonotonicNowNs();
  h.manual_time_ns = 0;
  for (std::size_t i = 0; i < scenario_.gpus.size(); ++i) {
    const GpuSpec& spec = scenario_.gpus[i];
    GpuState& gpu = gpus()[i];
    gpu.persistence_mode = spec.persistence_mode ? 1 : 0;
    InitLimitHistory(&gpu.limits, spec.initial_limit_mw);
  }
  // The magic last: a process that dies half-way leaves an invalid file.
  std::memcpy(h.magic, kStateMagic, sizeof(kStateMagic));
}

std::int64_t SharedState::EmulatedNowNs() const {
  const StateHeader& h = *header();
  if (scenario_.clock == ClockMode::kManual) return h.manual_time_ns;
  const std::int64_t elapsed_ns = MonotonicNowNs() - h.epoch_monotonic_ns;
  if (elapsed_ns <= 0) return 0;
  if (scenario_.time_scale == 1.0) return elapsed_ns;
  const double scaled = static_cast<double>(elapsed_ns) * scenario_.time_scale;
  if (scaled >= static_cast<double>(kMaxEmulatedNs)) return kMaxEmulatedNs;
  return std::llround(scaled);
}

SharedState::AdvanceResult SharedState::AdvanceManualClock(std::int64_t delta_ns) {
  AdvanceResult result = AdvanceResult::kOverflow;
  const bool locked = WithLock([&](StateView& view) {
    std::int64_t& now = view.header().manual_time_ns;
    if (delta_ns < 0 || now > kMaxEmulatedNs - delta_ns) return;
    now += delta_ns;
    result = AdvanceResult::kOk;
  });
  return locked ? result : AdvanceResult::kLockFailed;
}

}  // namespace zeus::emulator
