// Copyright 2026 The Zeus C++ Authors.

#include "http/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/ports.h"

namespace zeus::http {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

// How long a test waits for something that should happen (a generous
// deadline for a loaded machine, not a measurement).
constexpr milliseconds kPatience{30000};

// Polls `done` until it holds or kPatience passes; true when it held.
template <class Predicate>
bool WaitUntil(Predicate done) {
  const auto deadline = Clock::now() + kPatience;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

// A plain blocking TCP connection to 127.0.0.1, for sending what HttpClient
// never would.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      connect_errno_ = errno;
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return fd_ >= 0; }
  int connect_errno() const { return connect_errno_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Reads one response (headers plus Content-Length bytes of body). Returns
  // what arrived, possibly incomplete when the time runs out or the peer
  // closes.
  std::string ReadResponse(milliseconds timeout = kPatience) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const std::size_t header_end = pending_.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        std::size_t length = 0;
        std::string lower = pending_.substr(0, header_end);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const std::size_t at = lower.find("content-length:");
        if (at != std::string::npos) length = std::stoul(lower.substr(at + 15));
        const std::size_t total = header_end + 4 + length;
        if (pending_.size() >= total) {
          std::string response = pending_.substr(0, total);
          pending_.erase(0, total);
          return response;
        }
      }
      if (!ReadSome(deadline)) {
        std::string partial;
        partial.swap(pending_);
        return partial;
      }
    }
  }

  // Waits until the peer closes the connection (EOF or reset) or the time
  // runs out. True when it closed; `received` gets any bytes that came first.
  bool WaitForClose(milliseconds timeout, std::string* received = nullptr) {
    const auto deadline = Clock::now() + timeout;
    while (ReadSome(deadline)) {
    }
    if (received != nullptr) *received = pending_;
    return closed_;
  }

  // What arrives within 100 ms (maybe nothing), taken out of the buffer.
  std::string ReceiveSome() {
    ReadSome(Clock::now() + milliseconds(100));
    return std::exchange(pending_, "");
  }

 private:
  // Appends what arrives to pending_. False on EOF, error or timeout.
  bool ReadSome(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    pending_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  int connect_errno_ = 0;
  bool closed_ = false;
  std::string pending_;
};

// TCP sockets (not listening) with `port` at either end, from /proc/net/tcp*.
// Counts TCP sockets in the network namespace that have `port` at either end
// and are in `state` (the kernel's hex code: "01" ESTABLISHED, "06"
// TIME_WAIT). Other processes share the namespace, so callers must allow for
// strangers' sockets in states this process does not own.
int CountSocketsOnPort(std::uint16_t port, const std::string& wanted_state) {
  int count = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state != wanted_state) continue;
      auto port_of = [](const std::string& address) {
        return static_cast<std::uint16_t>(std::stoul(address.substr(address.rfind(':') + 1), nullptr, 16));
      };
      if (port_of(local) == port || port_of(remote) == port) ++count;
    }
  }
  return count;
}

HttpServerOptions TestOptions() {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  options.request_timeout = milliseconds(5000);
  options.shutdown_grace = milliseconds(5000);
  return options;
}

HttpResponse Echo(const HttpRequest& request) {
  return HttpResponse{200, request.method + " " + request.target + " " + request.content_type + "\n" + request.body,
                      "text/plain"};
}

std::unique_ptr<HttpServer> StartOrDie(const HttpServerOptions& options, HttpHandler handler) {
  Result<std::unique_ptr<HttpServer>> server = HttpServer::Start(options, std::move(handler));
  if (!server) {
    ADD_FAILURE() << "HttpServer::Start: " << server.error().message();
    return nullptr;
  }
  return std::move(*server);
}

std::unique_ptr<HttpClient> ClientOrDie(std::uint16_t port, const HttpClientOptions& options = {}) {
  Result<std::unique_ptr<HttpClient>> client = HttpClient::Create(fmt::format("http://127.0.0.1:{}", port), options);
  if (!client) {
    ADD_FAILURE() << "HttpClient::Create: " << client.error().message();
    return nullptr;
  }
  return std::move(*client);
}

