// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/cli_flags.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace zeus::cli {
namespace {

// ---------------------------------------------------------------------------
// Whole numbers, compared without ever converting to a narrower type.

struct WholeNumber {
  bool negative = false;
  std::uint64_t magnitude = 0;
  bool overflow = false;  // more than 2^64 - 1 in magnitude
};

// Decimal digits with an optional leading sign; nothing else.
bool ParseWholeNumber(const std::string& text, WholeNumber& out) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) out.negative = text[i++] == '-';
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (out.magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      out.overflow = true;
    } else if (!out.overflow) {
      out.magnitude = out.magnitude * 10 + digit;
    }
  }
  if (out.magnitude == 0 && !out.overflow) out.negative = false;  // "-0" is 0
  return true;
}

// -1, 0 or 1 as `n` is below, equal to or above the signed `bound`.
int Compare(const WholeNumber& n, std::int64_t bound) {
  if (n.negative) {
    if (bound >= 0 || n.overflow) return -1;
    // Both negative: compare magnitudes; |bound| fits in uint64 even for INT64_MIN.
    const std::uint64_t bound_magnitude = std::uint64_t{0} - static_cast<std::uint64_t>(bound);
    return n.magnitude > bound_magnitude ? -1 : n.magnitude < bound_magnitude ? 1 : 0;
  }
  if (bound < 0 || n.overflow) return 1;
  const auto b = static_cast<std::uint64_t>(bound);
  return n.magnitude < b ? -1 : n.magnitude > b ? 1 : 0;
}

int Compare(const WholeNumber& n, std::uint64_t bound) {
  if (n.negative) return -1;
  if (n.overflow) return 1;
  return n.magnitude < bound ? -1 : n.magnitude > bound ? 1 : 0;
}

std::string Canonical(const WholeNumber& n) {
  return n.negative ? fmt::format("-{}", n.magnitude) : fmt::format("{}", n.magnitude);
}

// The limits of the flag's own type, which go unsaid unless a value passed them.
template <typename T>
struct TypeLimits {
  T min;
  T max;
};

// The range in words for a value that fell below it (`below`) or above it.
template <typename T>
std::string RangeWords(T min_value, T max_value, TypeLimits<T> type, bool below) {
  const bool min_is_type_min = min_value == type.min;
  const bool max_is_type_max = max_value == type.max;
  if (below && max_is_type_max) return fmt::format("at least {}", min_value);
  if (!below && (min_is_type_min || max_is_type_max)) return fmt::format("at most {}", max_value);
  return fmt::format("between {} and {}", min_value, max_value);
}

template <typename T>
std::string RangeDescription(T min_value, T max_value, TypeLimits<T> type) {
  const bool min_is_type_min = min_value == type.min;
  const bool max_is_type_max = max_value == type.max;
  if (max_is_type_max && min_is_type_min) return "";
  if (max_is_type_max) return fmt::format(">= {}", min_value);
  if (min_is_type_min) return fmt::format("<= {}", max_value);
  return fmt::format("{}..{}", min_value, max_value);
}

template <typename T>
CLI::Validator WholeNumberValidator(T min_value, T max_value, TypeLimits<T> type) {
  auto check = [min_value, max_value, type](std::string& input) -> std::string {
    WholeNumber n;
    if (!ParseWholeNumber(input, n)) return fmt::format("must be a whole number (got '{}')", input);
    if (Compare(n, min_value) < 0) {
      return fmt::format("must be {} (got {})", RangeWords(min_value, max_value, type, /*below=*/true), input);
    }
    if (Compare(n, max_value) > 0) {
      return fmt::format("must be {} (got {})", RangeWords(min_value, max_value, type, /*below=*/false), input);
    }
    input = Canonical(n);  // plain decimal: CLI11 would read "010" as octal
    return "";
  };
  return CLI::Validator(check, RangeDescription(min_value, max_value, type), "");
}

std::string Number(double v) { return fmt::format("{}", v); }

}  // namespace

CLI::Validator IntegerRange(std::int64_t min_value, std::int64_t max_value, std::int64_t type_min,
                            std::int64_t type_max) {
  return WholeNumberValidator(min_value, max_value, TypeLimits<std::int64_t>{type_min, type_max});
}

