// Copyright 2026 The Zeus C++ Authors.
//
// HttpServer: round trips, limits, caps, shutdown, HEAD, headers.

#include "http/http.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/http_test_util.h"

namespace zeus::http {
namespace {

using namespace test_util;  // NOLINT(build/namespaces): the tests' own helpers

TEST(HttpTest, EchoRoundTrip) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  ASSERT_NE(server->port(), 0);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);

  Result<HttpResponse> post = client->Send("POST", "/jobs/batch_size?job_id=a-1&x=%20y", R"({"batch_size": 64})");
  ASSERT_TRUE(post) << post.error().message();
  EXPECT_EQ(post->status, 200);
  EXPECT_EQ(post->content_type, "text/plain");
  EXPECT_EQ(post->body, "POST /jobs/batch_size?job_id=a-1&x=%20y application/json\n{\"batch_size\": 64}");

  Result<HttpResponse> get = client->Send("GET", "/jobs");
  ASSERT_TRUE(get) << get.error().message();
  EXPECT_EQ(get->body, "GET /jobs \n");

  Result<HttpResponse> patch = client->Send("PATCH", "/x", "{}");
  ASSERT_TRUE(patch) << patch.error().message();
  EXPECT_EQ(patch->body, "PATCH /x application/json\n{}");

  // HEAD: the server sends the headers only, and the client does not wait
  // for a body.
  Result<HttpResponse> head = client->Send("HEAD", "/h");
  ASSERT_TRUE(head) << head.error().message();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  Result<HttpResponse> after_head = client->Send("GET", "/after");
  ASSERT_TRUE(after_head) << after_head.error().message();
  EXPECT_EQ(after_head->body, "GET /after \n");
}

TEST(HttpTest, PrefixStatusAndContentTypePassThrough) {
  auto server = StartOrDie(TestOptions(), [](const HttpRequest& request) {
    if (request.target == "/api/v1/missing") return HttpResponse{404, R"({"message": "no such job"})"};
    return HttpResponse{201, request.target, "text/x-custom"};
  });
  ASSERT_NE(server, nullptr);
  auto client = HttpClient::Create(fmt::format("http://127.0.0.1:{}/api/v1/", server->port()));
  ASSERT_TRUE(client) << client.error().message();
  EXPECT_EQ((*client)->base_url(), fmt::format("http://127.0.0.1:{}/api/v1", server->port()));

  Result<HttpResponse> created = (*client)->Send("PUT", "/jobs/1", "{}");
  ASSERT_TRUE(created) << created.error().message();
  EXPECT_EQ(created->status, 201);
  EXPECT_EQ(created->content_type, "text/x-custom");
  EXPECT_EQ(created->body, "/api/v1/jobs/1");

  Result<HttpResponse> missing = (*client)->Send("GET", "/missing");
  ASSERT_TRUE(missing) << missing.error().message();
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->content_type, "application/json");
  EXPECT_EQ(missing->body, R"({"message": "no such job"})");

  Result<HttpResponse> bad_target = (*client)->Send("GET", "no-slash");
  ASSERT_FALSE(bad_target);
  EXPECT_EQ(bad_target.error().code(), ErrorCode::kInvalidArgument);
}

TEST(HttpTest, ManySequentialRequestsShareOneConnection) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 500; ++i) {
    const std::string body = fmt::format("{{\"i\": {}}}", i);
    Result<HttpResponse> response = client->Send("POST", fmt::format("/seq?i={}", i), body);
    ASSERT_TRUE(response) << i << ": " << response.error().message();
    ASSERT_EQ(response->body, fmt::format("POST /seq?i={} application/json\n{}", i, body));
  }
  // One open connection, seen from both ends (in this process: other programs
  // may hold connections to a port this process had before). A client that
  // reconnected for each request would leave hundreds of sockets in
  // TIME_WAIT; a few may belong to an earlier process that had the same
  // port, in parallel ctest.
  EXPECT_EQ(CountOwnSocketsOnPort(server->port(), "01"), 2);
  EXPECT_LT(CountSocketsOnPort(server->port(), "06"), 20);
}

