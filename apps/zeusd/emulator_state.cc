// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeusd/emulator_state.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace zeus::zeusd_cli {

std::optional<std::string> PrivateEmulatorStateWarning(const device::GpuSet& gpus, const std::string& library_path) {
  if (gpus.driver_clock() == nullptr || library_path.empty()) return std::nullopt;
  void* handle = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return std::nullopt;
  using StatePathFn = const char* (*)();
  const auto state_path = reinterpret_cast<StatePathFn>(::dlsym(handle, "zeusEmulatorStatePath"));
  std::string path = state_path != nullptr && state_path() != nullptr ? state_path() : "";
  ::dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  if (path.empty()) return std::nullopt;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0) return std::nullopt;  // shared
  return fmt::format(
      "zeusd: warning: the GPUs are emulated, and their state ({}) is private to uid {}: a client running as "
      "another user emulates its own GPUs in its own state file, so a limit set through zeusd never reaches the "
      "GPUs it reads. To share one set of emulated GPUs, give the scenario \"state_file\": \"<path both can "
      "open>\" and \"state_file_shared\": true (README: Shared state)",
      path, ::getuid());
}

}  // namespace zeus::zeusd_cli
