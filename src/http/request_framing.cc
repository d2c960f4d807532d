// Copyright 2026 The Zeus C++ Authors.

#include "http/request_framing.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace zeus::http::internal {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Printable for an error message: at most 64 bytes, control bytes escaped.
std::string Quoted(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte >= 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  if (s.size() > 64) out += "...";
  return fmt::format("'{}'", out);
}

}  // namespace

FramingVerdict CheckRequestTransferEncoding(const std::vector<std::string_view>& values, unsigned http_version) {
  if (values.empty()) return {};
  if (http_version < 11) {
    return {FramingVerdict::kBadRequest,
            "an HTTP/1.0 request must not carry Transfer-Encoding (RFC 9112 6.1); send Content-Length instead"};
  }
  std::vector<std::string> codings;
  for (std::string_view value : values) {
    while (true) {
      const std::size_t comma = value.find(',');
      const std::string_view element = base::Trim(value.substr(0, comma));
      if (!element.empty()) codings.push_back(Lower(element));
      if (comma == std::string_view::npos) break;
      value.remove_prefix(comma + 1);
    }
  }
  if (codings.empty()) {
    return {FramingVerdict::kBadRequest, "Transfer-Encoding is empty; send 'chunked' or a Content-Length"};
  }
  if (codings.back() != "chunked") {
    return {FramingVerdict::kBadRequest,
            fmt::format("Transfer-Encoding must end with 'chunked' (RFC 9112 6.3), got {} last; the body's length "
                        "cannot be known",
                        Quoted(codings.back()))};
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (codings[i] == "chunked") {
      return {FramingVerdict::kBadRequest, "Transfer-Encoding applies 'chunked' more than once (RFC 9112 7)"};
    }
  }
  if (codings.size() > 1) {
    return {FramingVerdict::kNotImplemented,
            fmt::format("Transfer-Encoding {} is not supported; send the body with 'chunked' alone or a Content-Length",
                        Quoted(codings.front()))};
  }
  return {};
}

}  // namespace zeus::http::internal
