// Copyright 2026 The Zeus C++ Authors.
//
// HttpClient on Boost.Beast. Each client owns a private io_context that only
// the calling thread runs: an operation is started asynchronously (so that
// beast::tcp_stream can time it out) and the io_context is run until it
// completes. The write of a request and the read of its response run at the
// same time, so a server that answers early (413) and stops reading is heard.

#include <cctype>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include "http/http.h"
#include "http/http_endpoints.h"
#include "http/http_util.h"

namespace zeus::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using stream_protocol = net::generic::stream_protocol;
using boost::system::error_code;

constexpr char kUserAgent[] = "zeus-cpp/0.1";
constexpr std::uint32_t kMaxResponseHeaderBytes = 64 << 10;

Error SystemError(ErrorCode code, std::string message, const error_code& ec) {
  if (ec.category() == boost::system::system_category()) {
    return Error(code, std::move(message), NativeSpace::kErrno, ec.value());
  }
  return Error(code, std::move(message));
}

// The peer closed or reset the connection.
bool ClosedByPeer(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::connection_aborted;
}

bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

class ClientImpl final : public HttpClient {
 public:
  ClientImpl(HttpUrl url, const HttpClientOptions& options)
      : url_(std::move(url)),
        options_(options),
        origin_(options.unix_socket_path.empty() ? "http://" + internal::HostPort(url_.host, url_.port)
                                                 : "unix:" + options.unix_socket_path),
        base_url_("http://" + internal::HostPort(url_.host, url_.port) + url_.prefix),
        host_header_(url_.port == 80 ? (url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host)
                                     : internal::HostPort(url_.host, url_.port)) {}

  ~ClientImpl() override { Disconnect(); }

  ClientImpl(const ClientImpl&) = delete;
  ClientImpl& operator=(const ClientImpl&) = delete;

  Result<HttpResponse> Send(std::string_view method, std::string_view target, std::string_view body) override {
    try {
      return SendOrFail(method, target, body);
    } catch (const std::exception& e) {
      Disconnect();
      return Fail(ErrorCode::kInternal, fmt::format("request to {} failed: {}", origin_, e.what()));
    }
  }

  const std::string& base_url() const override { return base_url_; }

 private:
  // The outcome of one try: a response, or an error that may be retried on a
  // fresh connection (the kept-alive one was found closed).
  struct Attempt {
    std::optional<HttpResponse> response;
    std::optional<Error> error;
    bool retryable = false;
  };

