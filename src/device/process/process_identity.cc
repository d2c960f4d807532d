// Copyright 2026 The Zeus C++ Authors.
//
// IdentifyProcess: /proc/PID/{stat,status,comm,cgroup} under a configurable
// root (proc(5)). The files are opened with openat() on the process's
// directory, opened once, so a PID reused mid-read is not mixed in: procfs
// answers ENOENT under the directory of a process that has been reaped.

#include "zeus/device/process_identity.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/files.h"
#include "base/strings.h"

namespace zeus::device {
namespace {

using base::ScopedFd;

// Larger than any real stat, status or cgroup file (a few KiB).
constexpr std::size_t kMaxProcFileBytes = std::size_t{1} << 20;

bool Vanished(int errno_value) { return errno_value == ENOENT || errno_value == ESRCH; }

Error ProcessGone(std::uint32_t pid, const std::string& path, int errno_value) {
  return Error(ErrorCode::kNotFound,
               fmt::format("process {} has exited ({} is gone), or it runs in a PID namespace this /proc does "
                           "not show",
                           pid, path),
               NativeSpace::kErrno, errno_value);
}

// The whole file `name` under `dir_fd` as valid UTF-8 (its text is chosen by
// the process: a comm of arbitrary bytes, or a 15-byte cut inside a
// character), or why not: ProcessGone when the process has exited, else an
// error naming `path` (what is not a regular file, a FIFO a bind mount put
// there, is refused without waiting on it).
tl::expected<std::string, Error> ReadAt(int dir_fd, const char* name, std::uint32_t pid, const std::string& path) {
  auto text = base::ReadRegularFileAt(dir_fd, name, kMaxProcFileBytes);
  if (text) return base::ValidUtf8(*text);
  const base::FileReadFailure& failure = text.error();
  switch (failure.kind) {
    case base::FileReadFailure::Kind::kNotRegular:
      return tl::unexpected(Error(ErrorCode::kIoError,
                                  fmt::format("{} is {}, not a regular file; skipped (procfs files are regular)",
                                              path, base::FileKind(failure.mode))));
    case base::FileReadFailure::Kind::kTooLarge:
      return tl::unexpected(ErrorFromErrno(EFBIG, path));
    case base::FileReadFailure::Kind::kErrno:
      break;
  }
  if (Vanished(failure.errno_value)) return tl::unexpected(ProcessGone(pid, path, failure.errno_value));
  return tl::unexpected(ErrorFromErrno(failure.errno_value, path));
}

Error Garbage(const std::string& path, std::string_view what, const std::string& proc_root) {
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("{}: {}; is {} a procfs mount (proc(5))?", path, what, proc_root));
}

// The four files of one process, each either its text or why it could not
// be read.
struct ProcFiles {
  std::string dir;
  tl::expected<std::string, Error> stat, status, comm, cgroup;
};

// Reads the files; fails only when the process is gone.
Result<ProcFiles> ReadProcFiles(std::uint32_t pid, const std::string& proc_root) {
  ProcFiles files{fmt::format("{}/{}", proc_root, pid), {}, {}, {}, {}};
  ScopedFd dir(::open(files.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (dir.get() < 0) {
    const int errno_value = errno;
    if (Vanished(errno_value)) return Fail(ProcessGone(pid, files.dir, errno_value));
    return Fail(ErrorFromErrno(errno_value, files.dir));
  }
  std::pair<const char*, tl::expected<std::string, Error>*> parts[] = {
      {"stat", &files.stat}, {"status", &files.status}, {"comm", &files.comm}, {"cgroup", &files.cgroup}};
  for (auto& [name, out] : parts) {
    const std::string path = fmt::format("{}/{}", files.dir, name);
    auto text = ReadAt(dir.get(), name, pid, path);
    // ReadAt's ProcessGone: the process has exited (its errno is ENOENT or ESRCH).
    if (!text && text.error().native_code() && Vanished(*text.error().native_code())) return Fail(text.error());
    *out = std::move(text);
  }
  return files;
}


// "<pid> (<comm>) <state> <ppid> ... <starttime> ...": comm may hold spaces and
// parentheses, so the fields after it are counted from the last ')'.
Result<ProcessStat> ParseStat(std::string_view text, std::uint32_t pid, const std::string& path,
                             const std::string& proc_root) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Fail(Garbage(path, "no '(<command>)' after the PID", proc_root));
  }
  std::uint32_t stat_pid = 0;
  const std::string_view pid_text = base::Trim(text.substr(0, open));
  auto [pid_end, pid_ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), stat_pid);
  if (pid_text.empty() || pid_ec != std::errc() || pid_end != pid_text.data() + pid_text.size() || stat_pid != pid) {
    return Fail(Garbage(path, fmt::format("starts with '{}', not the PID {}", pid_text, pid), proc_root));
  }
  // Fields 3 (state) onwards; field 4 is the parent's PID, field 22
  // (starttime) the 20th.
  std::string_view rest = text.substr(close + 1);
  std::string_view field;
  std::string_view ppid_field;
  for (int index = 3; index <= 22; ++index) {
    rest = rest.substr(std::min(rest.find_first_not_of(" \n"), rest.size()));
    const std::size_t end = std::min(rest.find_first_of(" \n"), rest.size());
    field = rest.substr(0, end);
    if (index == 4) ppid_field = field;
    rest.remove_prefix(end);
  }
  ProcessStat out;
  out.pid = pid;
  auto [ppid_end, ppid_ec] = std::from_chars(ppid_field.data(), ppid_field.data() + ppid_field.size(), out.parent_pid);
  if (ppid_field.empty() || ppid_ec != std::errc() || ppid_end != ppid_field.data() + ppid_field.size()) {
    return Fail(Garbage(path, fmt::format("field 4 (ppid) is '{}', not a number", ppid_field), proc_root));
  }
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), out.start_time_ticks);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
    return Fail(Garbage(path, fmt::format("field 22 (starttime) is '{}', not a number", field), proc_root));
  }
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  return out;
}

