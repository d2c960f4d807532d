// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/command_override.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <re2/re2.h>
#include <toml++/toml.h>

namespace zeus::zeusd {
namespace {

// RE2 compiles a pattern into automata within this budget (RE2's default);
// larger patterns are refused when the file is loaded.
constexpr std::int64_t kMaxPatternMemoryBytes = 8 << 20;

std::vector<std::string_view> PlaceholdersOf(GpuOp op) {
  switch (op) {
    case GpuOp::kSetPowerLimit: return {"gpu_id", "power_limit_mw", "power_limit_w"};
    case GpuOp::kSetPersistenceMode: return {"gpu_id", "enabled"};
    case GpuOp::kSetGpuLockedClocks:
    case GpuOp::kSetMemLockedClocks: return {"gpu_id", "min_clock_mhz", "max_clock_mhz"};
    default: return {"gpu_id"};
  }
}

// Checks the placeholders of one word.
Status CheckPlaceholders(std::string_view word, GpuOp op, std::string_view where) {
  const auto allowed = PlaceholdersOf(op);
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '}') {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: stray '}}' in '{}'", where, word));
    }
    if (word[i] != '{') continue;
    const std::size_t close = word.find('}', i);
    const std::size_t next_open = word.find('{', i + 1);
    if (close == std::string_view::npos || (next_open != std::string_view::npos && next_open < close)) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: stray '{{' in '{}'", where, word));
    }
    const std::string_view name = word.substr(i + 1, close - i - 1);
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += fmt::format("{}{{{}}}", list.empty() ? "" : ", ", a);
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: unknown placeholder {{{}}} in '{}'; {} takes {}", where,
                                                           name, word, GpuOpName(op), list));
    }
    i = close;
  }
  return OkStatus();
}

Result<OverrideSpec> ParseSpec(const toml::table& table, GpuOp op, std::string_view origin) {
  const std::string where = fmt::format("{}: [{}]", origin, GpuOpName(op));
  OverrideSpec spec;
  bool has_commands = false;
  for (auto&& [key, node] : table) {
    const std::string_view name = key.str();
    if (name == "commands") {
      const toml::array* array = node.as_array();
      if (array == nullptr) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: commands must be an array of strings", where));
      for (auto&& element : *array) {
        const auto text = element.value<std::string>();
        if (!text) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: commands must be an array of strings", where));
        auto words = SplitWords(*text);
        if (!words) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: {}", where, words.error().message()));
        for (const std::string& word : *words) {
          if (Status ok = CheckPlaceholders(word, op, where); !ok) return Fail(ok.error());
        }
        spec.commands.push_back(std::move(*words));
      }
      has_commands = true;
    } else if (name == "error_pattern") {
      const auto text = node.value<std::string>();
      if (!text) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: error_pattern must be a string", where));
      RE2::Options options;
      options.set_log_errors(false);
      options.set_max_mem(kMaxPatternMemoryBytes);
      auto pattern = std::make_shared<const RE2>(*text, options);
      if (!pattern->ok()) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: error_pattern '{}' is not a valid RE2 regular expression ({}); see "
                                "https://github.com/google/re2/wiki/Syntax",
                                where, *text, pattern->error()));
      }
      spec.error_pattern = std::move(pattern);
      spec.error_pattern_text = *text;
    } else if (name == "timeout_s") {
      const auto seconds = node.value<std::int64_t>();
      if (!seconds || !node.is_integer() || *seconds <= 0 || *seconds > 86400) {
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("{}: timeout_s must be a whole number of seconds from 1 to 86400", where));
      }
      spec.timeout = std::chrono::seconds(*seconds);
    } else {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: unknown field '{}'; the fields are commands, error_pattern, timeout_s", where, name));
    }
  }
  if (!has_commands || spec.commands.empty()) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: commands must list at least one command", where));
  }
  return spec;
}

