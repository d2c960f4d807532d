// Copyright 2026 The Zeus C++ Authors.
//
// Reading a small file that someone else controls (private to the project:
// src/base): a trace or a profile a user names, a file of a proc root that a
// bind mount in a container can fill with anything. One reader for all of
// them: what is not a regular file (a FIFO, a device, a socket, a directory)
// is refused with the reason, never waited on.

#ifndef ZEUS_SRC_BASE_FILES_H_
#define ZEUS_SRC_BASE_FILES_H_

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <string>

#include <tl/expected.hpp>

namespace zeus::base {

// Owns a file descriptor: closes it when destroyed (-1 owns nothing).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Why ReadRegularFileAt read nothing.
struct FileReadFailure {
  enum class Kind {
    kErrno,       // open, fstat or read failed: `errno_value`
    kNotRegular,  // the path is not a regular file: `mode` says what it is
    kTooLarge,    // more than the caller's limit
  };
  Kind kind = Kind::kErrno;
  int errno_value = 0;  // kErrno
  mode_t mode = 0;      // kNotRegular: st_mode of what was opened
};

// "a FIFO (named pipe)", "a directory", "a socket", "a character device", "a
// block device", else "not a regular file": what `mode` is, for messages.
const char* FileKind(mode_t mode);

// The whole of regular file `name`, relative to the directory `dir_fd`
// (AT_FDCWD: the working directory; an absolute `name` ignores it).
// The file is opened with O_NONBLOCK (a FIFO without a writer does not block
// the open) and judged by fstat on what was opened, so no stat-then-open race
// lets a FIFO in; only a regular file is read (a read of a regular file never
// waits for another process). At most `max_bytes` bytes are kept: a longer
// file is kTooLarge. EINTR is retried.
// Thread-safety: a free function; any thread.
tl::expected<std::string, FileReadFailure> ReadRegularFileAt(int dir_fd, const char* name, std::size_t max_bytes);

}  // namespace zeus::base

#endif  // ZEUS_SRC_BASE_FILES_H_
