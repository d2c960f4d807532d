// Copyright 2026 The Zeus C++ Authors.
//
// Private to zeus_http's server: one connection (ServerSession) and the Asio
// and Beast names the server's files share. The session reads a request,
// runs the handler, writes the answer, and then waits for the next request
// or closes; a streamed body (HttpResponse::stream) is written chunk by
// chunk (http_server_stream.cc).

#ifndef ZEUS_SRC_HTTP_HTTP_SERVER_SESSION_H_
#define ZEUS_SRC_HTTP_HTTP_SERVER_SESSION_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http/http.h"

namespace zeus::http::internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using stream_protocol = net::generic::stream_protocol;
using Socket = stream_protocol::socket;
using Stream = beast::basic_stream<stream_protocol>;
using boost::system::error_code;

// Bytes asked for by the first read of a request (the read that waits while
// the connection is idle).
inline constexpr std::size_t kFirstReadBytes = 4096;

class ServerImpl;

// One connection. Lives as long as an operation on it is pending (each
// completion handler holds a shared_ptr). All member functions except the
// public ones run on the connection's strand.
class ServerSession : public std::enable_shared_from_this<ServerSession> {
 public:
  ServerSession(ServerImpl& server, Socket socket) : server_(server), stream_(std::move(socket)) {}
  ~ServerSession();
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  // Starts serving. Call once; any thread.
  void Start();
  // Answers 503 (the server is at max_connections) and closes. Instead of
  // Start(); any thread.
  void Reject();
  // Closes the connection now if it is idle (between requests) or streaming;
  // otherwise it closes after the response to its current request. Any thread.
  void StopWhenIdle();

  void set_id(std::uint64_t id) { id_ = id; }
  void set_counted() { counted_ = true; }

 private:
  enum class State { kIdle, kReading, kHandling, kWriting, kStreaming, kClosing, kClosed };

  // A request (http_server_session.cc).
  void WaitForRequest();
  void OnFirstBytes(const error_code& ec, std::size_t bytes);
  void ReadRequest();
  void OnHeader(const error_code& ec);
  void OnRequest(const error_code& ec);
  void Handle();
  void PrepareResponse(HttpResponse response, unsigned version, bool keep_alive, bool head);
  void Write();
  void OnWrite(const error_code& ec);
  void SendError(http::status status, std::string_view message, bool retry_after = false);
  // Balances a successful ServerImpl::TryBeginRequest, once.
  void EndRequest();
  void CloseAfterResponse();
  void Drain();
  void Close();

  // A streamed body (http_server_stream.cc).
  void StartStream(const HttpResponse& response, unsigned version);
  void WatchForDisconnect();
  void StreamNext();
  void OnWakeup();

  ServerImpl& server_;
  std::uint64_t id_ = 0;    // 0: not registered with the server
  bool counted_ = false;    // counts as an open connection (not a rejected one)
  bool in_flight_ = false;  // a request counts as in flight
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  State state_ = State::kIdle;
  // A streamed body: the producer, the header, the chunk being written, and
  // whether the session waits for the producer's wakeup.
  std::shared_ptr<HttpBodyStream> body_stream_;
  std::optional<http::response<http::empty_body>> stream_header_;
  std::optional<http::response_serializer<http::empty_body>> stream_serializer_;
  std::string chunk_;
  bool waiting_for_data_ = false;
  beast::flat_buffer discard_;
};

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_HTTP_SERVER_SESSION_H_
