// Copyright 2026 The Zeus C++ Authors.
//
// FetchUrl: the URL split into HttpClient's base URL and a target; https://
// handed to FetchHttps (http_fetch_tls.cc, built when OpenSSL is found).

#include "http/http_fetch.h"

#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "http/http_fetch_tls.h"
#include "http/http_url.h"

namespace zeus::http {
namespace {

bool LooksSecret(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"key", "token", "secret", "password"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  const std::size_t question = url.find('?');
  if (question == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, question + 1));
  std::string_view query = url.substr(question + 1);
  bool first = true;
  while (true) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (!first) out += '&';
    first = false;
    const std::size_t eq = pair.find('=');
    if (eq != std::string_view::npos && LooksSecret(pair.substr(0, eq))) {
      out += pair.substr(0, eq + 1);
      out += "***";
    } else {
      out += pair;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

bool HttpFetchSupportsHttps() { return internal::kHaveTls; }

Result<HttpResponse> FetchUrl(std::string_view url, const FetchOptions& options) {
  const std::string shown = RedactUrl(url);
  if (options.timeout.count() <= 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("GET {}: the timeout must be positive (got {} ms)", shown,
                                                         options.timeout.count()));
  }
  const std::size_t question = url.find('?');
  const std::string_view base = url.substr(0, question);
  const std::string_view query = question == std::string_view::npos ? std::string_view() : url.substr(question + 1);
  if (query.find('#') != std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("URL '{}' has a fragment; expected "
                                                         "http[s]://HOST[:PORT][/PATH][?QUERY]", shown));
  }
  UrlRules rules;
  rules.expected = "http[s]://HOST[:PORT][/PATH][?QUERY]";
  rules.allow_https = true;
  Result<HttpUrl> parsed = ParseUrl(base, rules);
  if (!parsed) return Fail(ErrorCode::kInvalidArgument, RedactUrl(parsed.error().message()));
  std::string target = parsed->prefix.empty() ? "/" : parsed->prefix;
  if (question != std::string_view::npos) {
    target += '?';
    target += query;
  }

  if (parsed->scheme == UrlScheme::kHttps) return internal::FetchHttps(*parsed, target, options, shown);

  HttpClientOptions client_options;
  client_options.connect_timeout = options.timeout;
  client_options.request_timeout = options.timeout;
  client_options.headers = options.headers;
  Result<std::unique_ptr<HttpClient>> client = HttpClient::Create("http://" + parsed->host_port(), client_options);
  if (!client) return Fail(client.error().WithContext("GET " + shown));
  Result<HttpResponse> response = (*client)->Send("GET", target);
  if (!response) return Fail(response.error().WithContext("GET " + shown));
  return response;
}

}  // namespace zeus::http
