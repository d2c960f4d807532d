// Copyright 2026 The Zeus C++ Authors.

#include "zeusd_client/transport.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

namespace zeus::zeusd::internal {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

template <class Stream>
Result<RawResponse> Exchange(Stream& stream, asio::io_context& io, const std::string& host,
                             const std::string& token, std::string_view method, std::string_view target,
                             std::chrono::milliseconds timeout, const std::string& endpoint) {
  bhttp::request<bhttp::empty_body> request(bhttp::string_to_verb(beast::string_view(method.data(), method.size())), std::string(target), 11);
  request.set(bhttp::field::host, host);
  request.set(bhttp::field::connection, "close");
  if (!token.empty()) request.set(bhttp::field::authorization, "Bearer " + token);
  bhttp::response<bhttp::string_body> response;
  beast::flat_buffer buffer;
  beast::error_code write_ec;
  beast::error_code read_ec;
  bhttp::async_write(stream, request, [&](beast::error_code ec, std::size_t) {
    write_ec = ec;
    if (ec) return;
    bhttp::async_read(stream, buffer, response, [&](beast::error_code ec2, std::size_t) { read_ec = ec2; });
  });
  io.run_for(timeout);
  if (!io.stopped()) {
    return Fail(ErrorCode::kTimeout,
                fmt::format("zeusd at {} did not answer {} {} within {} ms", endpoint, method, target,
                            timeout.count()));
  }
  const beast::error_code& ec = write_ec ? write_ec : read_ec;
  if (ec) {
    return Fail(Error(ErrorCode::kIoError,
                      fmt::format("broken answer from zeusd at {} to {} {}: {}", endpoint, method, target,
                                  ec.message())));
  }
  return RawResponse{static_cast<int>(response.result_int()), std::move(response.body())};
}

}  // namespace

Result<RawResponse> SendRequest(const std::string& socket_path, const std::string& host_port,
                                const std::string& token, std::string_view method, std::string_view target,
                                std::chrono::milliseconds timeout) {
  asio::io_context io;
  beast::error_code ec;
  if (!socket_path.empty()) {
    asio::local::stream_protocol::socket socket(io);
    socket.connect(asio::local::stream_protocol::endpoint(socket_path), ec);
    if (ec) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("cannot reach zeusd at {}: {}. Is zeusd running, and may this user open its socket "
                              "(see zeusd serve --socket-permissions/--socket-gid)?",
                              socket_path, ec.message()));
    }
    return Exchange(socket, io, "localhost", token, method, target, timeout, socket_path);
  }
  std::string host = host_port;
  std::string port = "4938";
  if (auto colon = host_port.rfind(':'); colon != std::string::npos && host_port.find(']', colon) == std::string::npos) {
    host = host_port.substr(0, colon);
    port = host_port.substr(colon + 1);
  }
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  asio::ip::tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host, port, ec);
  asio::ip::tcp::socket socket(io);
  if (!ec) asio::connect(socket, endpoints, ec);
  if (ec) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot reach zeusd at {}: {}. Is zeusd running with --mode tcp there?", host_port,
                            ec.message()));
  }
  return Exchange(socket, io, host_port, token, method, target, timeout, host_port);
}

}  // namespace zeus::zeusd::internal