CLI::Validator UnsignedRange(std::uint64_t min_value, std::uint64_t max_value, std::uint64_t type_max) {
  return WholeNumberValidator(min_value, max_value, TypeLimits<std::uint64_t>{0, type_max});
}

CLI::Validator NumberRange(double min_value, double max_value, bool exclusive_min) {
  std::string words;
  std::string description;
  if (std::isinf(min_value) && std::isinf(max_value)) {
    // Any finite number.
  } else if (std::isinf(max_value)) {
    words = fmt::format("{} {}", exclusive_min ? "greater than" : "at least", Number(min_value));
    description = fmt::format("{} {}", exclusive_min ? ">" : ">=", Number(min_value));
  } else if (std::isinf(min_value)) {
    words = fmt::format("at most {}", Number(max_value));
    description = fmt::format("<= {}", Number(max_value));
  } else {
    words = fmt::format("between {} and {}{}", Number(min_value), Number(max_value),
                        exclusive_min ? fmt::format(", and not {}", Number(min_value)) : "");
    description = fmt::format("{}{}, {}]", exclusive_min ? "(" : "[", Number(min_value), Number(max_value));
  }
  auto check = [min_value, max_value, exclusive_min, words](std::string& input) -> std::string {
    if (input.empty()) return "must be a number (got '')";
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(input.c_str(), &end);
    if (end != input.c_str() + input.size() || std::isspace(static_cast<unsigned char>(input[0]))) {
      return fmt::format("must be a number (got '{}')", input);
    }
    if (!std::isfinite(v)) {
      return fmt::format("must be a finite number{}{} (got {})", words.empty() ? "" : " ", words, input);
    }
    if (v < min_value || v > max_value || (exclusive_min && v == min_value)) {
      return fmt::format("must be {} (got {})", words, input);
    }
    return "";
  };
  return CLI::Validator(check, description, "");
}

CLI::Validator OneOf(std::vector<std::string> choices) {
  const std::string list = fmt::format("{}", fmt::join(choices, ", "));
  auto check = [choices = std::move(choices), list](std::string& input) -> std::string {
    for (const std::string& c : choices) {
      if (c == input) return "";
    }
    return fmt::format("must be one of {} (got '{}')", list, input);
  };
  return CLI::Validator(check, "", "");
}

// ---------------------------------------------------------------------------
// Parse errors.

