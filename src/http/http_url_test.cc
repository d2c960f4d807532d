// Copyright 2026 The Zeus C++ Authors.
//
// ParseUrl: the grammar under each rule, and one error message per problem.

#include "http/http_url.h"

#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace zeus::http {
namespace {

// The rules of the users outside zeus_http, as they state them.
UrlRules PushgatewayRules() {
  UrlRules rules;
  rules.what = "Pushgateway URL";
  rules.expected = "http(s)://HOST[:PORT]";
  rules.allow_https = true;
  rules.allow_no_scheme = true;
  rules.allow_prefix = false;
  return rules;
}

UrlRules ZeusdRules() {
  UrlRules rules;
  rules.what = "zeusd address";
  rules.expected = "unix:///PATH or http://HOST[:PORT]";
  rules.allow_unix = true;
  rules.allow_prefix = false;
  rules.http_default_port = 4938;
  return rules;
}

struct Good {
  std::string_view url;
  UrlScheme scheme;
  std::string_view host;
  std::uint16_t port;
  std::string_view prefix;
};

void ExpectParses(const Good& good, const UrlRules& rules) {
  Result<HttpUrl> url = ParseUrl(good.url, rules);
  ASSERT_TRUE(url) << good.url << ": " << url.error().message();
  EXPECT_EQ(url->scheme, good.scheme) << good.url;
  EXPECT_EQ(url->host, good.host) << good.url;
  EXPECT_EQ(url->port, good.port) << good.url;
  EXPECT_EQ(url->prefix, good.prefix) << good.url;
  EXPECT_EQ(url->socket_path, "") << good.url;
}

// The whole message: what, the URL, the problem, the accepted forms.
void ExpectError(std::string_view url, const UrlRules& rules, std::string_view problem) {
  Result<HttpUrl> parsed = ParseUrl(url, rules);
  ASSERT_FALSE(parsed) << url;
  EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << url;
  EXPECT_EQ(parsed.error().message(),
            std::string(rules.what) + " '" + std::string(url) + "' " + std::string(problem) + "; expected " +
                std::string(rules.expected));
}

TEST(HttpUrlTest, BaseUrlsOfClients) {
  for (const Good& good : {Good{"http://127.0.0.1:8000", UrlScheme::kHttp, "127.0.0.1", 8000, ""},
                           Good{"http://localhost", UrlScheme::kHttp, "localhost", 80, ""},
                           Good{"http://localhost/", UrlScheme::kHttp, "localhost", 80, ""},
                           Good{"http://bso.example.com:8080/api/", UrlScheme::kHttp, "bso.example.com", 8080, "/api"},
                           Good{"HTTP://h:1/a/b//", UrlScheme::kHttp, "h", 1, "/a/b"},
                           Good{"http://[::1]:9000/x", UrlScheme::kHttp, "::1", 9000, "/x"},
                           Good{"http://[fe80::1]", UrlScheme::kHttp, "fe80::1", 80, ""},
                           Good{"http://[::ffff:10.0.0.1]:1", UrlScheme::kHttp, "::ffff:10.0.0.1", 1, ""},
                           Good{"http://my_host-1.local:65535", UrlScheme::kHttp, "my_host-1.local", 65535, ""},
                           Good{"http://h/a:b@c;d=e~f%20", UrlScheme::kHttp, "h", 80, "/a:b@c;d=e~f%20"}}) {
    ExpectParses(good, UrlRules{});
  }
  EXPECT_TRUE(ParseHttpUrl("http://h:1/p"));
  EXPECT_EQ(ParseHttpUrl("https://h").error().message(),
            "URL 'https://h' has the unsupported scheme 'https'; expected http://HOST[:PORT][/PREFIX]");
}

TEST(HttpUrlTest, EachProblemHasItsMessage) {
  const UrlRules rules;
  ExpectError("", rules, "has no scheme");
  ExpectError("h:8000", rules, "has no scheme");
  ExpectError("https://h:443", rules, "has the unsupported scheme 'https'");
  ExpectError("ftp://h", rules, "has the unsupported scheme 'ftp'");
  ExpectError("unix:///run/s.sock", rules, "has the unsupported scheme 'unix'");
  ExpectError("http://", rules, "has no host");
  ExpectError("http://:80", rules, "has no host");
  ExpectError("http:///path", rules, "has no host");
  for (std::string_view port : {"0", "65536", "-1", "+1", "80x", "", " 1", "99999999999"}) {
    ExpectError("http://h:" + std::string(port), rules, "has a port that is not a number from 1 to 65535");
  }
  ExpectError("http://[::1]:0", rules, "has a port that is not a number from 1 to 65535");
  ExpectError("http://u:p@h", rules, "has user information, which is not supported");
  ExpectError("http://h/a?x=1", rules, "has a query or fragment");
  ExpectError("http://h#f", rules, "has a query or fragment");
  ExpectError("http://h a:1", rules, "has the character ' ' in the host");
  ExpectError("http://h/a b", rules, "has the character ' ' in the path");
  ExpectError("http://[::1", rules, "has an unclosed '[' in the host");
  ExpectError("http://[xyz]:1", rules, "has a malformed IPv6 address in brackets");
  ExpectError("http://[]:1", rules, "has a malformed IPv6 address in brackets");
  ExpectError("http://[1.2.3.4]", rules, "has a malformed IPv6 address in brackets");
  ExpectError("http://[::1]x", rules, "has something other than :PORT after ']'");
}

TEST(HttpUrlTest, HttpsAndAMissingSchemeWhenAllowed) {
  const UrlRules rules = PushgatewayRules();
  for (const Good& good : {Good{"http://localhost:9091", UrlScheme::kHttp, "localhost", 9091, ""},
                           Good{"localhost:9091", UrlScheme::kHttp, "localhost", 9091, ""},
                           Good{"gw", UrlScheme::kHttp, "gw", 80, ""},
                           Good{"https://gw.example.com", UrlScheme::kHttps, "gw.example.com", 443, ""},
                           Good{"HTTPS://gw:8443/", UrlScheme::kHttps, "gw", 8443, ""},
                           Good{"[::1]:9091", UrlScheme::kHttp, "::1", 9091, ""},
                           Good{"http://10.0.0.1//", UrlScheme::kHttp, "10.0.0.1", 80, ""}}) {
    ExpectParses(good, rules);
  }
  ExpectError("http://host/path", rules, "has a path ('/path'), which is not allowed here");
  ExpectError("localhost:x", rules, "has a port that is not a number from 1 to 65535");
  ExpectError("ftp://host:1", rules, "has the unsupported scheme 'ftp'");
  ExpectError("", rules, "has no host");
}

TEST(HttpUrlTest, UnixSocketsAndAnotherDefaultPort) {
  const UrlRules rules = ZeusdRules();
  ExpectParses({"http://node1", UrlScheme::kHttp, "node1", 4938, ""}, rules);
  ExpectParses({"http://node1:80/", UrlScheme::kHttp, "node1", 80, ""}, rules);
  ExpectParses({"http://[::1]", UrlScheme::kHttp, "::1", 4938, ""}, rules);

  Result<HttpUrl> socket = ParseUrl("unix:///run/zeusd/zeusd.sock", rules);
  ASSERT_TRUE(socket) << socket.error().message();
  EXPECT_EQ(socket->scheme, UrlScheme::kUnix);
  EXPECT_EQ(socket->socket_path, "/run/zeusd/zeusd.sock");
  EXPECT_EQ(socket->host, "");
  EXPECT_EQ(socket->port, 0);
  EXPECT_TRUE(ParseUrl("UNIX:///s", rules));
  const std::string longest = "/" + std::string(106, 's');
  EXPECT_TRUE(ParseUrl("unix://" + longest, rules));

  ExpectError("unix://run/zeusd.sock", rules,
              "needs an absolute socket path after unix:// (three slashes: unix:///path/to.sock)");
  ExpectError("unix://", rules, "needs an absolute socket path after unix:// (three slashes: unix:///path/to.sock)");
  ExpectError("unix://" + longest + "s", rules, "has a socket path longer than 107 bytes, the most a Unix socket allows");
  ExpectError("https://node1", rules, "has the unsupported scheme 'https'");
  ExpectError("node1:4938", rules, "has no scheme");
  ExpectError("http://node1:4938/gpu", rules, "has a path ('/gpu'), which is not allowed here");
}

TEST(HttpUrlTest, HostsAsUrlsWriteThemPutBracketsAroundIpv6) {
  EXPECT_EQ(ParseHttpUrl("http://[::1]:8000")->host_port(), "[::1]:8000");
  EXPECT_EQ(ParseHttpUrl("http://h")->host_port(), "h:80");
  EXPECT_EQ(ParseHttpUrl("http://10.0.0.1:5")->host_port(), "10.0.0.1:5");
  EXPECT_EQ(ParseHttpUrl("http://[fe80::1]")->url_host(), "[fe80::1]");
  EXPECT_EQ(ParseHttpUrl("http://h:1")->url_host(), "h");
}

}  // namespace
}  // namespace zeus::http
