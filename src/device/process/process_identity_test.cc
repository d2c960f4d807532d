// Copyright 2026 The Zeus C++ Authors.
//
// IdentifyProcess on fake /proc trees (TempDir) and on the real /proc.
//
// The files are written as procfs writes them (proc(5)): stat is one line,
// "pid (comm) state ppid ..." with 52 fields, starttime the 22nd; status is
// "Name:\t...\n" lines with "Uid:\treal\teffective\tsaved\tfs"; comm is the
// name and a newline; cgroup as in cgroup_path_test.cc.

#include "zeus/device/process_identity.h"

#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/result.h"
#include "testing/temp_dir.h"

namespace zeus::device {
namespace {

using ::testing::HasSubstr;
using zeus::testing::TempDir;
using zeus::testing::Unwrap;

constexpr std::uint32_t kPid = 4242;
constexpr char kSlurmCgroup[] = "0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0\n";

// A stat line for `comm`, started at `start_ticks`; fields 21 and 23 differ
// from it so that an off-by-one reads a different number.
std::string StatWithStart(std::uint32_t pid, const std::string& comm, const std::string& start) {
  // Fields 3-21: state ppid pgrp session tty_nr tpgid flags minflt cminflt
  // majflt cmajflt utime stime cutime cstime priority nice num_threads
  // itrealvalue.
  return std::to_string(pid) + " (" + comm + ") S 4200 4242 4200 34816 4242 4194304 12345 0 3 0 150 30 0 0 20 0 8 0 " +
         start +
         " 4096000000 250000 18446744073709551615 94000000000000 94000000100000 140700000000000 0 0 16781312 "
         "16386 0 0 0 17 5 0 0 0 0 0 94000000200000 94000000300000 94000001000000 140700000001000 "
         "140700000002000 140700000002000 140700000003000 0\n";
}

std::string Stat(std::uint32_t pid, const std::string& comm, std::uint64_t start_ticks) {
  return StatWithStart(pid, comm, std::to_string(start_ticks));
}

std::string StatusFile(const std::string& name, std::uint32_t real_uid) {
  return "Name:\t" + name + "\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t4200\n"
         "TracerPid:\t0\nUid:\t" + std::to_string(real_uid) + "\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n"
         "FDSize:\t64\nGroups:\t1000\nVmPeak:\t  400000 kB\nThreads:\t8\n";
}

// <root>/<pid>/{stat,status,comm,cgroup} for one process.
void WriteProcess(const TempDir& root, std::uint32_t pid, const std::string& comm, std::uint32_t uid,
                  std::uint64_t start_ticks, const std::string& cgroup) {
  const std::string dir = std::to_string(pid) + "/";
  root.Write(dir + "stat", Stat(pid, comm, start_ticks));
  root.Write(dir + "status", StatusFile(comm, uid));
  root.Write(dir + "comm", comm + "\n");
  root.Write(dir + "cgroup", cgroup);
}

// Replaces a file by a directory: reading it fails with EISDIR, as an
// unreadable entry does, even for root.
void MakeUnreadable(const TempDir& root, const std::string& name) {
  std::filesystem::remove(root.File(name));
  std::filesystem::create_directory(root.File(name));
}

// The password database's name for `uid`, if it has one.
std::optional<std::string> PasswdName(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[16384];
  if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) != 0 || found == nullptr) return std::nullopt;
  return std::string(found->pw_name);
}

ProcessIdentityOptions Under(const TempDir& root) { return ProcessIdentityOptions{root.path()}; }

TEST(ProcessIdentityTest, ReadsEveryPartOfAFakeProcess) {
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 987654, kSlurmCgroup);
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.pid, kPid);
  EXPECT_EQ(id.comm, "python3");
  EXPECT_EQ(id.uid, 0u);
  EXPECT_EQ(id.user, PasswdName(0).value_or("0"));
  EXPECT_EQ(id.start_time_ticks, 987654u);
  EXPECT_EQ(id.parent_pid, 4200u);
  ASSERT_TRUE(id.cgroup);
  EXPECT_EQ(id.cgroup->slurm_job_id, "123");
  EXPECT_EQ(id.cgroup->slurm_step, "0");
  EXPECT_TRUE(id.problems.empty());
}

