// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/auth.h"

#include <jwt.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace zeus::zeusd {
namespace {

struct JwtDeleter {
  void operator()(jwt_t* jwt) const { jwt_free(jwt); }
};
using JwtPtr = std::unique_ptr<jwt_t, JwtDeleter>;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }  // NOLINT(cppcoreguidelines-no-malloc): libjwt's strings
};
using CString = std::unique_ptr<char, FreeDeleter>;

Error Invalid(std::string_view why) { return Error(ErrorCode::kPermissionDenied, fmt::format("Invalid token: {}", why)); }

}  // namespace

std::string_view ApiGroupName(ApiGroup group) {
  switch (group) {
    case ApiGroup::kGpuControl: return "gpu-control";
    case ApiGroup::kGpuRead: return "gpu-read";
    case ApiGroup::kCpuRead: return "cpu-read";
    case ApiGroup::kMetrics: return "metrics";
  }
  return "unknown";
}

Result<ApiGroup> ParseApiGroup(std::string_view name) {
  for (ApiGroup group : kAllApiGroups) {
    if (ApiGroupName(group) == name) return group;
  }
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("unknown API group '{}'; the groups are gpu-control, gpu-read, cpu-read, metrics", name));
}

Result<std::vector<ApiGroup>> ParseApiGroups(std::string_view list) {
  std::vector<bool> present(std::size(kAllApiGroups), false);
  if (!base::Trim(list).empty()) {
    std::string_view rest = list;
    for (;;) {
      const std::size_t comma = rest.find(',');
      const std::string_view word = base::Trim(rest.substr(0, comma));
      if (word.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("empty API group in '{}'", list));
      auto group = ParseApiGroup(word);
      if (!group) return Fail(group.error());
      present[static_cast<std::size_t>(*group)] = true;
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  std::vector<ApiGroup> groups;
  for (ApiGroup group : kAllApiGroups) {
    if (present[static_cast<std::size_t>(group)]) groups.push_back(group);
  }
  return groups;
}

std::optional<ApiGroup> GroupOfPath(std::string_view path) {
  if (path.starts_with("/gpu/set_") || path.starts_with("/gpu/reset_")) return ApiGroup::kGpuControl;
  if (path.starts_with("/gpu/")) return ApiGroup::kGpuRead;
  if (path.starts_with("/cpu/")) return ApiGroup::kCpuRead;
  if (path == "/metrics") return ApiGroup::kMetrics;
  return std::nullopt;
}

Result<std::string> ReadSigningKey(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("the signing key {}", path)));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return Fail(ErrorCode::kIoError, fmt::format("cannot read the signing key {}", path));
  std::string key = std::move(content).str();
  if (key.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the signing key {} is empty; write a random secret into it, e.g. "
                            "`head -c 32 /dev/urandom | base64 > {}`",
                            path, path));
  }
  return key;
}

Result<std::string> IssueToken(std::string_view key, const TokenClaims& claims) {
  if (key.empty()) return Fail(ErrorCode::kInvalidArgument, "cannot sign a token with an empty key");
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) return Fail(ErrorCode::kInternal, "jwt_new failed (out of memory)");
  JwtPtr jwt(raw);
  nlohmann::json grants = {{"sub", claims.sub}, {"scopes", nlohmann::json::array()}};
  for (ApiGroup group : claims.scopes) grants["scopes"].push_back(std::string(ApiGroupName(group)));
  if (claims.exp) grants["exp"] = *claims.exp;
  if (jwt_add_grants_json(jwt.get(), grants.dump().c_str()) != 0) {
    return Fail(ErrorCode::kInternal, "cannot add the token's claims");
  }
  if (jwt_set_alg(jwt.get(), JWT_ALG_HS256, reinterpret_cast<const unsigned char*>(key.data()),
                  static_cast<int>(key.size())) != 0) {
    return Fail(ErrorCode::kInternal, "cannot set the token's algorithm to HS256");
  }
  CString token(jwt_encode_str(jwt.get()));
  if (token == nullptr) return Fail(ErrorCode::kInternal, "cannot encode the token");
  return std::string(token.get());
}

