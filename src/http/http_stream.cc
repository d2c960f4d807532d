// Copyright 2026 The Zeus C++ Authors.
//
// HttpStreamReader on Boost.Beast. Like HttpClient, each reader owns a
// private io_context run only by the thread inside Get(): every step (connect,
// request and head, each body read) is started asynchronously, so that
// beast::basic_stream can time it out, and the io_context is run until it
// completes. Cancel() stops that io_context from any thread; a stopped
// io_context is never run again, so the handlers left pending are destroyed
// with it, never invoked.

#include "http/http_stream.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/empty_body.hpp>
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
namespace bhttp = beast::http;
using tcp = net::ip::tcp;
using stream_protocol = net::generic::stream_protocol;
using boost::system::error_code;

constexpr std::uint32_t kMaxHeadBytes = 64 << 10;

class ReaderImpl final : public HttpStreamReader {
 public:
  ReaderImpl(HttpUrl url, HttpStreamOptions options)
      : url_(std::move(url)),
        options_(std::move(options)),
        origin_(options_.unix_socket_path.empty() ? "http://" + internal::HostPort(url_.host, url_.port)
                                                  : "unix:" + options_.unix_socket_path),
        host_header_(url_.port == 80 ? url_.host : internal::HostPort(url_.host, url_.port)) {}

  Result<HttpStreamEnd> Get(std::string_view target, const std::function<void(int)>& on_open,
                            const std::function<void(std::string_view)>& on_data) override {
    Result<HttpStreamEnd> out = Fail(ErrorCode::kInternal, "unset");
    try {
      out = GetOrFail(target, on_open, on_data);
    } catch (const std::exception& e) {
      out = Fail(ErrorCode::kInternal, fmt::format("stream from {} failed: {}", origin_, e.what()));
    }
    Close();
    return out;
  }

  void Cancel() override {
    cancelled_.store(true);
    ioc_.stop();
  }

 private:
  // Runs the io_context until the operation started before completes; false
  // when cancelled (then the operation's handler never runs).
  bool Run() {
    ioc_.restart();
    if (cancelled_.load()) return false;
    ioc_.run();
    return !cancelled_.load();
  }

  Error Cancelled() const { return Error(ErrorCode::kAborted, fmt::format("stream from {} cancelled", origin_)); }

  Result<HttpStreamEnd> GetOrFail(std::string_view target, const std::function<void(int)>& on_open,
                                  const std::function<void(std::string_view)>& on_data) {
    if (target.empty() || target.front() != '/') {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("HTTP target '{}' does not start with '/'", target));
    }
    if (cancelled_.load()) return Fail(Cancelled());
    if (Status connected = Connect(); !connected) return Fail(connected.error());

    bhttp::request<bhttp::empty_body> request{bhttp::verb::get, url_.prefix + std::string(target), 11};
    request.set(bhttp::field::host, host_header_);
    request.set(bhttp::field::user_agent, "zeus-cpp/0.1");
    request.set(bhttp::field::accept, "text/event-stream");
    for (const auto& [name, value] : options_.headers) request.set(name, value);

    bhttp::response_parser<bhttp::string_body> parser;
    parser.header_limit(kMaxHeadBytes);
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // (boost::none compares as exceeded in Boost 1.74)
    beast::flat_buffer buffer;
    error_code write_ec;
    error_code read_ec;
    stream_->expires_after(options_.head_timeout);
    bhttp::async_write(*stream_, request, [&](const error_code& ec, std::size_t) { write_ec = ec; });
    bhttp::async_read_header(*stream_, buffer, parser, [&](const error_code& ec, std::size_t) { read_ec = ec; });
    if (!Run()) return Fail(Cancelled());
    if (read_ec) return Fail(ReadError(read_ec, parser.got_some(), "no response head"));

