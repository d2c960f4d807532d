// Copyright 2026 The Zeus C++ Authors.
//
// Every command's errors, as a user meets them: the real `zeus` and
// `zeus-emulated-train` binaries given bad input. Each bad input must give
// exactly one line on stderr, `error: ...`, that names the bad word or flag,
// and the exit code of docs/architecture.md's table: 2 for anything wrong on
// the command line (path flags included), 1 for a write that fails later.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"
#include "testing/reference_data.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using json = nlohmann::json;
using testing::ProcessResult;

const std::string kTraceDir = std::string(ZEUS_SHARED_DIR) + "/traces/zeus-nsdi23";

// Tests that need the traces pass --trace-dir. Elsewhere ZEUS_TRACE_DIR names
// no directory, so that a binary without a flag check fails fast on the
// traces instead of running (a missing cap would otherwise run for hours).
ProcessResult Zeus(std::vector<std::string> args) {
  args.insert(args.begin(), ZEUS_TEST_CLI_PATH);
  return testing::RunProcess(args, {{"ZEUS_TRACE_DIR", "/nonexistent/zeus-traces"}});
}

// No GPUs unless `env` names an NVML library: a binary without a flag check
// then stops at once instead of training on whatever GPUs the machine has.
ProcessResult Train(std::vector<std::string> args, std::map<std::string, std::optional<std::string>> env = {}) {
  args.insert(args.begin(), ZEUS_TEST_TRAIN_PATH);
  env.emplace("ZEUS_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  return testing::RunProcess(args, env);
}

// One line on stderr, "error: ...", containing every one of `words`, and the
// exit code `code`.
void ExpectOneLineError(const ProcessResult& r, const std::vector<std::string>& words, int code = 2) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_THAT(r.err, StartsWith("error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
  for (const std::string& w : words) EXPECT_THAT(r.err, HasSubstr(w));
  // No range written as 1.79769e+308, no CLI11 boilerplate.
  EXPECT_THAT(r.err, Not(HasSubstr("e+308")));
  EXPECT_THAT(r.err, Not(HasSubstr("Run with --help")));
}

// --- Parse errors, handled once in zeus's main for every subcommand. ---

TEST(CliErrorsTest, UnknownCommandIsNamedWithTheList) {
  const ProcessResult r = Zeus({"bogus"});
  ExpectOneLineError(r, {"unknown command 'bogus'", "info, simulate, reproduce, monitor, bso-server", "zeus --help"});
}

// --help does not hide an unknown command: CLI11 alone prints the top-level
// help and exits 0.
TEST(CliErrorsTest, HelpAfterAnUnknownCommandNamesIt) {
  const ProcessResult r = Zeus({"bogus", "--help"});
  ExpectOneLineError(r, {"unknown command 'bogus'", "info, simulate, reproduce, monitor, bso-server", "zeus --help"});
  EXPECT_EQ(r.out, "");
  ExpectOneLineError(Zeus({"--help", "bogus"}), {"unknown command 'bogus'"});
  const ProcessResult help = Zeus({"info", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_THAT(help.out, HasSubstr("zeus info"));
}

TEST(CliErrorsTest, NoCommandListsTheCommands) {
  ExpectOneLineError(Zeus({}), {"needs a command", "info, simulate, reproduce, monitor, bso-server"});
}

TEST(CliErrorsTest, UnknownFlagIsNamedWithItsCommand) {
  ExpectOneLineError(Zeus({"--bogus"}), {"unknown flag '--bogus'", "zeus --help"});
  ExpectOneLineError(Zeus({"info", "--bogus"}), {"unknown flag '--bogus' for zeus info", "zeus info --help"});
  ExpectOneLineError(Zeus({"simulate", "--bogus=3"}), {"unknown flag '--bogus' for zeus simulate"});
  ExpectOneLineError(Zeus({"simulate", "--bogus", "3"}), {"unknown flag '--bogus' for zeus simulate"});
  ExpectOneLineError(Zeus({"reproduce", "-x"}), {"unknown flag '-x' for zeus reproduce"});
  ExpectOneLineError(Zeus({"bso-server", "--bogus"}), {"unknown flag '--bogus' for zeus bso-server"});
  ExpectOneLineError(Zeus({"monitor", "power", "--bogus"}), {"unknown flag '--bogus' for zeus monitor power"});
}

TEST(CliErrorsTest, ExtraArgumentIsNamed) {
  ExpectOneLineError(Zeus({"info", "extra"}), {"unexpected argument 'extra' for zeus info"});
  ExpectOneLineError(Zeus({"simulate", "v100"}), {"unexpected argument 'v100' for zeus simulate"});
}

TEST(CliErrorsTest, MissingValueNamesTheFlag) {
  ExpectOneLineError(Zeus({"simulate", "--seed"}), {"--seed needs a value", "zeus simulate --help"});
  ExpectOneLineError(Zeus({"reproduce", "--seeds"}), {"--seeds needs a value"});
}

TEST(CliErrorsTest, ValueThatIsNotANumberIsNamed) {
  ExpectOneLineError(Zeus({"simulate", "--seed", "abc"}), {"--seed must be a whole number (got 'abc')"});
  ExpectOneLineError(Zeus({"simulate", "--recurrences", "1.5"}), {"--recurrences must be a whole number (got '1.5')"});
  ExpectOneLineError(Zeus({"simulate", "--eta", "half"}), {"--eta must be a number (got 'half')"});
  ExpectOneLineError(Zeus({"simulate", "--beta", "inf"}), {"--beta must be a finite number greater than 0 (got inf)"});
  ExpectOneLineError(Zeus({"simulate", "--target-metric", "nan"}), {"--target-metric must be a finite number (got nan)"});
}

// --- Ranges, as a person writes them. ---

TEST(CliErrorsTest, RangesReadAsAPersonWritesThem) {
  ExpectOneLineError(Zeus({"simulate", "--eta", "-1"}), {"--eta must be between 0 and 1 (got -1)"});
  ExpectOneLineError(Zeus({"simulate", "--eta", "1.5"}), {"--eta must be between 0 and 1 (got 1.5)"});
  ExpectOneLineError(Zeus({"simulate", "--beta", "0"}), {"--beta must be greater than 0 (got 0)"});
  ExpectOneLineError(Zeus({"simulate", "--recurrences", "-1"}), {"--recurrences must be between 0 and 10000000 (got -1)"});
  ExpectOneLineError(Zeus({"simulate", "--window", "-3"}), {"--window must be at least 0 (got -3)"});
  ExpectOneLineError(Zeus({"simulate", "--max-epochs", "0"}), {"--max-epochs must be at least 1 (got 0)"});
  ExpectOneLineError(Zeus({"simulate", "--default-batch-size", "-8"}), {"--default-batch-size must be at least 1 (got -8)"});
  ExpectOneLineError(Zeus({"reproduce", "--eta", "2"}), {"--eta must be between 0 and 1 (got 2)"});
  ExpectOneLineError(Zeus({"reproduce", "--jobs", "0"}), {"--jobs must be between 1 and 1024 (got 0)"});
}

// --- Negative and oversized integers are rejected, never wrapped. ---

TEST(CliErrorsTest, NegativeOrOversizedIntegersAreRejected) {
  // Before: --seed -1 ran as seed 18446744073709551615.
  ExpectOneLineError(Zeus({"simulate", "--seed", "-1"}), {"--seed must be at least 0 (got -1)"});
  ExpectOneLineError(Zeus({"simulate", "--seed", "18446744073709551616"}),
                     {"--seed must be at most 18446744073709551615 (got 18446744073709551616)"});
  ExpectOneLineError(Zeus({"simulate", "--max-epochs", "2147483648"}),
                     {"--max-epochs must be at most 2147483647 (got 2147483648)"});
  ExpectOneLineError(Zeus({"simulate", "--window", "99999999999999999999999"}),
                     {"--window must be at most 2147483647 (got 99999999999999999999999)"});
  ExpectOneLineError(Zeus({"reproduce", "--seeds", "-1"}), {"--seeds: '-1' is not a seed"});
  ExpectOneLineError(Zeus({"reproduce", "--seeds", "18446744073709551616"}), {"--seeds: '18446744073709551616'"});
}

// zeus bso-server: every integer flag in IntegerFlag's words, the range as a
// person writes it (CLI11's own check printed 0 to 1.79769e+308 in 300
// digits). "--listen nonsense" makes a binary without a flag check fail fast
// instead of serving.
ProcessResult BsoServer(std::vector<std::string> args) {
  args.insert(args.begin(), "bso-server");
  args.insert(args.end(), {"--listen", "nonsense"});
  return Zeus(args);
}

TEST(CliErrorsTest, BsoServerRangesAndSigns) {
  ExpectOneLineError(BsoServer({"--threads", "-1"}), {"--threads must be between 0 and 1024 (got -1)"});
  ExpectOneLineError(BsoServer({"--threads", "100000"}), {"--threads must be between 0 and 1024 (got 100000)"});
  ExpectOneLineError(BsoServer({"--max-connections", "0"}), {"--max-connections must be between 1 and 65536 (got 0)"});
  ExpectOneLineError(BsoServer({"--max-requests-in-flight", "99999999999999999999"}),
                     {"--max-requests-in-flight must be between 1 and 65536 (got 99999999999999999999)"});
  ExpectOneLineError(BsoServer({"--max-body-bytes", "-1"}), {"--max-body-bytes must be between 1 and 67108864 (got -1)"});
  ExpectOneLineError(BsoServer({"--max-body-bytes", "1000000000000"}),
                     {"--max-body-bytes must be between 1 and 67108864 (got 1000000000000)"});
  ExpectOneLineError(BsoServer({"--request-timeout-ms", "0"}),
                     {"--request-timeout-ms must be between 1 and 3600000 (got 0)"});
  ExpectOneLineError(BsoServer({"--request-timeout-ms", "99999999999"}),
                     {"--request-timeout-ms must be between 1 and 3600000 (got 99999999999)"});
  ExpectOneLineError(BsoServer({"--shutdown-grace-ms", "-1"}),
                     {"--shutdown-grace-ms must be between 0 and 3600000 (got -1)"});
  ExpectOneLineError(BsoServer({"--exploration-timeout", "-5"}),
                     {"--exploration-timeout must be between 0 and 31536000 (got -5)"});
  // Seconds whose microseconds would overflow the service's timestamps.
  ExpectOneLineError(BsoServer({"--exploration-timeout", "9223372036854775807"}),
                     {"--exploration-timeout must be between 0 and 31536000 (got 9223372036854775807)"});
  ExpectOneLineError(BsoServer({"--log-level", "loud"}),
                     {"--log-level must be one of trace, debug, info, warn, error, off (got 'loud')"});
}

// zeus monitor and zeus monitor power: the same words as every command.
TEST(CliErrorsTest, MonitorRangesAndSigns) {
  ExpectOneLineError(Zeus({"monitor", "--gpus", "-1", "--", "true"}), {"--gpus must be at least 0 (got -1)"});
  ExpectOneLineError(Zeus({"monitor", "--gpus", "0,-1", "--", "true"}), {"--gpus must be at least 0 (got -1)"});
  ExpectOneLineError(Zeus({"monitor", "--gpus", "99999999999999999999", "--", "true"}),
                     {"--gpus must be at most 4294967295 (got 99999999999999999999)"});
  ExpectOneLineError(Zeus({"monitor", "--gpus", "0,x", "--", "true"}), {"--gpus must be a whole number (got 'x')"});
  ExpectOneLineError(Zeus({"monitor", "--gpus", "0,,1", "--", "true"}),
                     {"--gpus must be GPU indices separated by commas (got '0,,1')"});
  // Before: clamped to 9223372036854775807 and reported as that.
  ExpectOneLineError(Zeus({"monitor", "--interval-ms", "99999999999999999999", "--", "true"}),
                     {"--interval-ms must be between 1 and 60000 (got 99999999999999999999)"});
  ExpectOneLineError(Zeus({"monitor", "--kill-after", "1e308", "--", "true"}),
                     {"--kill-after must be between 0 and 86400 (got 1e308)"});
  ExpectOneLineError(Zeus({"monitor", "--kill-after", "nan", "--", "true"}),
                     {"--kill-after must be a finite number between 0 and 86400 (got nan)"});
  ExpectOneLineError(Zeus({"monitor", "power", "--count", "-1"}), {"--count must be between 0 and 1000000000 (got -1)"});
  ExpectOneLineError(Zeus({"monitor", "power", "--count", "1.5"}), {"--count must be a whole number (got '1.5')"});
  ExpectOneLineError(Zeus({"monitor", "power", "--interval-ms", "0"}),
                     {"--interval-ms must be between 1 and 60000 (got 0)"});
  ExpectOneLineError(Zeus({"monitor", "power", "--gpus", "-1"}), {"--gpus must be at least 0 (got -1)"});
}

// A flag given a value is an error: CLI11 took --json=3 as true.
TEST(CliErrorsTest, FlagsTakeNoValue) {
  ExpectOneLineError(Zeus({"simulate", "--json=3"}), {"--json takes no value", "see zeus simulate --help"});
  ExpectOneLineError(Zeus({"info", "--json=0"}), {"--json takes no value", "see zeus info --help"});
  ExpectOneLineError(Zeus({"monitor", "--cpus=yes", "--", "true"}), {"--cpus takes no value"});
  ExpectOneLineError(BsoServer({"--no-access-log=false"}), {"--no-access-log takes no value"});
  ExpectOneLineError(Train({"--quiet=5"}), {"--quiet takes no value", "see zeus-emulated-train --help"});
  ExpectOneLineError(Train({"--json=no"}), {"--json takes no value"});
}

TEST(CliErrorsTest, LeadingZerosAreDecimalNotOctal) {
  ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  // CLI11 alone reads 010 as octal 8.
  const ProcessResult r = Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "imagenet", "--gpu", "a40",
                                "--seed", "010", "--recurrences", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["seed"], 10);
}

// --- zeus reproduce's lists. ---

TEST(CliErrorsTest, ReproduceRejectsDuplicatesAndEmptyLists) {
  ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  auto reproduce = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"reproduce", "--trace-dir", kTraceDir, "--no-report"});
    return Zeus(args);
  };
  ExpectOneLineError(reproduce({"--seeds", "1,1"}), {"--seeds: '1' is given twice"});
  ExpectOneLineError(reproduce({"--seeds", "1-3,2"}), {"seed 2 is given twice"});
  ExpectOneLineError(reproduce({"--gpus", "v100,v100"}), {"--gpus: 'v100' is given twice"});
  ExpectOneLineError(reproduce({"--workloads", "squad,squad"}), {"--workloads: 'squad' is given twice"});
  ExpectOneLineError(reproduce({"--workloads", "squad,squad/bert_base_uncased"}),
                     {"--workloads: 'squad/bert_base_uncased' names squad/bert_base_uncased again"});
  // An empty list is an error, not "all".
  ExpectOneLineError(reproduce({"--gpus", ""}), {"--gpus is empty"});
  ExpectOneLineError(reproduce({"--gpus", ","}), {"--gpus is empty"});
  ExpectOneLineError(reproduce({"--gpus", "v100,,a40"}), {"--gpus 'v100,,a40' has an empty item"});
  ExpectOneLineError(reproduce({"--workloads", ""}), {"--workloads is empty"});
  ExpectOneLineError(reproduce({"--seeds", ""}), {"--seeds is empty"});
}