TEST(ProcessIdentityTest, RealUidIsTheFirstOfTheUidLine) {
  // A setuid program: real 1000, effective 0. The user is the real one.
  TempDir root;
  WriteProcess(root, kPid, "sudo", 1000, 5, "0::/\n");
  EXPECT_EQ(Unwrap(IdentifyProcess(kPid, Under(root))).uid, 1000u);
}

TEST(ProcessIdentityTest, UidWithoutANameIsShownAsANumber) {
  constexpr std::uint32_t kNobodyKnows = 3999999999u;
  if (PasswdName(kNobodyKnows)) GTEST_SKIP() << "this machine's password database names uid " << kNobodyKnows;
  TempDir root;
  WriteProcess(root, kPid, "job", kNobodyKnows, 5, "0::/\n");
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.uid, kNobodyKnows);
  EXPECT_EQ(id.user, "3999999999");
}

TEST(ProcessIdentityTest, CommWithSpacesAndParenthesesInStat) {
  // The kernel writes comm between '(' and ')' unescaped: fields are counted
  // from the last ')'.
  const std::string comm = "a) b (c) d";
  TempDir root;
  WriteProcess(root, kPid, comm, 0, 31337, "0::/\n");
  ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, comm);
  EXPECT_EQ(id.start_time_ticks, 31337u);
  // Without the comm file, the name comes from stat.
  MakeUnreadable(root, std::to_string(kPid) + "/comm");
  id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, comm);
  EXPECT_EQ(id.start_time_ticks, 31337u);
  EXPECT_TRUE(id.problems.empty());
}

TEST(ProcessIdentityTest, ReusedPidHasAnotherStartTime) {
  TempDir root;
  WriteProcess(root, kPid, "train", 0, 1000, kSlurmCgroup);
  const ProcessIdentity before = Unwrap(IdentifyProcess(kPid, Under(root)));
  WriteProcess(root, kPid, "train", 0, 2000, kSlurmCgroup);
  const ProcessIdentity after = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_NE(before.start_time_ticks, after.start_time_ticks);
}

TEST(ProcessIdentityTest, VanishedProcessIsNotFoundNamingThePid) {
  TempDir root;
  auto id = IdentifyProcess(kPid, Under(root));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(id.error().message(), HasSubstr("process 4242"));
}

TEST(ProcessIdentityTest, FileGoneMidReadIsNotFound) {
  // The directory is there but a file is not: the process exited between
  // the reads (procfs answers ENOENT under a reaped process's directory).
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, "0::/\n");
  std::filesystem::remove(root.File(std::to_string(kPid) + "/cgroup"));
  auto id = IdentifyProcess(kPid, Under(root));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(id.error().message(), HasSubstr("process 4242"));
}

TEST(ProcessIdentityTest, UnreadableCgroupLeavesOnlyItsPartEmpty) {
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
  MakeUnreadable(root, std::to_string(kPid) + "/cgroup");
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, "python3");
  EXPECT_EQ(id.uid, 0u);
  EXPECT_EQ(id.start_time_ticks, 5u);
  EXPECT_FALSE(id.cgroup);
  ASSERT_EQ(id.problems.size(), 1u);
  EXPECT_EQ(id.problems[0].code(), ErrorCode::kIoError);
  EXPECT_THAT(id.problems[0].message(), HasSubstr(root.File("4242/cgroup")));
}

TEST(ProcessIdentityTest, UnreadableStatAndStatusLeaveCommAndCgroup) {
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
  MakeUnreadable(root, std::to_string(kPid) + "/stat");
  MakeUnreadable(root, std::to_string(kPid) + "/status");
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, "python3");
  EXPECT_FALSE(id.uid);
  EXPECT_FALSE(id.user);
  EXPECT_FALSE(id.start_time_ticks);
  ASSERT_TRUE(id.cgroup);
  EXPECT_EQ(id.cgroup->slurm_job_id, "123");
  ASSERT_EQ(id.problems.size(), 2u);
  EXPECT_THAT(id.problems[0].message(), HasSubstr("4242/stat"));
  EXPECT_THAT(id.problems[1].message(), HasSubstr("4242/status"));
}

TEST(ProcessIdentityTest, PermissionDeniedIsAProblemNotAFailure) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file; the directory cases above cover a failed read";
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
  ASSERT_EQ(::chmod(root.File("4242/cgroup").c_str(), 0), 0);
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, "python3");
  EXPECT_FALSE(id.cgroup);
  ASSERT_EQ(id.problems.size(), 1u);
  EXPECT_EQ(id.problems[0].code(), ErrorCode::kPermissionDenied);
}

