// Copyright 2026 The Zeus C++ Authors.
//
// One thread that runs posted tasks one at a time, in the order posted: how
// zeusd serialises the commands to one device (zeus-reference A15).

#ifndef ZEUS_SRC_ZEUSD_SERIAL_WORKER_H_
#define ZEUS_SRC_ZEUSD_SERIAL_WORKER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zeus::zeusd {

class SerialWorker {
 public:
  // `name`: the thread's name (15 characters at most are kept).
  explicit SerialWorker(std::string name);
  // Runs the tasks still queued, then joins the thread.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues `task`; any thread. Tasks must not throw.
  void Post(std::function<void()> task);

 private:
  void Main();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;  // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  std::thread thread_;                       // last: started once the rest exists
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_SERIAL_WORKER_H_
