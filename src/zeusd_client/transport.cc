// Copyright 2026 The Zeus C++ Authors.

#include "zeusd_client/transport.h"

#include <memory>
#include <utility>

#include <fmt/format.h>

#include "http/http.h"

namespace zeus::zeusd::internal {

Result<RawResponse> SendRequest(const std::string& socket_path, const std::string& host_port,
                                const std::string& token, std::string_view method, std::string_view target,
                                std::chrono::milliseconds timeout) {
  http::HttpClientOptions options;
  options.connect_timeout = timeout;
  options.request_timeout = timeout;
  options.unix_socket_path = socket_path;
  if (!token.empty()) options.headers.emplace_back("Authorization", "Bearer " + token);
  std::string base_url = "http://localhost";
  if (socket_path.empty()) {
    base_url = "http://" + host_port;
    // ZEUSD_HOST_PORT is taken verbatim; without a port, zeusd's default.
    if (host_port.find(':') == std::string::npos) base_url += ":4938";
  }
  const std::string& endpoint = socket_path.empty() ? host_port : socket_path;
  auto client = http::HttpClient::Create(base_url, options);
  if (!client) {
    return Fail(client.error().code(),
                fmt::format("zeusd address {} is not usable: {}", endpoint, client.error().message()));
  }
  auto response = (*client)->Send(method, target);
  if (!response) {
    const Error& e = response.error();
    if (e.code() == ErrorCode::kUnavailable) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("cannot reach zeusd at {} ({}). {}", endpoint, e.message(),
                              socket_path.empty() ? "Is zeusd running there with --mode tcp?"
                                                  : "Is zeusd running, and may this user open its socket "
                                                    "(zeusd serve --socket-permissions/--socket-gid)?"));
    }
    return Fail(e.WithContext(fmt::format("zeusd at {}: {} {}", endpoint, method, target)));
  }
  return RawResponse{response->status, std::move(response->body)};
}

}  // namespace zeus::zeusd::internal
