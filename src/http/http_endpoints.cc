// Copyright 2026 The Zeus C++ Authors.

#include "http/http_endpoints.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <fmt/format.h>

#include "http/http_util.h"

namespace zeus::http::internal {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Endpoint = net::generic::stream_protocol::endpoint;

Result<std::vector<Endpoint>> ConnectEndpoints(net::io_context& ioc, const HttpUrl& url,
                                               const std::string& unix_socket_path, std::string_view origin) {
  std::vector<Endpoint> endpoints;
  if (!unix_socket_path.empty()) {
    endpoints.emplace_back(net::local::stream_protocol::endpoint(unix_socket_path));
    return endpoints;
  }
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(url.host, ec);
  if (!ec) {
    endpoints.emplace_back(tcp::endpoint(address, url.port));
  } else if (IsLocalhost(url.host)) {
    endpoints.emplace_back(tcp::endpoint(net::ip::address_v4::loopback(), url.port));
    endpoints.emplace_back(tcp::endpoint(net::ip::address_v6::loopback(), url.port));
  } else {
    tcp::resolver resolver(ioc);
    const auto results = resolver.resolve(url.host, std::to_string(url.port), tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
      return Fail(ErrorCode::kUnavailable, fmt::format("cannot connect to {}: cannot resolve host '{}': {}", origin,
                                                       url.host, ec ? ec.message() : std::string("no address")));
    }
    for (const auto& entry : results) endpoints.emplace_back(entry.endpoint());
  }
  return endpoints;
}

}  // namespace zeus::http::internal
