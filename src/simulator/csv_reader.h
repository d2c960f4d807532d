// Copyright 2026 The Zeus C++ Authors.
//
// A small RFC 4180 CSV reader for the trace files: quoted fields ("" is a
// quote), CRLF or LF line ends, blank lines skipped. Errors name the file and
// line. Private to zeus::simulator.

#ifndef ZEUS_SRC_SIMULATOR_CSV_READER_H_
#define ZEUS_SRC_SIMULATOR_CSV_READER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::simulator::internal {

struct CsvRecord {
  std::size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// Splits `text` into records. Fails with kInvalidArgument on an unterminated
// quote or a character after a closing quote.
Result<std::vector<CsvRecord>> ReadCsv(std::string_view text, std::string_view file_name);

// Maps header names to field indices and reports errors in the
// "<file>:<line>:<column>: ..." form.
class CsvTable {
 public:
  // The first record is the header. Fails when there is no header or one of
  // `required` columns is missing (the message lists what the header has).
  static Result<CsvTable> Create(std::vector<CsvRecord> records, std::string_view file_name,
                                 const std::vector<std::string_view>& required);

  std::size_t num_rows() const { return records_.size() - 1; }
  const CsvRecord& row(std::size_t i) const { return records_[i + 1]; }
  // Index of column `name` (REQUIRES: it was in `required`).
  std::size_t column(std::string_view name) const;

  // Checks that row i has as many fields as the header.
  Status CheckWidth(std::size_t i) const;
  // The text of row i, column `name`.
  const std::string& Text(std::size_t i, std::string_view name) const;
  // A finite double; empty and non-numbers are errors.
  Result<double> Number(std::size_t i, std::string_view name) const;
  // A double, or NaN for an empty cell or "nan"/"NaN".
  Result<double> NumberOrNan(std::size_t i, std::string_view name) const;
  // A positive integer (written as an integer, e.g. "128").
  Result<int> PositiveInt(std::size_t i, std::string_view name) const;
  // An integer >= 0, which may be written as a float with no fraction ("3.0").
  Result<int> Count(std::size_t i, std::string_view name) const;
  // A non-empty text cell.
  Result<std::string> NonEmpty(std::size_t i, std::string_view name) const;

  // "<file>:<line>:<column>: column '<name>': <what>".
  Error CellError(std::size_t i, std::string_view name, std::string_view what) const;

 private:
  CsvTable(std::vector<CsvRecord> records, std::string file_name) : records_(std::move(records)), file_(std::move(file_name)) {}
  std::vector<CsvRecord> records_;
  std::string file_;
  std::vector<std::pair<std::string, std::size_t>> columns_;
};

}  // namespace zeus::simulator::internal

#endif  // ZEUS_SRC_SIMULATOR_CSV_READER_H_
