// Copyright 2026 The Zeus C++ Authors.
//
// ServerSession's streamed bodies (HttpResponse::stream): the header goes out
// with chunked encoding (HTTP/1.1; HTTP/1.0 ends the body at the close), then
// each Next() as one chunk; with nothing ready the session waits for the
// producer's wakeup, posted to its strand. Meanwhile one read is pending,
// only to notice the client going away. A write that takes longer than
// request_timeout (a client that stopped reading) closes the connection.

#include <exception>
#include <memory>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/write.hpp>

#include "http/http_server_impl.h"
#include "http/http_server_session.h"

namespace zeus::http::internal {

void ServerSession::StartStream(const HttpResponse& response, unsigned version) {
  state_ = State::kStreaming;
  body_stream_ = response.stream;
  try {
    stream_header_.emplace();
    stream_header_->result(http::status::ok);
    stream_header_->version(version);
    if (!response.content_type.empty()) stream_header_->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) stream_header_->set(name, value);
    if (version < 11) {
      stream_header_->keep_alive(false);  // HTTP/1.0 has no chunked encoding: the body ends at the close
    } else {
      stream_header_->chunked(true);
    }
    stream_serializer_.emplace(*stream_header_);
  } catch (const std::exception&) {
    return Close();
  }
  std::weak_ptr<ServerSession> weak = weak_from_this();
  auto executor = stream_.get_executor();
  body_stream_->SetWakeup([weak, executor] {
    if (weak.expired()) return;
    net::post(executor, [weak] {
      if (auto self = weak.lock()) self->OnWakeup();
    });
  });
  stream_.expires_after(server_.options().request_timeout);
  http::async_write_header(stream_, *stream_serializer_, [self = shared_from_this()](const error_code& ec, std::size_t) {
    self->EndRequest();
    if (ec) return self->Close();
    self->server_.ResponseSent();
    self->stream_.expires_never();
    self->WatchForDisconnect();
    self->StreamNext();
  });
}

void ServerSession::WatchForDisconnect() {
  stream_.async_read_some(discard_.prepare(kFirstReadBytes), [self = shared_from_this()](const error_code& ec, std::size_t) {
    if (ec) return self->Close();  // the client went away (or the server closed the connection)
    self->discard_.clear();
    self->WatchForDisconnect();
  });
}

void ServerSession::OnWakeup() {
  if (state_ != State::kStreaming || !waiting_for_data_) return;
  waiting_for_data_ = false;
  StreamNext();
}

void ServerSession::StreamNext() {
  if (state_ != State::kStreaming) return;
  chunk_ = body_stream_->Next();
  if (chunk_.empty()) {
    waiting_for_data_ = true;
    return;
  }
  stream_.expires_after(server_.options().request_timeout);
  auto on_written = [self = shared_from_this()](const error_code& ec, std::size_t) {
    if (ec) return self->Close();
    self->stream_.expires_never();
    self->StreamNext();
  };
  if (stream_header_->chunked()) {
    net::async_write(stream_, http::make_chunk(net::buffer(chunk_)), std::move(on_written));
  } else {
    net::async_write(stream_, net::buffer(chunk_), std::move(on_written));
  }
}

}  // namespace zeus::http::internal
