// Copyright 2026 The Zeus C++ Authors.
//
// One HTTP/1.1 request to zeusd over a Unix socket or TCP, on a fresh
// zeus::http::HttpClient (so that a ZeusdClient is usable from any thread),
// with an optional bearer token.

#ifndef ZEUS_SRC_ZEUSD_CLIENT_TRANSPORT_H_
#define ZEUS_SRC_ZEUSD_CLIENT_TRANSPORT_H_

#include <chrono>
#include <string>
#include <string_view>

#include "zeus/base/error.h"

namespace zeus::zeusd::internal {

struct RawResponse {
  int status = 0;
  std::string body;
};

// Fails with kUnavailable ("cannot reach zeusd at <endpoint>: <why>") when
// it cannot connect, kTimeout past `timeout`, kIoError for a broken answer.
Result<RawResponse> SendRequest(const std::string& socket_path, const std::string& host_port,
                                const std::string& token, std::string_view method, std::string_view target,
                                std::chrono::milliseconds timeout);

}  // namespace zeus::zeusd::internal

#endif  // ZEUS_SRC_ZEUSD_CLIENT_TRANSPORT_H_
