// Copyright 2026 The Zeus C++ Authors.

#include "base/strings.h"

#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

namespace zeus::base {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed character at the start of `bytes` (1-4), or
// 0 when it is ill-formed; then `*subpart` is the length of its maximal
// subpart (at least 1): the bytes that begin some well-formed sequence.
// Unicode's Table 3-7 gives, per lead byte, the range of the second byte.
std::size_t CharacterLength(std::string_view bytes, std::size_t* subpart) {
  const auto b0 = static_cast<std::uint8_t>(bytes[0]);
  *subpart = 1;
  if (b0 < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t second_min = 0x80, second_max = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) second_min = 0xA0;  // no overlong 3-byte forms
    if (b0 == 0xED) second_max = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) second_min = 0x90;  // no overlong 4-byte forms
    if (b0 == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0, C1 (overlong 2-byte leads) or F5-FF
  }
  for (std::size_t i = 1; i < length; ++i) {
    if (i >= bytes.size()) return 0;  // cut short: the subpart so far
    const auto b = static_cast<std::uint8_t>(bytes[i]);
    const std::uint8_t min = i == 1 ? second_min : 0x80;
    const std::uint8_t max = i == 1 ? second_max : 0xBF;
    if (b < min || b > max) return 0;
    *subpart = i + 1;
  }
  return length;
}

}  // namespace

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

bool IsValidUtf8(std::string_view bytes) {
  while (!bytes.empty()) {
    std::size_t subpart = 0;
    const std::size_t length = CharacterLength(bytes, &subpart);
    if (length == 0) return false;
    bytes.remove_prefix(length);
  }
  return true;
}

std::string ValidUtf8(std::string_view bytes) {
  if (IsValidUtf8(bytes)) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + 8);
  while (!bytes.empty()) {
    std::size_t subpart = 0;
    const std::size_t length = CharacterLength(bytes, &subpart);
    if (length == 0) {
      out += kReplacement;
      bytes.remove_prefix(subpart);
    } else {
      out.append(bytes.substr(0, length));
      bytes.remove_prefix(length);
    }
  }
  return out;
}

std::string EscapeControlCharacters(std::string_view utf8) {
  std::string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto b = static_cast<std::uint8_t>(utf8[i]);
    if (b < 0x20 || b == 0x7F) {
      out += fmt::format("\\x{:02x}", b);
    } else if (b == 0xC2 && i + 1 < utf8.size() && static_cast<std::uint8_t>(utf8[i + 1]) <= 0x9F &&
               static_cast<std::uint8_t>(utf8[i + 1]) >= 0x80) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint8_t>(utf8[i + 1]));  // U+0080-U+009F
      ++i;
    } else {
      out += utf8[i];
    }
  }
  return out;
}

}  // namespace zeus::base
