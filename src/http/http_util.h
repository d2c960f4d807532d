// Copyright 2026 The Zeus C++ Authors.
//
// Private helpers shared by the HTTP server and client.

#ifndef ZEUS_SRC_HTTP_HTTP_UTIL_H_
#define ZEUS_SRC_HTTP_HTTP_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace zeus::http::internal {

// {"message": "<message>"} with the message escaped as a JSON string.
inline std::string JsonMessage(std::string_view message) {
  std::string out;
  out.reserve(message.size() + 16);
  out += "{\"message\": \"";
  for (char c : message) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += "\"}";
  return out;
}

// True for "localhost" (any case). It is mapped to the loopback addresses
// without asking the resolver (RFC 6761), so that a slow or unreachable DNS
// server cannot stall a local connection.
inline bool IsLocalhost(std::string_view host) {
  constexpr std::string_view kLocalhost = "localhost";
  if (host.size() != kLocalhost.size()) return false;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const char c = host[i] >= 'A' && host[i] <= 'Z' ? static_cast<char>(host[i] - 'A' + 'a') : host[i];
    if (c != kLocalhost[i]) return false;
  }
  return true;
}

// "host:port", with brackets around an IPv6 literal: "[::1]:8000".
inline std::string HostPort(std::string_view host, std::uint16_t port) {
  if (host.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_HTTP_UTIL_H_