std::string Substitute(const std::string& word, std::size_t gpu_id, const GpuOpArgs& args) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] != '{') {
      out += word[i];
      continue;
    }
    const std::size_t close = word.find('}', i);
    const std::string_view name = std::string_view(word).substr(i + 1, close - i - 1);
    if (name == "gpu_id") out += std::to_string(gpu_id);
    else if (name == "power_limit_mw") out += std::to_string(args.power_limit_mw);
    else if (name == "power_limit_w") out += std::to_string(args.power_limit_mw / 1000);
    else if (name == "enabled") out += args.enabled ? "1" : "0";
    else if (name == "min_clock_mhz") out += std::to_string(args.min_clock_mhz);
    else if (name == "max_clock_mhz") out += std::to_string(args.max_clock_mhz);
    i = close;
  }
  return out;
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += fmt::format("{}{}", out.empty() ? "" : " ", w);
  return out;
}

}  // namespace

Result<std::vector<std::string>> SplitWords(std::string_view command) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < command.size() &&
                 (command[i + 1] == '"' || command[i + 1] == '\\')) {
        current += command[++i];
      } else {
        current += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= command.size()) {
        return Fail(ErrorCode::kInvalidArgument, fmt::format("cannot split '{}' into words: a trailing backslash", command));
      }
      current += command[++i];
      in_word = true;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("cannot split '{}' into words: an unterminated {} quote", command,
                                                         quote == '"' ? "double" : "single"));
  }
  if (in_word) words.push_back(std::move(current));
  if (words.empty()) return Fail(ErrorCode::kInvalidArgument, "an empty command");
  return words;
}

Result<CommandOutcome> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Fail(ErrorFromErrno(errno, "creating a pipe"));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Fail(ErrorFromErrno(errno, "creating a pipe"));
  }
  const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], dev_null}) if (fd >= 0) ::close(fd);
    return Fail(ErrorFromErrno(err, "fork"));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (dev_null >= 0) ::dup2(dev_null, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    ::execvp(args[0], args.data());
    const int err = errno;
    (void)!::write(err_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (dev_null >= 0) ::close(dev_null);
  int exec_errno = 0;
  const ssize_t got = ::read(err_pipe[0], &exec_errno, sizeof exec_errno);  // EOF at exec, or the errno
  ::close(err_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    ::waitpid(pid, nullptr, 0);
    ::close(out_pipe[0]);
    return Fail(ErrorCode::kInternal,
                fmt::format("cannot run '{}': {}", argv.empty() ? "" : argv[0], std::strerror(exec_errno)));
  }
  ::fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);

  CommandOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  bool exited = false;
  auto drain = [&] {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
      if (n <= 0) return;
      const std::size_t room = kMaxCapturedBytes - std::min(kMaxCapturedBytes, outcome.output.size());
      outcome.output.append(buffer, std::min(room, static_cast<std::size_t>(n)));
    }
  };
  while (!exited) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      outcome.timed_out = true;
      exited = true;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd fd{out_pipe[0], POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(std::min<long long>(left, 20)));
    drain();
    if (::waitpid(pid, &status, WNOHANG) == pid) exited = true;
  }
  drain();  // what is there now; a leftover child holding the pipe is not waited for
  ::close(out_pipe[0]);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) outcome.exit_code = 128 + WTERMSIG(status);
  return outcome;
}

Result<GpuCommandOverrides> GpuCommandOverrides::Parse(std::string_view toml_text, std::string_view origin) {
  // The file must be ASCII without control characters (tab and line ends
  // aside). TOML allows no control characters anyway, and Debian's toml++
  // 3.3 reaches undefined behaviour on some non-ASCII keys (found by
  // fuzz/zeusd_fuzzer.cc), so neither gets to the parser.
  for (std::size_t i = 0; i < toml_text.size(); ++i) {
    const auto c = static_cast<unsigned char>(toml_text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: control character 0x{:02x} at byte {}; TOML allows none", origin, c, i));
    }
    if (c >= 0x80) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: non-ASCII byte 0x{:02x} at byte {}; the overrides file must be ASCII", origin, c, i));
    }
  }
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}:{}:{}: {}", origin, e.source().begin.line, e.source().begin.column, e.description()));
  }
  GpuCommandOverrides overrides;
  for (auto&& [key, node] : root) {
    const auto op = GpuOpFromName(key.str());
    if (!op) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{}: unknown operation [{}]; the operations are set_power_limit, set_persistence_mode, "
                              "set_gpu_locked_clocks, reset_gpu_locked_clocks, set_mem_locked_clocks, "
                              "reset_mem_locked_clocks, reset_locked_clocks",
                              origin, key.str()));
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: {} must be a table", origin, key.str()));
    }
    auto spec = ParseSpec(*table, *op, origin);
    if (!spec) return Fail(spec.error());
    overrides.specs_[static_cast<std::size_t>(*op)] = std::move(*spec);
  }
  return overrides;
}

