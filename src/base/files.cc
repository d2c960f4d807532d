// Copyright 2026 The Zeus C++ Authors.

#include "base/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zeus::base {
namespace {

tl::unexpected<FileReadFailure> ErrnoFailure(int errno_value) {
  return tl::unexpected(FileReadFailure{FileReadFailure::Kind::kErrno, errno_value, 0});
}

}  // namespace

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

tl::expected<std::string, FileReadFailure> ReadRegularFileAt(int dir_fd, const char* name, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer (nor a
  // device's open for its hardware); fstat below judges what was opened.
  ScopedFd fd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  struct stat st {};
  if (fd.get() < 0) {
    const int open_errno = errno;
    // What cannot be opened at all may still say what it is (a socket: ENXIO).
    if (::fstatat(dir_fd, name, &st, 0) == 0 && !S_ISREG(st.st_mode)) {
      return tl::unexpected(FileReadFailure{FileReadFailure::Kind::kNotRegular, 0, st.st_mode});
    }
    return ErrnoFailure(open_errno);
  }
  if (::fstat(fd.get(), &st) != 0) return ErrnoFailure(errno);
  if (!S_ISREG(st.st_mode)) {
    return tl::unexpected(FileReadFailure{FileReadFailure::Kind::kNotRegular, 0, st.st_mode});
  }
  std::string text;
  char buffer[1 << 14];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoFailure(errno);
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) return tl::unexpected(FileReadFailure{FileReadFailure::Kind::kTooLarge, 0, 0});
  }
}

}  // namespace zeus::base
