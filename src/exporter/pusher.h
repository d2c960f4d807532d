// Copyright 2026 The Zeus C++ Authors.
//
// Pusher: pushes one prometheus::Registry to a Pushgateway from a background
// thread, so that no caller waits for the network. Requests made while a
// push is in flight coalesce into one more push. A failure is logged once
// per window id (see NewWindow).

#ifndef ZEUS_SRC_EXPORTER_PUSHER_H_
#define ZEUS_SRC_EXPORTER_PUSHER_H_

#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "zeus/base/error.h"
#include "zeus/base/log.h"
#include "zeus/exporter/push.h"

namespace zeus::exporter {

// Splits "http://host:port", "https://host", "host:port" (http::ParseUrl;
// port 80 or 443 when absent, no path) into prometheus-cpp Gateway's host
// ("http://host", "http://[::1]") and port. Errors: kInvalidArgument naming
// the URL and the accepted forms.
struct GatewayAddress {
  std::string host;  // with the scheme
  std::string port;
};
Result<GatewayAddress> ParsePushgatewayUrl(const std::string& url);

// Who speaks in the push helpers' log records.
inline constexpr std::string_view kLogComponent = "metric";

class Pusher {
 public:
  // Errors: kInvalidArgument for a malformed URL or job name.
  static Result<std::unique_ptr<Pusher>> Create(PushTarget target, std::shared_ptr<prometheus::Registry> registry);
  // Waits up to the target's flush_timeout for queued and in-flight pushes,
  // then leaves any still running to finish on their own thread.
  ~Pusher();
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  // An id for a new window; failures are logged once per id.
  std::uint64_t NewWindow();
  // Queues a push on behalf of window `window_id` named `window`; returns at once.
  void Request(std::uint64_t window_id, const std::string& window);
  // Logs through the target's log function, or (without one) the process's
  // log seam as component kLogComponent ("metric": Python's `zeus.metric`
  // logger; a user warning goes to Python's `warnings`).
  void Log(LogLevel level, const std::string& line, bool user_warning = false) const;

  std::uint64_t attempted() const;
  std::uint64_t failed() const;

  struct State;

 private:
  explicit Pusher(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace zeus::exporter

#endif  // ZEUS_SRC_EXPORTER_PUSHER_H_
