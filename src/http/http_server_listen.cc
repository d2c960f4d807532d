// Copyright 2026 The Zeus C++ Authors.
//
// The server's listening socket: resolving where to listen, then open, bind
// and listen, each failure in words naming host:port or the socket path.

#include <sys/un.h>

#include <cstring>
#include <string>
#include <utility>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <fmt/format.h>

#include "http/http_server_impl.h"
#include "http/http_util.h"

namespace zeus::http::internal {
namespace {

using tcp = net::ip::tcp;

Error SystemError(ErrorCode code, std::string message, const error_code& ec) {
  if (ec.category() == boost::system::system_category()) {
    return Error(code, std::move(message), NativeSpace::kErrno, ec.value());
  }
  return Error(code, std::move(message));
}

Result<tcp::endpoint> ResolveTcpEndpoint(const HttpServerOptions& options) {
  error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (!ec) return tcp::endpoint(address, options.port);
  if (IsLocalhost(options.host)) return tcp::endpoint(net::ip::address_v4::loopback(), options.port);
  if (options.host.empty()) return Fail(ErrorCode::kInvalidArgument, "cannot listen: the host is empty");
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(options.host, std::to_string(options.port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("cannot listen on {}: cannot resolve host '{}': {}", HostPort(options.host, options.port),
                            options.host, ec ? ec.message() : std::string("no address")));
  }
  for (const auto& entry : results) {
    if (entry.endpoint().address().is_v4()) return entry.endpoint();
  }
  return results.begin()->endpoint();
}

}  // namespace

Result<stream_protocol::endpoint> ResolveListenEndpoint(const HttpServerOptions& options) {
  if (!options.unix_socket_path.empty()) {
    if (options.unix_socket_path.size() >= sizeof(sockaddr_un::sun_path)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("cannot listen on {}: the socket path is longer than {} bytes", options.unix_socket_path,
                              sizeof(sockaddr_un::sun_path) - 1));
    }
    return stream_protocol::endpoint(net::local::stream_protocol::endpoint(options.unix_socket_path));
  }
  Result<tcp::endpoint> tcp_endpoint = ResolveTcpEndpoint(options);
  if (!tcp_endpoint) return Fail(tcp_endpoint.error());
  return stream_protocol::endpoint(*tcp_endpoint);
}

Status ServerImpl::Listen(const stream_protocol::endpoint& endpoint) {
  const bool unix_socket = !options_.unix_socket_path.empty();
  const std::string where = unix_socket ? options_.unix_socket_path : HostPort(options_.host, options_.port);
  auto failed = [&](const error_code& ec) {
    return Fail(SystemError(ErrorCode::kUnavailable, fmt::format("cannot listen on {}: {}", where, ec.message()), ec));
  };
  error_code ec;
  acceptor_->open(endpoint.protocol(), ec);
  if (ec) return failed(ec);
  if (!unix_socket) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed(ec);
  acceptor_->bind(endpoint, ec);
  if (ec) return failed(ec);
  acceptor_->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed(ec);
  if (unix_socket) return OkStatus();
  const stream_protocol::endpoint local = acceptor_->local_endpoint(ec);
  if (ec) return failed(ec);
  tcp::endpoint local_tcp;
  if (local.size() <= local_tcp.capacity()) {
    std::memcpy(local_tcp.data(), local.data(), local.size());
    local_tcp.resize(local.size());
    port_ = local_tcp.port();
  }
  return OkStatus();
}

}  // namespace zeus::http::internal
