// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's API groups and its tokens: JWT HS256 (libjwt) with the claims
// {sub, scopes: ["gpu-control", ...], exp?}, standard so that any JWT library
// with the same key makes and reads them.

#ifndef ZEUS_SRC_ZEUSD_AUTH_H_
#define ZEUS_SRC_ZEUSD_AUTH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::zeusd {

// kMetrics is GET /metrics (Prometheus). It needs no token scope: the route
// is open like /discover when the group is enabled (a scraper cannot send a
// JWT); a token may still carry the scope, which grants nothing more.
enum class ApiGroup : std::uint8_t { kGpuControl, kGpuRead, kCpuRead, kMetrics };
inline constexpr ApiGroup kAllApiGroups[] = {ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead,
                                             ApiGroup::kMetrics};

// "gpu-control", "gpu-read", "cpu-read", "metrics".
std::string_view ApiGroupName(ApiGroup group);
// The inverse; kInvalidArgument naming the word and the choices.
Result<ApiGroup> ParseApiGroup(std::string_view name);
// A comma-separated list ("gpu-read,cpu-read"), blanks trimmed, duplicates
// dropped, in kAllApiGroups order. Empty elements are errors; an empty string
// is the empty set.
Result<std::vector<ApiGroup>> ParseApiGroups(std::string_view list);

// The group a route belongs to: /gpu/set_* and /gpu/reset_* are gpu-control,
// other /gpu/* gpu-read, /cpu/* cpu-read, /metrics metrics; anything else
// none.
std::optional<ApiGroup> GroupOfPath(std::string_view path);

struct TokenClaims {
  std::string sub;
  std::vector<ApiGroup> scopes;
  std::optional<std::int64_t> exp;  // seconds since the Unix epoch; none: never expires
};

// The key in a signing-key file, as its bytes (a trailing newline is part of
// the key, as in zeusd). kNotFound / kPermissionDenied / kIoError naming the
// path; an empty file is kInvalidArgument.
Result<std::string> ReadSigningKey(const std::string& path);

// An HS256 JWT with `claims`. kInvalidArgument for an empty key.
Result<std::string> IssueToken(std::string_view key, const TokenClaims& claims);

// How far a token's nbf or iat may lie ahead of the server's clock: the
// issuer's clock may run a little ahead.
inline constexpr std::int64_t kTokenClockLeewayS = 60;

// Verifies an HS256 token with `key` and returns its claims. Fails with
// kPermissionDenied and the message zeusd answers with 401: "Token has
// expired." when exp <= now_s, "Invalid token: <why>" otherwise (bad format,
// another algorithm, wrong signature, missing sub or scopes, an unknown
// scope), "Token is not valid yet (...)" when nbf is later than now_s +
// kTokenClockLeewayS, and "Invalid token: issued in the future (...)" for iat
// likewise (both optional; when present they must be integers).
Result<TokenClaims> VerifyToken(std::string_view key, std::string_view token, std::int64_t now_s);

// "1h", "7d", "30d", "90m", "45s" -> seconds; "never" or "0" -> nullopt.
// kInvalidArgument otherwise.
Result<std::optional<std::int64_t>> ParseExpiry(std::string_view text);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_AUTH_H_
