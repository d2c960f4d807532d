// Copyright 2026 The Zeus C++ Authors.
//
// One GET of a full URL, http:// or https://, with a bounded time: the
// providers of carbon intensity and electricity prices (zeus::carbon, the
// Python package's zeus.monitor.carbon and zeus.monitor.price).
//
// http:// goes through HttpClient; https:// through Boost.Beast's TLS stream
// over OpenSSL (the peer's certificate checked against the system's CAs,
// SSL_CERT_FILE / SSL_CERT_DIR honoured, and its name against the host) when
// the build found OpenSSL (HttpFetchSupportsHttps()).

#ifndef ZEUS_SRC_HTTP_HTTP_FETCH_H_
#define ZEUS_SRC_HTTP_HTTP_FETCH_H_

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/http.h"
#include "zeus/base/error.h"

namespace zeus::http {

struct FetchOptions {
  // Bounds the connection and, separately, the request (sent and answered):
  // a fetch fails within about twice this long. Name resolution is the
  // system resolver's (a literal address or "localhost" needs none).
  std::chrono::milliseconds timeout{10000};
  // Sent with the request, e.g. {"auth-token", "..."}.
  std::vector<std::pair<std::string, std::string>> headers{};
};

// GET `url` ("http[s]://HOST[:PORT][/PATH][?QUERY]") once, no redirects
// followed. Returns the response whatever its status. Fails with
// kInvalidArgument for a malformed URL (or https:// in a build without
// OpenSSL), kUnavailable when the server cannot be reached, kTimeout when it
// does not answer in time, kIoError for a broken answer or TLS failure. Every
// message names the URL as RedactUrl writes it.
Result<HttpResponse> FetchUrl(std::string_view url, const FetchOptions& options = {});

// Whether this build speaks https:// (it found OpenSSL).
bool HttpFetchSupportsHttps();

// `url` with the values of query parameters that look like secrets (a name
// containing "key", "token", "secret" or "password", any case) replaced by
// "***": what error messages show.
std::string RedactUrl(std::string_view url);

}  // namespace zeus::http

#endif  // ZEUS_SRC_HTTP_HTTP_FETCH_H_
