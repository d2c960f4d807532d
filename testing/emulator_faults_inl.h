// Copyright 2026 The Zeus C++ Authors.
//
// Template definitions for emulator_faults.h; include that header instead.

#ifndef ZEUS_TESTING_EMULATOR_FAULTS_INL_H_
#define ZEUS_TESTING_EMULATOR_FAULTS_INL_H_

#include <thread>

namespace zeus::testing {

template <class Predicate>
bool WaitUntil(Predicate ready, std::chrono::seconds deadline) {
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= give_up) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_EMULATOR_FAULTS_INL_H_
