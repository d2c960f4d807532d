// Copyright 2026 The Zeus C++ Authors.
//
// The scenario parser's JSON layer (declared in scenario_internal.h): the
// error helper, path formatting, the typed readers, and ParseJson (comments
// allowed, duplicate keys rejected, syntax errors located by line and column).

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <vector>

#include "scenario_internal.h"

namespace zeus::emulator::internal {

[[noreturn]] void Fail(const std::string& path, const std::string& problem) {
  throw ScenarioError(path.empty() ? problem : fmt::format("{}: {}", path, problem));
}

// A short rendering of a JSON value for messages: `"abc"`, `12`, `[1,2]`.
std::string Show(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return text;
}

std::string ChildPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string ElementPath(const std::string& path, std::size_t index) { return fmt::format("{}[{}]", path, index); }

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// ---- Typed readers: each fails with "<path>: expected ..., got ..." ----------

double ReadNumber(const Json& value, const std::string& path) {
  if (!value.is_number()) Fail(path, fmt::format("expected a number, got {}", Show(value)));
  return value.get<double>();
}

double ReadNumberIn(const Json& value, const std::string& path, double min, double max, std::string_view unit) {
  const double number = ReadNumber(value, path);
  if (number < min || number > max) {
    Fail(path, fmt::format("must be between {} and {}{}, got {}", min, max, unit, Show(value)));
  }
  return number;
}

std::int64_t ReadInteger(const Json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      Fail(path, fmt::format("{} is too large", Show(value)));
    }
    return value.get<std::int64_t>();
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::trunc(number) == number && std::fabs(number) < 9e15) return static_cast<std::int64_t>(number);
  }
  Fail(path, fmt::format("expected an integer, got {}", Show(value)));
}

std::int64_t ReadIntegerIn(const Json& value, const std::string& path, std::int64_t min, std::int64_t max) {
  const std::int64_t number = ReadInteger(value, path);
  if (number < min || number > max) {
    Fail(path, fmt::format("must be between {} and {}, got {}", min, max, number));
  }
  return number;
}

bool ReadBool(const Json& value, const std::string& path) {
  if (!value.is_boolean()) Fail(path, fmt::format("expected true or false, got {}", Show(value)));
  return value.get<bool>();
}

std::string ReadString(const Json& value, const std::string& path, std::size_t max_length) {
  if (!value.is_string()) Fail(path, fmt::format("expected a string, got {}", Show(value)));
  std::string text = value.get<std::string>();
  if (text.empty()) Fail(path, "must not be empty");
  if (text.size() > max_length) {
    Fail(path, fmt::format("is {} characters long; at most {} fit", text.size(), max_length));
  }
  return text;
}

const Json& ReadArray(const Json& value, const std::string& path, bool allow_empty) {
  if (!value.is_array()) Fail(path, fmt::format("expected an array, got {}", Show(value)));
  if (!allow_empty && value.empty()) Fail(path, "must not be empty");
  return value;
}

// Watts (a number in [0, kMaxPowerW], or (0, kMaxPowerW] when `positive`) to
// whole milliwatts.
std::uint32_t ReadMilliwatts(const Json& value, const std::string& path, bool positive) {
  const double watts = ReadNumberIn(value, path, 0.0, kMaxPowerW, " W");
  if (positive && watts <= 0.0) Fail(path, fmt::format("must be greater than 0 W, got {}", Show(value)));
  return static_cast<std::uint32_t>(std::llround(watts * 1000.0));
}

std::int64_t ReadMillisAsNs(const Json& value, const std::string& path, double min_ms, double max_ms) {
  return std::llround(ReadNumberIn(value, path, min_ms, max_ms, " ms") * 1e6);
}

std::int64_t ReadSecondsAsNs(const Json& value, const std::string& path) {
  return std::llround(ReadNumberIn(value, path, 0.0, kMaxTimeS, " s") * 1e9);
}

