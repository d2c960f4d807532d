// Copyright 2026 The Zeus C++ Authors.
//
// One thread that runs posted tasks one at a time, in the order posted: how
// zeusd serialises the calls to one device (zeus-reference A15), and how
// zeusd and the exporter keep a device whose driver call hangs from costing
// more than that device (private to the project: src/base): callers
// wait for a task with a deadline, see how long the running task has been
// running (busy_for), and a worker whose task never returns can be
// abandoned at shutdown instead of joined.

#ifndef ZEUS_SRC_BASE_SERIAL_WORKER_H_
#define ZEUS_SRC_BASE_SERIAL_WORKER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace zeus::base {

class SerialWorker {
 public:
  // `name`: the thread's name (15 characters at most are kept).
  explicit SerialWorker(std::string name);
  // StopWithin(an unbounded deadline) unless it was called already.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues `task`; any thread. Tasks must not throw. After StopWithin the
  // task is dropped (destroyed without running).
  void Post(std::function<void()> task);

  // How long the task now running has been running; zero when none runs.
  std::chrono::steady_clock::duration busy_for() const;

  // Stops: runs the tasks still queued, then ends the thread, waiting at most
  // `deadline`. True: the thread ended and was joined. False: a task still
  // runs (a hung call); the thread is detached, and when that task returns
  // it ends without running the rest. The thread uses only state it shares
  // with this object, so destroying the worker is then safe; what the
  // running task itself uses must stay valid as long as it runs.
  bool StopWithin(std::chrono::milliseconds deadline);

 private:
  struct State;
  static void Main(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace zeus::base

#endif  // ZEUS_SRC_BASE_SERIAL_WORKER_H_