Result<TokenClaims> VerifyToken(std::string_view key, std::string_view token, std::int64_t now_s) {
  if (key.empty()) return Fail(Invalid("the server has no signing key"));
  // libjwt wants a C string; a token with a NUL byte is malformed anyway.
  if (token.find('\0') != std::string_view::npos) return Fail(Invalid("malformed token"));
  // An unsigned token ("alg": "none") must never pass: with a key given,
  // libjwt refuses it, and the algorithm is checked below as well.
  const std::string token_string(token);
  jwt_t* raw = nullptr;
  const int rc = jwt_decode(&raw, token_string.c_str(), reinterpret_cast<const unsigned char*>(key.data()),
                            static_cast<int>(key.size()));
  JwtPtr jwt(raw);
  if (rc != 0 || jwt == nullptr) {
    return Fail(Invalid(rc == EINVAL ? "malformed token or wrong signature" : std::strerror(rc)));
  }
  if (jwt_get_alg(jwt.get()) != JWT_ALG_HS256) return Fail(Invalid("the algorithm is not HS256"));
  CString grants_text(jwt_get_grants_json(jwt.get(), nullptr));
  if (grants_text == nullptr) return Fail(Invalid("no claims"));
  const nlohmann::json grants = nlohmann::json::parse(grants_text.get(), nullptr, /*allow_exceptions=*/false);
  if (!grants.is_object()) return Fail(Invalid("the claims are not a JSON object"));
  TokenClaims claims;
  const auto exp = grants.find("exp");
  if (exp != grants.end()) {
    if (!exp->is_number_integer()) return Fail(Invalid("exp is not an integer"));
    claims.exp = exp->get<std::int64_t>();
    if (*claims.exp <= now_s) return Fail(Error(ErrorCode::kPermissionDenied, "Token has expired."));
  }
  // RFC 7519 4.1.5 and 4.1.6, with leeway for the issuer's clock.
  for (const char* name : {"nbf", "iat"}) {
    const auto time = grants.find(name);
    if (time == grants.end()) continue;
    if (!time->is_number_integer()) return Fail(Invalid(fmt::format("{} is not an integer", name)));
    const std::int64_t at_s = time->get<std::int64_t>();
    if (at_s > now_s + kTokenClockLeewayS) {
      return Fail(Error(ErrorCode::kPermissionDenied,
                        std::string_view(name) == "nbf"
                            ? fmt::format("Token is not valid yet (nbf is {} s ahead of this server's clock).", at_s - now_s)
                            : fmt::format("Invalid token: issued in the future (iat is {} s ahead of this server's "
                                          "clock).",
                                          at_s - now_s)));
    }
  }
  const auto sub = grants.find("sub");
  if (sub == grants.end() || !sub->is_string()) return Fail(Invalid("missing field `sub`"));
  claims.sub = sub->get<std::string>();
  const auto scopes = grants.find("scopes");
  if (scopes == grants.end() || !scopes->is_array()) return Fail(Invalid("missing field `scopes`"));
  for (const auto& scope : *scopes) {
    if (!scope.is_string()) return Fail(Invalid("a scope is not a string"));
    auto group = ParseApiGroup(scope.get<std::string>());
    if (!group) {
      return Fail(Invalid(fmt::format("unknown variant `{}`, expected one of `gpu-control`, `gpu-read`, `cpu-read`",
                                      scope.get<std::string>())));
    }
    claims.scopes.push_back(*group);
  }
  return claims;
}

Result<std::optional<std::int64_t>> ParseExpiry(std::string_view text) {
  if (text == "never" || text == "0") return std::optional<std::int64_t>();
  std::int64_t count = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, count);
  std::int64_t unit = 0;
  if (ec == std::errc() && ptr + 1 == end && count > 0) {
    switch (*ptr) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: break;
    }
  }
  if (unit == 0 || count > (std::int64_t{1} << 40) / unit) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("must be a duration such as 1h, 7d or 30d (a positive number and s, m, h or d), "
                            "or never (got '{}')",
                            text));
  }
  return std::optional<std::int64_t>(count * unit);
}

}  // namespace zeus::zeusd
