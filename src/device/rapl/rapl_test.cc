// Copyright 2026 The Zeus C++ Authors.

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/rapl/rapl_counter.h"
#include "device/rapl/rapl_cpu.h"
#include "testing/fake_clock.h"
#include "testing/rapl_tree.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus::device::rapl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using zeus::testing::FakeClock;
using zeus::testing::RaplTree;
using zeus::testing::TempDir;

TEST(WrapAccumulatorTest, CountsUpWithoutWraps) {
  WrapAccumulator acc(1000);
  EXPECT_EQ(acc.Update(100), 0u);
  EXPECT_EQ(acc.Update(350), 250u);
  EXPECT_EQ(acc.Update(350), 250u);
  EXPECT_EQ(acc.wraps(), 0u);
}

TEST(WrapAccumulatorTest, OneWrapBetweenReads) {
  WrapAccumulator acc(1000);
  acc.Update(900);
  // 900 -> 1000 (100) then 0 -> 50 (50).
  EXPECT_EQ(acc.Update(50), 150u);
  EXPECT_EQ(acc.wraps(), 1u);
}

// The sequence from Zeus's own wraparound test: every decrease is one wrap.
TEST(WrapAccumulatorTest, ZeusSequenceCountsEightWraps) {
  WrapAccumulator acc(200000);
  for (std::uint64_t v : {100000, 90000, 80000, 70000, 60000, 50000, 40000, 50000, 20000, 10000}) acc.Update(v);
  EXPECT_EQ(acc.wraps(), 8u);
}

TEST(WrapAccumulatorTest, SurvivesBeyondThirtyTwoBits) {
  const std::uint64_t range = 262143328850ULL;  // a real server's range in µJ
  WrapAccumulator acc(range);
  acc.Update(0);
  std::uint64_t raw = 0;
  for (int i = 0; i < 100; ++i) {
    raw = (raw + range / 3) % range;
    acc.Update(raw);
  }
  EXPECT_EQ(acc.total_uj(), 100 * (range / 3));
}

class RaplCpuTest : public ::testing::Test {
 protected:
  CpuOptions Options() {
    CpuOptions options;
    options.powercap_root = tmp_.path();
    options.wrap_guard = false;
    options.clock = &clock_;
    return options;
  }
  TempDir tmp_;
  RaplTree tree_{tmp_.path()};
  FakeClock clock_;
};

TEST_F(RaplCpuTest, NoPowercapRootIsAnEmptySet) {
  CpuOptions options = Options();
  options.powercap_root = tmp_.File("absent");
  auto cpus = OpenCpus(options);
  ASSERT_TRUE(cpus) << cpus.error().message();
  EXPECT_TRUE((*cpus)->empty());
}

TEST_F(RaplCpuTest, FindsPackagesInOrderWithAndWithoutDram) {
  tree_.AddPackage(1, /*dram=*/false);
  tree_.AddPackage(0, /*dram=*/true);
  // A platform zone is not a CPU package.
  tmp_.Write("intel-rapl:2/name", "psys\n");
  tmp_.Write("intel-rapl:2/energy_uj", "0\n");
  tmp_.Write("intel-rapl:2/max_energy_range_uj", "1000\n");
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus) << cpus.error().message();
  ASSERT_EQ((*cpus)->size(), 2u);
  EXPECT_EQ((*cpus)->cpu(0).name(), "package-0");
  EXPECT_TRUE((*cpus)->cpu(0).has_dram());
  EXPECT_EQ((*cpus)->cpu(1).name(), "package-1");
  EXPECT_FALSE((*cpus)->cpu(1).has_dram());

  auto energy = (*cpus)->cpu(1).TotalEnergy();
  ASSERT_TRUE(energy);
  EXPECT_FALSE(energy->dram_mj.has_value());
}

TEST_F(RaplCpuTest, EnvironmentNamesTheRoot) {
  tree_.AddPackage(0, true);
  zeus::testing::ScopedEnv env("ZEUS_POWERCAP_ROOT", tmp_.path());
  CpuOptions options;
  options.wrap_guard = false;
  auto cpus = OpenCpus(options);
  ASSERT_TRUE(cpus);
  EXPECT_EQ((*cpus)->size(), 1u);
}

