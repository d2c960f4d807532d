// Copyright 2026 The Zeus C++ Authors.

#include "exporter/pusher.h"

#include <fmt/format.h>
#include <prometheus/gateway.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "http/http_url.h"
#include "zeus/base/log.h"

namespace zeus::exporter {

struct Pusher::State {
  PushTarget target;
  std::shared_ptr<prometheus::Registry> registry;
  std::unique_ptr<prometheus::Gateway> gateway;

  mutable std::mutex mu;
  std::condition_variable cv;
  // All guarded by mu.
  bool pending = false;
  bool busy = false;
  bool stop = false;
  bool abandoned = false;  // the Pusher is gone: its log function may be too
  std::uint64_t pending_window_id = 0;
  std::string pending_window;
  std::uint64_t next_window_id = 1;
  std::set<std::uint64_t> logged_windows;
  std::uint64_t attempted = 0;
  std::uint64_t failed = 0;

  void Log(LogLevel level, const std::string& line, bool user_warning = false) const {
    if (target.log) {
      target.log(line);
    } else {
      zeus::Log({.level = level, .component = kLogComponent, .message = line, .user_warning = user_warning});
    }
  }

  // The worker: runs until stop is set and nothing is pending.
  static void Run(const std::shared_ptr<State>& self) {
    std::unique_lock lock(self->mu);
    for (;;) {
      self->cv.wait(lock, [&] { return self->pending || self->stop; });
      if (!self->pending) return;
      self->pending = false;
      self->busy = true;
      const std::uint64_t window_id = self->pending_window_id;
      const std::string window = self->pending_window;
      ++self->attempted;
      lock.unlock();
      int http_status = -1;
      std::string what;
      try {
        http_status = self->gateway->Push();
      } catch (const std::exception& e) {
        what = e.what();
      }
      lock.lock();
      self->busy = false;
      if (http_status < 200 || http_status >= 300) {
        ++self->failed;
        if (!self->abandoned && self->logged_windows.insert(window_id).second) {
          const std::string reason =
              !what.empty() ? what
              : http_status < 0 ? "cannot connect (is the Pushgateway running at that address?)"
                                : fmt::format("the Pushgateway answered HTTP {}", http_status);
          self->Log(LogLevel::kWarning,
                    fmt::format("pushing window \"{}\" of job \"{}\" to {} failed: {}; the metrics of "
                                "this window may be incomplete there (logged once per window)",
                                window, self->target.job, self->target.pushgateway_url, reason));
        }
      }
      self->cv.notify_all();
    }
  }
};

Result<GatewayAddress> ParsePushgatewayUrl(const std::string& url) {
  http::UrlRules rules;
  rules.what = "Pushgateway URL";
  rules.expected = "http://HOST[:PORT], https://HOST[:PORT] or HOST:PORT (e.g. http://localhost:9091)";
  rules.allow_https = true;
  rules.allow_no_scheme = true;
  rules.allow_prefix = false;
  Result<http::HttpUrl> parsed = http::ParseUrl(url, rules);
  if (!parsed) return Fail(parsed.error());
  GatewayAddress address;
  address.host = (parsed->scheme == http::UrlScheme::kHttps ? "https://" : "http://") + parsed->url_host();
  address.port = std::to_string(parsed->port);
  return address;
}

Pusher::Pusher(std::shared_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<Pusher>> Pusher::Create(PushTarget target, std::shared_ptr<prometheus::Registry> registry) {
  auto address = ParsePushgatewayUrl(target.pushgateway_url);
  if (!address) return Fail(address.error());
  if (target.job.empty() || target.job.find_first_of("/ \t\r\n") != std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("Pushgateway job name \"{}\" must be non-empty without '/' or spaces", target.job));
  }
  auto state = std::make_shared<State>();
  try {
    state->gateway = std::make_unique<prometheus::Gateway>(address->host, address->port, target.job);
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot set up pushing to {}: {}", target.pushgateway_url, e.what()));
  }
  state->target = std::move(target);
  state->registry = std::move(registry);
  state->gateway->RegisterCollectable(state->registry);
  // The worker holds the state, so a push still in flight when the Pusher is
  // destroyed finishes safely on its own.
  std::thread(&State::Run, state).detach();
  return std::unique_ptr<Pusher>(new Pusher(std::move(state)));
}

Pusher::~Pusher() {
  std::unique_lock lock(state_->mu);
  state_->stop = true;
  state_->cv.notify_all();
  const bool drained = state_->cv.wait_for(lock, state_->target.flush_timeout,
                                           [&] { return !state_->pending && !state_->busy; });
  if (!drained) {
    state_->abandoned = true;
    state_->Log(LogLevel::kWarning, fmt::format("a push to {} is still unanswered after {} ms; not waiting for it",
                            state_->target.pushgateway_url, state_->target.flush_timeout.count()));
  }
}

std::uint64_t Pusher::NewWindow() {
  std::lock_guard lock(state_->mu);
  return state_->next_window_id++;
}

void Pusher::Request(std::uint64_t window_id, const std::string& window) {
  std::lock_guard lock(state_->mu);
  state_->pending = true;
  state_->pending_window_id = window_id;
  state_->pending_window = window;
  state_->cv.notify_all();
}

void Pusher::Log(LogLevel level, const std::string& line, bool user_warning) const {
  state_->Log(level, line, user_warning);
}

std::uint64_t Pusher::attempted() const {
  std::lock_guard lock(state_->mu);
  return state_->attempted;
}

std::uint64_t Pusher::failed() const {
  std::lock_guard lock(state_->mu);
  return state_->failed;
}

}  // namespace zeus::exporter