namespace {

std::string BaseName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The parsed command chain: the app, then each subcommand the parse entered.
std::vector<const CLI::App*> CommandChain(const CLI::App& app) {
  std::vector<const CLI::App*> chain = {&app};
  for (;;) {
    const std::vector<CLI::App*> subs = chain.back()->get_subcommands();
    if (subs.empty()) break;
    chain.push_back(subs.front());
  }
  return chain;
}

std::string CommandPath(const std::vector<const CLI::App*>& chain) {
  std::string path;
  for (const CLI::App* a : chain) {
    const std::string name = a == chain.front() ? BaseName(a->get_name()) : a->get_name();
    if (name.empty()) continue;
    if (!path.empty()) path += ' ';
    path += name;
  }
  return path;
}

std::string SubcommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// The first word a command in the chain could not place, deepest first.
std::string FirstLeftOver(const std::vector<const CLI::App*>& chain, const CLI::App** owner) {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const std::vector<std::string> left = (*it)->remaining(false);
    if (!left.empty()) {
      *owner = *it;
      return left.front();
    }
  }
  return "";
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::string FormatParseError(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<const CLI::App*> chain = CommandChain(app);
  const std::string command = CommandPath(chain);
  const std::string see = fmt::format("see {} --help", command);
  const std::string what = e.what();
  std::string message;

  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && StartsWith(what, "A subcommand")) {
    const CLI::App* owner = chain.back();
    const std::string word = FirstLeftOver(chain, &owner);
    const std::string commands = SubcommandNames(*chain.back());
    if (!word.empty() && word[0] != '-') {
      message = fmt::format("unknown command '{}'; commands: {}; {}", word, commands, see);
    } else if (!word.empty()) {
      message = fmt::format("unknown flag '{}' for {}; {}", word.substr(0, word.find('=')), command, see);
    } else {
      message = fmt::format("{} needs a command: {}; {}", command, commands, see);
    }
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const CLI::App* owner = chain.back();
    const std::string word = FirstLeftOver(chain, &owner);
    std::vector<const CLI::App*> owner_chain;
    for (const CLI::App* a : chain) {
      owner_chain.push_back(a);
      if (a == owner) break;
    }
    const std::string where = CommandPath(owner_chain);
    if (word.empty()) {
      message = fmt::format("{}; {}", what, see);
    } else if (word.size() > 1 && word[0] == '-' && !(word[1] >= '0' && word[1] <= '9')) {
      message = fmt::format("unknown flag '{}' for {}; see {} --help", word.substr(0, word.find('=')), where, where);
    } else if (!owner->get_subcommands([](const CLI::App*) { return true; }).empty() &&
               owner->get_subcommands().empty()) {
      message = fmt::format("unknown command '{}' for {}; commands: {}; see {} --help", word, where,
                            SubcommandNames(*owner), where);
    } else {
      message = fmt::format("unexpected argument '{}' for {}; see {} --help", word, where, where);
    }
  } else if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    // "<flag>: must ..." from our validators reads as one sentence.
    const std::size_t colon = what.find(": must ");
    message = colon == std::string::npos ? what : what.substr(0, colon) + what.substr(colon + 1);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr &&
             what.find(" was given a disallowed flag override") != std::string::npos) {
    // "json was given a disallowed flag override": --json=3.
    std::string name = what.substr(0, what.find(" was given"));
    if (!StartsWith(name, "-")) name = (name.size() == 1 ? "-" : "--") + name;
    message = fmt::format("{} takes no value; give {} alone; {}", name, name, see);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--seed: 1 required UINT missing" is a flag given without its value.
    const std::size_t colon = what.find(": ");
    if (colon != std::string::npos && what.find(" required ") != std::string::npos &&
        what.size() > 8 && what.compare(what.size() - 8, 8, " missing") == 0) {
      message = fmt::format("{} needs a value; {}", what.substr(0, colon), see);
    } else {
      message = fmt::format("{}; {}", what, see);
    }
  } else if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr && StartsWith(what, "Could not convert: ")) {
    // "Could not convert: --x = abc".
    const std::string rest = what.substr(std::strlen("Could not convert: "));
    const std::size_t eq = rest.find(" = ");
    message = eq == std::string::npos
                  ? fmt::format("{}; {}", what, see)
                  : fmt::format("{}: '{}' is not a valid value; {}", rest.substr(0, eq), rest.substr(eq + 3), see);
  } else {
    message = fmt::format("{}; {}", what, see);
  }
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return message;
}

void RejectFlagValues(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](const CLI::Option*) { return true; })) {
    if (option->get_expected_min() == 0) option->disable_flag_override();
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) RejectFlagValues(*sub);
}

int HandleParseError(const CLI::App& app, const CLI::ParseError& e) {
  const bool help = dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
                    dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr;
  if (help) {
    // `zeus bogus --help`: CLI11 answers the help flag before it rejects the word no command took, so the
    // word would print the parent's help and exit 0. A word where a command belongs that names none is the
    // usage error it is without --help.
    const std::vector<const CLI::App*> chain = CommandChain(app);
    const CLI::App* owner = chain.back();
    const std::string word = FirstLeftOver(chain, &owner);
    if (owner == chain.back() && !word.empty() && word[0] != '-' &&
        !owner->get_subcommands([](const CLI::App*) { return true; }).empty()) {
      std::fflush(stdout);
      fmt::print(stderr, "error: {}\n", FormatParseError(app, CLI::RequiredError::Subcommand(1)));
      return ExitCodeFor(ErrorCode::kInvalidArgument);
    }
  }
  if (help || dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr || e.get_exit_code() == 0) {
    return app.exit(e);
  }
  std::fflush(stdout);
  fmt::print(stderr, "error: {}\n", FormatParseError(app, e));
  return ExitCodeFor(ErrorCode::kInvalidArgument);
}

