// Copyright 2026 The Zeus C++ Authors.
//
// `zeus simulate` and `zeus reproduce` as a user runs them: byte-identical
// output for the same seed, clear errors for bad input, the report files.

#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "tests/integration/simulate_cli_test_util.h"
#include "testing/temp_dir.h"
#include "testing/reference_data.h"

namespace zeus {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

using simulate_cli_test::kTraceDir;
using simulate_cli_test::ReadAll;
using simulate_cli_test::Zeus;

class SimulateCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  }
  testing::TempDir tmp_;
};

TEST_F(SimulateCliTest, SameSeedGivesByteIdenticalOutput) {
  std::string first_out, first_csv;
  for (int i = 0; i < 2; ++i) {
    const std::string csv = tmp_.File("tries" + std::to_string(i) + ".csv");
    testing::ProcessResult r =
        Zeus({"simulate", "--trace-dir", kTraceDir, "--gpu", "a40", "--workload", "cifar100", "--seed", "4", "--output", csv});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (i == 0) {
      first_out = r.out;
      first_csv = ReadAll(csv);
    } else {
      EXPECT_EQ(r.out, first_out);
      EXPECT_EQ(ReadAll(csv), first_csv);
    }
  }
  EXPECT_THAT(first_out, HasSubstr("energy savings vs Default"));
  EXPECT_THAT(first_csv, ::testing::StartsWith("recurrence,try,batch_size,power_limit,epochs,energy,time,cost,reached\n"));
  testing::ProcessResult other =
      Zeus({"simulate", "--trace-dir", kTraceDir, "--gpu", "a40", "--workload", "cifar100", "--seed", "5"});
  ASSERT_EQ(other.exit_code, 0);
  EXPECT_NE(other.out, first_out);
}

TEST_F(SimulateCliTest, JsonHasRecurrencesAndSummary) {
  testing::ProcessResult r = Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "squad", "--recurrences", "30",
                                   "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["workload"], "squad/bert_base_uncased");
  EXPECT_EQ(j["gpu"], "v100");
  EXPECT_EQ(j["recurrences"].size(), 30U);
  EXPECT_EQ(j["summary"]["recurrences"], 30);
  EXPECT_EQ(j["oracle"]["batch_size"], 12);
}

