// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-nvml-emulator.so through its C API: where the state file
// goes and what the emulator refuses to open there (state_file.h). A refusal
// fails nvmlInit_v2 with NVML_ERROR_NO_PERMISSION and a message naming the
// path; the thing refused is left as it was.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"
#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr uid_t kNobody = 65534;

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Sets the process umask while alive.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t old_;
};

// Sets (or, for nullptr, unsets) an environment variable while alive.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// nvmlInit_v2's answer; an unexpected success is undone, so that the next
// call loads the scenario again.
nvmlReturn_t InitResult() {
  const nvmlReturn_t result = nvmlInit_v2();
  if (result == NVML_SUCCESS) nvmlShutdown();
  return result;
}

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// ---- The state file itself -----------------------------------------------------------------

TEST_F(NvmlEmulatorTest, SymbolicLinkAtTheStatePathIsNotFollowed) {
  // Another user plants a link where the state file will be; the target is a
  // file of ours (as root: any file on the system).
  const std::filesystem::path victim = dir_ / "precious";
  std::ofstream(victim) << "do not overwrite";
  std::filesystem::create_symlink(victim, state_path());
  UseScenario(Manual(Gpu()));
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(),
              AllOf(HasSubstr("state file " + state_path() + ": is a symbolic link"), HasSubstr("remove it")));
  EXPECT_EQ(Slurp(victim), "do not overwrite");

  // A dangling link is not followed to create its target either.
  std::filesystem::remove(state_path());
  const std::filesystem::path elsewhere = dir_ / "elsewhere";
  std::filesystem::create_symlink(elsewhere, state_path());
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_FALSE(std::filesystem::exists(elsewhere));

  // Once the link is gone, the state is created in its place.
  std::filesystem::remove(state_path());
  Init();
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(state_path())));
}

TEST_F(NvmlEmulatorTest, StateFileOwnedByAnotherUserIsRefusedUnlessShared) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  UseScenario(Manual(Gpu()));
  Init();
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  ASSERT_EQ(::chown(state_path().c_str(), kNobody, kNobody), 0);
  const std::string before = Slurp(state_path());
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(),
              AllOf(HasSubstr("state file " + state_path() + ": owned by uid 65534, not by this user (uid 0)"),
                    HasSubstr("\"state_file_shared\": true")));
  EXPECT_EQ(Slurp(state_path()), before);

  // Sharing between users is an explicit choice of the scenario.
  UseScenario(Manual(Gpu(), R"("state_file_shared": true, )"));
  Init();
  EXPECT_EQ(LimitMw(Handle(0)), 250'000u);
}

TEST_F(NvmlEmulatorTest, CreatedStateFileIsPrivateUnlessShared) {
  ScopedUmask no_mask(0);
  UseScenario(Manual(Gpu()));
  Init();
  EXPECT_EQ(ModeOf(state_path()), 0600u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  std::filesystem::remove(state_path());
  UseScenario(Manual(Gpu(), R"("state_file_shared": true, )"));
  {
    ScopedUmask strict(077);  // the shared file is 0666 whatever the umask
    Init();
  }
  EXPECT_EQ(ModeOf(state_path()), 0666u);
}

TEST_F(NvmlEmulatorTest, HardLinkedOrSpecialStateFileIsRefused) {
  UseScenario(Manual(Gpu()));
  Init();
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // A second name: the file may be another one (a hard link to a file of the
  // victim's that another user could make where links are not protected).
  std::filesystem::create_hard_link(state_path(), dir_ / "second-name");
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(), HasSubstr("state file " + state_path() + ": has 2 hard links"));
  std::filesystem::remove(dir_ / "second-name");
  Init();
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);

  std::filesystem::remove(state_path());
  ASSERT_EQ(::mkfifo(state_path().c_str(), 0600), 0);
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(), HasSubstr("state file " + state_path() + ": not a regular file"));
}

