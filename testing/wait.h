// Copyright 2026 The Zeus C++ Authors.
//
// Readiness waits for tests: poll a condition until it holds or a generous
// deadline passes. A test waits for what it needs (a state, a count), never
// for a sleep to be long enough; the deadline only stops a broken test from
// hanging for ever.

#ifndef ZEUS_TESTING_WAIT_H_
#define ZEUS_TESTING_WAIT_H_

#include <chrono>
#include <thread>

namespace zeus::testing {

// Polls `ready` every millisecond until it returns true (then returns true)
// or `deadline` passes (then returns ready()'s last value).
template <class Predicate>
bool WaitUntil(Predicate ready, std::chrono::seconds deadline = std::chrono::seconds(60)) {
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= give_up) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_WAIT_H_