TEST(HttpTest, RawKeepAliveAndPipelining) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());

  ASSERT_TRUE(raw.Send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string one = raw.ReadResponse();
  EXPECT_THAT(one, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(one, HasSubstr("Content-Type: text/plain\r\n"));
  EXPECT_THAT(one, HasSubstr("Content-Length: 10\r\n"));
  EXPECT_THAT(one, ::testing::Not(HasSubstr("Connection: close")));

  // Two requests in one write; answered in order on the same connection.
  ASSERT_TRUE(raw.Send("POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                       "GET /three HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(raw.ReadResponse(), HasSubstr("\r\n\r\nPOST /two \nabc"));
  EXPECT_THAT(raw.ReadResponse(), HasSubstr("\r\n\r\nGET /three \n"));

  // Connection: close is honoured.
  ASSERT_TRUE(raw.Send("GET /four HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string four = raw.ReadResponse();
  EXPECT_THAT(four, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(four, HasSubstr("GET /four"));
  EXPECT_TRUE(raw.WaitForClose(kPatience));

  // HTTP/1.0 without keep-alive: one response, then the server closes.
  RawSocket old(server->port());
  ASSERT_TRUE(old.connected());
  ASSERT_TRUE(old.Send("GET /old HTTP/1.0\r\n\r\n"));
  EXPECT_THAT(old.ReadResponse(), StartsWith("HTTP/1.0 200 OK\r\n"));
  EXPECT_TRUE(old.WaitForClose(kPatience));
}

TEST(HttpTest, ConcurrentClients) {
  HttpServerOptions options = TestOptions();
  options.threads = 4;
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  constexpr int kThreads = 16;
  constexpr int kRequests = 200;
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Result<std::unique_ptr<HttpClient>> client =
          HttpClient::Create(fmt::format("http://127.0.0.1:{}", server->port()));
      if (!client) {
        failed += kRequests;
        return;
      }
      for (int i = 0; i < kRequests; ++i) {
        const std::string body = fmt::format("{{\"t\": {}, \"i\": {}}}", t, i);
        Result<HttpResponse> response = (*client)->Send("POST", fmt::format("/c?t={}&i={}", t, i), body);
        if (response && response->status == 200 &&
            response->body == fmt::format("POST /c?t={}&i={} application/json\n{}", t, i, body)) {
          ++ok;
        } else {
          ++failed;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), kThreads * kRequests);
}

TEST(HttpTest, OversizedBodyGets413) {
  HttpServerOptions options = TestOptions();
  options.max_body_bytes = 1024;
  std::atomic<int> calls{0};
  auto server = StartOrDie(options, [&](const HttpRequest& request) {
    ++calls;
    return Echo(request);
  });
  ASSERT_NE(server, nullptr);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);

  for (std::size_t size : {std::size_t{1025}, std::size_t{4096}, std::size_t{4} << 20}) {
    Result<HttpResponse> response = client->Send("POST", "/big", std::string(size, 'x'));
    ASSERT_TRUE(response) << size << ": " << response.error().message();
    EXPECT_EQ(response->status, 413) << size;
    EXPECT_EQ(response->content_type, "application/json");
    EXPECT_THAT(response->body, HasSubstr("\"message\": "));
    EXPECT_THAT(response->body, HasSubstr("1024 bytes"));
  }
  // Exactly at the limit is fine, and the client recovered from the closes.
  Result<HttpResponse> fits = client->Send("POST", "/fits", std::string(1024, 'y'));
  ASSERT_TRUE(fits) << fits.error().message();
  EXPECT_EQ(fits->status, 200);
  EXPECT_EQ(calls.load(), 1);

  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n"));
  const std::string answer = raw.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("Content-Type: application/json\r\n"));
  EXPECT_TRUE(raw.WaitForClose(kPatience));
}

TEST(HttpTest, HugeHeadersGet431) {
  HttpServerOptions options = TestOptions();
  options.max_header_bytes = 1024;
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> response = client->Send("GET", "/" + std::string(4096, 'a'));
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(response->status, 431);
  EXPECT_THAT(response->body, HasSubstr("1024 bytes"));

  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8192, 'b') + "\r\n\r\n"));
  const std::string answer = raw.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 431 "));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_TRUE(raw.WaitForClose(kPatience));
}

TEST(HttpTest, GarbageGets400) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  for (std::string_view garbage : {std::string_view("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15),
                                   std::string_view("GET / HTTP/9 nonsense\r\n\r\n"),
                                   std::string_view("GET / HTTP/1.1\r\nBad Header\r\n\r\n")}) {
    RawSocket raw(server->port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send(garbage));
    const std::string answer = raw.ReadResponse();
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 400 ")) << garbage;
    EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
    EXPECT_THAT(answer, HasSubstr("{\"message\": \"malformed HTTP request: "));
    EXPECT_TRUE(raw.WaitForClose(kPatience));
  }
}

// Request smuggling (RFC 9112 6.3): a Transfer-Encoding whose last coding is
// not chunked leaves the body's length unknown. Beast would read no body, and
// the body (here a second request) would run as the next request.
TEST(HttpTest, TransferCodingsOtherThanChunkedAreRefusedAndClose) {
  std::mutex mutex;
  std::vector<std::string> seen;
  auto server = StartOrDie(TestOptions(), [&](const HttpRequest& request) {
    std::lock_guard lock(mutex);
    seen.push_back(request.target);
    return Echo(request);
  });
  ASSERT_NE(server, nullptr);
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  struct Case {
    std::string head;
    std::string status;
  };
  for (const Case& c : {Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n", "400"},
                        Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n", "400"},
                        Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                             "Transfer-Encoding: identity\r\n", "400"},
                        Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n", "400"},
                        Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n", "400"},
                        Case{"POST /front HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n", "400"},
                        Case{"POST /front HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n", "501"}}) {
    RawSocket raw(server->port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send(c.head + "\r\n" + smuggled));
    const std::string answer = raw.ReadResponse();
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 " + c.status + " ")) << c.head;
    EXPECT_THAT(answer, HasSubstr("Connection: close\r\n")) << c.head;
    EXPECT_THAT(answer, HasSubstr("Transfer-Encoding")) << c.head;
    EXPECT_TRUE(raw.WaitForClose(kPatience)) << c.head;
  }
  // A chunked body alone is read as the body, and the next request is real.
  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
                       "3\r\nabc\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(raw.ReadResponse(), HasSubstr("\r\n\r\nPOST /chunked \nabc"));
  EXPECT_THAT(raw.ReadResponse(), HasSubstr("\r\n\r\nGET /next \n"));
  std::lock_guard lock(mutex);
  EXPECT_THAT(seen, ::testing::ElementsAre("/chunked", "/next"));
}

