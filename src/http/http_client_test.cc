// Copyright 2026 The Zeus C++ Authors.
//
// HttpClient (timeouts, reconnects, foreign servers), Unix sockets, streamed bodies.

#include "http/http.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/fed_body_stream.h"
#include "http/http_test_util.h"

namespace zeus::http {
namespace {

using namespace test_util;  // NOLINT(build/namespaces): the tests' own helpers

TEST(HttpTest, ClientAgainstClosedPortIsUnavailable) {
  // Bound and never listened on: unlike the port of a server that has
  // stopped, no other process can start listening there meanwhile.
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  const auto port = static_cast<std::uint16_t>(refusing.port());
  auto client = ClientOrDie(port);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> response = client->Send("GET", "/");
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(response.error().message(), fmt::format("cannot connect to http://127.0.0.1:{}: Connection refused", port));
  EXPECT_EQ(response.error().native_code(), ECONNREFUSED);
}

TEST(HttpTest, ClientTimeout) {
  Gate release;
  auto server = StartOrDie(TestOptions(), [&](const HttpRequest& request) {
    if (request.target == "/slow") release.Wait();  // until the client gave up
    return HttpResponse{200, "done"};
  });
  ASSERT_NE(server, nullptr);
  HttpClientOptions client_options;
  client_options.request_timeout = milliseconds(100);
  auto client = ClientOrDie(server->port(), client_options);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> response = client->Send("GET", "/slow");
  release.Open();
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().code(), ErrorCode::kTimeout);
  EXPECT_EQ(response.error().message(), fmt::format("no response from http://127.0.0.1:{} within 100 ms", server->port()));
  // The same client works again (on a new connection).
  Result<HttpResponse> fast = client->Send("GET", "/fast");
  ASSERT_TRUE(fast) << fast.error().message();
  EXPECT_EQ(fast->body, "done");
}

TEST(HttpTest, ClientReconnectsAfterServerRestart) {
  auto first = StartOrDie(TestOptions(), [](const HttpRequest&) { return HttpResponse{200, "first"}; });
  ASSERT_NE(first, nullptr);
  const std::uint16_t port = first->port();
  auto client = ClientOrDie(port);
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> before = client->Send("GET", "/");
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_EQ(before->body, "first");
  first.reset();

  HttpServerOptions options = TestOptions();
  options.port = port;
  auto second = StartOrDie(options, [](const HttpRequest&) { return HttpResponse{200, "second"}; });
  ASSERT_NE(second, nullptr);
  for (int i = 0; i < 3; ++i) {
    Result<HttpResponse> after = client->Send("POST", "/", "{}");
    ASSERT_TRUE(after) << after.error().message();
    EXPECT_EQ(after->body, "second");
  }
  // One new connection, kept alive for all three requests.
  EXPECT_EQ(second->stats().connections_accepted, 1u);
}

// A server that is not ours: answers every request on one connection with
// `response` as written, then closes it (as Python's http.server does with
// HTTP/1.0). Serves `connections` connections, then stops.
class CannedServer {
 public:
  // `body`, when set, goes in a second write some time after `response`
  // (Python's server writes headers and body separately).
  CannedServer(std::string response, int connections, std::string body = {})
      : response_(std::move(response)), body_(std::move(body)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, connections] {
      for (int i = 0; i < connections; ++i) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        std::string request;
        char buffer[1024];
        while (request.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
          if (n <= 0) break;
          request.append(buffer, static_cast<std::size_t>(n));
        }
        SendAll(client, response_);
        if (!body_.empty()) {
          std::this_thread::sleep_for(milliseconds(20));  // not a synchronisation: only splits the writes
          SendAll(client, body_);
        }
        ::close(client);
      }
    });
  }
  ~CannedServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  static void SendAll(int fd, std::string_view rest) {
    while (!rest.empty()) {
      const ssize_t n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  std::string response_;
  std::string body_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// Python's http.server answers HTTP/1.0 with a Content-Length and closes. A
// Content-Length once made every such answer "body limit exceeded" (Boost
// 1.74 compares the length with an unset limit as if the limit were 0).
TEST(HttpTest, ClientReadsHttp10AnswersWithAContentLength) {
  const std::string body = R"({"ok": true})";
  CannedServer server(fmt::format("HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.11\r\nContent-Type: "
                                  "application/json\r\nContent-Length: {}\r\n\r\n",
                                  body.size()),
                      /*connections=*/2, body);
  auto client = ClientOrDie(server.port());
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 2; ++i) {  // the second request needs a new connection
    Result<HttpResponse> response = client->Send("GET", "/discover");
    ASSERT_TRUE(response) << response.error().message();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->content_type, "application/json");
    EXPECT_EQ(response->body, body);
  }
}