// --- Caps on what would run for ever or exhaust memory. ---

TEST(CliErrorsTest, CountsAreCapped) {
  ExpectOneLineError(Zeus({"simulate", "--recurrences", "100000000"}),
                     {"--recurrences must be between 0 and 10000000 (got 100000000)"});
  ExpectOneLineError(Zeus({"reproduce", "--jobs", "100000"}), {"--jobs must be between 1 and 1024 (got 100000)"});
  ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  // (--gpus h100, which has no trace, stops a binary without the cap early.)
  ExpectOneLineError(Zeus({"reproduce", "--trace-dir", kTraceDir, "--no-report", "--gpus", "h100", "--seeds", "1-1001"}),
                     {"--seeds '1-1001': at most 1000 seeds"});
  ExpectOneLineError(Zeus({"reproduce", "--trace-dir", kTraceDir, "--no-report", "--gpus", "h100", "--seeds",
                           "1-600,1000-1400"}),
                     {"--seeds '1-600,1000-1400': at most 1000 seeds"});
  // Four GPUs x six workloads x 1000 seeds; checked before any trace is read.
  ExpectOneLineError(Zeus({"reproduce", "--trace-dir", kTraceDir, "--no-report", "--gpus", "g1,g2,g3,g4", "--seeds",
                           "1-1000"}),
                     {"4 GPUs x 6 workloads x 1000 seeds = 24000 runs; at most 20000"});
}

