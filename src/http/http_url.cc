// Copyright 2026 The Zeus C++ Authors.

#include <cctype>
#include <charconv>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "http/http.h"

namespace zeus::http {
namespace {

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

// Characters allowed in a path prefix: RFC 3986 pchar plus '/', no query or
// fragment.
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

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  auto invalid = [url](std::string_view why) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid URL '{}': {}", url, why));
  };
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    return invalid("expected http://host:port[/prefix]; only http:// is supported");
  }
  const std::string_view scheme = url.substr(0, scheme_end);
  if (!IEquals(scheme, "http")) {
    return invalid(fmt::format("scheme '{}' is not supported; only http:// is supported", scheme));
  }
  std::string_view rest = url.substr(scheme_end + 3);
  const std::size_t authority_end = rest.find('/');
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);

  if (authority.find('@') != std::string_view::npos) return invalid("user information is not supported");
  if (authority.find_first_of("?#") != std::string_view::npos || path.find_first_of("?#") != std::string_view::npos) {
    return invalid("a base URL may not have a query or fragment");
  }

  HttpUrl out;
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("unterminated '[' in the host");
    const std::string_view literal = authority.substr(1, close - 1);
    if (literal.empty() || literal.find(':') == std::string_view::npos) return invalid("bad IPv6 address in brackets");
    for (char c : literal) {
      if (!IsIpv6LiteralChar(c)) return invalid("bad IPv6 address in brackets");
    }
    out.host = std::string(literal);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return invalid("unexpected text after ']'");
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    const std::string_view host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    if (host.empty()) return invalid("the host is empty");
    for (char c : host) {
      if (!IsHostNameChar(c)) return invalid(fmt::format("bad character '{}' in the host", c));
    }
    out.host = std::string(host);
  }

  if (has_port) {
    unsigned value = 0;
    const char* first = port_text.data();
    const char* last = port_text.data() + port_text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (port_text.empty() || ec != std::errc() || ptr != last || value == 0 || value > 65535 ||
        !std::isdigit(static_cast<unsigned char>(port_text.front()))) {
      return invalid(fmt::format("bad port '{}'; expected 1-65535", port_text));
    }
    out.port = static_cast<std::uint16_t>(value);
  }

  for (char c : path) {
    if (!IsPathChar(c)) return invalid(fmt::format("bad character '{}' in the path", c));
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.prefix = std::string(path);
  return out;
}

const std::string* FindHeader(const HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (IEquals(key, name)) return &value;
  }
  return nullptr;
}

}  // namespace zeus::http