TEST(HttpTest, IncompleteRequestTimesOut) {
  HttpServerOptions options = TestOptions();
  options.request_timeout = milliseconds(200);
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);

  RawSocket half(server->port());
  ASSERT_TRUE(half.connected());
  ASSERT_TRUE(half.Send("GET / HTTP/1.1\r\nHost: x\r\n"));
  std::string received;
  EXPECT_TRUE(half.WaitForClose(kPatience, &received));
  EXPECT_EQ(received, "");

  // An idle kept-alive connection is closed after the same time.
  RawSocket idle(server->port());
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(idle.ReadResponse(), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_TRUE(idle.WaitForClose(kPatience));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().open_connections == 0; }));

  // The client notices that the server closed its idle connection, and
  // reconnects: the second request needs a second connection.
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Send("GET", "/a"));
  const std::uint64_t accepted = server->stats().connections_accepted;
  ASSERT_TRUE(WaitUntil([&] { return server->stats().open_connections == 0; }))
      << "the server did not close the idle connection";
  Result<HttpResponse> again = client->Send("GET", "/b");
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->body, "GET /b \n");
  EXPECT_EQ(server->stats().connections_accepted, accepted + 1);
}

TEST(HttpTest, GracefulShutdown) {
  HttpServerOptions options = TestOptions();
  options.threads = 4;
  options.shutdown_grace = kPatience;
  Latch entered;
  Gate release;
  std::atomic<int> finished{0};
  auto server = StartOrDie(options, [&](const HttpRequest& request) {
    if (request.target == "/slow") {
      entered.Arrive();
      release.Wait();
      finished++;
      return HttpResponse{200, "slow done", "text/plain"};
    }
    return Echo(request);
  });
  ASSERT_NE(server, nullptr);
  const std::uint16_t port = server->port();

  // An idle kept-alive connection.
  RawSocket idle(port);
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.Send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(idle.ReadResponse(), StartsWith("HTTP/1.1 200 OK"));

  // Two slow requests in flight: one from HttpClient, one raw.
  Result<HttpResponse> client_result = Fail(ErrorCode::kInternal, "not run");
  std::thread client_thread([&] {
    HttpClientOptions patient;
    patient.request_timeout = kPatience;
    auto client = ClientOrDie(port, patient);
    if (client) client_result = client->Send("GET", "/slow");
  });
  RawSocket slow(port);
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(entered.WaitFor(2, kPatience));

  int finished_when_shutdown_returned = -1;
  std::thread shutter([&] {
    server->Shutdown();
    finished_when_shutdown_returned = finished.load();
  });

  // Shutdown has begun once the idle connection is closed; the handlers
  // are still held, so it cannot have returned yet.
  EXPECT_TRUE(idle.WaitForClose(kPatience));
  release.Open();
  const std::string answer = slow.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nslow done"));
  EXPECT_TRUE(slow.WaitForClose(kPatience));

  client_thread.join();
  shutter.join();
  ASSERT_TRUE(client_result) << client_result.error().message();
  EXPECT_EQ(client_result->status, 200);
  EXPECT_EQ(client_result->body, "slow done");
  EXPECT_EQ(finished_when_shutdown_returned, 2) << "Shutdown returned before the handlers finished";

  server->Wait();  // returns at once: stopped
  RawSocket late(port);
  EXPECT_FALSE(late.connected());
  EXPECT_EQ(late.connect_errno(), ECONNREFUSED);
  auto client = ClientOrDie(port);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> refused = client->Send("GET", "/fast");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnavailable);
}

