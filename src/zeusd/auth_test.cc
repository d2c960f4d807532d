// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/subprocess.h"

namespace zeus::zeusd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Made with Python's hmac, base64 and json (no JWT library), key
// "python-made-key": {"sub":"bob","scopes":["gpu-read","cpu-read"]}, and the
// same with "exp":1000; and an unsigned ("alg": "none") token.
constexpr char kPythonKey[] = "python-made-key";
constexpr char kPythonToken[] =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJib2IiLCJzY29wZXMiOlsiZ3B1LXJlYWQiLCJjcHUtcmVhZCJdfQ."
    "NHddsOFFFossA3ZQda3GTix-EmcGwEq9BkwmzBlfxig";
constexpr char kPythonTokenExp1000[] =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJib2IiLCJzY29wZXMiOlsiZ3B1LXJlYWQiXSwiZXhwIjoxMDAwfQ."
    "mMQgUC3t6qD9qWlgriPZksyq5JCVKRfCuP8rrLvjO04";
constexpr char kUnsignedToken[] =
    "eyJhbGciOiAibm9uZSIsICJ0eXAiOiAiSldUIn0.eyJzdWIiOiJib2IiLCJzY29wZXMiOlsiZ3B1LXJlYWQiLCJjcHUtcmVhZCJdfQ.";

TEST(ApiGroupTest, NamesAndPaths) {
  EXPECT_EQ(ApiGroupName(ApiGroup::kGpuControl), "gpu-control");
  EXPECT_EQ(ParseApiGroup("cpu-read").value(), ApiGroup::kCpuRead);
  EXPECT_FALSE(ParseApiGroup("gpu_read"));
  EXPECT_THAT(ParseApiGroups("cpu-read, gpu-control,cpu-read").value(),
              ElementsAre(ApiGroup::kGpuControl, ApiGroup::kCpuRead));
  EXPECT_FALSE(ParseApiGroups("gpu-read,,cpu-read"));
  EXPECT_EQ(GroupOfPath("/gpu/set_power_limit"), ApiGroup::kGpuControl);
  EXPECT_EQ(GroupOfPath("/gpu/reset_locked_clocks"), ApiGroup::kGpuControl);
  EXPECT_EQ(GroupOfPath("/gpu/get_power"), ApiGroup::kGpuRead);
  EXPECT_EQ(GroupOfPath("/gpu/stream_power"), ApiGroup::kGpuRead);
  EXPECT_EQ(GroupOfPath("/cpu/get_power"), ApiGroup::kCpuRead);
  EXPECT_EQ(GroupOfPath("/metrics"), ApiGroup::kMetrics);
  EXPECT_EQ(ParseApiGroup("metrics").value(), ApiGroup::kMetrics);
  EXPECT_EQ(GroupOfPath("/discover"), std::nullopt);
  EXPECT_EQ(GroupOfPath("/auth/whoami"), std::nullopt);
}

TEST(TokenTest, ATokenMadeByPythonsStdlibIsAccepted) {
  auto claims = VerifyToken(kPythonKey, kPythonToken, 2'000'000'000);
  ASSERT_TRUE(claims) << claims.error().message();
  EXPECT_EQ(claims->sub, "bob");
  EXPECT_THAT(claims->scopes, ElementsAre(ApiGroup::kGpuRead, ApiGroup::kCpuRead));
  EXPECT_EQ(claims->exp, std::nullopt);
}

TEST(TokenTest, ExpiryIsChecked) {
  auto before = VerifyToken(kPythonKey, kPythonTokenExp1000, 999);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->exp, 1000);
  auto after = VerifyToken(kPythonKey, kPythonTokenExp1000, 1000);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().message(), "Token has expired.");
}

TEST(TokenTest, WrongKeyUnsignedAndGarbageAreInvalid) {
  for (const std::string& token : {std::string(kUnsignedToken), std::string("not.a.token"), std::string(""),
                                   std::string(kPythonToken) + "x"}) {
    auto claims = VerifyToken(kPythonKey, token, 0);
    ASSERT_FALSE(claims) << token;
    EXPECT_EQ(claims.error().code(), ErrorCode::kPermissionDenied);
    EXPECT_THAT(claims.error().message(), HasSubstr("Invalid token")) << token;
  }
  EXPECT_FALSE(VerifyToken("another-key", kPythonToken, 0));
}

