// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/startup.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace zeus::zeusd {
namespace {

// Tries to connect to the socket at `path`: 0 when someone accepts, else the
// errno of the failure.
int ProbeSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), std::min(path.size(), sizeof(address.sun_path) - 1));
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

Status CheckPrivileges(const std::vector<ApiGroup>& groups, const device::Privileges& privileges,
                       bool has_command_overrides) {
  if (privileges.can_change_gpu_settings()) return OkStatus();
  std::string needing;
  for (ApiGroup group : groups) {
    if (group == ApiGroup::kGpuRead || group == ApiGroup::kMetrics) continue;
    if (group == ApiGroup::kGpuControl && has_command_overrides) continue;
    needing += fmt::format("{}{}", needing.empty() ? "" : ", ", ApiGroupName(group));
  }
  if (needing.empty()) return OkStatus();
  return Fail(ErrorCode::kPermissionDenied,
              fmt::format("the API groups {} need root or CAP_SYS_ADMIN: run zeusd from its systemd unit (user "
                          "zeusd with CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH), as root, or with those capabilities "
                          "(e.g. setpriv --ambient-caps +sys_admin,+dac_read_search), or leave them out of --enable",
                          needing));
}

Status PrepareSocketPath(const std::string& path) {
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("the socket path {} is longer than {} bytes", path,
                                                         sizeof(sockaddr_un::sun_path) - 1));
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(parent, ec)) {
      if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
        const int err = errno;
        return Fail(ErrorFromErrno(err, fmt::format("creating the socket directory {}", parent.string())));
      }
    }
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return OkStatus();
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("the socket path {}", path)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("{} exists and is not a socket; zeusd leaves it alone: remove it or choose another "
                            "--socket-path",
                            path));
  }
  const int probe = ProbeSocket(path);
  if (probe == 0) {
    return Fail(ErrorCode::kAlreadyExists,
                fmt::format("the socket {} is in use: another zeusd (or another server) accepts on it; stop it "
                            "or choose another --socket-path",
                            path));
  }
  if (probe != ECONNREFUSED) {
    return Fail(ErrorFromErrno(probe, fmt::format("probing the existing socket {}", path)));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("removing the stale socket {}", path)));
  }
  return OkStatus();
}

Result<unsigned> ParseOctalMode(const std::string& text) {
  if (text.empty() || text.size() > 4) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("must be 3 or 4 octal digits such as 660 (got '{}')", text));
  }
  unsigned mode = 0;
  for (char c : text) {
    if (c < '0' || c > '7') {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("must be octal digits such as 660 (got '{}')", text));
    }
    mode = mode * 8 + static_cast<unsigned>(c - '0');
  }
  return mode;
}

Status SetSocketOwnership(const std::string& path, const std::string& permissions, std::optional<unsigned> uid,
                          std::optional<unsigned> gid) {
  auto mode = ParseOctalMode(permissions);
  if (!mode) return Fail(mode.error());
  if (::chmod(path.c_str(), static_cast<mode_t>(*mode)) != 0) {
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("chmod {:o} {}", *mode, path)));
  }
  if (uid || gid) {
    const uid_t new_uid = uid ? static_cast<uid_t>(*uid) : static_cast<uid_t>(-1);
    const gid_t new_gid = gid ? static_cast<gid_t>(*gid) : static_cast<gid_t>(-1);
    if (::chown(path.c_str(), new_uid, new_gid) != 0) {
      const int err = errno;
      return Fail(ErrorFromErrno(err, fmt::format("chown of the socket {}", path)));
    }
  }
  return OkStatus();
}

Result<StagedSocket> StagedSocket::Create(const std::string& final_path) {
  const std::filesystem::path final_fs(final_path);
  std::filesystem::path parent = final_fs.parent_path();
  if (parent.empty()) parent = ".";
  std::string pattern = (parent / ".zeusd-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {  // mode 0700
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("creating a private directory beside the socket {}", final_path)));
  }
  std::string bind_path = pattern + "/s";
  if (bind_path.size() >= sizeof(sockaddr_un::sun_path)) {
    ::rmdir(pattern.c_str());
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the socket path {} is too long to be bound beside it ({} needs {} of {} bytes); choose a "
                            "shorter --socket-path",
                            final_path, bind_path, bind_path.size() + 1, sizeof(sockaddr_un::sun_path)));
  }
  return StagedSocket(std::move(pattern), std::move(bind_path), final_path);
}

StagedSocket::StagedSocket(std::string directory, std::string bind_path, std::string final_path)
    : directory_(std::move(directory)), bind_path_(std::move(bind_path)), final_path_(std::move(final_path)) {}

StagedSocket::StagedSocket(StagedSocket&& other) noexcept
    : directory_(std::exchange(other.directory_, {})),
      bind_path_(std::move(other.bind_path_)),
      final_path_(std::move(other.final_path_)) {}

StagedSocket::~StagedSocket() {
  if (directory_.empty()) return;
  ::unlink(bind_path_.c_str());
  ::rmdir(directory_.c_str());
}

Status StagedSocket::Publish(const std::string& permissions, std::optional<unsigned> uid,
                             std::optional<unsigned> gid) {
  if (Status owned = SetSocketOwnership(bind_path_, permissions, uid, gid); !owned) return owned;
  if (::rename(bind_path_.c_str(), final_path_.c_str()) != 0) {
    const int err = errno;
    return Fail(ErrorFromErrno(err, fmt::format("moving the socket from {} to {}", bind_path_, final_path_)));
  }
  return OkStatus();
}

}  // namespace zeus::zeusd
