// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/command_override.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/temp_dir.h"

namespace zeus::zeusd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SplitWordsTest, QuotesAndEscapes) {
  EXPECT_THAT(SplitWords("nvidia-smi  -i {gpu_id} -pl {power_limit_w}").value(),
              ElementsAre("nvidia-smi", "-i", "{gpu_id}", "-pl", "{power_limit_w}"));
  EXPECT_THAT(SplitWords(R"(sh -c 'echo "a b"' x\ y "q\"z")").value(),
              ElementsAre("sh", "-c", "echo \"a b\"", "x y", "q\"z"));
  EXPECT_FALSE(SplitWords("echo 'open"));
  EXPECT_FALSE(SplitWords("echo \"open"));
  EXPECT_FALSE(SplitWords("echo \\"));
  EXPECT_FALSE(SplitWords("   "));
}

TEST(OverridesParseTest, AllOperationsAndDefaults) {
  auto o = GpuCommandOverrides::Parse(R"(
[set_power_limit]
commands = ["tool -i {gpu_id} -pl {power_limit_w}", "tool --mw={power_limit_mw}"]
error_pattern = "(?i)error"
timeout_s = 5
[set_persistence_mode]
commands = ["tool -pm {enabled} -i {gpu_id}"]
[set_gpu_locked_clocks]
commands = ["tool -lgc {min_clock_mhz},{max_clock_mhz}"]
[reset_gpu_locked_clocks]
commands = ["tool -rgc"]
[set_mem_locked_clocks]
commands = ["tool -lmc {min_clock_mhz},{max_clock_mhz}"]
[reset_mem_locked_clocks]
commands = ["tool -rmc"]
[reset_locked_clocks]
commands = ["tool -rgc", "tool -rmc"]
)",
                                      "test.toml");
  ASSERT_TRUE(o) << o.error().message();
  for (GpuOp op : kAllGpuOps) EXPECT_NE(o->Find(op), nullptr) << GpuOpName(op);
  const OverrideSpec* pl = o->Find(GpuOp::kSetPowerLimit);
  EXPECT_EQ(pl->timeout.count(), 5);
  EXPECT_TRUE(pl->ErrorPatternMatches("An ERROR here"));
  EXPECT_FALSE(pl->ErrorPatternMatches("all fine"));
  EXPECT_FALSE(o->Find(GpuOp::kResetLockedClocks)->ErrorPatternMatches("error"));  // no pattern
  EXPECT_EQ(o->Find(GpuOp::kSetPersistenceMode)->timeout.count(), 60);
  GpuOpArgs args;
  args.power_limit_mw = 250'999;
  EXPECT_THAT(GpuCommandOverrides::Expand(*pl, 3, args),
              ElementsAre(ElementsAre("tool", "-i", "3", "-pl", "250"), ElementsAre("tool", "--mw=250999")));
  args.enabled = true;
  EXPECT_THAT(GpuCommandOverrides::Expand(*o->Find(GpuOp::kSetPersistenceMode), 1, args),
              ElementsAre(ElementsAre("tool", "-pm", "1", "-i", "1")));
  args.min_clock_mhz = 900;
  args.max_clock_mhz = 1500;
  EXPECT_THAT(GpuCommandOverrides::Expand(*o->Find(GpuOp::kSetGpuLockedClocks), 0, args),
              ElementsAre(ElementsAre("tool", "-lgc", "900,1500")));
}

