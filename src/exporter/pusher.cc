// Copyright 2026 The Zeus C++ Authors.

#include "exporter/pusher.h"

#include <fmt/format.h>
#include <prometheus/gateway.h>

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

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

  void Log(const std::string& line) const {
    if (target.log) {
      target.log(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
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
          self->Log(fmt::format("zeus: warning: pushing window \"{}\" of job \"{}\" to {} failed: {}; the metrics of "
                                "this window may be incomplete there (logged once per window)",
                                window, self->target.job, self->target.pushgateway_url, reason));
        }
      }
      self->cv.notify_all();
    }
  }
};

Result<GatewayAddress> ParsePushgatewayUrl(const std::string& url) {
  std::string rest = url;
  std::string scheme = "http";
  if (const auto sep = rest.find("://"); sep != std::string::npos) {
    scheme = rest.substr(0, sep);
    rest = rest.substr(sep + 3);
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto bad = [&](const char* why) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("Pushgateway URL \"{}\" {}; give it as http://HOST:PORT (e.g. http://localhost:9091)", url,
                            why));
  };
  if (scheme != "http" && scheme != "https") return bad("has a scheme other than http or https");
  if (rest.empty()) return bad("has no host");
  if (rest.find('/') != std::string::npos) return bad("has a path");
  GatewayAddress address;
  std::string host = rest;
  address.port = scheme == "https" ? "443" : "80";
  const auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    host = rest.substr(0, colon);
    address.port = rest.substr(colon + 1);
    if (address.port.empty() || address.port.find_first_not_of("0123456789") != std::string::npos ||
        address.port.size() > 5 || std::stoi(address.port) > 65535) {
      return bad("has a port that is not a number from 0 to 65535");
    }
  }
  if (host.empty()) return bad("has no host");
  address.host = scheme + "://" + host;
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
    state_->Log(fmt::format("zeus: warning: a push to {} is still unanswered after {} ms; not waiting for it",
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

void Pusher::Log(const std::string& line) const { state_->Log(line); }

std::uint64_t Pusher::attempted() const {
  std::lock_guard lock(state_->mu);
  return state_->attempted;
}

std::uint64_t Pusher::failed() const {
  std::lock_guard lock(state_->mu);
  return state_->failed;
}

}  // namespace zeus::exporter
