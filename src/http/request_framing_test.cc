// Copyright 2026 The Zeus C++ Authors.

#include "http/request_framing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::http::internal {
namespace {

using ::testing::HasSubstr;

FramingVerdict::Kind KindOf(std::vector<std::string_view> values, unsigned version = 11) {
  return CheckRequestTransferEncoding(values, version).kind;
}

TEST(RequestFramingTest, AcceptsNoCodingAndChunkedAlone) {
  EXPECT_EQ(KindOf({}), FramingVerdict::kAccept);
  EXPECT_EQ(KindOf({}, 10), FramingVerdict::kAccept);
  EXPECT_EQ(KindOf({"chunked"}), FramingVerdict::kAccept);
  EXPECT_EQ(KindOf({" CHUNKED\t"}), FramingVerdict::kAccept);
  EXPECT_EQ(KindOf({", chunked ,"}), FramingVerdict::kAccept);  // empty list elements are allowed
  EXPECT_EQ(KindOf({"", "chunked"}), FramingVerdict::kAccept);
}

TEST(RequestFramingTest, RefusesWhatLeavesTheLengthUnknown) {
  EXPECT_EQ(KindOf({"xchunked"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked, identity"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked", "identity"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"identity"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked;x=1"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked, chunked"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked", "chunked"}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({""}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({" , "}), FramingVerdict::kBadRequest);
  EXPECT_EQ(KindOf({"chunked"}, 10), FramingVerdict::kBadRequest);
  EXPECT_THAT(CheckRequestTransferEncoding({"chunked, x\x01y"}, 11).reason, HasSubstr("'x\\x01y' last"));
}

TEST(RequestFramingTest, OtherCodingsBeforeChunkedAreNotImplemented) {
  const FramingVerdict verdict = CheckRequestTransferEncoding({"gzip, chunked"}, 11);
  EXPECT_EQ(verdict.kind, FramingVerdict::kNotImplemented);
  EXPECT_THAT(verdict.reason, HasSubstr("'gzip'"));
  EXPECT_EQ(KindOf({"identity", "chunked"}), FramingVerdict::kNotImplemented);
}

}  // namespace
}  // namespace zeus::http::internal