// Counts handler entries and lets a test wait for a number of them.
class Latch {
 public:
  void Arrive() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++count_;
    cv_.notify_all();
  }
  bool WaitFor(int count, milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return count_ >= count; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Blocks handlers until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

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
  // One open connection, seen from both ends. A client that reconnected for
  // each request would leave hundreds of sockets in TIME_WAIT; a few may
  // belong to an earlier process that had the same port, in parallel ctest.
  EXPECT_EQ(CountSocketsOnPort(server->port(), "01"), 2);
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
  EXPECT_THAT(client.error().message(), HasSubstr("only http:// is supported"));
}

TEST(HttpUrlTest, Table) {
  struct Good {
    std::string_view url;
    std::string_view host;
    std::uint16_t port;
    std::string_view prefix;
  };
  for (const Good& good : {Good{"http://127.0.0.1:8000", "127.0.0.1", 8000, ""},
                           Good{"http://localhost", "localhost", 80, ""},
                           Good{"http://localhost/", "localhost", 80, ""},
                           Good{"http://bso.example.com:8080/api/", "bso.example.com", 8080, "/api"},
                           Good{"HTTP://h:1/a/b//", "h", 1, "/a/b"},
                           Good{"http://[::1]:9000/x", "::1", 9000, "/x"},
                           Good{"http://[fe80::1]", "fe80::1", 80, ""},
                           Good{"http://h:65535", "h", 65535, ""}}) {
    Result<HttpUrl> url = ParseHttpUrl(good.url);
    ASSERT_TRUE(url) << good.url << ": " << url.error().message();
    EXPECT_EQ(url->host, good.host) << good.url;
    EXPECT_EQ(url->port, good.port) << good.url;
    EXPECT_EQ(url->prefix, good.prefix) << good.url;
  }

  struct Bad {
    std::string_view url;
    std::string_view why;
  };
  for (const Bad& bad : {Bad{"https://h:443", "only http:// is supported"},
                         Bad{"ftp://h", "only http:// is supported"},
                         Bad{"h:8000", "only http:// is supported"},
                         Bad{"", "only http:// is supported"},
                         Bad{"http://", "host is empty"},
                         Bad{"http://:80", "host is empty"},
                         Bad{"http://h:0", "bad port"},
                         Bad{"http://h:65536", "bad port"},
                         Bad{"http://h:-1", "bad port"},
                         Bad{"http://h:+1", "bad port"},
                         Bad{"http://h:80x", "bad port"},
                         Bad{"http://h:", "bad port"},
                         Bad{"http://u:p@h", "user information"},
                         Bad{"http://h/a?x=1", "query"},
                         Bad{"http://h#f", "query or fragment"},
                         Bad{"http://h a:1", "bad character"},
                         Bad{"http://h/a b", "bad character"},
                         Bad{"http://[::1", "unterminated"},
                         Bad{"http://[xyz]:1", "IPv6"},
                         Bad{"http://[::1]x", "after ']'"}}) {
    Result<HttpUrl> url = ParseHttpUrl(bad.url);
    ASSERT_FALSE(url) << bad.url;
    EXPECT_EQ(url.error().code(), ErrorCode::kInvalidArgument) << bad.url;
    EXPECT_THAT(url.error().message(), HasSubstr(bad.why)) << bad.url;
  }
}

}  // namespace
}  // namespace zeus::http

namespace zeus::http {
namespace {

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

// A body stream that hands out what the test pushes, and reports its end.
class TestStream final : public HttpBodyStream {
 public:
  explicit TestStream(std::atomic<bool>* destroyed) : destroyed_(destroyed) {}
  ~TestStream() override { destroyed_->store(true); }
  void SetWakeup(std::function<void()> wakeup) override {
    std::lock_guard<std::mutex> lock(mutex_);
    wakeup_ = std::move(wakeup);
  }
  std::string Next() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(pending_, "");
  }
  void Push(const std::string& data) {
    std::function<void()> wakeup;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ += data;
      wakeup = wakeup_;
    }
    if (wakeup) wakeup();
  }
  bool started() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<bool>(wakeup_);
  }

 private:
  std::atomic<bool>* destroyed_;
  std::mutex mutex_;
  std::function<void()> wakeup_;
  std::string pending_;
};

TEST(HttpStreamTest, ChunksFollowTheProducerAndEndWithTheClient) {
  std::atomic<bool> destroyed{false};
  std::shared_ptr<TestStream> stream = std::make_shared<TestStream>(&destroyed);
  std::weak_ptr<TestStream> weak = stream;
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
