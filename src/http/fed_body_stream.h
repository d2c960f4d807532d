// Copyright 2026 The Zeus C++ Authors.
//
// For tests of streamed bodies (zeus_http's and its users'): an
// HttpBodyStream that hands out what the test pushes.

#ifndef ZEUS_SRC_HTTP_FED_BODY_STREAM_H_
#define ZEUS_SRC_HTTP_FED_BODY_STREAM_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "http/http.h"

namespace zeus::http {

// Thread-safe. When `destroyed` is set, the destructor sets it (the server
// destroys a stream once its client went away).
class FedBodyStream final : public HttpBodyStream {
 public:
  explicit FedBodyStream(std::atomic<bool>* destroyed = nullptr) : destroyed_(destroyed) {}
  ~FedBodyStream() override {
    if (destroyed_ != nullptr) destroyed_->store(true);
  }
  void SetWakeup(std::function<void()> wakeup) override {
    std::lock_guard<std::mutex> lock(mutex_);
    wakeup_ = std::move(wakeup);
  }
  std::string Next() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(pending_, "");
  }
  // Queues `data` for Next() and wakes the server.
  void Push(const std::string& data) {
    std::function<void()> wakeup;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += data;
      wakeup = wakeup_;
    }
    if (wakeup) wakeup();
  }
  // True once the server took the stream (SetWakeup was called).
  bool started() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<bool>(wakeup_);
  }

 private:
  std::atomic<bool>* destroyed_;
  std::mutex mutex_;
  std::function<void()> wakeup_;
  std::string pending_;
};

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_FED_BODY_STREAM_H_