TEST(OverridesParseTest, Rejections) {
  const std::pair<const char*, const char*> cases[] = {
      {"[set_power_cap]\ncommands=[\"x\"]", "unknown operation"},
      {"[set_power_limit]\ncommands=[\"x\"]\nretries=2", "unknown field 'retries'"},
      {"[set_power_limit]\ncommands=[]", "at least one command"},
      {"[set_power_limit]\nerror_pattern=\"x\"", "at least one command"},
      {"[set_power_limit]\ncommands=[\"x\"]\nerror_pattern=\"(\"", "not a valid RE2 regular expression"},
      {"[set_power_limit]\ncommands=[\"x\"]\nerror_pattern=\"(a)\\\\1\"", "not a valid RE2"},  // no backreferences
      {"[set_power_limit]\ncommands=[\"x\"]\nerror_pattern=\"((a{1000}){1000}){1000}\"", "not a valid RE2"},
      {"[set_power_limit]\ncommands=[\"x {enabled}\"]", "unknown placeholder {enabled}"},
      {"[reset_locked_clocks]\ncommands=[\"x {power_limit_mw}\"]", "unknown placeholder"},
      {"[set_power_limit]\ncommands=[\"x {gpu_id\"]", "stray '{'"},
      {"[set_power_limit]\ncommands=[\"x gpu_id}\"]", "stray '}'"},
      {"[set_power_limit]\ncommands=[\"x 'open\"]", "unterminated"},
      {"[set_power_limit]\ncommands=[\"x\"]\ntimeout_s=0", "timeout_s"},
      {"[set_power_limit]\ncommands=[\"x\"]\ntimeout_s=1.5", "timeout_s"},
      {"[set_power_limit]\ncommands=\"x\"", "array of strings"},
      {"set_power_limit = 3", "must be a table"},
      {"[set_power_limit\n", "test.toml:"},
      {"[set_power_limit]\ncommands=[\"x\"]\n#\x01", "control character 0x01"},
      {"[set_power_limit]\ncommands=[\"x \xc3\xa9\"]\n", "non-ASCII byte 0xc3"},
  };
  for (const auto& [text, expected] : cases) {
    auto o = GpuCommandOverrides::Parse(text, "test.toml");
    ASSERT_FALSE(o) << text;
    EXPECT_EQ(o.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(o.error().message(), HasSubstr(expected)) << text;
  }
}

TEST(OverridesLoadTest, WorldWritableRefusedGroupWritableAccepted) {
  zeus::testing::TempDir dir;
  const std::string path = dir.Write("o.toml", "[set_power_limit]\ncommands=[\"true\"]\n");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  auto refused = GpuCommandOverrides::Load(path, ::geteuid());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(refused.error().message(), HasSubstr("world-writable"));
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  EXPECT_TRUE(GpuCommandOverrides::Load(path, ::geteuid()));
}

TEST(OverridesLoadTest, OwnedBySomeoneElseRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  zeus::testing::TempDir dir;
  const std::string path = dir.Write("o.toml", "[set_power_limit]\ncommands=[\"true\"]\n");
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  auto refused = GpuCommandOverrides::Load(path, 0);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("owned by uid 65534"));
  EXPECT_TRUE(GpuCommandOverrides::Load(path, 65534));  // the daemon's own user
  EXPECT_FALSE(GpuCommandOverrides::Load(dir.File("missing.toml"), 0));
}

TEST(RunCommandTest, ExitCodesOutputAndSpawnFailure) {
  auto ok = RunCommand({"sh", "-c", "echo out; echo err >&2"}, std::chrono::seconds(30));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->exit_code, 0);
  EXPECT_EQ(ok->output, "out\nerr\n");
  auto failed = RunCommand({"sh", "-c", "exit 3"}, std::chrono::seconds(30));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->exit_code, 3);
  auto missing = RunCommand({"/nonexistent/tool"}, std::chrono::seconds(30));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("No such file"));
}

TEST(RunCommandTest, NoShellIsInvolved) {
  auto r = RunCommand({"echo", "$HOME;", "`id`", "*"}, std::chrono::seconds(30));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->output, "$HOME; `id` *\n");
}

TEST(RunCommandTest, TimeoutKillsTheProcessGroup) {
  zeus::testing::TempDir dir;
  const std::string marker = dir.File("survived");
  // The grandchild would write the marker after 2 s unless the group is killed.
  auto r = RunCommand({"sh", "-c", "(sleep 2; touch " + marker + ") & sleep 30"}, std::chrono::milliseconds(200));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + SIGKILL);
  ::sleep(3);
  EXPECT_FALSE(std::ifstream(marker).good());
}