// A request whose first bytes arrived before Shutdown() is waited for: when
// the rest comes during the grace period, it is answered.
TEST(HttpTest, ShutdownFinishesARequestThatHadBegun) {
  HttpServerOptions options = TestOptions();
  options.shutdown_grace = kPatience;
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  RawSocket idle(server->port());
  ASSERT_TRUE(idle.connected());
  RawSocket partial(server->port());
  ASSERT_TRUE(partial.connected());
  ASSERT_TRUE(partial.Send("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().requests_started == 1; }));
  std::thread shutter([&] { server->Shutdown(); });
  EXPECT_TRUE(idle.WaitForClose(kPatience));  // Shutdown has begun
  ASSERT_TRUE(partial.Send("defghij"));
  const std::string answer = partial.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("POST /p"));
  EXPECT_THAT(answer, HasSubstr("abcdefghij"));
  EXPECT_TRUE(partial.WaitForClose(kPatience));
  shutter.join();
}

// ... but only for shutdown_grace: with a request timeout of an hour,
// Shutdown() returns (a test that hangs here fails by the test timeout) and
// the unfinished request's connection is closed without an answer.
TEST(HttpTest, ShutdownGraceBoundsAnUnfinishedRequest) {
  HttpServerOptions options = TestOptions();
  options.shutdown_grace = milliseconds(200);
  options.request_timeout = std::chrono::hours(1);
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  RawSocket partial(server->port());
  ASSERT_TRUE(partial.connected());
  ASSERT_TRUE(partial.Send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().requests_started == 1; }));
  server->Shutdown();
  std::string received;
  EXPECT_TRUE(partial.WaitForClose(kPatience, &received));
  EXPECT_EQ(received, "");
}

TEST(HttpTest, ShutdownWaitsForARunningHandler) {
  HttpServerOptions options = TestOptions();
  options.shutdown_grace = milliseconds(100);
  Latch entered;
  std::atomic<bool> shutdown_called{false};
  std::atomic<bool> returned{false};
  Clock::time_point shutdown_at;
  auto server = StartOrDie(options, [&](const HttpRequest&) {
    entered.Arrive();
    // Returns only once the grace period has certainly run out.
    WaitUntil([&] { return shutdown_called.load(); });
    while (Clock::now() < shutdown_at + milliseconds(300)) std::this_thread::sleep_for(milliseconds(10));
    returned = true;
    return HttpResponse{200, "late"};
  });
  ASSERT_NE(server, nullptr);
  RawSocket slow(server->port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(entered.WaitFor(1, kPatience));
  shutdown_at = Clock::now();
  shutdown_called = true;
  server->Shutdown();
  // A handler cannot be interrupted: the worker threads are joined after it
  // returns, even past the grace period; the connection is then closed.
  EXPECT_TRUE(returned.load());
  EXPECT_TRUE(slow.WaitForClose(kPatience));
}

TEST(HttpTest, ShutdownIsIdempotentAndWaitReturns) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    server->Wait();
    waited = true;
  });
  std::thread a([&] { server->Shutdown(); });
  std::thread b([&] { server->Shutdown(); });
  a.join();
  b.join();
  server->Shutdown();
  waiter.join();
  EXPECT_TRUE(waited.load());
  server->Wait();
  server.reset();  // the destructor shuts down again
}