TEST_F(SimulateCliTest, BaselinePoliciesRun) {
  for (const char* policy : {"grid-search", "power-limit-only", "batch-size-only"}) {
    testing::ProcessResult r = Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "imagenet", "--policy", policy});
    EXPECT_EQ(r.exit_code, 0) << policy << ": " << r.err;
  }
  testing::ProcessResult bad = Zeus({"simulate", "--trace-dir", kTraceDir, "--policy", "random"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unknown policy 'random'"));
}

// --policy zeus is the default (byte-identical output); zeus-robust runs from
// the same code in simulate and reproduce, explores less (a40 cifar100 seed
// 1: 9 pruning recurrences for the original, 5 for zeus-robust) and is listed
// in both --help texts.
TEST_F(SimulateCliTest, PolicyFlagSelectsTheBatchSizePolicy) {
  const std::vector<std::string> base = {"simulate", "--trace-dir", kTraceDir, "--gpu", "a40", "--workload", "cifar100",
                                         "--json"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return Zeus(args);
  };
  testing::ProcessResult by_default = run({});
  testing::ProcessResult zeus = run({"--policy", "zeus"});
  testing::ProcessResult robust = run({"--policy", "zeus-robust"});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  ASSERT_EQ(robust.exit_code, 0) << robust.err;
  EXPECT_EQ(zeus.out, by_default.out);
  auto pruning = [](const json& j) {
    int n = 0;
    for (const json& r : j["recurrences"]) n += r["stage"] == "pruning" ? 1 : 0;
    return n;
  };
  const json original = json::parse(by_default.out);
  const json better = json::parse(robust.out);
  EXPECT_EQ(better["policy"], "zeus-robust");
  EXPECT_EQ(pruning(original), 9);
  EXPECT_EQ(pruning(better), 5);

  const std::vector<std::string> reproduce = {"reproduce", "--trace-dir", kTraceDir, "--gpus", "a40", "--workloads",
                                              "cifar100", "--seeds", "1-3", "--no-report", "--json", "--jobs", "1"};
  std::vector<std::string> args = reproduce;
  testing::ProcessResult r_zeus = Zeus(args);
  args.insert(args.end(), {"--policy", "zeus-robust"});
  testing::ProcessResult r_robust = Zeus(args);
  ASSERT_EQ(r_zeus.exit_code, 0) << r_zeus.err;
  ASSERT_EQ(r_robust.exit_code, 0) << r_robust.err;
  EXPECT_LT(json::parse(r_robust.out)[0]["regret_oracle_jobs"].get<double>(),
            json::parse(r_zeus.out)[0]["regret_oracle_jobs"].get<double>());
  args.back() = "greedy";
  EXPECT_EQ(Zeus(args).exit_code, 2);
  for (const char* command : {"simulate", "reproduce"}) {
    EXPECT_THAT(Zeus({command, "--help"}).out, HasSubstr("zeus-robust")) << command;
  }
}

TEST_F(SimulateCliTest, BadInputIsAClearErrorNotACrash) {
  // A trace with a non-numeric cell.
  std::string power = ReadAll(kTraceDir + "/summary_power_v100.csv");
  const std::size_t line3 = power.find('\n', power.find('\n') + 1) + 1;
  const std::size_t cell = power.find(',', power.find(',', power.find(',', power.find(',', power.find(',', line3) + 1) + 1) + 1) + 1) + 1;
  power.replace(cell, power.find(',', cell) - cell, "fast");
  tmp_.Write("traces/summary_power_v100.csv", power);
  tmp_.Write("traces/summary_train.csv", ReadAll(kTraceDir + "/summary_train.csv"));
  testing::ProcessResult r = Zeus({"simulate", "--trace-dir", tmp_.File("traces")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("summary_power_v100.csv:3:6: column 'time_per_epoch': \"fast\" is not a number"));

  testing::ProcessResult unknown_gpu = Zeus({"simulate", "--trace-dir", kTraceDir, "--gpu", "h100"});
  EXPECT_NE(unknown_gpu.exit_code, 0);
  EXPECT_THAT(unknown_gpu.err, HasSubstr("summary_power_h100.csv"));
  EXPECT_THAT(unknown_gpu.err, HasSubstr("a40, v100"));

  testing::ProcessResult unknown_workload = Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "mnist"});
  EXPECT_EQ(unknown_workload.exit_code, 2);
  EXPECT_THAT(unknown_workload.err, HasSubstr("'mnist' is not a built-in workload"));

  testing::ProcessResult bad_target =
      Zeus({"simulate", "--trace-dir", kTraceDir, "--workload", "squad", "--target-metric", "99"});
  EXPECT_EQ(bad_target.exit_code, 2);
  EXPECT_THAT(bad_target.err, HasSubstr("target_metric 99"));

  testing::ProcessResult bad_eta = Zeus({"simulate", "--trace-dir", kTraceDir, "--eta", "1.5"});
  EXPECT_EQ(bad_eta.exit_code, 2);
  EXPECT_THAT(bad_eta.err, HasSubstr("eta must be between 0 and 1"));

  testing::ProcessResult no_dir = Zeus({"simulate", "--trace-dir", tmp_.File("nowhere")});
  EXPECT_NE(no_dir.exit_code, 0);
  EXPECT_THAT(no_dir.err, HasSubstr("nowhere"));
}

