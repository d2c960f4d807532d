// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/startup.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"
#include "zeus/device/privileges.h"

namespace zeus::zeusd {
namespace {

using ::testing::HasSubstr;

// A bound Unix socket; listening or not.
int BindSocket(const std::string& path, bool listen) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0) << std::strerror(errno);
  if (listen) {
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  return fd;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(PrepareSocketPathTest, StaleSocketIsRemoved) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("z.sock");
  ::close(BindSocket(path, /*listen=*/true));  // the file stays, nobody accepts
  ASSERT_TRUE(Exists(path));
  ASSERT_TRUE(PrepareSocketPath(path));
  EXPECT_FALSE(Exists(path));
}

TEST(PrepareSocketPathTest, LiveSocketIsNotStolen) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("z.sock");
  const int fd = BindSocket(path, /*listen=*/true);
  Status s = PrepareSocketPath(path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kAlreadyExists);
  EXPECT_THAT(s.error().message(), HasSubstr("in use"));
  EXPECT_TRUE(Exists(path));
  ::close(fd);
}

TEST(PrepareSocketPathTest, NonSocketFileIsLeftAlone) {
  zeus::testing::TempDir dir;
  const std::string path = dir.Write("z.sock", "precious");
  Status s = PrepareSocketPath(path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(s.error().message(), HasSubstr("not a socket"));
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(PrepareSocketPathTest, ParentIsCreated) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("run/zeusd/z.sock");
  ASSERT_FALSE(PrepareSocketPath(path));  // two missing levels: only the parent is created
  ASSERT_EQ(::mkdir(dir.File("run").c_str(), 0755), 0);
  ASSERT_TRUE(PrepareSocketPath(path));
  EXPECT_TRUE(Exists(dir.File("run/zeusd")));
}

device::Privileges Unprivileged() { return {}; }

device::Privileges Root() {
  device::Privileges p;
  p.is_root = true;
  return p;
}

// A non-root user holding CAP_SYS_ADMIN, as the packaged unit runs zeusd.
device::Privileges CapSysAdmin() {
  device::Privileges p;
  p.has_cap_sys_admin = true;
  return p;
}

TEST(CheckPrivilegesTest, RootNeededForControlAndCpuRead) {
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuRead, ApiGroup::kMetrics}, Unprivileged(), false));
  Status s = CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead}, Unprivileged(), false);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(s.error().message(), HasSubstr("gpu-control, cpu-read need root or CAP_SYS_ADMIN"));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl}, Unprivileged(), /*has_command_overrides=*/true));
  EXPECT_FALSE(CheckPrivileges({ApiGroup::kCpuRead}, Unprivileged(), true));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kCpuRead}, Root(), false));
}

TEST(CheckPrivilegesTest, CapSysAdminIsAcceptedLikeRoot) {
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead}, CapSysAdmin(), false));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl}, CapSysAdmin(), true));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kMetrics}, CapSysAdmin(), false));
}

TEST(CheckPrivilegesTest, CapSysAdminFromProcStatusIsAccepted) {
  // Bit 21 of CapEff, as the kernel shows it for a process with ambient
  // CAP_SYS_ADMIN and CAP_DAC_READ_SEARCH (bit 2), for uid 998 (not root).
  const device::Privileges with = device::PrivilegesFrom(998, "Name:\tzeusd\nCapEff:\t0000000000200004\n");
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kCpuRead}, with, false));
  // CAP_DAC_READ_SEARCH alone is not enough.
  const device::Privileges without = device::PrivilegesFrom(998, "Name:\tzeusd\nCapEff:\t0000000000000004\n");
  Status s = CheckPrivileges({ApiGroup::kCpuRead}, without, false);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied);
}

TEST(CheckPrivilegesTest, ErrorNamesTheFix) {
  Status s = CheckPrivileges({ApiGroup::kGpuControl}, Unprivileged(), false);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("gpu-control need root or CAP_SYS_ADMIN"));
  EXPECT_THAT(s.error().message(), HasSubstr("systemd unit"));
  EXPECT_THAT(s.error().message(), HasSubstr("leave them out of --enable"));
}

TEST(SocketOwnershipTest, ModeIsApplied) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("z.sock");
  const int fd = BindSocket(path, false);
  ASSERT_TRUE(SetSocketOwnership(path, "660", std::nullopt, std::nullopt));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_FALSE(SetSocketOwnership(path, "698", std::nullopt, std::nullopt));
  EXPECT_EQ(ParseOctalMode("0666").value(), 0666u);
  EXPECT_FALSE(ParseOctalMode(""));
  ::close(fd);
}

// Issue 20: under umask 000 the socket was bound 0777 at its final path and
// chmod-ed afterwards; a process running as nobody could connect in between.
TEST(StagedSocketTest, TheSocketAppearsAtItsPathOnlyWithItsFinalMode) {
  testing::TempDir dir;
  const std::string path = dir.File("zeusd.sock");
  std::string directory;
  int fd = -1;
  struct stat st {};
  {
    const mode_t old_umask = ::umask(0);
    auto staged = StagedSocket::Create(path);
    ASSERT_TRUE(staged) << staged.error().message();
    fd = BindSocket(staged->bind_path(), true);
    ::umask(old_umask);
    EXPECT_FALSE(Exists(path)) << "nothing at the final path before Publish";
    directory = std::filesystem::path(staged->bind_path()).parent_path().string();
    ASSERT_EQ(::lstat(directory.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u) << "only this user can reach the bound socket";
    EXPECT_EQ(st.st_uid, ::geteuid());

    ASSERT_TRUE(staged->Publish("600", std::nullopt, std::nullopt));
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }  // the destructor
  EXPECT_TRUE(Exists(path)) << "the published socket stays";
  EXPECT_FALSE(Exists(directory)) << "the staging directory is removed";
  ::close(fd);
}

TEST(StagedSocketTest, AnUnpublishedSocketLeavesNothingBehind) {
  testing::TempDir dir;
  const std::string path = dir.File("zeusd.sock");
  std::string directory;
  {
    auto staged = StagedSocket::Create(path);
    ASSERT_TRUE(staged);
    directory = std::filesystem::path(staged->bind_path()).parent_path().string();
    ::close(BindSocket(staged->bind_path(), false));
    EXPECT_TRUE(Exists(staged->bind_path()));
  }
  EXPECT_FALSE(Exists(directory));
  EXPECT_FALSE(Exists(path));
}

TEST(StagedSocketTest, APathTooLongToStageIsRefusedByName) {
  testing::TempDir dir;
  const std::string parent = dir.File(std::string(95 - dir.path().size(), 'd'));
  ASSERT_EQ(::mkdir(parent.c_str(), 0755), 0);
  const std::string path = parent + "/z.sock";  // fits in sun_path; parent/.zeusd-XXXXXX/s does not
  auto staged = StagedSocket::Create(path);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(staged.error().message(), HasSubstr("--socket-path"));
}

}  // namespace
}  // namespace zeus::zeusd