TEST(HttpTest, ShutdownFromTheHandlerThread) {
  std::atomic<HttpServer*> self{nullptr};
  auto server = StartOrDie(TestOptions(), [&](const HttpRequest& request) {
    if (request.target == "/quit") self.load()->Shutdown();
    return HttpResponse{200, "bye"};
  });
  ASSERT_NE(server, nullptr);
  self = server.get();
  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("GET /quit HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string answer = raw.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_TRUE(raw.WaitForClose(kPatience));
  server->Wait();  // the workers run out of work by themselves
}

TEST(HttpTest, HandlerExceptionsBecome500) {
  auto server = StartOrDie(TestOptions(), [](const HttpRequest& request) -> HttpResponse {
    if (request.target == "/throw") throw std::runtime_error("boom \"quoted\"");
    if (request.target == "/throw-int") throw 42;
    if (request.target == "/bad-status") return HttpResponse{42, ""};
    return HttpResponse{200, "fine"};
  });
  ASSERT_NE(server, nullptr);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> thrown = client->Send("GET", "/throw");
  ASSERT_TRUE(thrown) << thrown.error().message();
  EXPECT_EQ(thrown->status, 500);
  EXPECT_EQ(thrown->body, R"({"message": "internal error: boom \"quoted\""})");
  Result<HttpResponse> thrown_int = client->Send("GET", "/throw-int");
  ASSERT_TRUE(thrown_int);
  EXPECT_EQ(thrown_int->status, 500);
  EXPECT_THAT(thrown_int->body, HasSubstr("internal error"));
  Result<HttpResponse> bad_status = client->Send("GET", "/bad-status");
  ASSERT_TRUE(bad_status);
  EXPECT_EQ(bad_status->status, 500);
  Result<HttpResponse> fine = client->Send("GET", "/ok");
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->body, "fine");
}

TEST(HttpTest, BindFailureIsUnavailable) {
  auto first = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(first, nullptr);
  HttpServerOptions options = TestOptions();
  options.port = first->port();
  Result<std::unique_ptr<HttpServer>> second = HttpServer::Start(options, Echo);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(second.error().message(), HasSubstr(fmt::format("127.0.0.1:{}", first->port())));
  EXPECT_THAT(second.error().message(), HasSubstr("in use"));
  EXPECT_EQ(second.error().native_code(), EADDRINUSE);
}

TEST(HttpTest, BadHosts) {
  HttpServerOptions options = TestOptions();
  options.host = "no such host!";
  Result<std::unique_ptr<HttpServer>> unparsable = HttpServer::Start(options, Echo);
  ASSERT_FALSE(unparsable);
  EXPECT_EQ(unparsable.error().code(), ErrorCode::kInvalidArgument);

  options.host = "192.0.2.1";  // TEST-NET-1: not an address of this machine
  Result<std::unique_ptr<HttpServer>> foreign = HttpServer::Start(options, Echo);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(foreign.error().message(), HasSubstr("192.0.2.1:0"));
}

TEST(HttpTest, LocalhostAndIpv6) {
  HttpServerOptions options = TestOptions();
  options.host = "localhost";
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  auto client = HttpClient::Create(fmt::format("http://localhost:{}", server->port()));
  ASSERT_TRUE(client);
  Result<HttpResponse> response = (*client)->Send("GET", "/local");
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(response->body, "GET /local \n");

  options.host = "::1";
  Result<std::unique_ptr<HttpServer>> v6 = HttpServer::Start(options, Echo);
  if (!v6) GTEST_SKIP() << "no IPv6 loopback: " << v6.error().message();
  auto v6_client = HttpClient::Create(fmt::format("http://[::1]:{}", (*v6)->port()));
  ASSERT_TRUE(v6_client);
  Result<HttpResponse> v6_response = (*v6_client)->Send("GET", "/six");
  ASSERT_TRUE(v6_response) << v6_response.error().message();
  EXPECT_EQ(v6_response->body, "GET /six \n");
}

