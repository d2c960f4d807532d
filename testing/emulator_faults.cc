// Copyright 2026 The Zeus C++ Authors.

#include "testing/emulator_faults.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "testing/wait.h"

namespace zeus::testing {

EmulatorFaults::EmulatorFaults(const std::string& library_path) {
  handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) {
    hung_calls_ = reinterpret_cast<unsigned long long (*)()>(dlsym(handle_, "zeusEmulatorHungCalls"));
    release_ = reinterpret_cast<int (*)()>(dlsym(handle_, "zeusEmulatorReleaseHungCalls"));
  }
  if (hung_calls_ == nullptr || release_ == nullptr) {
    std::fprintf(stderr, "EmulatorFaults: cannot use %s\n", library_path.c_str());
    std::abort();
  }
}

EmulatorFaults::~EmulatorFaults() {
  if (handle_ != nullptr) dlclose(handle_);
}

unsigned long long EmulatorFaults::HungCalls() const { return hung_calls_(); }

bool EmulatorFaults::WaitForHungCalls(unsigned long long count, std::chrono::seconds deadline) const {
  return WaitUntil([&] { return HungCalls() >= count; }, deadline);
}

bool EmulatorFaults::Release() const { return release_() == 0; }

}  // namespace zeus::testing
