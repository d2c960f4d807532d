// Copyright 2026 The Zeus C++ Authors.
//
// Helpers shared by zeus_http's tests (http_test.cc: the server;
// http_client_test.cc: the client, URLs, Unix sockets, streamed bodies).

#ifndef ZEUS_SRC_HTTP_HTTP_TEST_UTIL_H_
#define ZEUS_SRC_HTTP_HTTP_TEST_UTIL_H_

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
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
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

#include "http/http.h"
#include "testing/ports.h"

namespace zeus::http::test_util {

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

namespace internal_sockets {
// Counts /proc/net/tcp{,6} entries in `wanted_state` with `port` at either
// end whose inode `keep` accepts.
template <typename Keep>
int CountTcpEntries(std::uint16_t port, const std::string& wanted_state, Keep keep) {
  int count = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state != wanted_state || !keep(inode)) continue;
      auto port_of = [](const std::string& address) {
        return static_cast<std::uint16_t>(std::stoul(address.substr(address.rfind(':') + 1), nullptr, 16));
      };
      if (port_of(local) == port || port_of(remote) == port) ++count;
    }
  }
  return count;
}
}  // namespace internal_sockets

// TCP sockets (not listening) with `port` at either end, from /proc/net/tcp*.
// Counts TCP sockets in the network namespace that have `port` at either end
// and are in `state` (the kernel's hex code: "01" ESTABLISHED, "06"
// TIME_WAIT). Other processes share the namespace, so callers must allow for
// strangers' sockets in states this process does not own.
inline int CountSocketsOnPort(std::uint16_t port, const std::string& wanted_state) {
  return internal_sockets::CountTcpEntries(port, wanted_state, [](const std::string&) { return true; });
}

// Like CountSocketsOnPort, but only the sockets this process holds open (by
// their inodes in /proc/self/fd), so that other programs on the machine
// cannot change the count. (A TIME_WAIT socket has no owner: count those with
// CountSocketsOnPort.)
inline int CountOwnSocketsOnPort(std::uint16_t port, const std::string& wanted_state) {
  std::set<std::string> own_inodes;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code link_ec;
    const std::string target = std::filesystem::read_symlink(it->path(), link_ec).string();
    if (!link_ec && target.rfind("socket:[", 0) == 0) own_inodes.insert(target.substr(8, target.size() - 9));
  }
  return internal_sockets::CountTcpEntries(port, wanted_state,
                                           [&](const std::string& inode) { return own_inodes.count(inode) > 0; });
}

inline HttpServerOptions TestOptions() {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.threads = 2;
  options.request_timeout = milliseconds(5000);
  options.shutdown_grace = milliseconds(5000);
  return options;
}

inline HttpResponse Echo(const HttpRequest& request) {
  return HttpResponse{200, request.method + " " + request.target + " " + request.content_type + "\n" + request.body,
                      "text/plain"};
}

inline std::unique_ptr<HttpServer> StartOrDie(const HttpServerOptions& options, HttpHandler handler) {
  Result<std::unique_ptr<HttpServer>> server = HttpServer::Start(options, std::move(handler));
  if (!server) {
    ADD_FAILURE() << "HttpServer::Start: " << server.error().message();
    return nullptr;
  }
  return std::move(*server);
}

inline std::unique_ptr<HttpClient> ClientOrDie(std::uint16_t port, const HttpClientOptions& options = {}) {
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

}  // namespace zeus::http::test_util

#endif  // ZEUS_SRC_HTTP_HTTP_TEST_UTIL_H_
