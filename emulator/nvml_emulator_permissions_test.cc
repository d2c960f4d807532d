// Copyright 2026 The Zeus C++ Authors.
//
// The setters need root or CAP_SYS_ADMIN, as on a real driver; reads do not.
// A forked child drops to nobody (uid/gid 65534, no capabilities) and reports
// what the emulator answered through its exit code; the state file it shares
// with the parent (shared on purpose: "state_file_shared", or a root-created
// file the operator opened up) shows what changed.

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "nvml_emulator_test_fixture.h"

namespace zeus::emulator::test {
namespace {

// Runs `body` in a child that is nobody; returns its exit code.
template <class Body>
int AsNobody(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(100);
    }
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST_F(NvmlEmulatorTest, SettersNeedRootOrCapSysAdminReadsDoNot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  UseScenario(Manual(Gpu(), R"("state_file_shared": true, )"));
  Init();  // creates the state file (shared: 0666 whatever the umask)
  struct stat st {};
  ASSERT_EQ(::stat(state_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  ASSERT_EQ(::chmod((dir_ / "scenario.json").c_str(), 0644), 0);
  nvmlDevice_t device = Handle(0);

  // Each check is one bit of the exit code: set when the answer was right.
  const int result = AsNobody([] {
    if (nvmlInit_v2() != NVML_SUCCESS) return 99;
    nvmlDevice_t d = nullptr;
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS) return 98;
    int ok = 0;
    unsigned int limit = 0;
    if (nvmlDeviceGetPowerManagementLimit(d, &limit) == NVML_SUCCESS && limit == 250'000) ok |= 1;
    if (nvmlDeviceSetPowerManagementLimit(d, 150'000) == NVML_ERROR_NO_PERMISSION) ok |= 2;
    if (nvmlDeviceSetPersistenceMode(d, NVML_FEATURE_ENABLED) == NVML_ERROR_NO_PERMISSION) ok |= 4;
    if (nvmlDeviceSetGpuLockedClocks(d, 1000, 1200) == NVML_ERROR_NO_PERMISSION) ok |= 8;
    if (nvmlDeviceResetGpuLockedClocks(d) == NVML_ERROR_NO_PERMISSION) ok |= 16;
    if (nvmlDeviceSetMemoryLockedClocks(d, 800, 800) == NVML_ERROR_NO_PERMISSION) ok |= 32;
    if (nvmlDeviceResetMemoryLockedClocks(d) == NVML_ERROR_NO_PERMISSION) ok |= 64;
    nvmlShutdown();
    return ok;
  });
  EXPECT_EQ(result, 127);
  EXPECT_EQ(LimitMw(device), 250'000u);  // nothing changed

  // Root may: the parent's change is what the unprivileged child then reads.
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(device, 150'000), NVML_SUCCESS);
  const int read = AsNobody([] {
    nvmlDevice_t d = nullptr;
    unsigned int limit = 0;
    if (nvmlInit_v2() != NVML_SUCCESS || nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS) return 99;
    return nvmlDeviceGetPowerManagementLimit(d, &limit) == NVML_SUCCESS && limit == 150'000 ? 0 : 1;
  });
  EXPECT_EQ(read, 0);
}

// Without "state_file_shared" the state file is created 0600; root's file is
// still trusted by other users, so an operator who opens it up (chmod) shares
// it with them.
TEST_F(NvmlEmulatorTest, RootsPrivateStateFileOpenedUpByTheOperatorIsShared) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  UseScenario(Manual(Gpu()));
  Init();
  ASSERT_EQ(::chmod((dir_ / "scenario.json").c_str(), 0644), 0);
  ASSERT_EQ(nvmlDeviceSetPowerManagementLimit(Handle(0), 150'000), NVML_SUCCESS);
  ASSERT_EQ(nvmlShutdown(), NVML_SUCCESS);  // so that the children open the file themselves
  auto nobody_reads_limit = [] {
    nvmlDevice_t d = nullptr;
    unsigned int limit = 0;
    if (nvmlInit_v2() != NVML_SUCCESS) return 99;
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS) return 98;
    return nvmlDeviceGetPowerManagementLimit(d, &limit) == NVML_SUCCESS && limit == 150'000 ? 0 : 1;
  };
  EXPECT_EQ(AsNobody(nobody_reads_limit), 99);  // 0600: nobody may not open it
  ASSERT_EQ(::chmod(state_path().c_str(), 0666), 0);
  EXPECT_EQ(AsNobody(nobody_reads_limit), 0);
}

}  // namespace
}  // namespace zeus::emulator::test
