// Copyright 2026 The Zeus C++ Authors.
//
// Command-line validation shared by `zeus` and `zeus-emulated-train`: CLI11
// validators whose messages name the flag and state the range as a person
// would write it, one-line parse errors, and checks of path flags that run
// before any work starts.
//
// The convention (README "Commands", docs/architecture.md):
//   - every parse or validation error is one line on stderr, `error: ...`,
//     naming the bad word or flag and the value given; exit code 2;
//   - --help and --version print normally and exit 0;
//   - a path given as a flag that cannot be used as asked (a directory where
//     a file is expected or the reverse, a missing parent, a place where
//     nothing can be created) is a usage error, found before the work starts:
//     exit 2, the message names the flag, the path and the errno text;
//   - a write that fails afterwards (disk full, I/O error) is a runtime
//     failure: exit 1, the message names the path and the errno text.

#ifndef ZEUS_APPS_ZEUS_CLI_FLAGS_H_
#define ZEUS_APPS_ZEUS_CLI_FLAGS_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "zeus/base/error.h"

namespace zeus::cli {

// ---------------------------------------------------------------------------
// Validators. Each returns a message that starts with "must" ("must be at
// least 0 (got -1)"); FormatParseError joins it to the flag's name:
// "--eta must be between 0 and 1 (got 1.5)".

// For every integer-typed flag: a whole number of type T in [min_value,
// max_value], written as decimal digits with an optional sign. A leading '-'
// on a flag whose minimum is 0 or more is rejected, never wrapped, and so is
// a value past the type (compared digit by digit, never converted first).
// The message states the range: "between 1 and 10000", "at least 0" (when
// max_value is the type's maximum) or "at most 2147483647" (a value past it).
//
// Attach it with ->transform(), not ->check(): it rewrites the value to plain
// decimal, so that CLI11 never reads "010" as octal 8 (check() would discard
// the rewrite):
//   cmd->add_option("--seed", seed)->transform(IntegerFlag<std::uint64_t>());
//   cmd->add_option("--jobs", jobs)->transform(IntegerFlag<int>(1, 1024));
CLI::Validator IntegerRange(std::int64_t min_value, std::int64_t max_value, std::int64_t type_min,
                            std::int64_t type_max);
CLI::Validator UnsignedRange(std::uint64_t min_value, std::uint64_t max_value, std::uint64_t type_max);

template <typename T>
CLI::Validator IntegerFlag(T min_value = std::numeric_limits<T>::min(), T max_value = std::numeric_limits<T>::max()) {
  static_assert(std::numeric_limits<T>::is_integer && sizeof(T) <= 8);
  if constexpr (std::numeric_limits<T>::is_signed) {
    return IntegerRange(min_value, max_value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  } else {
    return UnsignedRange(min_value, max_value, std::numeric_limits<T>::max());
  }
}

// A finite number (no nan or inf) in [min_value, max_value]; an infinite
// bound means "no bound" ("at least 1"); FiniteNumber() has none. With `exclusive_min` the minimum is
// excluded ("greater than 0").
CLI::Validator NumberRange(double min_value, double max_value, bool exclusive_min = false);
inline CLI::Validator NumberAtLeast(double min_value) {
  return NumberRange(min_value, std::numeric_limits<double>::infinity());
}
inline CLI::Validator FiniteNumber() {
  return NumberRange(-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity());
}
inline CLI::Validator PositiveNumber() { return NumberRange(0, std::numeric_limits<double>::infinity(), true); }

// One of `choices`: "must be one of a, b, c (got 'x')".
CLI::Validator OneOf(std::vector<std::string> choices);

// ---------------------------------------------------------------------------
// Parse errors.

// The one-line message (without "error: ") for a CLI11 error thrown by
// `app.parse`, after the parse stopped. It names the bad word: an unknown
// command ("unknown command 'bogus'; commands: info, monitor, ...; see zeus
// --help"), an unknown flag or extra argument and the command it was given
// to, a flag without its value, a value that does not convert or validate.
std::string FormatParseError(const CLI::App& app, const CLI::ParseError& e);

// What main does with a CLI11 error: --help and --version print as usual and
// return 0; anything else prints `error: <FormatParseError>` on stderr and
// returns 2. --help after a word that names no command where a command
// belongs (`zeus bogus --help`) is that usage error ("unknown command
// 'bogus'; ..."), exit 2, not the parent's help.
int HandleParseError(const CLI::App& app, const CLI::ParseError& e);

// Makes every flag (an option without a value: --json, --quiet) of `app`
// and its subcommands, at any depth, refuse a value: CLI11 would read
// `--json=3` as true. `--json=true` stays accepted. Call it after every
// option is added, before parsing; the error reads "--json takes no value".
void RejectFlagValues(CLI::App& app);

// A usage error after parsing (flags that contradict each other, a cap over
// several flags): prints `error: <message>` and returns 2.
int UsageError(std::string_view message);
// The one failure path of a command: prints `error: <message>` on stderr and
// returns the exit code of the error's code (ExitCodeFor).
int Failure(const Error& e);

// `--idle-power MODEL=WATTS` values (repeatable; the model as `zeus info`
// shows it, 0 <= WATTS <= 10000) as idle power in mW per model, for
// monitor::IdlePowerOptions. kInvalidArgument quoting the bad value.
Result<std::map<std::string, std::uint32_t, std::less<>>> ParseIdlePowerFlags(const std::vector<std::string>& values);

// ---------------------------------------------------------------------------
// Path flags, checked before the work starts. Errors are kInvalidArgument
// (exit 2) and read "<flag> <path>: <problem>".

// A directory to read from: it exists and is a directory.
Status CheckInputDirectory(std::string_view flag, const std::string& path);

// A directory to write into: created (with its parents) if missing, and a
// file can be created in it (probed with a temporary file, since access()
// says yes to root on read-only and virtual file systems).
Status PrepareOutputDirectory(std::string_view flag, const std::string& path);

// A file that the command writes when its work is done. Open() creates or
// opens it for writing without truncating it, so a path that cannot be
// written is found before the work; Commit() replaces its contents. A file
// that Open() created is removed again if Commit() never succeeds.
class OutputFile {
 public:
  // kInvalidArgument (exit 2) if `path` is a directory, its parent does not
  // exist, or it cannot be opened for writing; the message names `flag`,
  // the path and the errno text.
  static Result<OutputFile> Open(std::string_view flag, std::string path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  // Writes `contents` as the whole file and closes it. kIoError (exit 1) with
  // the path and the errno text when a write or the close fails (a full
  // disk: "No space left on device").
  Status Commit(std::string_view contents);

  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string path, int fd, bool created) : path_(std::move(path)), fd_(fd), created_(created) {}
  void Abandon();

  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_CLI_FLAGS_H_