    const int status = static_cast<int>(parser.get().result_int());
    const bool success = status >= 200 && status < 300;
    if (!success) {
      // Read the (bounded) error body; what does not fit is left unread.
      parser.body_limit(options_.max_error_body_bytes);
      stream_->expires_after(options_.head_timeout);
      bhttp::async_read(*stream_, buffer, parser, [&](const error_code& ec, std::size_t) { read_ec = ec; });
      if (!Run()) return Fail(Cancelled());
      return HttpStreamEnd{status, std::move(parser.get().body())};
    }

    if (on_open) on_open(status);
    while (!parser.is_done()) {
      if (options_.idle_timeout.count() > 0) {
        stream_->expires_after(options_.idle_timeout);
      } else {
        stream_->expires_never();
      }
      bhttp::async_read_some(*stream_, buffer, parser, [&](const error_code& ec, std::size_t) { read_ec = ec; });
      if (!Run()) return Fail(Cancelled());
      // string_body appends at the body's current end, so handing the piece
      // over and clearing it keeps only what arrived since.
      std::string& body = parser.get().body();
      if (!body.empty()) {
        if (on_data) on_data(body);
        body.clear();
      }
      if (cancelled_.load()) return Fail(Cancelled());
      if (read_ec == bhttp::error::end_of_stream && parser.is_done()) break;
      if (read_ec) return Fail(ReadError(read_ec, true, "the body broke off"));
    }
    return HttpStreamEnd{status, {}};
  }

  Error ReadError(const error_code& ec, bool got_some, std::string_view what) const {
    if (ec == beast::error::timeout) {
      return Error(ErrorCode::kTimeout, fmt::format("{} from {}: nothing within {} ms", what, origin_,
                                                    got_some ? options_.idle_timeout.count()
                                                             : options_.head_timeout.count()));
    }
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == net::error::eof ||
        ec == net::error::connection_reset) {
      return Error(ErrorCode::kIoError, fmt::format("{} from {}: the server closed the connection", what, origin_));
    }
    return Error(ErrorCode::kIoError, fmt::format("{} from {}: {}", what, origin_, ec.message()));
  }

  Status Connect() {
    Result<std::vector<stream_protocol::endpoint>> endpoints =
        internal::ConnectEndpoints(ioc_, url_, options_.unix_socket_path, origin_);
    if (!endpoints) return Fail(endpoints.error());
    stream_.emplace(ioc_);
    stream_->expires_after(options_.connect_timeout);
    error_code connect_ec;
    stream_->async_connect(*endpoints,
                           [&connect_ec](const error_code& e, const stream_protocol::endpoint&) { connect_ec = e; });
    if (!Run()) return Fail(Cancelled());
    if (connect_ec == beast::error::timeout) {
      return Fail(ErrorCode::kUnavailable, fmt::format("cannot connect to {}: no connection within {} ms", origin_,
                                                       options_.connect_timeout.count()));
    }
    if (connect_ec) {
      return Fail(Error(ErrorCode::kUnavailable, fmt::format("cannot connect to {}: {}", origin_, connect_ec.message()),
                        NativeSpace::kErrno, connect_ec.value()));
    }
    return OkStatus();
  }

  void Close() {
    if (!stream_) return;
    error_code ignored;
    stream_->socket().shutdown(net::socket_base::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
  }

  const HttpUrl url_;
  const HttpStreamOptions options_;
  const std::string origin_;
  const std::string host_header_;
  std::atomic<bool> cancelled_{false};
  net::io_context ioc_;  // run only by the thread inside Get(); stopped from any (so not hint 1)
  std::optional<beast::basic_stream<stream_protocol>> stream_;
};

}  // namespace

Result<std::unique_ptr<HttpStreamReader>> HttpStreamReader::Create(std::string_view base_url,
                                                                   const HttpStreamOptions& options) {
  Result<HttpUrl> url = ParseHttpUrl(base_url);
  if (!url) return Fail(url.error());
  return std::unique_ptr<HttpStreamReader>(std::make_unique<ReaderImpl>(std::move(*url), options));
}

}  // namespace zeus::http
