// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/error.h"

#include <cerrno>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus {
namespace {

using ::testing::HasSubstr;

Result<int> Half(int x) {
  if (x % 2 != 0) return Fail(ErrorCode::kInvalidArgument, "odd");
  return x / 2;
}

TEST(ResultTest, CarriesValueOrError) {
  auto ok = Half(4);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 2);
  auto bad = Half(3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "odd");
  EXPECT_FALSE(bad.error().native_code().has_value());
}

TEST(ErrorTest, WithContextKeepsCodeAndNative) {
  Error e(ErrorCode::kDeviceLost, "gone", NativeSpace::kNvml, 15);
  Error c = e.WithContext("GPU 1");
  EXPECT_EQ(c.message(), "GPU 1: gone");
  EXPECT_EQ(c.code(), ErrorCode::kDeviceLost);
  EXPECT_EQ(c.native_code(), 15);
  EXPECT_EQ(c.native_space(), NativeSpace::kNvml);
}

TEST(ErrorTest, CodeNamesAreDistinct) {
  std::set<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(ErrorCode::kInternal); ++i) {
    names.insert(ErrorCodeName(static_cast<ErrorCode>(i)));
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(ErrorCode::kInternal) + 1);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kPermissionDenied), "PERMISSION_DENIED");
}

// The whole errno table.
TEST(ErrorFromErrnoTest, Table) {
  const std::pair<int, ErrorCode> table[] = {
      {EACCES, ErrorCode::kPermissionDenied}, {EPERM, ErrorCode::kPermissionDenied},
      {ENOENT, ErrorCode::kNotFound},         {ENODEV, ErrorCode::kNotFound},
      {ENXIO, ErrorCode::kNotFound},          {EINVAL, ErrorCode::kInvalidArgument},
      {EOPNOTSUPP, ErrorCode::kNotSupported}, {ETIMEDOUT, ErrorCode::kTimeout},
      {ECONNREFUSED, ErrorCode::kUnavailable}, {EAGAIN, ErrorCode::kUnavailable},
      {EEXIST, ErrorCode::kAlreadyExists},    {EIO, ErrorCode::kIoError},
      {EISDIR, ErrorCode::kIoError},
  };
  for (const auto& [err, code] : table) {
    Error e = ErrorFromErrno(err, "/some/file");
    EXPECT_EQ(e.code(), code) << err;
    EXPECT_EQ(e.native_code(), err);
    EXPECT_EQ(e.native_space(), NativeSpace::kErrno);
    EXPECT_THAT(e.message(), HasSubstr("/some/file: "));
  }
  EXPECT_THAT(ErrorFromErrno(EACCES, "/f").message(), HasSubstr("run as root"));
}

// The whole exit-code table.
TEST(ExitCodeTest, Table) {
  EXPECT_EQ(ExitCodeFor(ErrorCode::kOk), 0);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kPermissionDenied), 3);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kUnavailable), 4);
  EXPECT_EQ(ExitCodeFor(ErrorCode::kNotSupported), 5);
  for (ErrorCode c : {ErrorCode::kNotFound, ErrorCode::kDeviceLost, ErrorCode::kTimeout, ErrorCode::kIoError,
                      ErrorCode::kFailedPrecondition, ErrorCode::kAlreadyExists, ErrorCode::kAborted,
                      ErrorCode::kInternal}) {
    EXPECT_EQ(ExitCodeFor(c), 1) << ErrorCodeName(c);
  }
}

}  // namespace
}  // namespace zeus
