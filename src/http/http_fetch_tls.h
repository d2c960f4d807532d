// Copyright 2026 The Zeus C++ Authors.
//
// Private to zeus_http: FetchUrl's https:// half (http_fetch_tls.cc with
// OpenSSL, http_fetch_no_tls.cc without).

#ifndef ZEUS_SRC_HTTP_HTTP_FETCH_TLS_H_
#define ZEUS_SRC_HTTP_HTTP_FETCH_TLS_H_

#include <string>
#include <string_view>

#include "http/http_fetch.h"
#include "http/http_url.h"

namespace zeus::http::internal {

extern const bool kHaveTls;

// One GET of `target` on the https server `url` names, within options.timeout
// for the connection and again for the handshake, request and answer.
// `shown` is the URL for messages.
Result<HttpResponse> FetchHttps(const HttpUrl& url, const std::string& target, const FetchOptions& options,
                                std::string_view shown);

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_HTTP_FETCH_TLS_H_
