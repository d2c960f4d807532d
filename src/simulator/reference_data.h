// Copyright 2026 The Zeus C++ Authors.
//
// Test helper: reads the original simulator's outputs in
// ../shared/testdata/zeus-reference-sim (CSV, optionally gzip-compressed,
// decompressed with the system's gzip) into tables addressed by column name.

#ifndef ZEUS_SRC_SIMULATOR_REFERENCE_DATA_H_
#define ZEUS_SRC_SIMULATOR_REFERENCE_DATA_H_

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "simulator/csv_reader.h"

namespace zeus::simulator::testing {

class ReferenceTable {
 public:
  // Reads `path` (".gz" is decompressed). Empty on failure.
  static ReferenceTable Load(const std::string& path) {
    std::string text;
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
      const std::string command = "gzip -dc '" + path + "'";
      if (FILE* pipe = popen(command.c_str(), "r")) {
        char buffer[65536];
        std::size_t n = 0;
        while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
        pclose(pipe);
      }
    } else if (FILE* f = fopen(path.c_str(), "rb")) {
      char buffer[65536];
      std::size_t n = 0;
      while ((n = fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
      fclose(f);
    }
    ReferenceTable table;
    auto records = internal::ReadCsv(text, path);
    if (!records || records->empty()) return table;
    for (std::size_t i = 0; i < records->front().fields.size(); ++i) table.columns_[records->front().fields[i]] = i;
    for (std::size_t r = 1; r < records->size(); ++r) table.rows_.push_back(std::move((*records)[r].fields));
    return table;
  }

  bool empty() const { return rows_.empty(); }
  std::size_t size() const { return rows_.size(); }
  bool has(const std::string& column) const { return columns_.count(column) != 0; }
  const std::string& Text(std::size_t row, const std::string& column) const { return rows_[row].at(columns_.at(column)); }
  double Number(std::size_t row, const std::string& column) const {
    const std::string& t = Text(row, column);
    if (t.empty() || t == "nan" || t == "NaN") return std::nan("");
    return std::strtod(t.c_str(), nullptr);
  }
  bool Bool(std::size_t row, const std::string& column) const { return Text(row, column) == "True"; }

  // Rows whose `column` values equal `values`, in file order.
  std::vector<std::size_t> Where(const std::map<std::string, std::string>& equal) const {
    std::vector<std::size_t> out;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      bool match = true;
      for (const auto& [column, value] : equal) match = match && Text(r, column) == value;
      if (match) out.push_back(r);
    }
    return out;
  }

 private:
  std::map<std::string, std::size_t> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// |a - b| <= rel * max(|a|, |b|), with equal infinities and NaNs accepted.
inline bool NearRelative(double a, double b, double rel) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace zeus::simulator::testing

#endif  // ZEUS_SRC_SIMULATOR_REFERENCE_DATA_H_
