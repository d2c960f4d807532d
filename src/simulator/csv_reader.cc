// Copyright 2026 The Zeus C++ Authors.

#include "simulator/csv_reader.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace zeus::simulator::internal {
namespace {

// A cell as it appears in a message: quoted, clipped to a sane length.
std::string Show(std::string_view cell) {
  constexpr std::size_t kMax = 40;
  std::string shown;
  for (char c : cell.substr(0, kMax)) {
    if (c == '"' || c == '\\') shown += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      shown += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      shown += c;
    }
  }
  return "\"" + shown + (cell.size() > kMax ? "...\"" : "\"");
}

bool ParseDouble(std::string_view s, double& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);  // from_chars does not take '+'
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool IsNanText(std::string_view s) { return s.empty() || s == "nan" || s == "NaN" || s == "NAN"; }

}  // namespace

Result<std::vector<CsvRecord>> ReadCsv(std::string_view text, std::string_view file_name) {
  std::vector<CsvRecord> records;
  std::size_t line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    CsvRecord record;
    record.line = line;
    std::string field;
    bool record_done = false;
    while (!record_done) {
      field.clear();
      if (i < n && text[i] == '"') {
        const std::size_t quote_line = line;
        ++i;
        for (;;) {
          if (i >= n) {
            return Fail(ErrorCode::kInvalidArgument,
                        fmt::format("{}:{}: a quoted field is never closed", file_name, quote_line));
          }
          const char c = text[i++];
          if (c == '"') {
            if (i < n && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          return Fail(ErrorCode::kInvalidArgument,
                      fmt::format("{}:{}: unexpected {} after a closing quote", file_name, line,
                                  Show(text.substr(i, 1))));
        }
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
      }
      record.fields.push_back(field);
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      // End of record: \r\n, \n, \r or end of text.
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') ++i;
      ++line;
      record_done = true;
    }
    const bool blank = record.fields.size() == 1 && record.fields[0].empty();
    if (!blank) records.push_back(std::move(record));
  }
  return records;
}

Result<CsvTable> CsvTable::Create(std::vector<CsvRecord> records, std::string_view file_name,
                                  const std::vector<std::string_view>& required) {
  if (records.empty()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{}:1: the file is empty (expected a CSV header)", file_name));
  }
  CsvTable table(std::move(records), std::string(file_name));
  const CsvRecord& header = table.records_.front();
  for (std::size_t c = 0; c < header.fields.size(); ++c) {
    std::string name = header.fields[c];
    // Tolerate surrounding blanks and a UTF-8 byte-order mark.
    if (c == 0 && name.rfind("\xEF\xBB\xBF", 0) == 0) name.erase(0, 3);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    table.columns_.emplace_back(std::move(name), c);
  }
  for (std::string_view want : required) {
    bool found = false;
    for (const auto& [name, index] : table.columns_) found = found || name == want;
    if (!found) {
      std::string have;
      for (const auto& [name, index] : table.columns_) have += (have.empty() ? "" : ", ") + name;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}:{}: missing column '{}' (the header has: {})", file_name, header.line, want, have));
    }
  }
  return table;
}

std::size_t CsvTable::column(std::string_view name) const {
  for (const auto& [n, index] : columns_) {
    if (n == name) return index;
  }
  return 0;  // unreachable for required columns
}

Error CsvTable::CellError(std::size_t i, std::string_view name, std::string_view what) const {
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("{}:{}:{}: column '{}': {}", file_, row(i).line, column(name) + 1, name, what));
}

Status CsvTable::CheckWidth(std::size_t i) const {
  const std::size_t want = records_.front().fields.size();
  const std::size_t got = row(i).fields.size();
  if (got != want) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}:{}: {} fields, but the header has {}", file_, row(i).line, got, want));
  }
  return OkStatus();
}

const std::string& CsvTable::Text(std::size_t i, std::string_view name) const { return row(i).fields[column(name)]; }

Result<double> CsvTable::Number(std::size_t i, std::string_view name) const {
  const std::string& cell = Text(i, name);
  double value = 0;
  if (!ParseDouble(cell, value)) return Fail(CellError(i, name, fmt::format("{} is not a number", Show(cell))));
  if (!std::isfinite(value)) return Fail(CellError(i, name, fmt::format("{} is not a finite number", Show(cell))));
  return value;
}

Result<double> CsvTable::NumberOrNan(std::size_t i, std::string_view name) const {
  const std::string& cell = Text(i, name);
  if (IsNanText(cell)) return std::nan("");
  return Number(i, name);
}

Result<int> CsvTable::PositiveInt(std::size_t i, std::string_view name) const {
  const std::string& cell = Text(i, name);
  int value = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size() || value <= 0) {
    return Fail(CellError(i, name, fmt::format("{} is not a positive integer", Show(cell))));
  }
  return value;
}

Result<int> CsvTable::Count(std::size_t i, std::string_view name) const {
  const std::string& cell = Text(i, name);
  double value = 0;
  if (!ParseDouble(cell, value) || !(value >= 0) || value > 1e9 || value != std::floor(value)) {
    return Fail(CellError(i, name, fmt::format("{} is not a whole number >= 0", Show(cell))));
  }
  return static_cast<int>(value);
}

Result<std::string> CsvTable::NonEmpty(std::size_t i, std::string_view name) const {
  const std::string& cell = Text(i, name);
  if (cell.empty()) return Fail(CellError(i, name, "is empty"));
  return cell;
}

}  // namespace zeus::simulator::internal