TEST(CliErrorsTest, HelpTellsTheCaps) {
  const ProcessResult r = Zeus({"simulate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("at most 100000"));
  EXPECT_EQ(r.err, "");
  const ProcessResult t = Train({"--help"});
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_THAT(t.out, HasSubstr("at most 100000000"));
}

TEST(CliErrorsTest, HelpAndVersionStillExitZero) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"--version"}, {"info", "--help"}, {"reproduce", "--help"}, {"monitor", "--help"}}) {
    const ProcessResult r = Zeus(args);
    EXPECT_EQ(r.exit_code, 0) << args.back();
    EXPECT_FALSE(r.out.empty()) << args.back();
    EXPECT_EQ(r.err, "") << args.back();
  }
}

// --- Files: the real problem, the path and the errno text. ---

class CliFileErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  }
  std::vector<std::string> Simulate(std::vector<std::string> more) {
    std::vector<std::string> args = {"simulate", "--trace-dir", kTraceDir, "--workload", "imagenet", "--gpu", "a40",
                                     "--recurrences", "3"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  testing::TempDir tmp_;
};

TEST_F(CliFileErrorsTest, OutputThatIsADirectory) {
  ExpectOneLineError(Zeus(Simulate({"--output", tmp_.path()})), {"--output " + tmp_.path(), "Is a directory"});
}

TEST_F(CliFileErrorsTest, OutputInAMissingDirectory) {
  const std::string path = tmp_.File("no/such/dir/tries.csv");
  ExpectOneLineError(Zeus(Simulate({"--output", path})), {"--output " + path, "does not exist"});
}

TEST_F(CliFileErrorsTest, OutputWhereNothingCanBeCreatedEvenAsRoot) {
  // /proc refuses new files to root too; the check is before the run.
  ExpectOneLineError(Zeus(Simulate({"--output", "/proc/zeus-tries.csv"})),
                     {"--output /proc/zeus-tries.csv", "cannot open for writing"});
}

TEST_F(CliFileErrorsTest, OutputOnAFullDiskIsARuntimeFailure) {
  ExpectOneLineError(Zeus(Simulate({"--output", "/dev/full"})), {"/dev/full", "No space left on device"}, 1);
}

TEST_F(CliFileErrorsTest, FailedRunLeavesNoEmptyOutputBehind) {
  const std::string path = tmp_.File("tries.csv");
  const ProcessResult r = Zeus(Simulate({"--output", path, "--target-metric", "99"}));
  ExpectOneLineError(r, {"target_metric 99"});
  struct stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0) << "a failed run left " << path;
}