TEST(ProcessIdentityTest, NothingReadableIsAnError) {
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
  for (const char* name : {"stat", "status", "comm", "cgroup"}) MakeUnreadable(root, "4242/" + std::string(name));
  auto id = IdentifyProcess(kPid, Under(root));
  ASSERT_FALSE(id);
  EXPECT_EQ(id.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(id.error().message(), HasSubstr("4242/stat"));
}

TEST(ProcessIdentityTest, GarbageIsAnErrorNamingTheFile) {
  struct Case {
    const char* file;
    std::string text;
  };
  const Case cases[] = {
      {"stat", "4242 python3 S 1\n"},                      // no parentheses
      {"stat", Stat(4243, "python3", 5)},                  // another PID
      {"stat", "4242 (python3) S 4200 4242\n"},            // too short for field 22
      {"stat", StatWithStart(kPid, "python3", "12x")},     // field 22 not a number
      {"status", "Name:\tpython3\nPid:\t4242\n"},          // no Uid:
      {"status", "Name:\tpython3\nUid:\tabc\t0\t0\t0\n"},  // Uid: not a number
      {"cgroup", "memory\n"},                              // not hierarchy:controllers:path
  };
  for (const Case& c : cases) {
    TempDir root;
    WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
    root.Write("4242/" + std::string(c.file), c.text);
    auto id = IdentifyProcess(kPid, Under(root));
    ASSERT_FALSE(id) << c.file << ": " << c.text;
    EXPECT_EQ(id.error().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_THAT(id.error().message(), HasSubstr("4242/" + std::string(c.file))) << c.text;
  }
}

// --- the real /proc ---

TEST(ProcessIdentityTest, CurrentProcessThroughTheRealProc) {
  char comm[17] = {};
  ASSERT_EQ(::prctl(PR_GET_NAME, comm, 0, 0, 0), 0);
  const auto pid = static_cast<std::uint32_t>(::getpid());
  const ProcessIdentity id = Unwrap(IdentifyProcess(pid));
  EXPECT_EQ(id.comm, std::string(comm));
  EXPECT_EQ(id.uid, ::getuid());
  EXPECT_EQ(id.user, PasswdName(::getuid()).value_or(std::to_string(::getuid())));
  ASSERT_TRUE(id.start_time_ticks);
  EXPECT_TRUE(id.cgroup);
  EXPECT_TRUE(id.problems.empty());
  // The same process keeps its start time.
  EXPECT_EQ(Unwrap(IdentifyProcess(pid)).start_time_ticks, id.start_time_ticks);
  EXPECT_EQ(id.parent_pid, static_cast<std::uint32_t>(::getppid()));
}

TEST(ProcessIdentityTest, ReadProcessStatReadsOnlyStat) {
  TempDir root;
  WriteProcess(root, kPid, "my (odd) cmd", 0, 987654, kSlurmCgroup);
  MakeUnreadable(root, std::to_string(kPid) + "/status");
  const ProcessStat stat = Unwrap(ReadProcessStat(kPid, Under(root)));
  EXPECT_EQ(stat.pid, kPid);
  EXPECT_EQ(stat.comm, "my (odd) cmd");
  EXPECT_EQ(stat.parent_pid, 4200u);
  EXPECT_EQ(stat.start_time_ticks, 987654u);
  const auto gone = ReadProcessStat(kPid + 1, Under(root));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(gone.error().message(), HasSubstr(std::to_string(kPid + 1)));
  root.Write(std::to_string(kPid) + "/stat", StatWithStart(kPid, "x", "soon"));
  const auto garbage = ReadProcessStat(kPid, Under(root));
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(garbage.error().message(), HasSubstr("/stat"));
  // The real /proc: this process's parent.
  EXPECT_EQ(Unwrap(ReadProcessStat(static_cast<std::uint32_t>(::getpid()))).parent_pid,
            static_cast<std::uint32_t>(::getppid()));
}

TEST(ProcessIdentityTest, ExitedChildIsReadableAsAZombieAndNotFoundOnceReaped) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  // Wait for the exit without reaping: the child stays a zombie.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  const auto pid = static_cast<std::uint32_t>(child);
  const ProcessIdentity zombie = Unwrap(IdentifyProcess(pid));
  EXPECT_EQ(zombie.uid, ::getuid());
  EXPECT_TRUE(zombie.start_time_ticks);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  auto gone = IdentifyProcess(pid);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(gone.error().message(), HasSubstr("process " + std::to_string(pid)));
}

// Replaces a file by a FIFO without a writer (a bind mount in a container
// can hold one where procfs has a regular file).
void MakeFifo(const TempDir& root, const std::string& name) {
  std::filesystem::remove(root.File(name));
  ASSERT_EQ(::mkfifo(root.File(name).c_str(), 0600), 0);
}

// Runs `read` on a thread; if it has not returned within 30 s (it blocks on
// a FIFO at `fifo`), releases it with a writer that closes at once and fails.
template <typename Read>
auto WithoutBlocking(const std::string& fifo, Read read) -> decltype(read()) {
  std::future<decltype(read())> done = std::async(std::launch::async, read);
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    done.wait();
    ADD_FAILURE() << "reading " << fifo << " blocked";
  }
  return done.get();
}

