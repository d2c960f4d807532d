// Copyright 2026 The Zeus C++ Authors.
//
// The project's one URL parser: where an HTTP client connects (the base URL
// of HttpClient and HttpStreamReader), a Pushgateway's address, a zeusd
// address (`zeus monitor --zeusd`). Each user states what it accepts in a
// UrlRules; the grammar and the error messages are shared.

#ifndef ZEUS_SRC_HTTP_HTTP_URL_H_
#define ZEUS_SRC_HTTP_HTTP_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zeus/base/error.h"

namespace zeus::http {

enum class UrlScheme { kHttp, kHttps, kUnix };

// A parsed URL: http(s) with host, port and path prefix, or a Unix socket.
struct HttpUrl {
  UrlScheme scheme = UrlScheme::kHttp;
  std::string host;         // without brackets ("::1"); empty for kUnix
  std::uint16_t port = 80;  // as given, else the scheme's default; 0 for kUnix
  std::string prefix;       // "" or "/prefix" without a trailing slash; empty for kUnix
  std::string socket_path;  // kUnix: the absolute path; else empty

  // The host as a URL writes it, with brackets around IPv6: "[::1]".
  std::string url_host() const;
  // "host:port", with brackets around an IPv6 host: "[::1]:8000".
  std::string host_port() const;
};

// What one user of URLs accepts. The defaults are a client's base URL.
struct UrlRules {
  // Names the URL in errors: "URL", "Pushgateway URL", "zeusd address".
  std::string_view what = "URL";
  // The accepted forms, quoted in errors after "expected".
  std::string_view expected = "http://HOST[:PORT][/PREFIX]";
  bool allow_https = false;
  bool allow_unix = false;       // unix:///absolute/path/to.sock
  bool allow_no_scheme = false;  // "HOST[:PORT]" is taken as http://HOST[:PORT]
  bool allow_prefix = true;      // a path after the host and port
  std::uint16_t http_default_port = 80;
  std::uint16_t https_default_port = 443;
};

// Parses `url` under `rules`:
//   http://HOST[:PORT][/PREFIX], https://... (allow_https), unix:///PATH
//   (allow_unix; absolute, at most 107 bytes, the most a Unix socket takes).
// The scheme is case-insensitive. HOST is a name or IPv4 address (letters,
// digits, '-', '.', '_') or [an IPv6 address]; PORT is 1-65535, the scheme's
// default when absent; trailing slashes are dropped; user information, a
// query or a fragment are refused. Fails with kInvalidArgument:
//   "<what> '<url>' <the problem>; expected <rules.expected>"
// e.g. "URL 'http://h:0' has a port that is not a number from 1 to 65535;
// expected http://HOST[:PORT][/PREFIX]".
Result<HttpUrl> ParseUrl(std::string_view url, const UrlRules& rules);

// A client's base URL: ParseUrl with the default UrlRules.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_HTTP_URL_H_