int UsageError(std::string_view message) {
  fmt::print(stderr, "error: {}\n", message);
  return ExitCodeFor(ErrorCode::kInvalidArgument);
}

int Failure(const Error& e) {
  fmt::print(stderr, "error: {}\n", e.message());
  return ExitCodeFor(e.code());
}

// ---------------------------------------------------------------------------
// Path flags.

namespace {

Error PathError(std::string_view flag, const std::string& path, std::string_view problem, int errno_value) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("{} {}: {}: {}", flag, path, problem, std::strerror(errno_value)),
               NativeSpace::kErrno, errno_value);
}

std::string ParentOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

Status CheckInputDirectory(std::string_view flag, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Fail(PathError(flag, path, "cannot read the directory", errno));
  if (!S_ISDIR(st.st_mode)) return Fail(PathError(flag, path, "expected a directory", ENOTDIR));
  if (::access(path.c_str(), R_OK | X_OK) != 0) return Fail(PathError(flag, path, "cannot read the directory", errno));
  return OkStatus();
}

Status PrepareOutputDirectory(std::string_view flag, const std::string& path) {
  if (path.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("{} needs a directory name", flag));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return Fail(PathError(flag, path, "expected a directory", ENOTDIR));
  } else {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Fail(PathError(flag, path, "cannot create the directory", ec.value()));
  }
  std::string probe = path + "/.zeus-write-check-XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return Fail(PathError(flag, path, "cannot create files in the directory", errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return OkStatus();
}

Result<OutputFile> OutputFile::Open(std::string_view flag, std::string path) {
  if (path.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("{} needs a file name", flag));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Fail(PathError(flag, path, "expected a file, not a directory", EISDIR));
  }
  bool created = true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      struct stat parent {};
      const std::string dir = ParentOf(path);
      if (::stat(dir.c_str(), &parent) != 0) {
        return Fail(PathError(flag, path, fmt::format("directory {} does not exist", dir), ENOENT));
      }
    }
    return Fail(PathError(flag, path, "cannot open for writing", err));
  }
  return OutputFile(std::move(path), fd, created);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), created_(std::exchange(other.created_, false)) {}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    created_ = std::exchange(other.created_, false);
  }
  return *this;
}

OutputFile::~OutputFile() { Abandon(); }

void OutputFile::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (created_) ::unlink(path_.c_str());
  created_ = false;
}

Status OutputFile::Commit(std::string_view contents) {
  if (fd_ < 0) return Fail(ErrorCode::kFailedPrecondition, fmt::format("{}: already written", path_));
  auto failed = [this](std::string_view what, int err) {
    return Fail(Error(ErrorCode::kIoError, fmt::format("{}: {}: {}", path_, what, std::strerror(err)),
                      NativeSpace::kErrno, err));
  };
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd_, 0) != 0) {
    const int err = errno;
    Abandon();
    return failed("could not truncate", err);
  }
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd_, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      Abandon();
      return failed("write failed", err);
    }
    written += static_cast<std::size_t>(n);
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int err = errno;
    Abandon();
    return failed("write failed", err);
  }
  created_ = false;  // written: keep it
  return OkStatus();
}

Result<std::map<std::string, std::uint32_t, std::less<>>> ParseIdlePowerFlags(const std::vector<std::string>& values) {
  std::map<std::string, std::uint32_t, std::less<>> out;
  for (const std::string& value : values) {
    const auto equals = value.rfind('=');
    double watts = -1;
    if (equals != std::string::npos && equals > 0) {
      const std::string number = value.substr(equals + 1);
      char* end = nullptr;
      watts = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(watts)) watts = -1;
    }
    if (watts < 0 || watts > 10000) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--idle-power \"{}\" is not MODEL=WATTS with 0 <= WATTS <= 10000 (e.g. "
                              "\"NVIDIA H100 80GB HBM3=70\"; the model as `zeus info` shows it)",
                              value));
    }
    out[value.substr(0, equals)] = static_cast<std::uint32_t>(std::lround(watts * 1000));
  }
  return out;
}

}  // namespace zeus::cli