TEST(RunCommandTest, LeftoverChildHoldingThePipeDoesNotHoldUs) {
  const auto start = std::chrono::steady_clock::now();
  // setsid puts the leftover outside the group; it keeps stdout open for 20 s.
  auto r = RunCommand({"sh", "-c", "setsid sleep 20 & echo done"}, std::chrono::seconds(10));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(OverridesRunTest, FailuresStopAtTheFirstAndPatternsFailExitZero) {
  zeus::testing::TempDir dir;
  const std::string log = dir.File("log");
  auto o = GpuCommandOverrides::Parse(
      "[set_power_limit]\ncommands=[\"sh -c 'echo pl{power_limit_w}g{gpu_id} >> " + log +
          "'\", \"sh -c 'exit 4'\", \"sh -c 'echo never >> " + log + "'\"]\n"
          "[set_persistence_mode]\ncommands=[\"echo Error: nope\"]\nerror_pattern=\"^Error\"\n",
      "t.toml");
  ASSERT_TRUE(o) << o.error().message();
  zeus::testing::FakeClock clock;
  zeus::testing::FakeGpu gpu({}, clock);
  GpuOpArgs args;
  args.power_limit_mw = 150'000;
  Status pl = o->Run(gpu, 2, GpuOp::kSetPowerLimit, args);
  ASSERT_FALSE(pl);
  EXPECT_EQ(pl.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(pl.error().message(), HasSubstr("exit code 4"));
  EXPECT_EQ(ReadFile(log), "pl150g2\n");
  EXPECT_TRUE(gpu.power_limit_calls().empty());  // the driver was not called
  Status pm = o->Run(gpu, 0, GpuOp::kSetPersistenceMode, args);
  ASSERT_FALSE(pm);
  EXPECT_THAT(pm.error().message(), HasSubstr("error_pattern"));
  // Not overridden: the driver.
  ASSERT_TRUE(o->Run(gpu, 0, GpuOp::kResetGpuLockedClocks, args));
}

// Issue 20: std::regex recursed once per character and overflowed the stack
// (SIGSEGV in a root daemon) on these patterns against long outputs.
TEST(OverridesRunTest, PatternsThatBacktrackHeavilyMatchLongOutputsSafely) {
  struct Case {
    std::string pattern;
    bool fails;
  };
  for (const Case& c : {Case{"(.|\\n)*zzz", false}, Case{"[\\s\\S]*zzz", false}, Case{"(\\d+\\s)+zzz", false},
                        Case{"(.|\\n)*9999", true}, Case{"(?s)^.*\\b2999\\n", true}, Case{"((a|a)*)*b", false}}) {
    auto o = GpuCommandOverrides::Parse(
        "[set_power_limit]\ncommands=[\"seq 1 30000\"]\nerror_pattern='" + c.pattern + "'\n", "t.toml");
    ASSERT_TRUE(o) << c.pattern << ": " << o.error().message();
    zeus::testing::FakeClock clock;
    zeus::testing::FakeGpu gpu({}, clock);
    GpuOpArgs args;
    args.power_limit_mw = 150'000;
    Status done = o->Run(gpu, 0, GpuOp::kSetPowerLimit, args);
    EXPECT_EQ(!done, c.fails) << c.pattern;
    if (!done) {
      EXPECT_THAT(done.error().message(), HasSubstr("matching error_pattern")) << c.pattern;
    }
  }
}

TEST(OverridesRunTest, NotOverriddenOperationsGoToTheDriver) {
  auto o = GpuCommandOverrides::Parse("[set_persistence_mode]\ncommands=[\"true\"]\n", "t.toml");
  ASSERT_TRUE(o);
  zeus::testing::FakeClock clock;
  zeus::testing::FakeGpu gpu({}, clock);
  GpuOpArgs args;
  args.power_limit_mw = 150'000;
  ASSERT_TRUE(o->Run(gpu, 0, GpuOp::kSetPowerLimit, args));
  EXPECT_THAT(gpu.power_limit_calls(), ElementsAre(150'000u));
}

}  // namespace
}  // namespace zeus::zeusd