TEST_F(CliFileErrorsTest, TraceDirThatIsAFile) {
  const std::string file = tmp_.Write("not-a-dir", "x");
  ExpectOneLineError(Zeus({"simulate", "--trace-dir", file}), {"--trace-dir " + file, "Not a directory"});
  ExpectOneLineError(Zeus({"reproduce", "--trace-dir", file}), {"--trace-dir " + file, "Not a directory"});
  ExpectOneLineError(Zeus({"simulate", "--trace-dir", tmp_.File("nowhere")}),
                     {"--trace-dir " + tmp_.File("nowhere"), "No such file or directory"});
}

TEST_F(CliFileErrorsTest, ReportDirectoryProblemsAreFoundBeforeTheRun) {
  const std::string file = tmp_.Write("a-file", "x");
  const std::vector<std::string> base = {"reproduce", "--trace-dir", kTraceDir, "--gpus", "a40", "--workloads",
                                         "imagenet", "--seeds", "1"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--report", file});
  ProcessResult r = Zeus(args);
  ExpectOneLineError(r, {"--report " + file, "Not a directory"});
  EXPECT_EQ(r.out, "");  // nothing was simulated
  args = base;
  args.insert(args.end(), {"--report", "/proc/zeus-report"});
  ExpectOneLineError(Zeus(args), {"--report /proc/zeus-report", "cannot create the directory"});
}

TEST_F(CliFileErrorsTest, ReportWriteThatFailsAfterTheRunNamesThePathAndTheErrno) {
  // The directory passes the check before the run; its index.html is /dev/full.
  const std::string dir = tmp_.File("report");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::symlink("/dev/full", (dir + "/index.html").c_str()), 0);
  const ProcessResult r = Zeus({"reproduce", "--trace-dir", kTraceDir, "--gpus", "a40", "--workloads", "imagenet",
                                "--seeds", "1", "--report", dir});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Progress lines come first; the error is the last line.
  EXPECT_THAT(r.err, HasSubstr("\nerror: cannot write the report file " + dir + "/index.html: No space left on device\n"));
}

