// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/middleware.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/strings.h"
#include "zeusd/answers.h"

namespace zeus::zeusd {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoringCase(std::string_view a, std::string_view lower) {
  return a.size() == lower.size() &&
         std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) { return Lower(x) == y; });
}

// The bearer token of an Authorization header value, or nullopt.
std::optional<std::string> BearerToken(std::string_view header) {
  header = base::Trim(header);
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() || !EqualsIgnoringCase(header.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  const std::string_view token = base::Trim(header.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return std::string(token);
}

// The bearer token of the request's first Authorization header, or nullopt.
std::optional<std::string> RequestToken(const http::HttpRequest& request) {
  for (const auto& [name, value] : request.headers) {
    if (EqualsIgnoringCase(name, "authorization")) return BearerToken(value);
  }
  return std::nullopt;
}

http::HttpResponse Unauthorized(std::string_view message, std::string_view challenge) {
  http::HttpResponse response = ErrorAnswer(401, message);
  response.headers.emplace_back("WWW-Authenticate", std::string(challenge));
  return response;
}

Admission Refuse(http::HttpResponse response) { return Admission{std::move(response), std::nullopt}; }

}  // namespace

EnabledGroups::EnabledGroups(const std::vector<ApiGroup>& groups) {
  for (ApiGroup group : groups) enabled_[static_cast<std::size_t>(group)] = true;
}

Admission Admit(const http::HttpRequest& request, std::string_view path, const EnabledGroups& enabled,
                const std::optional<std::string>& signing_key, std::int64_t now_s) {
  const std::optional<ApiGroup> group = GroupOfPath(path);
  // (1) A disabled group is 404 whatever the token.
  if (group && !enabled.Has(*group)) {
    return Refuse(ErrorAnswer(404, fmt::format("API group '{}' is not enabled on this server.", ApiGroupName(*group))));
  }
  if (!signing_key) {
    // (2) No auth: /auth/* does not exist, tokens are ignored.
    if (path.starts_with("/auth/")) return Refuse(ErrorAnswer(404, fmt::format("No route for {}", path)));
    return {};
  }
  if (path == "/discover" || path == "/time" || path == "/metrics") return {};  // (3) open routes
  // (4) A bearer token is required.
  const std::optional<std::string> token = RequestToken(request);
  if (!token) {
    return Refuse(Unauthorized("Missing or malformed Authorization header. Expected: Bearer <token>",
                               "Bearer realm=\"zeusd\""));
  }
  // (5) A valid token.
  Result<TokenClaims> verified = VerifyToken(*signing_key, *token, now_s);
  if (!verified) {
    return Refuse(Unauthorized(verified.error().message(), "Bearer realm=\"zeusd\", error=\"invalid_token\""));
  }
  // (6) The route's scope.
  if (group && std::find(verified->scopes.begin(), verified->scopes.end(), *group) == verified->scopes.end()) {
    std::string scopes;
    for (ApiGroup scope : verified->scopes) scopes += fmt::format("{}{}", scopes.empty() ? "" : ", ", ApiGroupName(scope));
    return Refuse(ErrorAnswer(
        403, fmt::format("Token lacks the required scope '{}'. Token scopes: [{}]", ApiGroupName(*group), scopes)));
  }
  return Admission{std::nullopt, std::move(*verified)};
}

}  // namespace zeus::zeusd
