// Copyright 2026 The Zeus C++ Authors.
//
// Demand-driven power polling and its server-sent-event streams (zeusd's
// A15, with W15's fixes). One Poller per device, each with its own thread,
// which sleeps while nobody subscribes to it and polls at its period while
// someone does. Each SSE connection is a Subscription to the pollers of the
// devices it asked for, for as long as the connection lives.
//
// A subscription queues events up to a bound (kMaxQueuedEvents); past it the
// oldest are dropped, so a slow client loses samples but never holds a poller
// or grows the daemon's memory. A poller never waits for a client.

#ifndef ZEUS_SRC_ZEUSD_POWER_STREAM_H_
#define ZEUS_SRC_ZEUSD_POWER_STREAM_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/http.h"

namespace zeus::zeusd {

class Subscription;

// Polls one device. `poll(resumed)` runs on the poller's thread, `resumed`
// true on the first poll after a pause (so it can drop state kept from before
// the pause); it returns the event's JSON to publish, or nullopt for none.
class Poller : public std::enable_shared_from_this<Poller> {
 public:
  using PollFn = std::function<std::optional<std::string>(bool resumed)>;

  Poller(std::string thread_name, std::chrono::microseconds period, PollFn poll);
  ~Poller();  // calls Stop()
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Ends the thread; later subscriptions get nothing. Idempotent.
  void Stop();
  // Stop, waiting at most `deadline` for the thread. True: it ended. False: a
  // poll still runs (a hung driver call); the thread is detached and keeps
  // this Poller alive until that poll returns, then ends. What the poll
  // function uses must stay valid as long as it runs. Call on a Poller owned
  // by a shared_ptr.
  bool StopWithin(std::chrono::milliseconds deadline);
  // Polls made so far.
  std::uint64_t polls() const;
  // Times the thread has gone idle (no subscriber) so far, the start included.
  std::uint64_t idles() const;

 private:
  friend class Subscription;
  void Add(Subscription* subscription);
  void Remove(Subscription* subscription);
  void Main();
  void Loop(std::unique_lock<std::mutex>& lock);

  const std::string thread_name_;
  const std::chrono::microseconds period_;
  PollFn poll_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;          // a subscriber came or went, or Stop()
  std::vector<Subscription*> subscribers_;   // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  bool done_ = false;                        // guarded by mutex_: Main is returning
  std::condition_variable ended_;            // done_ became true
  std::shared_ptr<Poller> keepalive_;        // guarded by mutex_: set when abandoned
  std::uint64_t polls_ = 0;                  // guarded by mutex_
  std::uint64_t idles_ = 0;                  // guarded by mutex_
  std::thread thread_;
};

// One stream's subscription to some pollers; the HTTP server's body.
class Subscription final : public http::HttpBodyStream {
 public:
  static constexpr std::size_t kMaxQueuedEvents = 1024;

  // Subscribes to every poller in `pollers` (none: a stream that never sends).
  explicit Subscription(std::vector<std::shared_ptr<Poller>> pollers);
  ~Subscription() override;  // unsubscribes
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  void SetWakeup(std::function<void()> wakeup) override;
  // The queued events as SSE frames, "data: <json>\n\n" each.
  std::string Next() override;

  // Events dropped because the client read too slowly.
  std::uint64_t dropped() const;

 private:
  friend class Poller;
  void Push(const std::string& event);

  std::vector<std::shared_ptr<Poller>> pollers_;
  mutable std::mutex mutex_;
  std::deque<std::string> events_;     // guarded by mutex_
  std::function<void()> wakeup_;       // guarded by mutex_
  bool wakeup_pending_ = false;        // guarded by mutex_: woken, Next() not yet called
  std::uint64_t dropped_ = 0;          // guarded by mutex_
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_POWER_STREAM_H_
