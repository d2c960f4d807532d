// Copyright 2026 The Zeus C++ Authors.
//
// GPU command overrides (zeusd's command_overrides.md): a TOML file whose
// optional tables, named after the GPU writes (set_power_limit, ...,
// reset_locked_clocks), replace the driver call with commands:
//
//   [set_power_limit]
//   commands = ["nvidia-smi -i {gpu_id} -pl {power_limit_w}"]
//   error_pattern = "(?i)error"   # optional: a match in the output fails it
//   timeout_s = 30                # optional, per command, default 60
//
// Placeholders: {gpu_id} everywhere; {power_limit_mw} and {power_limit_w}
// (rounded down) in set_power_limit; {enabled} (1/0) in set_persistence_mode;
// {min_clock_mhz} and {max_clock_mhz} in set_gpu_locked_clocks and
// set_mem_locked_clocks. Each command is split into words (blanks separate;
// '...' and "..." quote; \ escapes) when the file is loaded and run without a
// shell (fork and exec with an argument vector, PATH searched), one after the
// other, stopping at the first failure (no rollback). Its stdout and stderr
// are captured together. Fails: a non-zero exit, a signal, error_pattern
// matching (even with exit 0), the timeout (the command's process group is
// killed), or a command that cannot start. Children a command leaves behind
// holding its output never hold up the daemon.
//
// The file must be ASCII (Debian's toml++ 3.3 misbehaves on some non-ASCII
// keys). error_pattern is an RE2 regular expression (the syntax of Rust's
// regex crate, which Zeus's zeusd uses: no backreferences or lookaround;
// "(?i)" makes it case-insensitive, "(?s)" lets '.' match newlines). RE2
// matches in time linear in the output and without recursion, so no pattern
// and no output can crash or stall the daemon (std::regex overflowed the
// stack on "(.|\n)*zzz" against 14 KB). A pattern that RE2 cannot compile
// within its memory budget (about 8 MB) is refused when the file is loaded.

#ifndef ZEUS_SRC_ZEUSD_COMMAND_OVERRIDE_H_
#define ZEUS_SRC_ZEUSD_COMMAND_OVERRIDE_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/gpu.h"
#include "zeusd/gpu_ops.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace zeus::zeusd {

// One table: its commands as word lists (placeholders not yet substituted).
struct OverrideSpec {
  std::vector<std::vector<std::string>> commands;
  std::shared_ptr<const re2::RE2> error_pattern;  // null: none
  std::string error_pattern_text;

  // True when error_pattern is set and matches somewhere in `output`.
  bool ErrorPatternMatches(std::string_view output) const;
  std::chrono::seconds timeout{60};
};

// The result of running one command.
struct CommandOutcome {
  int exit_code = -1;         // the exit status, or 128 + signal
  bool timed_out = false;
  std::string output;         // stdout and stderr together, at most kMaxCapturedBytes
};
inline constexpr std::size_t kMaxCapturedBytes = 64 << 10;

// Runs `argv` without a shell (execvp), stdin /dev/null, in its own process
// group, for at most `timeout`. kInternal when it cannot start (the message
// names the program and the errno text).
Result<CommandOutcome> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// Splits a command line into words; kInvalidArgument for an unterminated
// quote or a trailing backslash, or no words at all.
Result<std::vector<std::string>> SplitWords(std::string_view command);

class GpuCommandOverrides {
 public:
  // Parses TOML text; `origin` names it in errors. kInvalidArgument for an
  // unknown table or field, empty `commands`, a bad regex, an unknown
  // placeholder or a stray brace, an unsplittable command, a zero or negative
  // timeout.
  static Result<GpuCommandOverrides> Parse(std::string_view toml_text, std::string_view origin);
  // Reads and parses `path`, refusing (kPermissionDenied) a file that is
  // world-writable or owned by neither root nor `daemon_uid`.
  static Result<GpuCommandOverrides> Load(const std::string& path, uid_t daemon_uid);

  // The table for `op`, or null when the driver does it.
  const OverrideSpec* Find(GpuOp op) const;

  // `op` on GPU `gpu_id`: the override's commands when there is one
  // (kInternal or kTimeout on failure, the message naming the command and its
  // output), else ApplyGpuOp on `gpu`.
  Status Run(device::Gpu& gpu, std::size_t gpu_id, GpuOp op, const GpuOpArgs& args) const;

  // The words of `spec`'s commands with the placeholders filled in.
  static std::vector<std::vector<std::string>> Expand(const OverrideSpec& spec, std::size_t gpu_id,
                                                      const GpuOpArgs& args);

 private:
  std::optional<OverrideSpec> specs_[std::size(kAllGpuOps)];
};

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_COMMAND_OVERRIDE_H_
