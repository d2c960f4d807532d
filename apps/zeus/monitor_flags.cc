// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_flags.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"

namespace zeus::cli {
namespace {

// "0,,2" -> {"0", "", "2"}.
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  for (std::size_t end = text.find(','); end != std::string::npos; begin = end + 1, end = text.find(',', begin)) {
    items.push_back(text.substr(begin, end - begin));
  }
  items.push_back(text.substr(begin));
  return items;
}

// Checks that `path` can be written before the command runs, without
// truncating an existing file: it must not be a directory, its directory must
// exist, and opening it for writing must work. A file created by the check is
// removed again.
Status CheckWritable(const char* flag, const std::string& path) {
  if (path.empty()) return Fail(ErrorCode::kInvalidArgument, fmt::format("{}: the path is empty", flag));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} {}: is a directory; give a file name", flag, path));
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::stat(dir.c_str(), &st) != 0) {
    return Fail(ErrorFromErrno(errno, fmt::format("{} {}: directory {}", flag, path, dir)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("{} {}: {} is not a directory", flag, path, dir));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  bool created = false;
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    created = fd >= 0;
  }
  if (fd < 0) return Fail(ErrorFromErrno(errno, fmt::format("{} {}: cannot write", flag, path)));
  ::close(fd);
  if (created) ::unlink(path.c_str());
  return OkStatus();
}

// Whether two output paths name one file that one output would overwrite
// with the other: the same path once made absolute and its existing part
// resolved (symlinks, "..", "."), or the same inode (a hard link); a regular
// file or one not there yet (a device such as /dev/null may be shared).
bool SameOutputFile(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const bool same = (!ec && resolved == fs::weakly_canonical(fs::absolute(b, ec), ec) && !ec) ||
                    (fs::equivalent(a, b, ec) && !ec);
  const fs::file_status st = fs::status(resolved, ec);
  return same && (!fs::exists(st) || fs::is_regular_file(st));
}

// The output paths' checks before anything runs: no two of -o, --timeline
// and --plot name the same file (one would overwrite the other), and each
// can be written (CheckWritable). kInvalidArgument naming both flags, or
// CheckWritable's error.
Status CheckOutputPaths(const MonitorFlags& flags) {
  const std::pair<const char*, const std::string*> paths[] = {
      {"-o/--output", &flags.output}, {"--timeline", &flags.timeline}, {"--plot", &flags.plot}};
  for (std::size_t i = 0; i < std::size(paths); ++i) {
    for (std::size_t j = i + 1; j < std::size(paths); ++j) {
      const std::string& a = *paths[i].second;
      const std::string& b = *paths[j].second;
      if (a.empty() || b.empty() || !SameOutputFile(a, b)) continue;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("{} {} and {} {} name the same file; give each output its own file", paths[i].first, a,
                              paths[j].first, b));
    }
  }
  for (const auto& [flag, path] : paths) {
    if (path->empty()) continue;
    if (Status s = CheckWritable(flag, *path); !s) return s;
  }
  return OkStatus();
}

}  // namespace

CLI::Validator GpuListFlag() {
  const CLI::Validator index = IntegerFlag<std::uint32_t>();
  auto check = [index](std::string& input) -> std::string {
    std::string rewritten;
    for (std::string& item : SplitCommas(input)) {
      if (item.empty()) return fmt::format("must be GPU indices separated by commas (got '{}')", input);
      if (std::string message = index(item); !message.empty()) return message;
      rewritten += (rewritten.empty() ? "" : ",") + item;
    }
    input = rewritten;
    return "";
  };
  return CLI::Validator(check, "INDEX[,INDEX...]", "");
}

void ParseGpuList(MonitorFlags& flags) {
  flags.gpus.clear();
  flags.gpus_given = !flags.gpus_text.empty();
  for (const std::string& text : flags.gpus_text) {
    for (const std::string& item : SplitCommas(text)) flags.gpus.push_back(std::stoul(item));
  }
}

Status CheckMonitorUsage(MonitorFlags& flags) {
  auto usage_error = [](std::string message) { return Fail(ErrorCode::kInvalidArgument, std::move(message)); };
  if (flags.command.empty()) return usage_error("no command to measure; usage: zeus monitor [OPTIONS] -- CMD ARGS...");
  ParseGpuList(flags);  // the ranges were checked while parsing
  if (!flags.zeusd_token_file.empty() && flags.zeusd_urls.empty()) {
    return usage_error("--zeusd-token-file is for --zeusd daemons: give --zeusd URL too");
  }
  if (flags.pushgateway.empty() != flags.job.empty()) {
    return usage_error("--pushgateway and --job go together: give both (e.g. --pushgateway http://localhost:9091 "
                       "--job train)");
  }
  if (!flags.idle_power.empty() && !flags.per_process) {
    return usage_error("--idle-power is for --per-process: give --per-process too");
  }
  if (auto idle = ParseIdlePowerFlags(flags.idle_power); !idle) return usage_error(idle.error().message());
  if (!flags.carbon.empty()) {
    Result<std::string> path = carbon::FindIntensityData();
    if (!path) return usage_error("--carbon: " + path.error().message());
    Result<carbon::IntensityTable> table = carbon::LoadIntensityTable(*path);
    if (!table) return usage_error("--carbon: " + table.error().message());
    Result<carbon::Zone> zone = carbon::LookupZone(*table, flags.carbon);
    if (!zone) return usage_error("--carbon: " + zone.error().message());
    flags.carbon_zone = std::move(*zone);
    flags.carbon_source = table->source;
  }
  if (Status s = CheckOutputPaths(flags); !s) {
    const ErrorCode code = s.error().code();
    return code == ErrorCode::kPermissionDenied ? s : usage_error(s.error().message());
  }
  return OkStatus();
}

}  // namespace zeus::cli