  Result<HttpResponse> SendOrFail(std::string_view method, std::string_view target, std::string_view body) {
    if (method.empty()) return Fail(ErrorCode::kInvalidArgument, "HTTP method is empty");
    for (char c : method) {
      if (!IsTokenChar(c)) return Fail(ErrorCode::kInvalidArgument, fmt::format("bad HTTP method '{}'", method));
    }
    if (!target.empty() && target.front() != '/') {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("HTTP target '{}' does not start with '/'", target));
    }
    for (char c : target) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("HTTP target '{}' has a space or control character; percent-encode it", target));
      }
    }

    http::request<http::string_body> request;
    request.method_string(beast::string_view(method.data(), method.size()));
    std::string full_target;
    full_target.reserve(url_.prefix.size() + target.size() + 1);
    full_target += url_.prefix;
    full_target += target.empty() ? std::string_view("/") : target;
    request.target(full_target);
    request.version(11);
    request.set(http::field::host, host_header_);
    request.set(http::field::user_agent, kUserAgent);
    for (const auto& [name, value] : options_.headers) request.set(name, value);
    if (!body.empty()) {
      request.set(http::field::content_type, "application/json");
      request.body().assign(body.data(), body.size());
    }
    request.prepare_payload();

    for (int attempt = 0;; ++attempt) {
      const bool reused = connected_;
      if (!connected_) {
        Status connected = Connect();
        if (!connected) return Fail(connected.error());
      }
      Attempt result = RoundTrip(request);
      if (result.response) return std::move(*result.response);
      if (result.retryable && reused && attempt == 0) continue;  // the server closed an idle connection
      return Fail(std::move(*result.error));
    }
  }

  Status Connect() {
    Disconnect();
    Result<std::vector<stream_protocol::endpoint>> endpoints =
        internal::ConnectEndpoints(ioc_, url_, options_.unix_socket_path, origin_);
    if (!endpoints) return Fail(endpoints.error());
    stream_.emplace(ioc_);
    stream_->expires_after(options_.connect_timeout);
    error_code connect_ec;
    stream_->async_connect(*endpoints,
                           [&connect_ec](const error_code& e, const stream_protocol::endpoint&) { connect_ec = e; });
    ioc_.restart();
    ioc_.run();
    if (connect_ec) {
      Disconnect();
      if (connect_ec == beast::error::timeout) {
        return Fail(Error(ErrorCode::kUnavailable,
                          fmt::format("cannot connect to {}: no connection within {} ms", origin_,
                                      options_.connect_timeout.count())));
      }
      return Fail(SystemError(ErrorCode::kUnavailable,
                              fmt::format("cannot connect to {}: {}", origin_, connect_ec.message()), connect_ec));
    }
    error_code ignored;
    if (options_.unix_socket_path.empty()) stream_->socket().set_option(tcp::no_delay(true), ignored);
    buffer_.clear();
    connected_ = true;
    return OkStatus();
  }

  Attempt RoundTrip(const http::request<http::string_body>& request) {
    http::response_parser<http::string_body> parser;
    // No limit. Not boost::none: Boost 1.74 compares a Content-Length with an
    // unset limit as if it were 0 whenever the headers arrive before the body
    // ("body limit exceeded" on a split or slow answer).
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    parser.header_limit(kMaxResponseHeaderBytes);
    if (request.method() == http::verb::head) parser.skip(true);  // no body follows, whatever the headers say

    error_code write_ec;
    error_code read_ec;
    bool write_done = false;
    bool cut_short = false;
    stream_->expires_after(options_.request_timeout);
    http::async_write(*stream_, request, [&](const error_code& ec, std::size_t) {
      write_ec = ec;
      write_done = true;
    });
    http::async_read(*stream_, buffer_, parser, [&](const error_code& ec, std::size_t) {
      read_ec = ec;
      // A complete response while the request is still being written: the
      // server will not read the rest. Stop writing; the connection is done.
      if (!ec && !write_done) {
        cut_short = true;
        stream_->close();
      }
    });
    ioc_.restart();
    ioc_.run();

    Attempt out;
    if (!read_ec) {
      http::response<http::string_body>& message = parser.get();
      HttpResponse response;
      response.status = static_cast<int>(message.result_int());
      const auto content_type = message[http::field::content_type];
      response.content_type.assign(content_type.data(), content_type.size());
      response.body = std::move(message.body());
      for (const auto& field : message) {
        if (field.name() == http::field::content_type) continue;
        const auto name = field.name_string();
        const auto value = field.value();
        response.headers.emplace_back(std::string(name.data(), name.size()), std::string(value.data(), value.size()));
      }
      if (!message.keep_alive() || parser.need_eof() || write_ec || cut_short) Disconnect();
      out.response = std::move(response);
      return out;
    }

    const bool nothing_received = !parser.got_some() && buffer_.size() == 0;
    Disconnect();
    if (read_ec == beast::error::timeout || write_ec == beast::error::timeout) {
      out.error = Error(ErrorCode::kTimeout, fmt::format("no response from {} within {} ms", origin_,
                                                         options_.request_timeout.count()));
    } else if (nothing_received && (ClosedByPeer(read_ec) || ClosedByPeer(write_ec))) {
      out.retryable = true;
      out.error = SystemError(ErrorCode::kUnavailable,
                              fmt::format("{} closed the connection without a response", origin_),
                              ClosedByPeer(read_ec) ? read_ec : write_ec);
    } else if (read_ec == http::error::partial_message) {
      out.error = Error(ErrorCode::kIoError, fmt::format("{} closed the connection in the middle of a response", origin_));
    } else if (read_ec.category() == http::make_error_code(http::error::bad_target).category()) {
      out.error = Error(ErrorCode::kIoError, fmt::format("malformed response from {}: {}", origin_, read_ec.message()));
    } else {
      out.error = SystemError(ErrorCode::kIoError, fmt::format("request to {} failed: {}", origin_, read_ec.message()),
                              read_ec);
    }
    return out;
  }

  void Disconnect() {
    connected_ = false;
    buffer_.clear();
    if (!stream_) return;
    error_code ignored;
    stream_->socket().shutdown(net::socket_base::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
  }

  const HttpUrl url_;
  const HttpClientOptions options_;
  const std::string origin_;    // "http://host:port", for messages
  const std::string base_url_;  // origin_ + prefix
  const std::string host_header_;

  net::io_context ioc_{1};  // run only by the calling thread
  std::optional<beast::basic_stream<stream_protocol>> stream_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
};

}  // namespace

Result<std::unique_ptr<HttpClient>> HttpClient::Create(std::string_view base_url, const HttpClientOptions& options) {
  Result<HttpUrl> url = ParseHttpUrl(base_url);
  if (!url) return Fail(url.error());
  try {
    return std::unique_ptr<HttpClient>(std::make_unique<ClientImpl>(std::move(*url), options));
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, fmt::format("cannot create an HTTP client for {}: {}", base_url, e.what()));
  }
}

}  // namespace zeus::http