TEST_F(CliFileErrorsTest, TraceFileThatIsADirectory) {
  // A trace directory whose summary_train.csv is a directory.
  const std::string dir = tmp_.File("traces");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir + "/summary_train.csv").c_str(), 0755), 0);
  std::ifstream power(kTraceDir + "/summary_power_a40.csv", std::ios::binary);
  std::ofstream(dir + "/summary_power_a40.csv", std::ios::binary) << power.rdbuf();
  ExpectOneLineError(Zeus({"simulate", "--trace-dir", dir, "--workload", "imagenet", "--gpu", "a40"}),
                     {dir + "/summary_train.csv is a directory, not a CSV file"});
}

// Runs `zeus ARGS` in the background (a command that blocks must not hang the
// test): its result once it exits, or exit_code -1 after killing it when it is
// still running after a generous deadline.
ProcessResult ZeusWithDeadline(std::vector<std::string> args, const testing::TempDir& tmp) {
  args.insert(args.begin(), ZEUS_TEST_CLI_PATH);
  const std::string out = tmp.File("deadline.out");
  const std::string err = tmp.File("deadline.err");
  ::unlink(out.c_str());
  ::unlink(err.c_str());
  testing::BackgroundProcess zeus(args, out, err, {{"ZEUS_TRACE_DIR", "/nonexistent/zeus-traces"}});
  ProcessResult r;
  if (!testing::WaitUntil([&] { return !zeus.Running(); }, std::chrono::seconds(60))) {
    zeus.Signal(SIGKILL);
    zeus.Wait();
    return r;
  }
  r.exit_code = zeus.Wait();
  std::ifstream o(out), e(err);
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

TEST_F(CliFileErrorsTest, TraceFileThatIsAFifoIsRefusedNotWaitedOn) {
  // Opening a FIFO without a writer would block for ever.
  const std::string dir = tmp_.File("traces");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo((dir + "/summary_train.csv").c_str(), 0600), 0);
  std::ifstream power(kTraceDir + "/summary_power_a40.csv", std::ios::binary);
  std::ofstream(dir + "/summary_power_a40.csv", std::ios::binary) << power.rdbuf();
  const ProcessResult r =
      ZeusWithDeadline({"simulate", "--trace-dir", dir, "--workload", "imagenet", "--gpu", "a40"}, tmp_);
  ASSERT_NE(r.exit_code, -1) << "zeus simulate blocked on a FIFO";
  ExpectOneLineError(r, {dir + "/summary_train.csv is a FIFO (named pipe), not a CSV file",
                         "a trace must be a regular file"});
}

