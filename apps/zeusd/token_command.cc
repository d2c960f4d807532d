// Copyright 2026 The Zeus C++ Authors.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "apps/zeusd/commands.h"
#include "zeus/base/error.h"
#include "zeusd/auth.h"

namespace zeus::zeusd_cli {
namespace {

struct TokenFlags {
  std::string signing_key_path;
  std::string user;
  std::string scope;
  std::string expires;
};

int RunTokenIssue(const TokenFlags& flags) {
  auto scopes = zeusd::ParseApiGroups(flags.scope);
  if (!scopes) return cli::UsageError(fmt::format("--scope {}", scopes.error().message()));
  auto expiry = zeusd::ParseExpiry(flags.expires);
  if (!expiry) return cli::UsageError(fmt::format("--expires {}", expiry.error().message()));
  if (flags.user.empty()) return cli::UsageError("--user must not be empty");
  auto key = zeusd::ReadSigningKey(flags.signing_key_path);
  if (!key) return ExitWith(key.error());
  zeusd::TokenClaims claims;
  claims.sub = flags.user;
  claims.scopes = *scopes;
  if (*expiry) {
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    claims.exp = now_s + **expiry;
  }
  auto token = zeusd::IssueToken(*key, claims);
  if (!token) return ExitWith(token.error());
  std::printf("%s\n", token->c_str());
  return 0;
}

}  // namespace

void RegisterTokenCommand(CLI::App& app, int* exit_code) {
  CLI::App* token = app.add_subcommand("token", "Manage access tokens");
  token->require_subcommand(1);
  auto flags = std::make_shared<TokenFlags>();
  CLI::App* issue = token->add_subcommand("issue", "Print a signed token (JWT HS256) for a user and scopes");
  issue->add_option("--signing-key-path", flags->signing_key_path, "The daemon's signing key file")->required();
  issue->add_option("--user", flags->user, "Who the token is for (its `sub`)")->required();
  issue->add_option("--scope", flags->scope, "Comma-separated API groups: gpu-control, gpu-read, cpu-read")
      ->required();
  issue->add_option("--expires", flags->expires, "Lifetime: 1h, 7d, 30d (any N s|m|h|d), or never")->required();
  issue->callback([flags, exit_code] { *exit_code = RunTokenIssue(*flags); });
}

}  // namespace zeus::zeusd_cli
