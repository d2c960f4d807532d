// Copyright 2026 The Zeus C++ Authors.
//
// ServerSession: one connection's requests, from the first byte to the
// answer (or the server's own 400/413/431/501/503), then the next request or
// the close. Runs on the connection's strand.

#include "http/http_server_session.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include "http/http_server_impl.h"
#include "http/http_util.h"
#include "http/request_framing.h"

namespace zeus::http::internal {
namespace {

// A connection buffer larger than this is given back after its request.
constexpr std::size_t kMaxIdleBufferBytes = 64 << 10;
// After a response with Connection: close, the server half-closes and reads
// (and drops) whatever the client still sends, for at most this long, so that
// unread request bytes do not turn the close into a reset that could destroy
// the response before the client reads it.
constexpr std::chrono::milliseconds kLingerTime{1000};

// True for errors of the HTTP parser that mean the request is malformed (as
// opposed to the connection ending early).
bool IsMalformedRequest(const error_code& ec) {
  static const boost::system::error_category& http_category =
      http::make_error_code(http::error::bad_target).category();
  return ec.category() == http_category && ec != http::error::end_of_stream && ec != http::error::partial_message;
}

HttpRequest TakeRequest(http::request<http::string_body>& message) {
  HttpRequest request;
  request.method.assign(message.method_string().data(), message.method_string().size());
  request.target.assign(message.target().data(), message.target().size());
  const auto content_type = message[http::field::content_type];
  request.content_type.assign(content_type.data(), content_type.size());
  request.body = std::move(message.body());
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return request;
}

// The handler's answer, or a 500 when it throws or returns a status that is
// not one.
HttpResponse CallHandler(const HttpHandler& handler, const HttpRequest& request) {
  HttpResponse response;
  try {
    response = handler(request);
  } catch (const std::exception& e) {
    response = HttpResponse{500, JsonMessage(fmt::format("internal error: {}", e.what())), "application/json"};
  } catch (...) {
    response = HttpResponse{500, JsonMessage("internal error: unknown exception"), "application/json"};
  }
  if (response.status < 200 || response.status > 999) {
    response = HttpResponse{
        500, JsonMessage(fmt::format("internal error: the handler returned status {}", response.status)),
        "application/json"};
  }
  return response;
}

}  // namespace

ServerSession::~ServerSession() {
  EndRequest();
  if (counted_) server_.ConnectionClosed();
  if (id_ != 0) server_.Unregister(id_);
}

void ServerSession::Start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
}

void ServerSession::Reject() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->SendError(http::status::service_unavailable,
                    fmt::format("the server has {} connections open, its limit; retry later",
                                self->server_.options().max_connections),
                    /*retry_after=*/true);
  });
}

void ServerSession::EndRequest() {
  if (!in_flight_) return;
  in_flight_ = false;
  server_.EndRequest();
}

void ServerSession::StopWhenIdle() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->state_ == State::kIdle || self->state_ == State::kStreaming) self->Close();
  });
}

void ServerSession::WaitForRequest() {
  if (server_.stopping()) return Close();
  state_ = State::kIdle;
  const HttpServerOptions& options = server_.options();
  parser_.emplace();
  parser_->body_limit(static_cast<std::uint64_t>(options.max_body_bytes));
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<std::size_t>(options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  if (buffer_.size() > 0) return ReadRequest();  // a pipelined request is already here
  if (buffer_.capacity() > kMaxIdleBufferBytes) buffer_.shrink_to_fit();
  stream_.expires_after(options.request_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](const error_code& ec, std::size_t bytes) {
                            self->OnFirstBytes(ec, bytes);
                          });
}

void ServerSession::OnFirstBytes(const error_code& ec, std::size_t bytes) {
  // EOF, reset, idle timeout, or closed by StopWhenIdle.
  if (ec) return Close();
  buffer_.commit(bytes);
  ReadRequest();
}

void ServerSession::ReadRequest() {
  if (!server_.TryBeginRequest()) {
    return SendError(http::status::service_unavailable,
                     fmt::format("the server has {} requests in flight, its limit; retry later",
                                 server_.options().max_requests_in_flight),
                     /*retry_after=*/true);
  }
  in_flight_ = true;
  state_ = State::kReading;
  stream_.expires_after(server_.options().request_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](const error_code& ec, std::size_t) { self->OnHeader(ec); });
}