TEST(CliErrorsTest, WhatIfProfileThatIsAFifoIsRefusedNotWaitedOn) {
  testing::TempDir tmp;
  const std::string fifo = tmp.File("profile.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const ProcessResult r = ZeusWithDeadline({"what-if", fifo, "--steps-per-epoch", "100"}, tmp);
  ASSERT_NE(r.exit_code, -1) << "zeus what-if blocked on a FIFO";
  ExpectOneLineError(r, {"power-limit profile " + fifo + " is a FIFO (named pipe); it must be a regular file"});
}

TEST_F(CliFileErrorsTest, UnknownGpuIsABadFlagThatListsTheValidNames) {
  const ProcessResult r = Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "imagenet", "--gpu", "h100"});
  ExpectOneLineError(r, {"--gpu 'h100'", "summary_power_h100.csv", "valid names: a40, v100"});
  EXPECT_EQ(r.out, "");
}

// --- zeus-emulated-train. ---

TEST(TrainCliErrorsTest, ParseErrorsAreOneLine) {
  ExpectOneLineError(Train({"--bogus"}), {"unknown flag '--bogus' for zeus-emulated-train"});
  ExpectOneLineError(Train({"extra"}), {"unexpected argument 'extra' for zeus-emulated-train"});
  ExpectOneLineError(Train({"--epochs"}), {"--epochs needs a value"});
  ExpectOneLineError(Train({"--selector", "fastest"}),
                     {"--selector must be one of zeus-cost, energy, time, max-slowdown (got 'fastest')"});
  ExpectOneLineError(Train({"--convergence", "32:x"}), {"--convergence: bad entry '32:x'"});
}

