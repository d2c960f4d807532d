// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's middleware (private to src/zeusd), in zeusd's order (zeus-reference
// 3.4, auth.rs): (1) a path of a disabled API group is 404 whatever the
// token; (2) without a signing key tokens are ignored and /auth/* is 404;
// (3) /discover, /time and /metrics are open; (4) anything else needs an
// `Authorization: Bearer <token>` header, else 401 with
// `WWW-Authenticate: Bearer realm="zeusd"`; (5) the token must verify
// (VerifyToken), else 401 with `error="invalid_token"`; (6) a route of an API
// group needs that group among the token's scopes, else 403 listing them.
// Unknown paths and /auth/whoami need only a valid token.

#ifndef ZEUS_SRC_ZEUSD_MIDDLEWARE_H_
#define ZEUS_SRC_ZEUSD_MIDDLEWARE_H_

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"
#include "zeusd/auth.h"

namespace zeus::zeusd {

// The API groups a daemon serves.
class EnabledGroups {
 public:
  explicit EnabledGroups(const std::vector<ApiGroup>& groups);
  bool Has(ApiGroup group) const { return enabled_[static_cast<std::size_t>(group)]; }

 private:
  std::array<bool, std::size(kAllApiGroups)> enabled_{};
};

// What the middleware lets through.
struct Admission {
  // Set: the request ends with this answer.
  std::optional<http::HttpResponse> refusal;
  // The verified token's claims; nullopt when tokens are ignored (no signing
  // key) or the route is open.
  std::optional<TokenClaims> claims;
};

// Steps (1) to (6) for `request`, whose target's path is `path`. Tokens are
// required when `signing_key` is set, and verified at `now_s` (Unix seconds).
Admission Admit(const http::HttpRequest& request, std::string_view path, const EnabledGroups& enabled,
                const std::optional<std::string>& signing_key, std::int64_t now_s);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_MIDDLEWARE_H_
