// Copyright 2026 The Zeus C++ Authors.
//
// HttpStreamReader against the project's HttpServer with a streamed body:
// pieces arrive as the producer makes them, over TCP and a Unix socket with
// headers, a non-2xx answer comes back whole, Cancel() from another thread
// ends a blocked read, silence past idle_timeout is a timeout.

#include "http/http_stream.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include "http/fed_body_stream.h"
#include "http/http.h"
#include "testing/wait.h"

namespace zeus::http {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;
using std::chrono::seconds;
using zeus::testing::WaitUntil;

// A server whose every GET gets a fresh FedBodyStream (kept in `current`), and
// whose requests' Authorization headers are kept.
struct StreamServer {
  explicit StreamServer(HttpServerOptions options = {}) {
    if (options.unix_socket_path.empty()) options.port = 0;
    options.threads = 2;
    auto started = HttpServer::Start(options, [this](const HttpRequest& request) {
      std::lock_guard<std::mutex> lock(mutex);
      for (const auto& [name, value] : request.headers) {
        if (name == "Authorization" || name == "authorization") authorization = value;
      }
      HttpResponse response;
      if (request.target == "/denied") {
        response.status = 403;
        response.body = R"({"message": "no"})";
        return response;
      }
      response.content_type = "text/event-stream";
      auto stream = std::make_shared<FedBodyStream>();
      current = stream;
      response.stream = stream;
      return response;
    });
    EXPECT_TRUE(started) << started.error().message();
    if (started) server = std::move(*started);
  }
  std::shared_ptr<FedBodyStream> Current() {
    std::lock_guard<std::mutex> lock(mutex);
    return current.lock();
  }
  std::mutex mutex;
  std::weak_ptr<FedBodyStream> current;
  std::string authorization;
  std::unique_ptr<HttpServer> server;
};

// What a reader got, filled from its thread.
struct Received {
  std::mutex mutex;
  std::string data;
  int opened_status = 0;
  std::string Data() {
    std::lock_guard<std::mutex> lock(mutex);
    return data;
  }
};

std::future<Result<HttpStreamEnd>> GetAsync(HttpStreamReader* reader, std::string target, Received* received) {
  return std::async(std::launch::async, [reader, target, received] {
    return reader->Get(
        target,
        [received](int status) {
          std::lock_guard<std::mutex> lock(received->mutex);
          received->opened_status = status;
        },
        [received](std::string_view piece) {
          std::lock_guard<std::mutex> lock(received->mutex);
          received->data += piece;
        });
  });
}

TEST(HttpStreamReaderTest, PiecesArriveAsProducedAndCancelEndsTheRead) {
  StreamServer server;
  ASSERT_NE(server.server, nullptr);
  auto reader = HttpStreamReader::Create(fmt::format("http://127.0.0.1:{}", server.server->port())).value();
  Received received;
  auto done = GetAsync(reader.get(), "/gpu/stream_power", &received);
  ASSERT_TRUE(WaitUntil([&] { return server.Current() != nullptr; }, seconds(30)));
  server.Current()->Push("data: 1\n\n");
  ASSERT_TRUE(WaitUntil([&] { return received.Data() == "data: 1\n\n"; }, seconds(30))) << received.Data();
  EXPECT_EQ(received.opened_status, 200);
  server.Current()->Push("data: 2\n");
  server.Current()->Push("\ndata: 3\n\n");
  ASSERT_TRUE(WaitUntil([&] { return received.Data() == "data: 1\n\ndata: 2\n\ndata: 3\n\n"; }, seconds(30)))
      << received.Data();
  // The read is blocked now (nothing more comes): Cancel() from here ends it.
  reader->Cancel();
  ASSERT_EQ(done.wait_for(seconds(30)), std::future_status::ready);
  auto end = done.get();
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code(), ErrorCode::kAborted);
  // The server learns that the client went away.
  EXPECT_TRUE(WaitUntil([&] { return server.Current() == nullptr; }, seconds(30)));
  // Cancel is permanent.
  auto again = reader->Get("/x", nullptr, nullptr);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), ErrorCode::kAborted);
  server.server->Shutdown();
}