TEST(TrainCliErrorsTest, RangesAndSigns) {
  ExpectOneLineError(Train({"--epochs", "0"}), {"--epochs must be between 1 and 1000000 (got 0)"});
  ExpectOneLineError(Train({"--eta", "-1"}), {"--eta must be between 0 and 1 (got -1)"});
  ExpectOneLineError(Train({"--max-slowdown", "0.5"}), {"--max-slowdown must be at least 1 (got 0.5)"});
  ExpectOneLineError(Train({"--time-scale", "0"}), {"--time-scale must be greater than 0 (got 0)"});
  ExpectOneLineError(Train({"--stride-w", "-25"}), {"--stride-w must be greater than 0 (got -25)"});
  ExpectOneLineError(Train({"--wait-steps", "-1"}), {"--wait-steps must be at least 0 (got -1)"});
  ExpectOneLineError(Train({"--profile-steps", "0"}), {"--profile-steps must be at least 1 (got 0)"});
  ExpectOneLineError(Train({"--bso-seed", "-1"}), {"--bso-seed must be at least 0 (got -1)"});
  ExpectOneLineError(Train({"--throw-at-step", "-2"}), {"--throw-at-step must be at least 0 (got -2)"});
  ExpectOneLineError(Train({"--default-batch-size", "4294967296"}),
                     {"--default-batch-size must be at most 2147483647 (got 4294967296)"});
}

TEST(TrainCliErrorsTest, TotalStepsAreCapped) {
  ExpectOneLineError(Train({"--epochs", "1000000", "--steps-per-epoch", "100000000"}),
                     {"--epochs 1000000 x --steps-per-epoch 100000000", "at most 100000000 steps"});
}

TEST(TrainCliErrorsTest, PathsAreCheckedBeforeTraining) {
  testing::TempDir tmp;
  // Train() gives no GPUs: the path check comes before they are opened.
  ExpectOneLineError(Train({"-o", tmp.path()}), {"--output " + tmp.path(), "Is a directory"});
  ExpectOneLineError(Train({"--profile-path", tmp.path()}), {"--profile-path " + tmp.path(), "Is a directory"});
  ExpectOneLineError(Train({"--profile-path", tmp.File("no/dir/profile.json")}),
                     {"--profile-path " + tmp.File("no/dir/profile.json"), "does not exist"});
}

TEST(TrainCliErrorsTest, ReportOnAFullDiskIsARuntimeFailure) {
  testing::TempDir tmp;
  const json gpu = {{"name", "Tesla V100-SXM2-32GB"},
                    {"architecture", "volta"},
                    {"min_power_limit_w", 100},
                    {"max_power_limit_w", 300},
                    {"default_power_limit_w", 300},
                    {"energy_counter", true},
                    {"workload", {{"power_limits_w", {100, 300}}, {"power_w", {100, 250}}, {"iteration_time_s", {2, 1}}}}};
  const json scenario = {{"clock", "manual"}, {"state_file", tmp.File("state")}, {"gpus", {gpu}}};
  const std::string config = tmp.Write("scenario.json", scenario.dump());
  const ProcessResult r = Train({"--epochs", "1", "--steps-per-epoch", "5", "-q", "-o", "/dev/full"},
                                {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
                                 {"ZEUS_EMULATOR_CONFIG", config},
                                 {"CUDA_VISIBLE_DEVICES", std::nullopt}});
  ExpectOneLineError(r, {"/dev/full", "No space left on device"}, 1);
}

}  // namespace
}  // namespace zeus
