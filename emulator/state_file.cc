// Copyright 2026 The Zeus C++ Authors.

#include "state_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace zeus::emulator {
namespace {

constexpr mode_t kPrivateFileMode = 0600;
constexpr mode_t kSharedFileMode = 0666;
constexpr mode_t kPrivateDirectoryMode = 0700;

// What to do about a state file that is refused.
constexpr std::string_view kFileAdvice =
    "remove it, or set \"state_file\" in the scenario to a path of your own";
constexpr std::string_view kDirectoryAdvice =
    "remove it, or set TMPDIR (or \"state_file\" in the scenario) to a directory of your own";

int Fail(StateFileError* error, bool refused, std::string message) {
  error->message = std::move(message);
  error->refused = refused;
  return -1;
}

bool IsPermissionError(int err) { return err == EACCES || err == EPERM; }

// Closes `fd` and fails.
int CloseAndFail(int fd, StateFileError* error, bool refused, std::string message) {
  ::close(fd);
  return Fail(error, refused, std::move(message));
}

// Checks the state file open on `fd`; on failure closes it. Returns fd or -1.
int CheckFile(int fd, const std::string& path, bool shared, StateFileError* error) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return CloseAndFail(fd, error, false, fmt::format("state file {}: cannot stat: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return CloseAndFail(fd, error, true, fmt::format("state file {}: not a regular file; {}", path, kFileAdvice));
  }
  if (info.st_nlink != 1) {
    return CloseAndFail(fd, error, true,
                        fmt::format("state file {}: has {} hard links, so it may be another file under a second "
                                    "name; {}",
                                    path, info.st_nlink, kFileAdvice));
  }
  const uid_t me = ::geteuid();
  if (!shared && info.st_uid != me && info.st_uid != 0) {
    return CloseAndFail(
        fd, error, true,
        fmt::format("state file {}: owned by uid {}, not by this user (uid {}), so another user may have planted "
                    "it; {}, or set \"state_file_shared\": true in the scenario to share one state between users",
                    path, info.st_uid, me, kFileAdvice));
  }
  return fd;
}

// Opens `name` relative to `dir_fd` (AT_FDCWD: the working directory) without
// following a link there, creating it with `mode` (whatever the umask) if it
// does not exist; `path` names it in messages. Does not check what it opened.
int OpenNoFollow(int dir_fd, const char* name, const std::string& path, mode_t mode, StateFileError* error) {
  constexpr int kFlags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = ::openat(dir_fd, name, kFlags | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      (void)::fchmod(fd, mode);
      return fd;
    }
    // O_EXCL fails on anything at the name, a (dangling) link included.
    if (errno == EEXIST) fd = ::openat(dir_fd, name, kFlags);
    if (fd >= 0) return fd;
    if (errno == ENOENT) continue;  // removed between the two calls
    break;
  }
  const int err = errno;
  if (err == ELOOP) {
    return Fail(error, true,
                fmt::format("state file {}: is a symbolic link, which the emulator does not follow (another user "
                            "may have planted it); {}",
                            path, kFileAdvice));
  }
  return Fail(error, IsPermissionError(err), fmt::format("state file {}: cannot open: {}", path, std::strerror(err)));
}

// Checks that the directory open on `fd` is this user's and that no one else
// may write to it. On failure closes it. Returns fd or -1.
int CheckPrivateDirectory(int fd, const std::string& path, StateFileError* error) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return CloseAndFail(fd, error, false,
                        fmt::format("state directory {}: cannot stat: {}", path, std::strerror(errno)));
  }
  const uid_t me = ::geteuid();
  if (!S_ISDIR(info.st_mode)) {
    return CloseAndFail(fd, error, true, fmt::format("state directory {}: not a directory; {}", path,
                                                     kDirectoryAdvice));
  }
  if (info.st_uid != me) {
    return CloseAndFail(fd, error, true,
                        fmt::format("state directory {}: owned by uid {}, not by this user (uid {}); {}", path,
                                    info.st_uid, me, kDirectoryAdvice));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return CloseAndFail(fd, error, true,
                        fmt::format("state directory {}: other users may write to it (mode {:o}); {}", path,
                                    info.st_mode & 07777, kDirectoryAdvice));
  }
  return fd;
}

// Opens the directory a default state file lives in: `dir` itself if it is
// private to this user, else its subdirectory zeus-nvml-emulator-<euid>
// (created if missing). Sets *used to the directory's path.
int OpenDefaultDirectory(const std::string& dir, std::string* used, StateFileError* error) {
  const int dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    const int err = errno;
    return Fail(error, IsPermissionError(err),
                fmt::format("state directory {}: cannot open: {}; set TMPDIR (or \"state_file\" in the scenario) "
                            "to a directory of your own",
                            dir, std::strerror(err)));
  }
  struct stat info {};
  if (::fstat(dir_fd, &info) == 0 && info.st_uid == ::geteuid() && (info.st_mode & (S_IWGRP | S_IWOTH)) == 0) {
    *used = dir;
    return dir_fd;
  }
  const std::string name = fmt::format("zeus-nvml-emulator-{}", ::geteuid());
  *used = fmt::format("{}/{}", dir == "/" ? "" : dir, name);
  if (::mkdirat(dir_fd, name.c_str(), kPrivateDirectoryMode) != 0 && errno != EEXIST) {
    const int err = errno;
    return CloseAndFail(dir_fd, error, IsPermissionError(err),
                        fmt::format("state directory {}: cannot create: {}", *used, std::strerror(err)));
  }
  // O_PATH with O_NOFOLLOW would open a link itself: O_DIRECTORY refuses it.
  const int sub_fd = ::openat(dir_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const int err = errno;
  ::close(dir_fd);
  if (sub_fd < 0) {
    if (err == ENOTDIR || err == ELOOP) {
      return Fail(error, true,
                  fmt::format("state directory {}: not a directory (a symbolic link or a file another user may "
                              "have planted); {}",
                              *used, kDirectoryAdvice));
    }
    return Fail(error, IsPermissionError(err),
                fmt::format("state directory {}: cannot open: {}", *used, std::strerror(err)));
  }
  return CheckPrivateDirectory(sub_fd, *used, error);
}

}  // namespace

int OpenStateFile(const Scenario& scenario, std::string* path, StateFileError* error) {
  const bool shared = scenario.state_file_shared;
  const mode_t mode = shared ? kSharedFileMode : kPrivateFileMode;
  if (!scenario.state_file_is_default) {
    *path = scenario.state_file;
    const int fd = OpenNoFollow(AT_FDCWD, path->c_str(), *path, mode, error);
    return fd < 0 ? -1 : CheckFile(fd, *path, shared, error);
  }
  const std::size_t slash = scenario.state_file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : scenario.state_file.substr(0, slash);
  const std::string name = scenario.state_file.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string used_dir;
  const int dir_fd = OpenDefaultDirectory(dir, &used_dir, error);
  if (dir_fd < 0) return -1;
  *path = fmt::format("{}/{}", used_dir == "/" ? "" : used_dir, name);
  const int fd = OpenNoFollow(dir_fd, name.c_str(), *path, mode, error);
  ::close(dir_fd);
  return fd < 0 ? -1 : CheckFile(fd, *path, shared, error);
}

int ReopenStateFile(const std::string& path, bool shared, StateFileError* error) {
  const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Fail(error, err == ELOOP || IsPermissionError(err),
                fmt::format("state file {}: cannot reopen: {}", path, std::strerror(err)));
  }
  return CheckFile(fd, path, shared, error);
}

}  // namespace zeus::emulator
