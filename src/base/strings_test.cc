// Copyright 2026 The Zeus C++ Authors.

#include "base/strings.h"

#include <string>
#include <string_view>

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

// U+FFFD, as ValidUtf8 writes it.
constexpr std::string_view kFffd = "\xEF\xBF\xBD";

std::string Fffd(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += kFffd;
  return out;
}

TEST(ValidUtf8Test, KeepsValidTextUnchanged) {
  for (std::string_view text : {std::string_view(""), std::string_view("python3"),
                                std::string_view("\xC3\xA9t\xC3\xA9"),            // été
                                std::string_view("\xE6\x97\xA5\xE6\x9C\xAC"),     // 日本
                                std::string_view("\xF0\x9F\x94\xA5 hot"),         // U+1F525
                                std::string_view("\xF4\x8F\xBF\xBF"),             // U+10FFFF
                                std::string_view("\xEF\xBF\xBD"),                 // U+FFFD itself
                                std::string_view("\x1b[31m\x7f\xC2\x9B", 8),     // controls are valid UTF-8
                                std::string_view("a\0b", 3)}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ValidUtf8(text), text);
  }
}

TEST(ValidUtf8Test, ACharacterCutAtTheKernels15BytesIsOneReplacement) {
  // "py日本語の名" is 17 bytes; the kernel keeps 15: "py", four characters, then one byte of the fifth.
  const std::string comm = std::string("py\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE5\x90\x8D").substr(0, 15);
  EXPECT_FALSE(IsValidUtf8(comm));
  EXPECT_EQ(ValidUtf8(comm), "py\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE" + Fffd(1));
  EXPECT_EQ(ValidUtf8("ab\xF0\x9F\x94"), "ab" + Fffd(1));  // 3 of a 4-byte character
  EXPECT_EQ(ValidUtf8("\xC3"), Fffd(1));
}

TEST(ValidUtf8Test, OverlongFormsAreOneReplacementPerByte) {
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), Fffd(2));          // '/' in two bytes
  EXPECT_EQ(ValidUtf8("\xC1\xBF"), Fffd(2));
  EXPECT_EQ(ValidUtf8("\xE0\x80\xAF"), Fffd(3));      // '/' in three
  EXPECT_EQ(ValidUtf8("\xF0\x80\x80\xAF"), Fffd(4));  // '/' in four
  EXPECT_EQ(ValidUtf8("x\xC0\x80y"), "x" + Fffd(2) + "y");  // "modified UTF-8" NUL
}

TEST(ValidUtf8Test, SurrogatesAndCodePointsPastTheLastAreReplaced) {
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), Fffd(3));      // U+D800
  EXPECT_EQ(ValidUtf8("\xED\xBF\xBF"), Fffd(3));      // U+DFFF
  EXPECT_EQ(ValidUtf8("\xED\x9F\xBF"), "\xED\x9F\xBF");  // U+D7FF is a character
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), Fffd(4));  // U+110000
  EXPECT_EQ(ValidUtf8("\xF5\x80"), Fffd(2));
}

TEST(ValidUtf8Test, LoneContinuationAndNeverValidBytesAreOneEach) {
  EXPECT_EQ(ValidUtf8("\x80"), Fffd(1));
  EXPECT_EQ(ValidUtf8("a\x80\xBF" "b"), "a" + Fffd(2) + "b");
  EXPECT_EQ(ValidUtf8("\xFF\xFE"), Fffd(2));
  // A lead byte followed by something that is not a continuation: the lead alone is replaced.
  EXPECT_EQ(ValidUtf8("\xE6\x97" "a"), Fffd(1) + "a");
  EXPECT_EQ(ValidUtf8("\xC3" "\xC3\xA9"), Fffd(1) + "\xC3\xA9");
}

TEST(ValidUtf8Test, AHostileProcessNameBecomesValid) {
  const std::string hostile = "\xE6\x97\xA5\x1b[31mev\xFF\x80il\xE6\x97";
  const std::string valid = ValidUtf8(hostile);
  EXPECT_TRUE(IsValidUtf8(valid));
  EXPECT_EQ(valid, "\xE6\x97\xA5\x1b[31mev" + Fffd(2) + "il" + Fffd(1));
}

TEST(EscapeControlCharactersTest, WritesC0DelAndC1AsPrintableText) {
  EXPECT_EQ(EscapeControlCharacters("\x1b[2J\x1b]0;pwned\x07"), "\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(EscapeControlCharacters("a\tb\nc\rd\x7f"), "a\\x09b\\x0ac\\x0dd\\x7f");
  EXPECT_EQ(EscapeControlCharacters(std::string_view("\0", 1)), "\\x00");
  EXPECT_EQ(EscapeControlCharacters("\xC2\x9B" "31m\xC2\x85"), "\\u009b31m\\u0085");  // CSI, NEL
}

TEST(EscapeControlCharactersTest, KeepsPrintableText) {
  for (std::string_view text : {"python3", "\xE6\x97\xA5\xE6\x9C\xAC", "\xC2\xA0nbsp \xC2\xBF", "\xEF\xBF\xBD",
                                "back\\slash"}) {
    EXPECT_EQ(EscapeControlCharacters(text), text);
  }
}

}  // namespace
}  // namespace zeus::base
