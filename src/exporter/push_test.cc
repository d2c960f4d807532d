// Copyright 2026 The Zeus C++ Authors.
//
// The push helpers' behaviour that needs no Pushgateway: URL and bucket
// validation, a refused gateway logged once per window, and a gateway that
// never answers not stalling the caller. Pushes reaching a real Pushgateway
// are tested in tests/integration/exporter_test.cc.

#include "zeus/exporter/push.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include "exporter/pusher.h"
#include "testing/ports.h"
#include "testing/wait.h"

namespace zeus::exporter {
namespace {

TEST(ParsePushgatewayUrlTest, AcceptsZeusForms) {
  struct Case {
    const char* url;
    const char* host;
    const char* port;
  };
  for (const Case& c : {Case{"http://localhost:9091", "http://localhost", "9091"},
                        Case{"localhost:9091", "http://localhost", "9091"},
                        Case{"https://gw.example.com", "https://gw.example.com", "443"},
                        Case{"http://10.0.0.1/", "http://10.0.0.1", "80"},
                        Case{"http://[::1]:9091", "http://[::1]", "9091"},
                        Case{"https://[fe80::1]", "https://[fe80::1]", "443"}}) {
    auto a = ParsePushgatewayUrl(c.url);
    ASSERT_TRUE(a) << c.url << ": " << a.error().message();
    EXPECT_EQ(a->host, c.host) << c.url;
    EXPECT_EQ(a->port, c.port) << c.url;
  }
}

TEST(ParsePushgatewayUrlTest, RejectsMalformedUrls) {
  for (const char* url : {"", "ftp://host:1", "http://", "http://host:99999", "http://host:x", "http://host/path"}) {
    auto a = ParsePushgatewayUrl(url);
    ASSERT_FALSE(a) << url;
    EXPECT_EQ(a.error().code(), ErrorCode::kInvalidArgument) << url;
  }
  EXPECT_EQ(ParsePushgatewayUrl("http://host:99999").error().message(),
            "Pushgateway URL 'http://host:99999' has a port that is not a number from 1 to 65535; expected "
            "http://HOST[:PORT], https://HOST[:PORT] or HOST:PORT (e.g. http://localhost:9091)");
}

class PushTest : public ::testing::Test {
 protected:
  PushTest() { monitor_ = std::move(*monitor::Monitor::Create(nullptr, nullptr, {})); }

  PushTarget Target(const std::string& address) {
    return {"http://" + address, "job", [this](std::string_view line) {
              std::lock_guard lock(mu_);
              log_.emplace_back(line);
            }};
  }
  std::size_t LogLines() {
    std::lock_guard lock(mu_);
    return log_.size();
  }

  std::unique_ptr<monitor::Monitor> monitor_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

TEST_F(PushTest, EmptyOrUnsortedBucketsAreRejected) {
  EnergyBuckets empty;
  empty.gpu.clear();
  auto h = EnergyHistogram::Create(*monitor_, Target("127.0.0.1:9091"), empty);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().message(), "GPU bucket range cannot be empty");
  EnergyBuckets unsorted;
  unsorted.cpu = {10, 5};
  EXPECT_FALSE(EnergyHistogram::Create(*monitor_, Target("127.0.0.1:9091"), unsorted));
  EXPECT_FALSE(EnergyHistogram::Create(*monitor_, {"http://127.0.0.1:9091", "a/b", nullptr}));
}

TEST_F(PushTest, RefusedGatewayIsLoggedOncePerWindow) {
  testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  {
    auto counter = EnergyCumulativeCounter::Create(*monitor_, std::chrono::milliseconds(1), Target(refusing.address()));
    ASSERT_TRUE(counter);
    ASSERT_TRUE((*counter)->BeginWindow("w"));
    // Many failed pushes in one window ...
    ASSERT_TRUE(testing::WaitUntil([&] { return (*counter)->pushes_failed() >= 5; }));
    ASSERT_TRUE((*counter)->EndWindow("w"));
  }
  // ... one line.
  ASSERT_EQ(LogLines(), 1u);
  EXPECT_NE(log_[0].find("pushing window \"w\" of job \"job\""), std::string::npos) << log_[0];
  EXPECT_NE(log_[0].find("cannot connect"), std::string::npos) << log_[0];

  log_.clear();
  auto histogram = EnergyHistogram::Create(*monitor_, Target(refusing.address()));
  ASSERT_TRUE(histogram);
  std::uint64_t failed = 0;
  for (const char* window : {"a", "b"}) {
    ASSERT_TRUE((*histogram)->BeginWindow(window));
    ASSERT_TRUE((*histogram)->EndWindow(window));
    ++failed;
    ASSERT_TRUE(testing::WaitUntil([&] { return (*histogram)->pushes_failed() == failed; }));
  }
  EXPECT_EQ(LogLines(), 2u);  // one per window
}

TEST_F(PushTest, AGatewayThatNeverAnswersDoesNotStallTheCaller) {
  // A listening socket that accepts the TCP connection (kernel backlog) and
  // never answers the HTTP request.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  PushTarget target = Target("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)));
  target.flush_timeout = std::chrono::milliseconds(100);
  {
    auto histogram = EnergyHistogram::Create(*monitor_, target);
    ASSERT_TRUE(histogram);
    ASSERT_TRUE((*histogram)->BeginWindow("w"));
    // Returns although the push it queued is waiting for an answer.
    ASSERT_TRUE((*histogram)->EndWindow("w"));
    pollfd p{fd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 60'000), 1);  // the push connected ...
    EXPECT_EQ((*histogram)->pushes_failed(), 0u);  // ... and has not been answered
    ASSERT_TRUE((*histogram)->BeginWindow("w2"));
    ASSERT_TRUE((*histogram)->EndWindow("w2"));
  }  // the destructor gives up after flush_timeout and says so
  ASSERT_EQ(LogLines(), 1u);
  EXPECT_NE(log_[0].find("still unanswered"), std::string::npos) << log_[0];
  close(fd);
}

}  // namespace
}  // namespace zeus::exporter