// The real UID: the first number of the "Uid:" line.
Result<std::uint32_t> ParseStatusUid(std::string_view text, const std::string& path, const std::string& proc_root) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (!line.starts_with("Uid:")) continue;
    line = base::Trim(line.substr(4));
    const std::string_view first = line.substr(0, std::min(line.find_first_of(" \t"), line.size()));
    std::uint32_t uid = 0;
    auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), uid);
    if (first.empty() || ec != std::errc() || end != first.data() + first.size()) {
      return Fail(Garbage(path, fmt::format("the Uid: line's first field '{}' is not a number", first), proc_root));
    }
    return uid;
  }
  return Fail(Garbage(path, "no 'Uid:' line", proc_root));
}

// The user's name from the password database (files, LDAP, sssd: whatever
// NSS is configured with), or the UID in decimal when it has none.
std::string UserName(std::uint32_t uid) {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested) : 16384);
  for (;;) {
    struct passwd entry {};
    struct passwd* found = nullptr;
    const int rc = ::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (std::size_t{1} << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    // A name from NSS (LDAP, sssd) is bytes too: valid UTF-8 from here on.
    if (rc == 0 && found != nullptr && found->pw_name != nullptr) return base::ValidUtf8(found->pw_name);
    return std::to_string(uid);
  }
}

}  // namespace

Result<ProcessStat> ReadProcessStat(std::uint32_t pid, const ProcessIdentityOptions& options) {
  const std::string dir_path = fmt::format("{}/{}", options.proc_root, pid);
  const std::string path = dir_path + "/stat";
  ScopedFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (dir.get() < 0) {
    const int errno_value = errno;
    if (Vanished(errno_value)) return Fail(ProcessGone(pid, dir_path, errno_value));
    return Fail(ErrorFromErrno(errno_value, dir_path));
  }
  auto text = ReadAt(dir.get(), "stat", pid, path);
  if (!text) return Fail(text.error());
  return ParseStat(*text, pid, path, options.proc_root);
}

Result<ProcessIdentity> IdentifyProcess(std::uint32_t pid, const ProcessIdentityOptions& options) {
  auto files = ReadProcFiles(pid, options.proc_root);
  if (!files) return Fail(files.error());
  ProcessIdentity id;
  id.pid = pid;
  if (!files->stat && !files->status && !files->comm && !files->cgroup) return Fail(files->stat.error());

  if (files->stat) {
    auto stat = ParseStat(*files->stat, pid, files->dir + "/stat", options.proc_root);
    if (!stat) return Fail(stat.error());
    id.start_time_ticks = stat->start_time_ticks;
    id.parent_pid = stat->parent_pid;
    id.comm = std::move(stat->comm);
  } else {
    id.problems.push_back(files->stat.error());
  }
  if (files->comm) {
    std::string comm = std::move(*files->comm);
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    id.comm = std::move(comm);
  } else if (!id.comm) {
    id.problems.push_back(files->comm.error());
  }
  if (files->status) {
    auto uid = ParseStatusUid(*files->status, files->dir + "/status", options.proc_root);
    if (!uid) return Fail(uid.error());
    id.uid = *uid;
    id.user = UserName(*uid);
  } else {
    id.problems.push_back(files->status.error());
  }
  if (files->cgroup) {
    auto cgroup = ParseCgroupPath(*files->cgroup);
    if (!cgroup) return Fail(cgroup.error().WithContext(files->dir + "/cgroup"));
    id.cgroup = std::move(*cgroup);
  } else {
    id.problems.push_back(files->cgroup.error());
  }
  return id;
}

}  // namespace zeus::device