TEST(HttpStreamReaderTest, UnixSocketWithHeaders) {
  char dir_template[] = "/tmp/zeus-http-stream-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/s.sock";
  HttpServerOptions options;
  options.unix_socket_path = path;
  StreamServer server(options);
  ASSERT_NE(server.server, nullptr);
  HttpStreamOptions reader_options;
  reader_options.unix_socket_path = path;
  reader_options.headers.emplace_back("Authorization", "Bearer abc");
  auto reader = HttpStreamReader::Create("http://localhost", reader_options).value();
  Received received;
  auto done = GetAsync(reader.get(), "/s", &received);
  ASSERT_TRUE(WaitUntil([&] { return server.Current() != nullptr; }, seconds(30)));
  server.Current()->Push("data: x\n\n");
  ASSERT_TRUE(WaitUntil([&] { return received.Data() == "data: x\n\n"; }, seconds(30)));
  {
    std::lock_guard<std::mutex> lock(server.mutex);
    EXPECT_EQ(server.authorization, "Bearer abc");
  }
  // The server going down ends the stream (cleanly or as a broken
  // connection), without a Cancel().
  server.server->Shutdown();
  ASSERT_EQ(done.wait_for(seconds(60)), std::future_status::ready);
  auto end = done.get();
  if (!end) {
    EXPECT_EQ(end.error().code(), ErrorCode::kIoError) << end.error().message();
  }
  ::unlink(path.c_str());
  ::rmdir(dir_template);
}

TEST(HttpStreamReaderTest, ErrorStatusComesBackWithItsBody) {
  StreamServer server;
  ASSERT_NE(server.server, nullptr);
  auto reader = HttpStreamReader::Create(fmt::format("http://127.0.0.1:{}", server.server->port())).value();
  bool opened = false;
  auto end = reader->Get("/denied", [&](int) { opened = true; }, [&](std::string_view) { opened = true; });
  ASSERT_TRUE(end) << end.error().message();
  EXPECT_EQ(end->status, 403);
  EXPECT_EQ(end->body, R"({"message": "no"})");
  EXPECT_FALSE(opened);
  // The same reader can go on with another request.
  Received received;
  auto done = GetAsync(reader.get(), "/s", &received);
  ASSERT_TRUE(WaitUntil([&] { return server.Current() != nullptr; }, seconds(30)));
  server.Current()->Push("data: y\n\n");
  ASSERT_TRUE(WaitUntil([&] { return received.Data() == "data: y\n\n"; }, seconds(30)));
  reader->Cancel();
  ASSERT_EQ(done.wait_for(seconds(30)), std::future_status::ready);
  server.server->Shutdown();
}

TEST(HttpStreamReaderTest, SilencePastIdleTimeoutIsATimeout) {
  StreamServer server;
  ASSERT_NE(server.server, nullptr);
  HttpStreamOptions options;
  options.idle_timeout = milliseconds(200);
  auto reader = HttpStreamReader::Create(fmt::format("http://127.0.0.1:{}", server.server->port()), options).value();
  auto end = reader->Get("/s", nullptr, nullptr);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code(), ErrorCode::kTimeout) << end.error().message();
  server.server->Shutdown();
}

TEST(HttpStreamReaderTest, NobodyListeningIsUnavailable) {
  HttpStreamOptions options;
  options.unix_socket_path = "/nonexistent-zeus-dir/s.sock";
  auto reader = HttpStreamReader::Create("http://localhost", options).value();
  auto end = reader->Get("/s", nullptr, nullptr);
  ASSERT_FALSE(end);
  EXPECT_EQ(end.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(end.error().message(), HasSubstr("unix:/nonexistent-zeus-dir/s.sock"));
  EXPECT_FALSE(HttpStreamReader::Create("https://x"));
}

}  // namespace
}  // namespace zeus::http
