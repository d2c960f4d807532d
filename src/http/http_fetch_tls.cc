// Copyright 2026 The Zeus C++ Authors.
//
// FetchHttps over Boost.Beast's ssl_stream and OpenSSL. A private io_context
// run by the calling thread; each step (connect; handshake, write, read) is
// asynchronous so that the stream's expiry bounds it.

#include <openssl/ssl.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fmt/format.h>

#include "http/http_endpoints.h"
#include "http/http_fetch_tls.h"

namespace zeus::http::internal {

const bool kHaveTls = true;

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using stream_protocol = net::generic::stream_protocol;
using boost::system::error_code;

Error StepError(const error_code& ec, std::string_view step, std::string_view shown,
                std::chrono::milliseconds timeout) {
  if (ec == beast::error::timeout) {
    return Error(ErrorCode::kTimeout, fmt::format("GET {}: no {} within {} ms", shown, step, timeout.count()));
  }
  const ErrorCode code = step == "connection" ? ErrorCode::kUnavailable : ErrorCode::kIoError;
  return Error(code, fmt::format("GET {}: {} failed: {}", shown, step, ec.message()));
}

Result<HttpResponse> FetchOrThrow(const HttpUrl& url, const std::string& target, const FetchOptions& options,
                                  std::string_view shown) {
  net::io_context ioc{1};
  const std::string origin = "https://" + url.host_port();
  Result<std::vector<stream_protocol::endpoint>> endpoints = ConnectEndpoints(ioc, url, "", origin);
  if (!endpoints) return Fail(endpoints.error().WithContext(fmt::format("GET {}", shown)));

  net::ssl::context tls(net::ssl::context::tls_client);
  tls.set_default_verify_paths();
  tls.set_verify_mode(net::ssl::verify_peer);
  beast::ssl_stream<beast::basic_stream<stream_protocol>> stream(ioc, tls);
  // SNI, and the certificate's name checked against the host.
  // SSL_set_tlsext_host_name, without its macro's C cast.
  if (SSL_ctrl(stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(url.host.c_str())) != 1) {
    return Fail(ErrorCode::kIoError, fmt::format("GET {}: cannot set the TLS server name '{}'", shown, url.host));
  }
  stream.set_verify_callback(net::ssl::host_name_verification(url.host));

  error_code ec;
  beast::get_lowest_layer(stream).expires_after(options.timeout);
  beast::get_lowest_layer(stream).async_connect(*endpoints,
                                                [&ec](const error_code& e, const stream_protocol::endpoint&) { ec = e; });
  ioc.run();
  if (ec) return Fail(StepError(ec, "connection", shown, options.timeout));

  // One deadline for the handshake, the request and the answer.
  beast::get_lowest_layer(stream).expires_after(options.timeout);
  bhttp::request<bhttp::string_body> request{bhttp::verb::get, target, 11};
  request.set(bhttp::field::host, url.port == 443 ? url.url_host() : url.host_port());
  request.set(bhttp::field::user_agent, "zeus-cpp/0.1");
  request.set(bhttp::field::connection, "close");
  for (const auto& [name, value] : options.headers) request.set(name, value);
  request.prepare_payload();

  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  beast::flat_buffer buffer;
  std::string_view failed_step;
  stream.async_handshake(net::ssl::stream_base::client, [&](const error_code& e) {
    if (e) {
      ec = e;
      failed_step = "TLS handshake";
      return;
    }
    bhttp::async_write(stream, request, [&](const error_code& e2, std::size_t) {
      if (e2) {
        ec = e2;
        failed_step = "request";
        return;
      }
      bhttp::async_read(stream, buffer, parser, [&](const error_code& e3, std::size_t) {
        if (e3) {
          ec = e3;
          failed_step = "response";
        }
      });
    });
  });
  ioc.restart();
  ioc.run();
  if (ec) return Fail(StepError(ec, failed_step, shown, options.timeout));

  bhttp::response<bhttp::string_body>& message = parser.get();
  HttpResponse response;
  response.status = static_cast<int>(message.result_int());
  const auto content_type = message[bhttp::field::content_type];
  response.content_type.assign(content_type.data(), content_type.size());
  response.body = std::move(message.body());
  for (const auto& field : message) {
    if (field.name() == bhttp::field::content_type) continue;
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(net::socket_base::shutdown_both, ignored);
  return response;
}

}  // namespace

Result<HttpResponse> FetchHttps(const HttpUrl& url, const std::string& target, const FetchOptions& options,
                                std::string_view shown) {
  try {
    return FetchOrThrow(url, target, options, shown);
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kIoError, fmt::format("GET {}: {}", shown, e.what()));
  }
}

}  // namespace zeus::http::internal
