// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::zeusd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(ParseTargetTest, SplitsPathAndDecodesFields) {
  auto t = ParseTarget("/gpu/get_power?gpu_ids=0%2C1&x=a+b&&empty=");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path, "/gpu/get_power");
  EXPECT_THAT(t->fields, ElementsAre(Pair("gpu_ids", "0,1"), Pair("x", "a b"), Pair("empty", "")));
}

TEST(ParseTargetTest, RejectsBadEscapes) {
  EXPECT_FALSE(ParseTarget("/a?x=%zz"));
  EXPECT_FALSE(ParseTarget("/a?x=%4"));
  EXPECT_FALSE(ParseTarget("/a?x=%"));
  EXPECT_TRUE(ParseTarget("/a?x=%41"));
}

TEST(QueryFieldsTest, UnknownFieldIsNamedWithTheExpectedOnes) {
  auto t = ParseTarget("/gpu/set_power_limit?gpu_ids=0&power_limit_mw=1&block=true&bogus=1");
  ASSERT_TRUE(t);
  QueryFields fields(*t, {"gpu_ids", "power_limit_mw", "block"});
  ASSERT_TRUE(fields.Require("gpu_ids"));
  ASSERT_TRUE(fields.RequireUnsigned("power_limit_mw", 10));
  ASSERT_TRUE(fields.RequireBool("block"));
  Status done = fields.Finish();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(done.error().message(), HasSubstr("unknown field `bogus`, expected one of `gpu_ids`, `power_limit_mw`, `block`"));
}

TEST(QueryFieldsTest, BooleansAreLiteralTrueOrFalse) {
  for (const char* bad : {"True", "1", "yes", "", "false "}) {
    Target t{"/x", {{"block", bad}}};
    QueryFields fields(t, {"block"});
    EXPECT_FALSE(fields.RequireBool("block")) << bad;
  }
  Target t{"/x", {{"a", "true"}, {"b", "false"}}};
  QueryFields fields(t, {"a", "b"});
  EXPECT_EQ(fields.RequireBool("a").value(), true);
  EXPECT_EQ(fields.RequireBool("b").value(), false);
  EXPECT_TRUE(fields.Finish());
}

TEST(QueryFieldsTest, MissingAndDuplicateFields) {
  Target t{"/x", {{"a", "1"}, {"a", "2"}}};
  QueryFields fields(t, {"a", "b"});
  auto dup = fields.Get("a");
  ASSERT_FALSE(dup);
  EXPECT_THAT(dup.error().message(), HasSubstr("duplicate field `a`"));
  auto missing = fields.Require("b");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("missing field `b`"));
}

TEST(QueryFieldsTest, UnsignedNumbers) {
  Target t{"/x", {{"a", "300000"}, {"b", "-1"}, {"c", "4294967296"}, {"d", "1.5"}, {"e", ""}}};
  QueryFields fields(t, {"a", "b", "c", "d", "e"});
  EXPECT_EQ(fields.RequireUnsigned("a", 0xffffffffu).value(), 300000u);
  EXPECT_FALSE(fields.RequireUnsigned("b", 0xffffffffu));
  EXPECT_FALSE(fields.RequireUnsigned("c", 0xffffffffu));
  EXPECT_FALSE(fields.RequireUnsigned("d", 0xffffffffu));
  EXPECT_FALSE(fields.RequireUnsigned("e", 0xffffffffu));
}

TEST(IdListTest, TrimsSortsAndDeduplicates) {
  auto ids = ParseIdList("gpu_ids", " 3, 1,1 ,0", 4, "GPU");
  ASSERT_TRUE(ids);
  EXPECT_THAT(*ids, ElementsAre(0u, 1u, 3u));
}

TEST(IdListTest, EmptyListsAndElementsAndOutOfRangeIdsAreErrors) {
  EXPECT_FALSE(ParseIdList("gpu_ids", "", 4, "GPU"));
  EXPECT_FALSE(ParseIdList("gpu_ids", "  ", 4, "GPU"));
  EXPECT_FALSE(ParseIdList("gpu_ids", "0,", 4, "GPU"));
  EXPECT_FALSE(ParseIdList("gpu_ids", ",0", 4, "GPU"));
  EXPECT_FALSE(ParseIdList("gpu_ids", "a", 4, "GPU"));
  EXPECT_FALSE(ParseIdList("gpu_ids", "-1", 4, "GPU"));
  auto past = ParseIdList("gpu_ids", "0,5", 4, "GPU");
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().message(), "GPU 5 not found");
  auto huge = ParseIdList("cpu_ids", "99999999999999999999999", 2, "CPU");
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.error().message(), HasSubstr("CPU"));
}

TEST(IdListTest, AbsentOptionalListIsEveryDevice) {
  Target t{"/x", {}};
  QueryFields fields(t, {"gpu_ids"});
  EXPECT_THAT(OptionalIdList(fields, "gpu_ids", 3, "GPU").value(), ElementsAre(0u, 1u, 2u));
}

}  // namespace
}  // namespace zeus::zeusd