TEST_F(SimulateCliTest, ReproduceWritesTableReportAndIsDeterministic) {
  const std::vector<std::string> args = {"reproduce", "--trace-dir", kTraceDir, "--gpus", "v100",
                                         "--workloads", "squad,sentiment140", "--seeds", "1-2"};
  std::vector<std::string> a = args, b = args;
  a.insert(a.end(), {"--report", tmp_.File("r1"), "--jobs", "2"});
  b.insert(b.end(), {"--report", tmp_.File("r2"), "--jobs", "1"});
  testing::ProcessResult ra = Zeus(a);
  testing::ProcessResult rb = Zeus(b);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_THAT(ra.out, HasSubstr("squad/bert_base_uncased"));
  EXPECT_THAT(ra.out, HasSubstr("sentiment140/bert_base_uncased"));
  EXPECT_THAT(ra.err, HasSubstr("4/4 runs"));
  for (const char* file : {"/index.html", "/runs.csv"}) {
    const std::string one = ReadAll(tmp_.File("r1") + file);
    EXPECT_FALSE(one.empty()) << file;
    EXPECT_EQ(one, ReadAll(tmp_.File("r2") + file)) << file;
  }
  const std::string html = ReadAll(tmp_.File("r1") + "/index.html");
  EXPECT_EQ(std::count(html.begin(), html.end(), '\n') > 10, true);
  std::size_t svgs = 0;
  for (std::size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 2U * 3U);  // two workloads x three plots
  const std::string runs = ReadAll(tmp_.File("r1") + "/runs.csv");
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 1 + 2 * 2);

  testing::ProcessResult json_run = Zeus({"reproduce", "--trace-dir", kTraceDir, "--gpus", "a40", "--workloads",
                                          "imagenet", "--seeds", "1", "--no-report", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const json j = json::parse(json_run.out);
  ASSERT_EQ(j.size(), 1U);
  EXPECT_EQ(j[0]["oracle"]["batch_size"], 256);

  testing::ProcessResult bad_seeds = Zeus({"reproduce", "--trace-dir", kTraceDir, "--seeds", "5-1", "--no-report"});
  EXPECT_EQ(bad_seeds.exit_code, 2);
  EXPECT_THAT(bad_seeds.err, HasSubstr("--seeds"));
}

// A fresh clone or an installed zeus: no --trace-dir, no $ZEUS_TRACE_DIR, and a
// working directory outside the source tree (so no ../shared): the traces that
// zeus ships (data/traces/zeus-nsdi23, build/share/zeus/traces beside the binary).
TEST(ShippedTracesTest, ReproduceAndSimulateRunWithoutATraceDirFromAnyDirectory) {
  testing::TempDir elsewhere;
  const std::string cd = "cd '" + elsewhere.path() + "' && exec '" + ZEUS_TEST_CLI_PATH + "' ";
  testing::ProcessResult reproduce = testing::RunProcess(
      {"/bin/sh", "-c", cd + "reproduce --gpus v100 --workloads squad --seeds 1 --no-report"},
      {{"ZEUS_TRACE_DIR", std::nullopt}});
  ASSERT_EQ(reproduce.exit_code, 0) << reproduce.err;
  EXPECT_THAT(reproduce.out, HasSubstr("squad/bert_base_uncased"));
  EXPECT_THAT(reproduce.err, HasSubstr("1/1 runs"));

  testing::ProcessResult simulate = testing::RunProcess(
      {"/bin/sh", "-c", cd + "simulate --gpu a40 --workload cifar100 --seed 1 --recurrences 5 --json"},
      {{"ZEUS_TRACE_DIR", std::nullopt}});
  ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
  EXPECT_FALSE(json::parse(simulate.out).empty());

  // $ZEUS_TRACE_DIR still names other traces.
  testing::ProcessResult other = testing::RunProcess(
      {"/bin/sh", "-c", cd + "reproduce --no-report"}, {{"ZEUS_TRACE_DIR", elsewhere.File("none")}});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr(elsewhere.File("none")));
}

}  // namespace
}  // namespace zeus
