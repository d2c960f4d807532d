// Copyright 2026 The Zeus C++ Authors.

#include "http/http_url.h"

#include <sys/un.h>

#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "http/http.h"
#include "http/http_util.h"

namespace zeus::http {
namespace {

constexpr std::size_t kMaxSocketPathBytes = sizeof(sockaddr_un::sun_path) - 1;

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool IsHostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

bool IsIpv6LiteralChar(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
}

// Characters allowed in a path prefix: RFC 3986 pchar plus '/'.
bool IsPathChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  switch (c) {
    case '/': case '-': case '.': case '_': case '~': case '%': case '!': case '$': case '&': case '\'':
    case '(': case ')': case '*': case '+': case ',': case ';': case '=': case ':': case '@':
      return true;
    default:
      return false;
  }
}

// The helpers below return what is wrong, in words that follow the quoted
// URL ("has no host"), or "" when nothing is.

// Sets out.scheme and its default port; `rest` becomes what follows "://".
std::string ParseScheme(std::string_view url, const UrlRules& rules, HttpUrl& out, std::string_view& rest) {
  const std::size_t end = url.find("://");
  if (end == std::string_view::npos) {
    if (!rules.allow_no_scheme) return "has no scheme";
    out.scheme = UrlScheme::kHttp;
    out.port = rules.http_default_port;
    rest = url;
    return "";
  }
  const std::string_view scheme = url.substr(0, end);
  rest = url.substr(end + 3);
  if (IEquals(scheme, "http")) {
    out.scheme = UrlScheme::kHttp;
    out.port = rules.http_default_port;
  } else if (IEquals(scheme, "https") && rules.allow_https) {
    out.scheme = UrlScheme::kHttps;
    out.port = rules.https_default_port;
  } else if (IEquals(scheme, "unix") && rules.allow_unix) {
    out.scheme = UrlScheme::kUnix;
    out.port = 0;
  } else {
    return fmt::format("has the unsupported scheme '{}'", scheme);
  }
  return "";
}

std::string ParseSocketPath(std::string_view path, HttpUrl& out) {
  if (path.empty() || path.front() != '/') {
    return "needs an absolute socket path after unix:// (three slashes: unix:///path/to.sock)";
  }
  if (path.size() > kMaxSocketPathBytes) {
    return fmt::format("has a socket path longer than {} bytes, the most a Unix socket allows", kMaxSocketPathBytes);
  }
  out.socket_path = std::string(path);
  return "";
}

std::string ParsePort(std::string_view text, HttpUrl& out) {
  unsigned value = 0;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) == 0 || ec != std::errc() ||
      ptr != last || value == 0 || value > 65535) {
    return "has a port that is not a number from 1 to 65535";
  }
  out.port = static_cast<std::uint16_t>(value);
  return "";
}

// "[v6]" or "[v6]:port".
std::string ParseBracketedHost(std::string_view authority, HttpUrl& out) {
  const std::size_t close = authority.find(']');
  if (close == std::string_view::npos) return "has an unclosed '[' in the host";
  const std::string_view literal = authority.substr(1, close - 1);
  bool valid = literal.find(':') != std::string_view::npos;
  for (char c : literal) valid = valid && IsIpv6LiteralChar(c);
  if (!valid) return "has a malformed IPv6 address in brackets";
  out.host = std::string(literal);
  const std::string_view after = authority.substr(close + 1);
  if (after.empty()) return "";
  if (after.front() != ':') return "has something other than :PORT after ']'";
  return ParsePort(after.substr(1), out);
}

// "host" or "host:port", host a name or an IP literal (in brackets for IPv6).
std::string ParseAuthority(std::string_view authority, HttpUrl& out) {
  if (authority.find('@') != std::string_view::npos) return "has user information, which is not supported";
  if (!authority.empty() && authority.front() == '[') return ParseBracketedHost(authority, out);
  const std::size_t colon = authority.find(':');
  const std::string_view host = authority.substr(0, colon);
  if (host.empty()) return "has no host";
  for (char c : host) {
    if (!IsHostNameChar(c)) return fmt::format("has the character '{}' in the host", c);
  }
  out.host = std::string(host);
  if (colon == std::string_view::npos) return "";
  return ParsePort(authority.substr(colon + 1), out);
}

std::string ParsePrefix(std::string_view path, const UrlRules& rules, HttpUrl& out) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return "";
  if (!rules.allow_prefix) return fmt::format("has a path ('{}'), which is not allowed here", path);
  for (char c : path) {
    if (!IsPathChar(c)) return fmt::format("has the character '{}' in the path", c);
  }
  out.prefix = std::string(path);
  return "";
}

std::string Parse(std::string_view url, const UrlRules& rules, HttpUrl& out) {
  std::string_view rest;
  if (std::string problem = ParseScheme(url, rules, out, rest); !problem.empty()) return problem;
  if (out.scheme == UrlScheme::kUnix) return ParseSocketPath(rest, out);
  if (rest.find_first_of("?#") != std::string_view::npos) return "has a query or fragment";
  const std::size_t authority_end = rest.find('/');
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view path = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (std::string problem = ParseAuthority(authority, out); !problem.empty()) return problem;
  return ParsePrefix(path, rules, out);
}

}  // namespace

std::string HttpUrl::url_host() const { return host.find(':') == std::string::npos ? host : "[" + host + "]"; }

std::string HttpUrl::host_port() const { return internal::HostPort(host, port); }

Result<HttpUrl> ParseUrl(std::string_view url, const UrlRules& rules) {
  HttpUrl out;
  const std::string problem = Parse(url, rules, out);
  if (!problem.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} '{}' {}; expected {}", rules.what, url, problem, rules.expected));
  }
  return out;
}

Result<HttpUrl> ParseHttpUrl(std::string_view url) { return ParseUrl(url, UrlRules{}); }

const std::string* FindHeader(const HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (IEquals(key, name)) return &value;
  }
  return nullptr;
}

}  // namespace zeus::http
