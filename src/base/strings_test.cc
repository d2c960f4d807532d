// Copyright 2026 The Zeus C++ Authors.

#include "base/strings.h"

#include <gtest/gtest.h>

namespace zeus::base {
namespace {

TEST(TrimTest, RemovesSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(Trim(" \t gpu-read\t "), "gpu-read");
  EXPECT_EQ(Trim("0"), "0");
  EXPECT_EQ(Trim("  leading"), "leading");
  EXPECT_EQ(Trim("trailing\t\t"), "trailing");
}

TEST(TrimTest, KeepsBlanksInsideAndOtherCharactersAtTheEnds) {
  EXPECT_EQ(Trim(" Bearer  abc "), "Bearer  abc");
  EXPECT_EQ(Trim("value\r\n"), "value\r\n");
  EXPECT_EQ(Trim("\nvalue"), "\nvalue");
}

TEST(TrimTest, AllBlankOrEmptyIsEmpty) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t \t"), "");
}

TEST(TrimTest, ViewsTheInputsCharacters) {
  const std::string_view text = "  abc ";
  const std::string_view trimmed = Trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 3u);
}

}  // namespace
}  // namespace zeus::base
