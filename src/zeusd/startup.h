// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's start-up checks (zeus-reference 3.4): which groups need root, and
// the Unix socket's path. A stale socket (one nobody accepts on) is removed;
// a live one is never taken over; any other file there is left alone.

#ifndef ZEUS_SRC_ZEUSD_STARTUP_H_
#define ZEUS_SRC_ZEUSD_STARTUP_H_

#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"
#include "zeus/device/privileges.h"
#include "zeusd/auth.h"

namespace zeus::zeusd {

// gpu-control and cpu-read need root or CAP_SYS_ADMIN in the effective set
// (`privileges.can_change_gpu_settings()`: what NVML's setters and the
// emulator check; the packaged unit runs zeusd as the system user `zeusd`
// with CAP_SYS_ADMIN, and CAP_DAC_READ_SEARCH for RAPL, as ambient
// capabilities). gpu-control needs neither when command overrides are
// configured, which run their own tools; gpu-read and metrics never do.
// kPermissionDenied naming the groups and the fix.
Status CheckPrivileges(const std::vector<ApiGroup>& groups, const device::Privileges& privileges,
                       bool has_command_overrides);

// Makes `path` ready to bind: creates its parent directory (mode 0755) when
// missing; removes a socket file there that refuses connections (stale).
// Fails with kAlreadyExists when a server accepts on it ("in use"),
// kFailedPrecondition when a file that is not a socket is there (left
// alone), kIoError/kPermissionDenied for other errors; each names the path.
Status PrepareSocketPath(const std::string& path);

// A Unix socket that is bound where nobody can reach it yet, then published.
// Create() makes a private directory (mode 0700, owned by this process's
// user) beside `final_path`; the server binds bind_path() inside it. Publish()
// gives the socket its mode and owner (SetSocketOwnership) there and then
// renames it onto `final_path` (atomic), so the socket never exists at
// `final_path` with a wider mode or another owner than asked, whatever the
// umask. (Binding at the final path and chmod-ing afterwards let a process
// running as nobody connect in between under umask 000.) The destructor
// removes the staging directory and anything left in it; never the published
// socket. Errors name the paths.
class StagedSocket {
 public:
  static Result<StagedSocket> Create(const std::string& final_path);
  StagedSocket(StagedSocket&& other) noexcept;
  StagedSocket& operator=(StagedSocket&&) = delete;
  StagedSocket(const StagedSocket&) = delete;
  StagedSocket& operator=(const StagedSocket&) = delete;
  ~StagedSocket();

  const std::string& bind_path() const { return bind_path_; }
  // Call once, after the bind.
  Status Publish(const std::string& permissions, std::optional<unsigned> uid, std::optional<unsigned> gid);

 private:
  StagedSocket(std::string directory, std::string bind_path, std::string final_path);

  std::string directory_;  // empty once moved from
  std::string bind_path_;
  std::string final_path_;
};

// After binding: chmod to `permissions` (octal digits, e.g. "660") and chown
// to the given uid/gid (unset: unchanged). kInvalidArgument for bad digits.
Status SetSocketOwnership(const std::string& path, const std::string& permissions, std::optional<unsigned> uid,
                          std::optional<unsigned> gid);

// Parses "660" / "0660" into a mode; kInvalidArgument otherwise.
Result<unsigned> ParseOctalMode(const std::string& text);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_STARTUP_H_
