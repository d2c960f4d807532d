// Copyright 2026 The Zeus C++ Authors.
//
// Where a client connects: private to zeus_http, shared by HttpClient and
// HttpStreamReader.

#ifndef ZEUS_SRC_HTTP_HTTP_ENDPOINTS_H_
#define ZEUS_SRC_HTTP_HTTP_ENDPOINTS_H_

#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>

#include "http/http.h"
#include "zeus/base/error.h"

namespace zeus::http::internal {

// The endpoints to try, in order: the Unix socket when `unix_socket_path` is
// set; else the URL's address literal; the IPv4 and IPv6 loopback addresses
// for "localhost" (without asking the resolver); else what the resolver
// answers (a blocking lookup on `ioc`). Fails with kUnavailable
// "cannot connect to <origin>: cannot resolve host '<host>': <why>".
Result<std::vector<boost::asio::generic::stream_protocol::endpoint>> ConnectEndpoints(
    boost::asio::io_context& ioc, const HttpUrl& url, const std::string& unix_socket_path, std::string_view origin);

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_HTTP_ENDPOINTS_H_
