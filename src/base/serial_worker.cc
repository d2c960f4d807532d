// Copyright 2026 The Zeus C++ Authors.

#include "base/serial_worker.h"

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace zeus::base {

struct SerialWorker::State {
  std::string name;
  std::mutex mutex;
  std::condition_variable ready;  // a task, or stopping
  std::condition_variable ended;  // the thread is about to return
  std::deque<std::function<void()>> tasks;                         // guarded by mutex
  std::optional<std::chrono::steady_clock::time_point> busy_since;  // guarded by mutex
  bool stopping = false;                                           // guarded by mutex
  bool abandoned = false;                                          // guarded by mutex
  bool done = false;                                               // guarded by mutex
};

SerialWorker::SerialWorker(std::string name) : state_(std::make_shared<State>()) {
  state_->name = std::move(name);
  thread_ = std::thread(&SerialWorker::Main, state_);
}

SerialWorker::~SerialWorker() {
  if (thread_.joinable()) StopWithin(std::chrono::milliseconds::max());
}

void SerialWorker::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->stopping) return;
    state_->tasks.push_back(std::move(task));
  }
  state_->ready.notify_one();
}

std::chrono::steady_clock::duration SerialWorker::busy_for() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (!state_->busy_since) return {};
  return std::chrono::steady_clock::now() - *state_->busy_since;
}

bool SerialWorker::StopWithin(std::chrono::milliseconds deadline) {
  if (!thread_.joinable()) return true;
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->stopping = true;
  state_->ready.notify_all();
  const auto is_done = [this] { return state_->done; };
  const bool ended = deadline == std::chrono::milliseconds::max()
                         ? (state_->ended.wait(lock, is_done), true)
                         : state_->ended.wait_for(lock, deadline, is_done);
  if (!ended) {
    state_->abandoned = true;
    state_->tasks.clear();
    lock.unlock();
    thread_.detach();
    return false;
  }
  lock.unlock();
  thread_.join();
  return true;
}

void SerialWorker::Main(std::shared_ptr<State> state) {
  pthread_setname_np(pthread_self(), state->name.substr(0, 15).c_str());
  std::unique_lock<std::mutex> lock(state->mutex);
  for (;;) {
    state->ready.wait(lock, [&] { return state->stopping || !state->tasks.empty(); });
    if (state->tasks.empty() || state->abandoned) break;
    std::function<void()> task = std::move(state->tasks.front());
    state->tasks.pop_front();
    state->busy_since = std::chrono::steady_clock::now();
    lock.unlock();
    task();
    task = nullptr;  // its captures go before the lock is taken again
    lock.lock();
    state->busy_since.reset();
  }
  state->done = true;
  state->ended.notify_all();
}

}  // namespace zeus::base