void ServerSession::OnHeader(const error_code& ec) {
  if (ec) return OnRequest(ec);
  const http::request<http::string_body>& message = parser_->get();
  std::vector<std::string_view> codings;
  for (auto [it, end] = message.equal_range(http::field::transfer_encoding); it != end; ++it) {
    codings.emplace_back(it->value().data(), it->value().size());
  }
  const FramingVerdict verdict = CheckRequestTransferEncoding(codings, message.version());
  if (verdict.kind == FramingVerdict::kBadRequest) {
    return SendError(http::status::bad_request, fmt::format("malformed HTTP request: {}", verdict.reason));
  }
  if (verdict.kind == FramingVerdict::kNotImplemented) {
    return SendError(http::status::not_implemented, verdict.reason);
  }
  if (parser_->is_done()) return OnRequest({});
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](const error_code& body_ec, std::size_t) { self->OnRequest(body_ec); });
}

void ServerSession::OnRequest(const error_code& ec) {
  if (!ec) return Handle();
  if (ec == http::error::body_limit) {
    return SendError(http::status::payload_too_large,
                     fmt::format("request body exceeds the limit of {} bytes", server_.options().max_body_bytes));
  }
  if (ec == http::error::header_limit) {
    return SendError(http::status::request_header_fields_too_large,
                     fmt::format("request headers exceed the limit of {} bytes", server_.options().max_header_bytes));
  }
  if (IsMalformedRequest(ec)) {
    return SendError(http::status::bad_request, fmt::format("malformed HTTP request: {}", ec.message()));
  }
  // Timeout (the socket is closed already), the client went away mid-request,
  // or a socket error: nobody to answer.
  Close();
}

void ServerSession::Handle() {
  state_ = State::kHandling;
  http::request<http::string_body>& message = parser_->get();
  const bool head = message.method() == http::verb::head;
  const unsigned version = message.version();
  bool keep_alive = message.keep_alive();
  HttpResponse response = CallHandler(server_.handler(), TakeRequest(message));
  // A request that was in flight when Shutdown() began is the last one.
  if (server_.stopping()) keep_alive = false;
  if (response.stream != nullptr && !head && response.status == 200 && !server_.stopping()) {
    return StartStream(response, version);
  }
  PrepareResponse(std::move(response), version, keep_alive, head);
  Write();
}

void ServerSession::PrepareResponse(HttpResponse response, unsigned version, bool keep_alive, bool head) {
  response_ = {};
  try {
    response_.result(static_cast<unsigned>(response.status));
    response_.version(version);
    if (!response.content_type.empty()) response_.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) response_.set(name, value);
    const bool no_body = response.status == 204 || response.status == 304;
    if (!no_body) response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    if (head) response_.body().clear();  // Content-Length stays that of the GET body
  } catch (const std::exception& e) {
    response_ = {};
    response_.result(http::status::internal_server_error);
    response_.version(version);
    response_.set(http::field::content_type, "application/json");
    response_.body() = JsonMessage(fmt::format("internal error: {}", e.what()));
    response_.keep_alive(false);
    response_.prepare_payload();
  }
}

void ServerSession::Write() {
  state_ = State::kWriting;
  stream_.expires_after(server_.options().request_timeout);
  http::async_write(stream_, response_,
                    [self = shared_from_this()](const error_code& ec, std::size_t) { self->OnWrite(ec); });
}

void ServerSession::OnWrite(const error_code& ec) {
  EndRequest();
  if (ec) return Close();
  server_.ResponseSent();
  if (!response_.keep_alive()) return CloseAfterResponse();
  response_ = {};  // frees the body
  WaitForRequest();
}

void ServerSession::SendError(http::status status, std::string_view message, bool retry_after) {
  response_ = {};
  response_.result(status);
  response_.version(11);
  response_.set(http::field::content_type, "application/json");
  if (retry_after) response_.set(http::field::retry_after, std::to_string(server_.options().retry_after.count()));
  response_.body() = JsonMessage(message);
  response_.keep_alive(false);
  response_.prepare_payload();
  Write();
}

void ServerSession::CloseAfterResponse() {
  state_ = State::kClosing;
  error_code ec;
  stream_.socket().shutdown(net::socket_base::shutdown_send, ec);
  if (ec) return Close();
  stream_.expires_after(std::min<std::chrono::milliseconds>(server_.options().request_timeout, kLingerTime));
  buffer_.clear();
  Drain();
}

void ServerSession::Drain() {
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](const error_code& ec, std::size_t) {
                            if (ec) return self->Close();  // EOF (the client closed), timeout or reset
                            self->Drain();
                          });
}

void ServerSession::Close() {
  EndRequest();
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  waiting_for_data_ = false;
  body_stream_.reset();  // the producer learns that nobody listens
  error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_both, ignored);
  stream_.close();
}

}  // namespace zeus::http::internal
