// Copyright 2026 The Zeus C++ Authors.
//
// FetchHttps in a build without OpenSSL: a clear error.

#include <fmt/format.h>

#include "http/http_fetch_tls.h"

namespace zeus::http::internal {

const bool kHaveTls = false;

Result<HttpResponse> FetchHttps(const HttpUrl&, const std::string&, const FetchOptions&, std::string_view shown) {
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("GET {}: this build of zeus has no TLS (OpenSSL was not found when it was built), so "
                          "https:// URLs cannot be fetched; rebuild with libssl-dev installed, or use an http:// "
                          "URL (e.g. a local proxy)", shown));
}

}  // namespace zeus::http::internal