TEST(HttpTest, ConnectionsPastTheCapGet503WithRetryAfter) {
  HttpServerOptions options = TestOptions();
  options.max_connections = 3;
  options.retry_after = std::chrono::seconds(2);
  auto server = StartOrDie(options, Echo);
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<RawSocket>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(std::make_unique<RawSocket>(server->port()));
    ASSERT_TRUE(open.back()->connected());
  }
  ASSERT_TRUE(WaitUntil([&] { return server->stats().open_connections == 3; }));

  RawSocket extra(server->port());
  ASSERT_TRUE(extra.connected());
  ASSERT_TRUE(extra.Send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string answer = extra.ReadResponse();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 503 "));
  EXPECT_THAT(answer, HasSubstr("Retry-After: 2\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("3 connections open, its limit"));
  EXPECT_TRUE(extra.WaitForClose(kPatience));
  EXPECT_EQ(server->stats().connections_rejected, 1u);

  // The connections within the cap are served, and a closed one frees a place.
  ASSERT_TRUE(open[0]->Send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(open[0]->ReadResponse(), StartsWith("HTTP/1.1 200 OK"));
  open.pop_back();
  ASSERT_TRUE(WaitUntil([&] { return server->stats().open_connections == 2; }));
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> served = client->Send("GET", "/after");
  ASSERT_TRUE(served) << served.error().message();
  EXPECT_EQ(served->status, 200);
}

TEST(HttpTest, RequestsPastTheInFlightCapGet503WithRetryAfter) {
  HttpServerOptions options = TestOptions();
  options.threads = 4;
  options.max_requests_in_flight = 2;
  Latch entered;
  Gate release;
  auto server = StartOrDie(options, [&](const HttpRequest& request) {
    if (request.target == "/slow") {
      entered.Arrive();
      release.Wait();
    }
    return Echo(request);
  });
  ASSERT_NE(server, nullptr);
  RawSocket a(server->port());
  RawSocket b(server->port());
  ASSERT_TRUE(a.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(b.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(entered.WaitFor(2, kPatience));

  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> refused = client->Send("GET", "/fast");
  ASSERT_TRUE(refused) << refused.error().message();
  EXPECT_EQ(refused->status, 503);
  const std::string* retry_after = FindHeader(*refused, "retry-after");
  ASSERT_NE(retry_after, nullptr);
  EXPECT_EQ(*retry_after, "1");
  EXPECT_THAT(refused->body, HasSubstr("2 requests in flight, its limit"));
  EXPECT_EQ(server->stats().requests_rejected, 1u);

  release.Open();
  EXPECT_THAT(a.ReadResponse(), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(b.ReadResponse(), StartsWith("HTTP/1.1 200 OK"));
  ASSERT_TRUE(WaitUntil([&] { return server->stats().requests_in_flight == 0; }));
  Result<HttpResponse> served = client->Send("GET", "/fast");
  ASSERT_TRUE(served) << served.error().message();
  EXPECT_EQ(served->status, 200);
}

TEST(HttpTest, HeadAnswersWithoutABody) {
  auto server = StartOrDie(TestOptions(), Echo);
  ASSERT_NE(server, nullptr);
  RawSocket raw(server->port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("HEAD /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string received;
  EXPECT_TRUE(raw.WaitForClose(kPatience, &received));
  EXPECT_THAT(received, StartsWith("HTTP/1.1 200 OK\r\n"));
  // The GET body would be "HEAD /h \n": 9 bytes.
  EXPECT_THAT(received, HasSubstr("Content-Length: 9\r\n"));
  EXPECT_THAT(received, ::testing::EndsWith("\r\n\r\n"));

  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> head = client->Send("HEAD", "/h");
  ASSERT_TRUE(head) << head.error().message();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  Result<HttpResponse> get = client->Send("GET", "/h");  // the connection is still usable
  ASSERT_TRUE(get) << get.error().message();
  EXPECT_EQ(get->body, "GET /h \n");
}

TEST(HttpTest, HandlerHeadersAreSent) {
  auto server = StartOrDie(TestOptions(), [](const HttpRequest&) {
    HttpResponse r{405, "{}"};
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  });
  ASSERT_NE(server, nullptr);
  auto client = ClientOrDie(server->port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> r = client->Send("POST", "/x", "{}");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->status, 405);
  const std::string* allow = FindHeader(*r, "ALLOW");
  ASSERT_NE(allow, nullptr);
  EXPECT_EQ(*allow, "GET, HEAD");
  EXPECT_EQ(FindHeader(*r, "Retry-After"), nullptr);
}

}  // namespace
}  // namespace zeus::http