// A FIFO where stat, comm or cgroup belongs: that part is skipped with a
// reason naming the file and what it is, at once; the rest is read.
TEST(ProcessIdentityTest, AFifoInTheTreeIsSkippedWithAReasonNeverWaitedOn) {
  for (const char* name : {"stat", "comm", "cgroup"}) {
    SCOPED_TRACE(name);
    TempDir root;
    WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
    const std::string file = std::string("4242/") + name;
    MakeFifo(root, file);
    auto id = WithoutBlocking(root.File(file), [&] { return IdentifyProcess(kPid, Under(root)); });
    ASSERT_TRUE(id) << id.error().message();
    EXPECT_EQ(id->comm, "python3");  // from comm, or stat when comm is the FIFO
    EXPECT_EQ(id->uid, 0u);
    if (std::string(name) == "comm") {
      EXPECT_TRUE(id->problems.empty());  // stat gave the name
      continue;
    }
    ASSERT_EQ(id->problems.size(), 1u);
    EXPECT_EQ(id->problems[0].code(), ErrorCode::kIoError);
    EXPECT_THAT(id->problems[0].message(), HasSubstr(root.File(file) + " is a FIFO (named pipe), not a regular file"));
    EXPECT_EQ(id->cgroup.has_value(), std::string(name) != "cgroup");
    EXPECT_EQ(id->start_time_ticks.has_value(), std::string(name) != "stat");
  }
}

TEST(ProcessIdentityTest, ReadProcessStatOfAFifoFailsAtOnce) {
  TempDir root;
  WriteProcess(root, kPid, "python3", 0, 5, kSlurmCgroup);
  MakeFifo(root, "4242/stat");
  auto stat = WithoutBlocking(root.File("4242/stat"), [&] { return ReadProcessStat(kPid, Under(root)); });
  ASSERT_FALSE(stat);
  EXPECT_EQ(stat.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(stat.error().message(), HasSubstr("4242/stat is a FIFO (named pipe)"));
}

// A process names itself with any bytes (prctl(PR_SET_NAME)), and the kernel
// cuts a name at 15 bytes inside a character: comm is valid UTF-8 all the
// same, from comm and from stat, and the cgroup's fields too.
TEST(ProcessIdentityTest, HostileNamesBecomeValidUtf8) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string hostile = "\xE6\x97\xA5\x1b[31mev\xFF\x80il\xE6\x97";
  const std::string valid = "\xE6\x97\xA5\x1b[31mev" + fffd + fffd + "il" + fffd;
  TempDir root;
  WriteProcess(root, kPid, hostile, 0, 5, "0::/system.slice/ev\xC0\xAFil.service\n");
  const ProcessIdentity id = Unwrap(IdentifyProcess(kPid, Under(root)));
  EXPECT_EQ(id.comm, valid);
  ASSERT_TRUE(id.cgroup);
  EXPECT_EQ(id.cgroup->systemd_unit, "ev" + fffd + fffd + "il.service");
  EXPECT_EQ(Unwrap(ReadProcessStat(kPid, Under(root))).comm, valid);
  MakeUnreadable(root, "4242/comm");  // the name from stat
  EXPECT_EQ(Unwrap(IdentifyProcess(kPid, Under(root))).comm, valid);
}

}  // namespace
}  // namespace zeus::device
