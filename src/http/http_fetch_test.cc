// Copyright 2026 The Zeus C++ Authors.

#include "http/http_fetch.h"

#include <chrono>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/http_test_util.h"
#include "testing/ports.h"

namespace zeus::http {
namespace {

using namespace test_util;  // NOLINT(build/namespaces): the tests' own helpers
using ::testing::HasSubstr;

TEST(FetchUrlTest, GetsWithQueryAndHeaders) {
  auto server = StartOrDie(TestOptions(), [](const HttpRequest& request) {
    std::string token;
    for (const auto& [name, value] : request.headers) {
      if (name == "auth-token") token = value;
    }
    return HttpResponse{201, fmt::format("{} {} {}", request.method, request.target, token)};
  });
  ASSERT_NE(server, nullptr);
  FetchOptions options;
  options.headers.emplace_back("auth-token", "t0k");
  Result<HttpResponse> r =
      FetchUrl(fmt::format("http://127.0.0.1:{}/v3/x/latest?lat=1.5&lon=2&b=True", server->port()), options);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, "GET /v3/x/latest?lat=1.5&lon=2&b=True t0k");
  Result<HttpResponse> root = FetchUrl(fmt::format("http://127.0.0.1:{}", server->port()));
  ASSERT_TRUE(root) << root.error().message();
  EXPECT_EQ(root->body, "GET / ");
}

TEST(FetchUrlTest, UnreachableNamesTheUrlWithoutSecrets) {
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  const std::string url = fmt::format("http://127.0.0.1:{}/utility_rates?api_key=SECRET&lat=1", refusing.port());
  Result<HttpResponse> r = FetchUrl(url);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(r.error().message(),
              HasSubstr(fmt::format("GET http://127.0.0.1:{}/utility_rates?api_key=***&lat=1", refusing.port())));
  EXPECT_THAT(r.error().message(), ::testing::Not(HasSubstr("SECRET")));
}

TEST(FetchUrlTest, AHungServerIsATimeoutWithinTheBound) {
  Gate release;
  auto server = StartOrDie(TestOptions(), [&](const HttpRequest&) {
    release.Wait();
    return HttpResponse{200, "late"};
  });
  ASSERT_NE(server, nullptr);
  FetchOptions options;
  options.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  Result<HttpResponse> r = FetchUrl(fmt::format("http://127.0.0.1:{}/slow", server->port()), options);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  release.Open();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kTimeout);
  EXPECT_THAT(r.error().message(), HasSubstr(fmt::format("GET http://127.0.0.1:{}/slow", server->port())));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(FetchUrlTest, BadUrlsAreInvalidArguments) {
  for (const char* url : {"ftp://h/x", "http://", "http://h:0/x", "http://h/x?a=1#frag", "h/x"}) {
    Result<HttpResponse> r = FetchUrl(url);
    ASSERT_FALSE(r) << url;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << url;
  }
  FetchOptions zero;
  zero.timeout = std::chrono::milliseconds(0);
  Result<HttpResponse> r = FetchUrl("http://127.0.0.1/x", zero);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("timeout must be positive"));
}

TEST(FetchUrlTest, HttpsToAPlainServerFailsNamingTheUrl) {
  // A plain HTTP server does not speak TLS: the handshake fails (or, without
  // OpenSSL, https is refused) with the URL in the message, never a hang.
  auto server = StartOrDie(TestOptions(), [](const HttpRequest&) { return HttpResponse{200, "plain"}; });
  ASSERT_NE(server, nullptr);
  FetchOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const std::string url = fmt::format("https://127.0.0.1:{}/v3", server->port());
  Result<HttpResponse> r = FetchUrl(url, options);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("GET " + url));
  EXPECT_EQ(r.error().code(), HttpFetchSupportsHttps() ? ErrorCode::kIoError : ErrorCode::kInvalidArgument)
      << r.error().message();
}

TEST(FetchUrlTest, RedactUrl) {
  EXPECT_EQ(RedactUrl("http://h/x"), "http://h/x");
  EXPECT_EQ(RedactUrl("http://h/x?api_key=abc&lat=1&AUTH-TOKEN=z&secretive=1"),
            "http://h/x?api_key=***&lat=1&AUTH-TOKEN=***&secretive=***");
  EXPECT_EQ(RedactUrl("http://h/x?flag&key="), "http://h/x?flag&key=***");
}

}  // namespace
}  // namespace zeus::http