// The same answer without a Content-Length: the body runs to the close.
TEST(HttpTest, ClientReadsABodyThatEndsWithTheConnection) {
  CannedServer server("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", /*connections=*/1);
  auto client = ClientOrDie(server.port());
  ASSERT_NE(client, nullptr);
  Result<HttpResponse> response = client->Send("GET", "/");
  ASSERT_TRUE(response) << response.error().message();
  EXPECT_EQ(response->body, "until the end");
}

TEST(HttpTest, ClientCreateRejectsHttps) {
  Result<std::unique_ptr<HttpClient>> client = HttpClient::Create("https://example.com");
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client.error().message(),
            "URL 'https://example.com' has the unsupported scheme 'https'; expected http://HOST[:PORT][/PREFIX]");
}

// The server and the client over a Unix socket; the client's default headers
// reach the handler.
TEST(HttpUnixSocketTest, RoundTripWithHeaders) {
  char dir_template[] = "/tmp/zeus-http-uds-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/s.sock";
  HttpServerOptions options;
  options.unix_socket_path = path;
  options.threads = 2;
  auto server = HttpServer::Start(options, [](const HttpRequest& r) {
    std::string auth;
    for (const auto& [name, value] : r.headers) {
      if (name == "Authorization") auth = value;
    }
    return HttpResponse{200, r.method + " " + r.target + " " + auth, "text/plain"};
  });
  ASSERT_TRUE(server) << server.error().message();
  EXPECT_EQ((*server)->port(), 0);
  HttpClientOptions client_options;
  client_options.unix_socket_path = path;
  client_options.headers = {{"Authorization", "Bearer abc"}};
  auto client = HttpClient::Create("http://localhost", client_options);
  ASSERT_TRUE(client);
  for (int i = 0; i < 3; ++i) {  // kept alive
    auto r = (*client)->Send("GET", "/x?y=1");
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->body, "GET /x?y=1 Bearer abc");
  }
  (*server)->Shutdown();
  server->reset();
  HttpClientOptions missing;
  missing.unix_socket_path = path + ".missing";
  auto nobody = HttpClient::Create("http://localhost", missing).value()->Send("GET", "/");
  ASSERT_FALSE(nobody);
  EXPECT_EQ(nobody.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(nobody.error().message(), HasSubstr("unix:" + path + ".missing"));
  ::unlink(path.c_str());
  ::rmdir(dir_template);
}

TEST(HttpStreamTest, ChunksFollowTheProducerAndEndWithTheClient) {
  std::atomic<bool> destroyed{false};
  std::shared_ptr<FedBodyStream> stream = std::make_shared<FedBodyStream>(&destroyed);
  std::weak_ptr<FedBodyStream> weak = stream;
  HttpServerOptions options;
  options.port = 0;
  options.threads = 2;
  auto server = HttpServer::Start(options, [&stream](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.stream = std::exchange(stream, nullptr);
    return response;
  });
  ASSERT_TRUE(server);
  auto live = weak.lock();
  ASSERT_NE(live, nullptr);
  {
    RawSocket socket((*server)->port());
    socket.Send("GET /s HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(WaitUntil([&] { return live->started(); }));
    live->Push("data: 1\n\n");
    std::string got;
    ASSERT_TRUE(WaitUntil([&] {
      got += socket.ReceiveSome();
      return got.find("data: 1") != std::string::npos;
    }));
    EXPECT_THAT(got, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_THAT(got, HasSubstr("Transfer-Encoding: chunked"));
    EXPECT_THAT(got, HasSubstr("Content-Type: text/event-stream"));
    EXPECT_THAT(got, HasSubstr("9\r\ndata: 1\n\n\r\n"));
    live->Push("data: 2\n\n");
    ASSERT_TRUE(WaitUntil([&] {
      got += socket.ReceiveSome();
      return got.find("data: 2") != std::string::npos;
    }));
  }  // the client closes
  live.reset();
  ASSERT_TRUE(WaitUntil([&] { return destroyed.load(); }));
  (*server)->Shutdown();
}

}  // namespace
}  // namespace zeus::http
