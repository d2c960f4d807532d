// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/query.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/strings.h"

namespace zeus::zeusd {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      if (i + 2 >= text.size()) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("Failed to deserialize query string: truncated percent escape in '{}'", text));
      }
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("Failed to deserialize query string: invalid percent escape in '{}'", text));
      }
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Error QueryError(std::string_view message) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("Failed to deserialize query string: {}", message));
}

}  // namespace

Result<Target> ParseTarget(std::string_view target) {
  Target out;
  const std::size_t question = target.find('?');
  out.path = std::string(target.substr(0, question));
  if (question == std::string_view::npos) return out;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    auto name = PercentDecode(pair.substr(0, eq));
    if (!name) return Fail(name.error());
    auto value = PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!value) return Fail(value.error());
    out.fields.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

QueryFields::QueryFields(const Target& target, std::vector<std::string_view> expected)
    : target_(target), expected_(std::move(expected)), taken_(target.fields.size(), false) {}

Result<std::optional<std::string>> QueryFields::Get(std::string_view name) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i < target_.fields.size(); ++i) {
    if (target_.fields[i].first != name) continue;
    if (found) return Fail(QueryError(fmt::format("duplicate field `{}`", name)));
    found = target_.fields[i].second;
    taken_[i] = true;
  }
  return found;
}

Result<std::string> QueryFields::Require(std::string_view name) {
  auto value = Get(name);
  if (!value) return Fail(value.error());
  if (!*value) return Fail(QueryError(fmt::format("missing field `{}`", name)));
  return std::move(**value);
}

Result<std::optional<bool>> QueryFields::GetBool(std::string_view name) {
  auto value = Get(name);
  if (!value) return Fail(value.error());
  if (!*value) return std::optional<bool>();
  if (**value == "true") return std::optional<bool>(true);
  if (**value == "false") return std::optional<bool>(false);
  return Fail(QueryError(fmt::format("{}: provided string was not `true` or `false` (got '{}')", name, **value)));
}

Result<bool> QueryFields::RequireBool(std::string_view name) {
  auto value = GetBool(name);
  if (!value) return Fail(value.error());
  if (!*value) return Fail(QueryError(fmt::format("missing field `{}`", name)));
  return **value;
}

Result<std::uint64_t> QueryFields::RequireUnsigned(std::string_view name, std::uint64_t max) {
  auto text = Require(name);
  if (!text) return Fail(text.error());
  std::uint64_t value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text->empty() || ec != std::errc() || ptr != end) {
    return Fail(QueryError(fmt::format("{}: invalid digit found in string (got '{}')", name, *text)));
  }
  if (value > max) return Fail(QueryError(fmt::format("{}: number too large to fit in target type (got {})", name, *text)));
  return value;
}

Status QueryFields::Finish() const {
  for (std::size_t i = 0; i < target_.fields.size(); ++i) {
    if (taken_[i]) continue;
    std::string expected;
    for (std::size_t j = 0; j < expected_.size(); ++j) {
      expected += fmt::format("{}`{}`", j == 0 ? "" : ", ", expected_[j]);
    }
    if (expected_.empty()) {
      return Fail(QueryError(fmt::format("unknown field `{}`, there are no fields", target_.fields[i].first)));
    }
    return Fail(QueryError(fmt::format("unknown field `{}`, expected {}{}", target_.fields[i].first,
                                       expected_.size() == 1 ? "" : "one of ", expected)));
  }
  return OkStatus();
}

Result<std::vector<std::size_t>> ParseIdList(std::string_view name, std::string_view value, std::size_t device_count,
                                             std::string_view kind) {
  std::vector<std::size_t> ids;
  if (base::Trim(value).empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("{} must not be empty", name));
  std::string_view rest = value;
  for (;;) {
    const std::size_t comma = rest.find(',');
    const std::string_view element = base::Trim(rest.substr(0, comma));
    if (element.empty()) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{} has an empty element: '{}'", name, value));
    }
    std::size_t id = 0;
    const auto [ptr, ec] = std::from_chars(element.data(), element.data() + element.size(), id);
    if (ec == std::errc::result_out_of_range) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {} not found", kind, element));
    }
    if (ec != std::errc() || ptr != element.data() + element.size()) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: invalid id '{}' in '{}'", name, element, value));
    }
    if (id >= device_count) return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {} not found", kind, id));
    ids.push_back(id);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Result<std::vector<std::size_t>> OptionalIdList(QueryFields& fields, std::string_view name,
                                                std::size_t device_count, std::string_view kind) {
  auto value = fields.Get(name);
  if (!value) return Fail(value.error());
  if (!*value) {
    std::vector<std::size_t> all(device_count);
    for (std::size_t i = 0; i < device_count; ++i) all[i] = i;
    return all;
  }
  return ParseIdList(name, **value, device_count, kind);
}

}  // namespace zeus::zeusd