TEST_F(RaplCpuTest, AccumulatesAcrossWrapsOfPackageAndDram) {
  const std::uint64_t range = 1'000'000;  // 1 J
  tree_.AddPackage(0, true, range);
  tree_.SetEnergy(0, false, 900'000);
  tree_.SetEnergy(0, true, 10'000);
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  Cpu& cpu = (*cpus)->cpu(0);

  tree_.SetEnergy(0, false, 100'000);  // wrapped: +200 000 µJ
  tree_.SetEnergy(0, true, 510'000);   // +500 000 µJ
  clock_.Advance(std::chrono::milliseconds(1));
  auto e1 = cpu.TotalEnergy();
  ASSERT_TRUE(e1) << e1.error().message();
  EXPECT_DOUBLE_EQ(e1->package_mj, 200.0);
  EXPECT_DOUBLE_EQ(*e1->dram_mj, 500.0);

  tree_.SetEnergy(0, false, 50'000);   // wrapped again: +950 000 µJ
  tree_.SetEnergy(0, true, 500'000);   // wrapped: +990 000 µJ
  clock_.Advance(std::chrono::milliseconds(1));
  auto e2 = cpu.TotalEnergy();
  ASSERT_TRUE(e2);
  EXPECT_DOUBLE_EQ(e2->package_mj, 1150.0);
  EXPECT_DOUBLE_EQ(*e2->dram_mj, 1490.0);
  EXPECT_FALSE(e2->wrap_uncertain);
}

// One wrap between two reads far apart in time is still exact; a read later
// than the safe interval is flagged, since a second wrap could hide there.
TEST_F(RaplCpuTest, FarApartReadsAreCountedAndFlagged) {
  const std::uint64_t range = 262143328850ULL;
  tree_.AddPackage(0, false, range);
  tree_.SetEnergy(0, false, range - 1000);
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  Cpu& cpu = (*cpus)->cpu(0);
  // 262 kJ at the assumed 1000 W: 262 s.
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(cpu.max_safe_read_interval()).count(), 262);

  tree_.SetEnergy(0, false, 5000);
  clock_.Advance(std::chrono::seconds(200));
  auto within = cpu.TotalEnergy();
  ASSERT_TRUE(within);
  EXPECT_DOUBLE_EQ(within->package_mj, 6.0);
  EXPECT_FALSE(within->wrap_uncertain);

  tree_.SetEnergy(0, false, 2000);  // another wrap, read 10 minutes later
  clock_.Advance(std::chrono::minutes(10));
  auto late = cpu.TotalEnergy();
  ASSERT_TRUE(late);
  EXPECT_DOUBLE_EQ(late->package_mj, 6.0 + (static_cast<double>(range) - 5000 + 2000) / 1000.0);
  EXPECT_TRUE(late->wrap_uncertain);
}

TEST_F(RaplCpuTest, GuardThreadReadsAtHalfTheSafeInterval) {
  // A 10 J range at 1000 W: safe interval 10 ms, guard period 5 ms.
  const std::uint64_t range = 10'000'000;
  tree_.AddPackage(0, false, range);
  CpuOptions options = Options();
  options.wrap_guard = true;
  auto cpus = OpenCpus(options);
  ASSERT_TRUE(cpus);
  auto* set = dynamic_cast<RaplCpuSet*>(cpus->get());
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->guard_period(), std::chrono::milliseconds(5));

  // Walk the counter through two full wraps without the caller reading. Each
  // step waits until a whole guard pass began after it (two passes end), so
  // none is missed however slow the machine; the fake clock moves 3 ms per
  // step, well inside the safe interval, so no read is late.
  std::uint64_t expected_uj = 0;
  std::uint64_t raw = 0;
  for (int step = 0; step < 8; ++step) {
    raw = (raw + range / 4) % range;
    expected_uj += range / 4;
    const std::uint64_t passes = set->guard_passes();
    tree_.SetEnergy(0, false, raw);
    clock_.Advance(std::chrono::milliseconds(3));
    ASSERT_TRUE(set->WaitForGuardPasses(passes + 2, std::chrono::seconds(60))) << "the guard thread stalled";
  }
  auto energy = (*cpus)->cpu(0).TotalEnergy();
  ASSERT_TRUE(energy) << energy.error().message();
  // 8 steps of 2.5 J.
  EXPECT_DOUBLE_EQ(energy->package_mj, 20'000.0);
  EXPECT_EQ(expected_uj, 20'000'000u);
  EXPECT_FALSE(energy->wrap_uncertain);
}

// The guard's own late read must reach the caller: the window that spans it
// is uncertain, although the caller's read came soon after the guard's.
TEST_F(RaplCpuTest, LateGuardReadIsReportedByTheNextCallerRead) {
  tree_.AddPackage(0, false);  // 262 kJ: safe interval 262 s
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  auto& cpu = dynamic_cast<RaplCpu&>((*cpus)->cpu(0));
  ASSERT_TRUE(cpu.TotalEnergy());

  clock_.Advance(std::chrono::seconds(300));
  tree_.SetEnergy(0, false, 7000);
  cpu.Poll();  // the guard, late
  clock_.Advance(std::chrono::seconds(1));
  tree_.SetEnergy(0, false, 9000);
  auto spanning = cpu.TotalEnergy();
  ASSERT_TRUE(spanning) << spanning.error().message();
  EXPECT_DOUBLE_EQ(spanning->package_mj, 9.0);
  EXPECT_TRUE(spanning->wrap_uncertain);
  EXPECT_EQ(spanning->late_reads, 1u);

  // Reported once: the next window does not span it.
  clock_.Advance(std::chrono::seconds(1));
  auto next = cpu.TotalEnergy();
  ASSERT_TRUE(next);
  EXPECT_FALSE(next->wrap_uncertain);
}

// The same through the guard thread itself, driven by the fake clock.
TEST_F(RaplCpuTest, LateReadOfTheGuardThreadIsNotLost) {
  const std::uint64_t range = 10'000'000;  // safe interval 10 ms, guard period 5 ms
  tree_.AddPackage(0, false, range);
  CpuOptions options = Options();
  options.wrap_guard = true;
  auto cpus = OpenCpus(options);
  ASSERT_TRUE(cpus);
  auto* set = dynamic_cast<RaplCpuSet*>(cpus->get());
  ASSERT_NE(set, nullptr);
  Cpu& cpu = (*cpus)->cpu(0);
  ASSERT_TRUE(cpu.TotalEnergy());

  const std::uint64_t passes = set->guard_passes();
  clock_.Advance(std::chrono::seconds(1));  // the next guard read is late
  ASSERT_TRUE(set->WaitForGuardPasses(passes + 2, std::chrono::seconds(60))) << "the guard thread stalled";
  auto spanning = cpu.TotalEnergy();
  ASSERT_TRUE(spanning);
  EXPECT_TRUE(spanning->wrap_uncertain);
}

TEST(IsCounterResetTest, TheRuleAtItsBoundary) {
  // A 100 J range at 1000 W: safe interval 100 ms. 60 J -> 10 J as a wrap is
  // 40 + 10 = 50 J; at 1000 W that takes 50 ms, of which 10 ms is the update
  // slack: 40 ms since the previous read is the last plausible gap.
  const std::uint64_t range = 100'000'000;
  const auto interval = std::chrono::milliseconds(100);
  EXPECT_TRUE(IsCounterReset(60'000'000, 10'000'000, std::chrono::milliseconds(39), range, interval));
  EXPECT_FALSE(IsCounterReset(60'000'000, 10'000'000, std::chrono::milliseconds(40), range, interval));
  EXPECT_FALSE(IsCounterReset(60'000'000, 10'000'000, std::chrono::seconds(5), range, interval));
  // The case: 1 000 000 -> 500 µJ in 0.3 s on a 262 kJ counter
  // would be 262 142 J in 0.3 s, about 874 kW.
  EXPECT_TRUE(IsCounterReset(1'000'000, 500, std::chrono::milliseconds(300), 262143328850ULL,
                             std::chrono::nanoseconds(262143328850LL)));
  // A real wrap: 0.2 J in 1 ms on a 1 J counter at 1000 W (interval 1 ms).
  EXPECT_FALSE(IsCounterReset(900'000, 100'000, std::chrono::milliseconds(1), 1'000'000,
                              std::chrono::milliseconds(1)));
}

TEST_F(RaplCpuTest, ImplausibleDecreaseIsAResetNotEnergy) {
  tree_.AddPackage(0, false);  // 262 kJ at 1000 W
  tree_.SetEnergy(0, false, 1'000'000);
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  Cpu& cpu = (*cpus)->cpu(0);

  clock_.Advance(std::chrono::milliseconds(300));
  tree_.SetEnergy(0, false, 500);
  auto reset = cpu.TotalEnergy();
  ASSERT_FALSE(reset) << "read as " << reset->package_mj << " mJ";
  EXPECT_EQ(reset.error().code(), ErrorCode::kIoError);
  EXPECT_THAT(reset.error().message(), HasSubstr(tree_.EnergyPath(0, false)));
  EXPECT_THAT(reset.error().message(), HasSubstr("reset"));

  // Later reads count on from the value after the reset: 500 -> 2500 µJ.
  clock_.Advance(std::chrono::seconds(1));
  tree_.SetEnergy(0, false, 2'500);
  auto after = cpu.TotalEnergy();
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_DOUBLE_EQ(after->package_mj, 2.0);
  EXPECT_FALSE(after->wrap_uncertain);
  EXPECT_EQ(after->counter_resets, 1u);
  EXPECT_EQ(after->late_reads, 0u);
}

TEST_F(RaplCpuTest, ResetSeenByTheGuardFailsTheNextCallerReadOnce) {
  tree_.AddPackage(0, true);
  tree_.SetEnergy(0, true, 5'000'000);
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  auto& cpu = dynamic_cast<RaplCpu&>((*cpus)->cpu(0));
  ASSERT_TRUE(cpu.TotalEnergy());

  clock_.Advance(std::chrono::milliseconds(100));
  tree_.SetEnergy(0, true, 1'000);  // DRAM reset
  cpu.Poll();
  clock_.Advance(std::chrono::milliseconds(100));
  tree_.SetEnergy(0, true, 3'000);
  auto spanning = cpu.TotalEnergy();
  ASSERT_FALSE(spanning);
  EXPECT_THAT(spanning.error().message(), HasSubstr(tree_.EnergyPath(0, true)));

  auto next = cpu.TotalEnergy();
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_DOUBLE_EQ(*next->dram_mj, 2.0);  // 1000 -> 3000 µJ
}

TEST_F(RaplCpuTest, MissingRangeFileIsListedWithAnErrorNamingIt) {
  tree_.AddPackage(0, false);
  std::filesystem::remove(tmp_.File("intel-rapl:0/max_energy_range_uj"));
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus) << cpus.error().message();
  ASSERT_EQ((*cpus)->size(), 1u);
  EXPECT_EQ((*cpus)->cpu(0).name(), "package-0");
  auto energy = (*cpus)->cpu(0).TotalEnergy();
  ASSERT_FALSE(energy);
  EXPECT_EQ(energy.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(energy.error().message(), HasSubstr("intel-rapl:0/max_energy_range_uj"));
}

// One bad package of each kind beside a good one: the good one is served,
// each bad one is listed with its own reason.
TEST_F(RaplCpuTest, BadPackagesDoNotStopTheOthers) {
  for (unsigned int p = 0; p < 6; ++p) tree_.AddPackage(p, /*dram=*/p == 5);
  tmp_.Write("intel-rapl:0/max_energy_range_uj", "lots\n");
  std::filesystem::remove(tree_.EnergyPath(2, false));
  std::filesystem::create_directory(tree_.EnergyPath(2, false));  // a directory in place of the file
  std::filesystem::remove(tree_.EnergyPath(3, false));
  std::filesystem::remove(tmp_.File("intel-rapl:4/name"));
  std::filesystem::create_directory(tmp_.File("intel-rapl:4/name"));
  tmp_.Write("intel-rapl:5/intel-rapl:5:1/max_energy_range_uj", "\n");
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus) << cpus.error().message();
  ASSERT_EQ((*cpus)->size(), 6u);
  tree_.SetEnergy(1, false, 4000);
  clock_.Advance(std::chrono::seconds(1));

  auto good = (*cpus)->cpu(1).TotalEnergy();
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_DOUBLE_EQ(good->package_mj, 4.0);

  struct Bad {
    std::size_t index;
    std::string name;
    std::string message;
  };
  for (const Bad& bad : {Bad{0, "package-0", "intel-rapl:0/max_energy_range_uj: expected an unsigned integer"},
                         Bad{2, "package-2", "intel-rapl:2/energy_uj: cannot be read: Is a directory"},
                         Bad{3, "package-3", "intel-rapl:3/energy_uj: no such file"},
                         Bad{4, "intel-rapl:4", "intel-rapl:4/name"},
                         Bad{5, "package-5", "intel-rapl:5:1/max_energy_range_uj: expected an unsigned integer"}}) {
    SCOPED_TRACE(bad.name);
    EXPECT_EQ((*cpus)->cpu(bad.index).name(), bad.name);
    auto energy = (*cpus)->cpu(bad.index).TotalEnergy();
    ASSERT_FALSE(energy);
    EXPECT_THAT(energy.error().message(), HasSubstr(bad.message));
    EXPECT_THAT(energy.error().message(), Not(HasSubstr("Linux 5.10")));
  }
}

TEST(UnreadableCounterErrorTest, GivesTheReasonForEachCause) {
  const std::string path = "/sys/class/powercap/intel-rapl:0/energy_uj";
  const Error denied = ErrorFromErrno(EACCES, path);

  const Error user = UnreadableCounterError(denied, path, /*is_root=*/false);
  EXPECT_EQ(user.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(user.message(), ::testing::StartsWith(path + ": permission denied"));
  EXPECT_THAT(user.message(), HasSubstr("readable by root only"));
  EXPECT_THAT(user.message(), HasSubstr("Linux 5.10"));
  EXPECT_THAT(user.message(), HasSubstr("sudo chmod a+r"));

  const Error root = UnreadableCounterError(denied, path, /*is_root=*/true);
  EXPECT_EQ(root.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(root.message(), HasSubstr("although running as root"));
  EXPECT_THAT(root.message(), HasSubstr("container"));
  EXPECT_THAT(root.message(), Not(HasSubstr("readable by root only")));
  EXPECT_THAT(root.message(), Not(HasSubstr("run as root")));

  const Error eperm = UnreadableCounterError(ErrorFromErrno(EPERM, path), path, /*is_root=*/false);
  EXPECT_THAT(eperm.message(), HasSubstr("readable by root only"));

  for (bool is_root : {false, true}) {
    const Error missing = UnreadableCounterError(ErrorFromErrno(ENOENT, path), path, is_root);
    EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
    EXPECT_THAT(missing.message(), HasSubstr(path + ": no such file"));
    EXPECT_THAT(missing.message(), Not(HasSubstr("permission")));
  }

  const Error directory = UnreadableCounterError(ErrorFromErrno(EISDIR, path), path, true);
  EXPECT_EQ(directory.message(), path + ": cannot be read: Is a directory");

  const Error garbage(ErrorCode::kIoError, path + ": expected an unsigned integer, found \"x\"");
  EXPECT_EQ(UnreadableCounterError(garbage, path, true).message(), garbage.message());
}

TEST_F(RaplCpuTest, GarbageCounterIsAnErrorNamingTheFile) {
  tree_.AddPackage(0, false);
  auto cpus = OpenCpus(Options());
  ASSERT_TRUE(cpus);
  tmp_.Write("intel-rapl:0/energy_uj", "lots\n");
  auto energy = (*cpus)->cpu(0).TotalEnergy();
  ASSERT_FALSE(energy);
  EXPECT_THAT(energy.error().message(), HasSubstr("intel-rapl:0/energy_uj: expected an unsigned integer"));
}

// Runs `body` where energy_uj files of mode 0400 owned by root are
// unreadable: as root, in a child that dropped to "nobody"; otherwise here.
// Returns the child's verdict (true = body's expectations held).
bool RunUnprivileged(const std::function<bool()>& body) {
  if (::geteuid() != 0) return body();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_F(RaplCpuTest, UnreadableCounterNamesTheFileAndTheFix) {
  tree_.AddPackage(0, true);
  ::chmod(tmp_.path().c_str(), 0755);
  ::chmod(tree_.EnergyPath(0, false).c_str(), 0400);
  ::chmod(tree_.EnergyPath(0, true).c_str(), 0400);
  if (::geteuid() != 0) ::chmod(tree_.EnergyPath(0, false).c_str(), 0000);
  const std::string energy_path = tree_.EnergyPath(0, false);
  const std::string root = tmp_.path();
  EXPECT_TRUE(RunUnprivileged([&] {
    CpuOptions options;
    options.powercap_root = root;
    options.wrap_guard = false;
    auto cpus = OpenCpus(options);
    // The package is still listed; reading it explains the problem.
    if (!cpus || (*cpus)->size() != 1) return false;
    auto energy = (*cpus)->cpu(0).TotalEnergy();
    if (energy) return false;
    const std::string& m = energy.error().message();
    return energy.error().code() == ErrorCode::kPermissionDenied && m.find(energy_path) != std::string::npos &&
           m.find("Linux 5.10") != std::string::npos && m.find("chmod") != std::string::npos;
  }));
}

}  // namespace
}  // namespace zeus::device::rapl
