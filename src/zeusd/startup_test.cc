// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/startup.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"

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

TEST(CheckPrivilegesTest, RootNeededForControlAndCpuRead) {
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuRead, ApiGroup::kMetrics}, false, false));
  Status s = CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kGpuRead, ApiGroup::kCpuRead}, false, false);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(s.error().message(), HasSubstr("gpu-control, cpu-read need root"));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl}, false, /*has_command_overrides=*/true));
  EXPECT_FALSE(CheckPrivileges({ApiGroup::kCpuRead}, false, true));
  EXPECT_TRUE(CheckPrivileges({ApiGroup::kGpuControl, ApiGroup::kCpuRead}, true, false));
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

}  // namespace
}  // namespace zeus::zeusd
