// Copyright 2026 The Zeus C++ Authors.

#include "device/emulator_hooks.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace zeus::device {
namespace {

using LastErrorFn = const char* (*)();
// Emulated nanoseconds since the state epoch; 0 on success.
using NowNsFn = int (*)(unsigned long long*);

class EmulatorNowClock final : public Clock {
 public:
  explicit EmulatorNowClock(NowNsFn now_ns) : now_ns_(now_ns) {}

  std::chrono::nanoseconds Now() const override {
    unsigned long long ns = 0;
    (void)now_ns_(&ns);
    return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
  }
  void SleepFor(std::chrono::nanoseconds duration) const override {
    const std::chrono::nanoseconds target = Now() + duration;
    const auto wall_end = std::chrono::steady_clock::now() + duration;
    while (Now() < target && std::chrono::steady_clock::now() < wall_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  NowNsFn now_ns_;
};

}  // namespace

std::unique_ptr<const Clock> OpenEmulatorClock(void* handle) {
  auto now_ns = reinterpret_cast<NowNsFn>(dlsym(handle, "zeusEmulatorNowNs"));
  if (now_ns == nullptr) return nullptr;
  unsigned long long probe = 0;
  if (now_ns(&probe) != 0) return nullptr;
  return std::make_unique<EmulatorNowClock>(now_ns);
}

std::string EmulatorLastError(void* handle) {
  auto last_error = reinterpret_cast<LastErrorFn>(dlsym(handle, "zeusEmulatorLastError"));
  if (last_error == nullptr) return "";
  const char* text = last_error();
  return text != nullptr ? std::string(text) : std::string();
}

}  // namespace zeus::device
