// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/power_stream.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace zeus::zeusd {

Poller::Poller(std::string thread_name, std::chrono::microseconds period, PollFn poll)
    : thread_name_(std::move(thread_name)), period_(period), poll_(std::move(poll)), thread_([this] { Main(); }) {}

Poller::~Poller() { Stop(); }

void Poller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Poller::StopWithin(std::chrono::milliseconds deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  changed_.notify_all();
  if (!thread_.joinable()) return true;
  if (!ended_.wait_for(lock, deadline, [this] { return done_; })) {
    keepalive_ = shared_from_this();
    thread_.detach();
    return false;
  }
  lock.unlock();
  thread_.join();
  return true;
}

std::uint64_t Poller::polls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return polls_;
}

std::uint64_t Poller::idles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idles_;
}

void Poller::Add(Subscription* subscription) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    subscribers_.push_back(subscription);
  }
  changed_.notify_all();
}

void Poller::Remove(Subscription* subscription) {
  std::lock_guard<std::mutex> lock(mutex_);
  subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), subscription), subscribers_.end());
}

void Poller::Main() {
  pthread_setname_np(pthread_self(), thread_name_.substr(0, 15).c_str());
  std::shared_ptr<Poller> keepalive;  // released last, after the lock
  std::unique_lock<std::mutex> lock(mutex_);
  Loop(lock);
  done_ = true;
  ended_.notify_all();
  keepalive = std::move(keepalive_);
  lock.unlock();
}

void Poller::Loop(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (subscribers_.empty()) ++idles_;
    changed_.wait(lock, [this] { return stopping_ || !subscribers_.empty(); });
    if (stopping_) return;
    bool resumed = true;
    auto next = std::chrono::steady_clock::now();
    while (!stopping_ && !subscribers_.empty()) {
      ++polls_;
      lock.unlock();
      std::optional<std::string> event = poll_(resumed);
      resumed = false;
      lock.lock();
      if (event) {
        for (Subscription* subscriber : subscribers_) subscriber->Push(*event);
      }
      next += period_;
      const auto now = std::chrono::steady_clock::now();
      if (next < now) next = now;  // missed ticks are skipped, not made up in a burst
      changed_.wait_until(lock, next, [this] { return stopping_ || subscribers_.empty(); });
    }
  }
}

Subscription::Subscription(std::vector<std::shared_ptr<Poller>> pollers) : pollers_(std::move(pollers)) {
  for (const auto& poller : pollers_) poller->Add(this);
}

Subscription::~Subscription() {
  // After Remove returns, no poller is inside Push for this subscription.
  for (const auto& poller : pollers_) poller->Remove(this);
}

void Subscription::SetWakeup(std::function<void()> wakeup) {
  bool wake_now = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wakeup_ = std::move(wakeup);
    wake_now = !events_.empty();
    wakeup_pending_ = wake_now;
  }
  if (wake_now) wakeup_();
}

std::string Subscription::Next() {
  std::deque<std::string> events;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events.swap(events_);
    wakeup_pending_ = false;
  }
  std::string out;
  for (const std::string& event : events) {
    out += "data: ";
    out += event;
    out += "\n\n";
  }
  return out;
}

std::uint64_t Subscription::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void Subscription::Push(const std::string& event) {
  std::function<void()> wakeup;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (events_.size() >= kMaxQueuedEvents) {
      events_.pop_front();
      ++dropped_;
    }
    events_.push_back(event);
    if (!wakeup_pending_ && wakeup_) {
      wakeup_pending_ = true;
      wakeup = wakeup_;
    }
  }
  if (wakeup) wakeup();
}

}  // namespace zeus::zeusd