TEST(TokenTest, IssuedTokensRoundTripAndUnknownScopesAreRejected) {
  TokenClaims claims{"alice", {ApiGroup::kGpuControl}, 5000};
  auto token = IssueToken("k", claims);
  ASSERT_TRUE(token);
  auto back = VerifyToken("k", *token, 4999);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sub, "alice");
  EXPECT_THAT(back->scopes, ElementsAre(ApiGroup::kGpuControl));
  EXPECT_EQ(back->exp, 5000);
  EXPECT_FALSE(IssueToken("", claims));
}

// Our token's signature checked by Python's hmac over its first two parts,
// and its claims read with Python's json.
TEST(TokenTest, PythonsStdlibVerifiesOurToken) {
  auto token = IssueToken("shared-secret", TokenClaims{"carol", {ApiGroup::kGpuRead, ApiGroup::kCpuRead}, std::nullopt});
  ASSERT_TRUE(token);
  const std::string script =
      "import sys,hmac,hashlib,base64,json\n"
      "t=sys.argv[1]; h,p,s=t.split('.')\n"
      "d=lambda x: base64.urlsafe_b64decode(x+'='*(-len(x)%4))\n"
      "ok=hmac.compare_digest(d(s), hmac.new(b'shared-secret',(h+'.'+p).encode(),hashlib.sha256).digest())\n"
      "print(ok, json.loads(d(h))['alg'], json.loads(d(p))['sub'], ','.join(json.loads(d(p))['scopes']))\n";
  auto result = zeus::testing::RunProcess({"/usr/bin/python3", "-c", script, *token});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "True HS256 carol gpu-read,cpu-read\n");
}

// A token signed by Python's stdlib with these claims (a JSON object).
std::string PythonSigned(const std::string& key, const std::string& claims) {
  const std::string script =
      "import sys,hmac,hashlib,base64\n"
      "e=lambda b: base64.urlsafe_b64encode(b).rstrip(b'=').decode()\n"
      "m=e(b'{\"alg\":\"HS256\",\"typ\":\"JWT\"}')+'.'+e(sys.argv[2].encode())\n"
      "print(m+'.'+e(hmac.new(sys.argv[1].encode(),m.encode(),hashlib.sha256).digest()),end='')\n";
  auto result = zeus::testing::RunProcess({"/usr/bin/python3", "-c", script, key, claims});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.out;
}

// Issue 20: nbf and iat in the future were accepted.
TEST(TokenTest, NotBeforeAndIssuedAtInTheFutureAreRefused) {
  const std::string claims = R"({"sub":"bob","scopes":["gpu-read"],)";
  const std::string nbf = PythonSigned("k", claims + R"("nbf":2000})");
  EXPECT_TRUE(VerifyToken("k", nbf, 2000));
  EXPECT_TRUE(VerifyToken("k", nbf, 2000 - kTokenClockLeewayS));
  auto early = VerifyToken("k", nbf, 2000 - kTokenClockLeewayS - 1);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(early.error().message(), HasSubstr("not valid yet"));

  const std::string iat = PythonSigned("k", claims + R"("iat":2000})");
  EXPECT_TRUE(VerifyToken("k", iat, 1940));
  auto future = VerifyToken("k", iat, 1939);
  ASSERT_FALSE(future);
  EXPECT_THAT(future.error().message(), HasSubstr("issued in the future"));

  auto text = VerifyToken("k", PythonSigned("k", claims + R"("nbf":"soon"})"), 2000);
  ASSERT_FALSE(text);
  EXPECT_THAT(text.error().message(), HasSubstr("nbf is not an integer"));
}

TEST(ExpiryTest, Durations) {
  EXPECT_EQ(ParseExpiry("1h").value(), 3600);
  EXPECT_EQ(ParseExpiry("7d").value(), 7 * 86400);
  EXPECT_EQ(ParseExpiry("30d").value(), 30 * 86400);
  EXPECT_EQ(ParseExpiry("never").value(), std::nullopt);
  EXPECT_EQ(ParseExpiry("0").value(), std::nullopt);
  for (const char* bad : {"", "h", "1", "1y", "-1h", "1.5h", "1hh"}) EXPECT_FALSE(ParseExpiry(bad)) << bad;
}

}  // namespace
}  // namespace zeus::zeusd
