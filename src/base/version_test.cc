// Copyright 2026 The Zeus C++ Authors.
//
// Version() is the VERSION file's number: three dot-separated integers.

#include "zeus/base/version.h"

#include <regex>
#include <string>

#include <gtest/gtest.h>

namespace zeus {
namespace {

TEST(VersionTest, IsMajorMinorPatch) {
  const std::string version(Version());
  EXPECT_TRUE(std::regex_match(version, std::regex(R"(\d+\.\d+\.\d+)"))) << version;
}

}  // namespace
}  // namespace zeus