Result<GpuCommandOverrides> GpuCommandOverrides::Load(const std::string& path, uid_t daemon_uid) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(ErrorFromErrno(errno, fmt::format("--gpu-command-overrides {}", path)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Fail(ErrorFromErrno(err, fmt::format("--gpu-command-overrides {}", path)));
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    ::close(fd);
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("--gpu-command-overrides {} is world-writable, so anyone could make zeusd run anything: "
                            "chmod o-w {}",
                            path, path));
  }
  if (st.st_uid != 0 && st.st_uid != daemon_uid) {
    ::close(fd);
    return Fail(ErrorCode::kPermissionDenied,
                fmt::format("--gpu-command-overrides {} is owned by uid {}, neither root nor zeusd's user (uid {}): "
                            "chown root {}",
                            path, st.st_uid, daemon_uid, path));
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Fail(ErrorFromErrno(err, fmt::format("--gpu-command-overrides {}", path)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > (1 << 20)) {
      ::close(fd);
      return Fail(ErrorCode::kInvalidArgument, fmt::format("--gpu-command-overrides {} is larger than 1 MiB", path));
    }
  }
  ::close(fd);
  return Parse(text, path);
}

const OverrideSpec* GpuCommandOverrides::Find(GpuOp op) const {
  const auto& spec = specs_[static_cast<std::size_t>(op)];
  return spec ? &*spec : nullptr;
}

std::vector<std::vector<std::string>> GpuCommandOverrides::Expand(const OverrideSpec& spec, std::size_t gpu_id,
                                                                  const GpuOpArgs& args) {
  std::vector<std::vector<std::string>> out;
  for (const auto& command : spec.commands) {
    std::vector<std::string> words;
    for (const std::string& word : command) words.push_back(Substitute(word, gpu_id, args));
    out.push_back(std::move(words));
  }
  return out;
}

Status GpuCommandOverrides::Run(device::Gpu& gpu, std::size_t gpu_id, GpuOp op, const GpuOpArgs& args) const {
  const OverrideSpec* spec = Find(op);
  if (spec == nullptr) return ApplyGpuOp(gpu, op, args);
  for (const auto& argv : Expand(*spec, gpu_id, args)) {
    auto outcome = RunCommand(argv, spec->timeout);
    if (!outcome) return Fail(outcome.error());
    const std::string command = JoinWords(argv);
    if (outcome->timed_out) {
      return Fail(ErrorCode::kTimeout, fmt::format("command '{}' ran past its timeout of {} s and was killed; output: {}",
                                                   command, spec->timeout.count(), outcome->output));
    }
    if (outcome->exit_code != 0) {
      return Fail(ErrorCode::kInternal,
                  fmt::format("command '{}' failed with exit code {}; output: {}", command, outcome->exit_code, outcome->output));
    }
    if (spec->ErrorPatternMatches(outcome->output)) {
      return Fail(ErrorCode::kInternal, fmt::format("command '{}' printed output matching error_pattern '{}': {}", command,
                                                    spec->error_pattern_text, outcome->output));
    }
  }
  return OkStatus();
}

bool OverrideSpec::ErrorPatternMatches(std::string_view output) const {
  return error_pattern != nullptr && RE2::PartialMatch(output, *error_pattern);
}

}  // namespace zeus::zeusd