std::string FormatWatts(std::uint32_t milliwatts) { return fmt::format("{} W", milliwatts / 1000.0); }

namespace {

// "line 3, column 5: JSON syntax error: <detail>" from nlohmann's message
// "[json.exception.parse_error.101] parse error at line 3, column 5: <detail>".
std::string DescribeParseError(const nlohmann::json::parse_error& error) {
  const std::string what = error.what();
  std::string where;
  std::size_t line = 0;
  std::size_t column = 0;
  const std::size_t at = what.find(" at line ");
  if (at != std::string::npos && std::sscanf(what.c_str() + at, " at line %zu, column %zu", &line, &column) == 2) {
    where = fmt::format("line {}, column {}", line, column);
  } else {
    where = fmt::format("byte {}", error.byte);
  }
  std::string detail = what;
  if (const std::size_t colon = what.find(": ", at == std::string::npos ? 0 : at); colon != std::string::npos) {
    detail = what.substr(colon + 2);
  }
  constexpr std::string_view kRedundant = "syntax error ";
  if (detail.starts_with(kRedundant)) detail.erase(0, kRedundant.size());
  return fmt::format("{}: JSON syntax error: {}", where, detail);
}

// A SAX pass that tracks where the parse is (for messages) and rejects
// duplicate keys. (Not a parser callback: nlohmann 3.11's DOM callback parser
// rescans the enclosing array at every object's end, so a schedule of 60,000
// steps took 130 s to load under ASan.)
class DuplicateKeyChecker final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return ElementDone(); }
  bool boolean(bool) override { return ElementDone(); }
  bool number_integer(number_integer_t) override { return ElementDone(); }
  bool number_unsigned(number_unsigned_t) override { return ElementDone(); }
  bool number_float(number_float_t, const string_t&) override { return ElementDone(); }
  bool string(string_t&) override { return ElementDone(); }
  bool binary(binary_t&) override { return ElementDone(); }
  bool start_object(std::size_t) override {
    frames_.push_back(Frame{false, 0, {}, {}});
    return true;
  }
  bool key(string_t& key) override {
    if (frames_.empty()) return true;
    Frame& object = frames_.back();
    object.key = key;
    if (!object.keys.insert(object.key).second) Fail(ObjectPath(), fmt::format("duplicate key {}", Show(Json(key))));
    return true;
  }
  bool end_object() override { return EndStructure(); }
  bool start_array(std::size_t) override {
    frames_.push_back(Frame{true, 0, {}, {}});
    return true;
  }
  bool end_array() override { return EndStructure(); }
  // Syntax errors are reported by the DOM parse that follows.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;           // arrays: the element being parsed
    std::string key;             // objects: the latest key
    std::set<std::string> keys;  // objects: every key so far
  };

  bool ElementDone() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return true;
  }
  bool EndStructure() {
    if (!frames_.empty()) frames_.pop_back();
    return ElementDone();
  }

  // The path of the innermost object, e.g. "gpus[0]".
  std::string ObjectPath() const {
    std::string path;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      path = frames_[i].is_array ? ElementPath(path, frames_[i].index) : ChildPath(path, frames_[i].key);
    }
    return path;
  }

  std::vector<Frame> frames_;
};

}  // namespace

// Parses JSON with comments allowed and duplicate keys rejected.
Json ParseJson(std::string_view text) {
  try {
    DuplicateKeyChecker checker;
    Json::sax_parse(text.begin(), text.end(), &checker, nlohmann::json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/true);
    return Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/true,
                       /*ignore_comments=*/true);
  } catch (const Json::parse_error& error) {
    throw ScenarioError(DescribeParseError(error));
  } catch (const Json::exception& error) {
    std::string what = error.what();
    if (const std::size_t bracket = what.find("] "); what.starts_with("[") && bracket != std::string::npos) {
      what.erase(0, bracket + 2);
    }
    throw ScenarioError(fmt::format("JSON error: {}", what));
  }
}

}  // namespace zeus::emulator::internal