TEST_F(NvmlEmulatorTest, StateFileSharedNeedsAnExplicitStateFile) {
  const std::string path = UseScenario(R"({"state_file_shared": true, "gpus": [)" + Gpu() + "]}");
  EXPECT_EQ(InitResult(), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(std::string(zeusEmulatorLastError()),
            "scenario " + path +
                ": state_file_shared: needs \"state_file\": the default state file is private to each user");
}

// ---- The default location ------------------------------------------------------------------

// The default state file's directory when $TMPDIR is a directory that other
// users may write to, as /tmp.
std::filesystem::path PrivateSubdirectory(const std::filesystem::path& tmp_dir) {
  return tmp_dir / ("zeus-nvml-emulator-" + std::to_string(::geteuid()));
}

TEST_F(NvmlEmulatorTest, DefaultStateFileInASharedDirectoryGoesToAPrivateSubdirectory) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // like /tmp
  ScopedUmask no_mask(0);
  ScopedEnv tmpdir("TMPDIR", dir_.c_str());
  UseScenario(R"({"clock": "manual", "gpus": [)" + Gpu() + "]}");
  Init();
  const std::filesystem::path private_dir = PrivateSubdirectory(dir_);
  EXPECT_THAT(std::string(zeusEmulatorStatePath()),
              MatchesRegex(private_dir.string() + "/zeus-nvml-emulator-[0-9a-f]{16}\\.state"));
  EXPECT_EQ(ModeOf(private_dir), 0700u);
  EXPECT_EQ(ModeOf(zeusEmulatorStatePath()), 0600u);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);
  // The same user's next process finds the same state.
  Init();
  EXPECT_THAT(std::string(zeusEmulatorStatePath()), StartsWith(private_dir.string() + "/"));
}

TEST_F(NvmlEmulatorTest, PlantedPrivateSubdirectoryIsRefused) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);
  ScopedEnv tmpdir("TMPDIR", dir_.c_str());
  UseScenario(R"({"clock": "manual", "gpus": [)" + Gpu() + "]}");
  const std::filesystem::path private_dir = PrivateSubdirectory(dir_);

  // A link to a directory of the victim's.
  const std::filesystem::path victims = dir_ / "victims-directory";
  std::filesystem::create_directory(victims);
  std::filesystem::create_directory_symlink(victims, private_dir);
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(), AllOf(HasSubstr("state directory " + private_dir.string() + ": not a directory"),
                                             HasSubstr("TMPDIR")));
  EXPECT_TRUE(std::filesystem::is_empty(victims));
  std::filesystem::remove(private_dir);

  // A directory that others may write to.
  std::filesystem::create_directory(private_dir);
  ASSERT_EQ(::chmod(private_dir.c_str(), 0777), 0);
  EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
  EXPECT_THAT(zeusEmulatorLastError(),
              HasSubstr("state directory " + private_dir.string() + ": other users may write to it (mode 777)"));

  // Another user's directory.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chmod(private_dir.c_str(), 0700), 0);
    ASSERT_EQ(::chown(private_dir.c_str(), kNobody, kNobody), 0);
    EXPECT_EQ(InitResult(), NVML_ERROR_NO_PERMISSION);
    EXPECT_THAT(zeusEmulatorLastError(),
                HasSubstr("state directory " + private_dir.string() + ": owned by uid 65534, not by this user"));
    EXPECT_TRUE(std::filesystem::is_empty(private_dir));
  }
}

TEST_F(NvmlEmulatorTest, DefaultStateFileWithoutTmpdirGoesToThePrivateRuntimeDirectory) {
  const std::filesystem::path runtime = dir_ / "runtime";
  std::filesystem::create_directory(runtime);
  ASSERT_EQ(::chmod(runtime.c_str(), 0700), 0);
  ScopedEnv tmpdir("TMPDIR", nullptr);
  ScopedEnv xdg("XDG_RUNTIME_DIR", runtime.c_str());
  UseScenario(R"({"clock": "manual", "gpus": [)" + Gpu() + "]}");
  Init();
  EXPECT_THAT(std::string(zeusEmulatorStatePath()),
              MatchesRegex(runtime.string() + "/zeus-nvml-emulator-[0-9a-f]{16}\\.state"));
}

}  // namespace
}  // namespace zeus::emulator::test
