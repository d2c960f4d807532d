// Copyright 2026 The Zeus C++ Authors.
//
// `zeus reproduce`'s paper experiments against the figures of
// ../shared/docs/paper-notes.md, written out here by hand: potential savings
// (1.5), sensitivity to eta and beta (3.7), grid-search baselines (3.6), and
// the drifting workload (2.6); byte-identical reruns; flag errors.

#include <algorithm>
#include <cmath>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
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

// The six workloads in the paper's order (and the order `zeus reproduce` prints them).
const std::vector<std::string> kWorkloads = {"librispeech/deepspeech2",  "squad/bert_base_uncased",
                                             "sentiment140/bert_base_uncased", "imagenet/resnet50",
                                             "cifar100/shufflenetv2",    "movielens-1m/ncf"};

json ReproduceJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"reproduce", "--trace-dir", kTraceDir, "--no-report", "--json"});
  const testing::ProcessResult r = Zeus(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// `value` printed to one decimal, as the paper-notes tables are.
std::string OneDecimal(double value) { return fmt::format("{:.1f}", value); }

class ReproduceExperimentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZEUS_REQUIRE_REFERENCE_DATA(kTraceDir + "/summary_train.csv");
  }
  testing::TempDir tmp_;
};

// paper-notes 1.5: "best of both" / "best power limit only" per GPU, Figure 1's best batch size on V100, and the
// ETA-optimal (b, p) of Figure 1.
TEST_F(ReproduceExperimentsTest, PotentialSavingsEqualPaperNotes15) {
  const json rows = ReproduceJson({"--potential", "--gpus", "v100,a40"});
  struct Expected {
    std::string both, power_limit;
  };
  const std::map<std::string, std::vector<Expected>> table = {
      {"v100",
       {{"42.8", "16.2"}, {"27.6", "17.8"}, {"26.4", "21.2"}, {"23.8", "22.5"}, {"74.7", "31.4"}, {"66.6", "3.0"}}},
      {"a40",
       {{"66.3", "1.7"}, {"21.4", "20.4"}, {"20.6", "20.6"}, {"19.4", "19.1"}, {"72.2", "21.0"}, {"61.2", "6.3"}}}};
  // Figure 1 (V100): normalized ETA of the best batch size 0.820 0.933 0.966 0.970 0.368 0.350.
  const std::vector<std::string> v100_batch_size = {"18.0", "6.7", "3.4", "3.0", "63.2", "65.0"};
  const std::vector<std::pair<int, double>> v100_optimum = {{32, 100}, {8, 125},   {32, 125},
                                                            {360, 150}, {128, 100}, {16384, 150}};
  ASSERT_EQ(rows.size(), 12U);
  for (const json& row : rows) {
    const std::string gpu = row["gpu"];
    const auto w = static_cast<std::size_t>(std::find(kWorkloads.begin(), kWorkloads.end(), row["workload"]) -
                                            kWorkloads.begin());
    ASSERT_LT(w, kWorkloads.size()) << row["workload"];
    SCOPED_TRACE(gpu + " " + kWorkloads[w]);
    EXPECT_EQ(OneDecimal(row["best_savings_pct"]), table.at(gpu)[w].both);
    EXPECT_EQ(OneDecimal(row["power_limit_savings_pct"]), table.at(gpu)[w].power_limit);
    if (gpu == "v100") {
      EXPECT_EQ(OneDecimal(row["batch_size_savings_pct"]), v100_batch_size[w]);
      EXPECT_EQ(row["best"]["batch_size"], v100_optimum[w].first);
      EXPECT_EQ(row["best"]["power_limit_w"], v100_optimum[w].second);
    }
  }
  // The text table says the same.
  const testing::ProcessResult text = Zeus({"reproduce", "--trace-dir", kTraceDir, "--potential", "--gpus", "v100"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("74.7%"));
  EXPECT_THAT(text.out, HasSubstr("16384@150"));
}

// paper-notes 3.7, eta: energy saving % / time change %, last 10 recurrences, V100, seeds 1-3.
TEST_F(ReproduceExperimentsTest, EtaSensitivityEqualsPaperNotes37) {
  const std::vector<std::vector<std::string>> expected = {
      // eta = 0, 0.25, 0.5, 0.75, 1
      {"18.0/-32.6", "18.1/-32.6", "39.1/-23.6", "38.8/-21.6", "42.8/-2.6"},
      {"5.9/-4.9", "5.8/-4.8", "18.2/1.8", "25.1/13.1", "26.4/32.6"},
      {"3.1/-2.0", "3.3/-2.0", "20.9/8.4", "24.2/16.1", "26.4/37.1"},
      {"1.5/-0.5", "1.7/-0.7", "18.4/8.7", "22.9/18.0", "23.0/17.8"},
      {"59.6/-48.9", "63.9/-47.1", "74.6/-43.9", "74.8/-43.7", "74.9/-44.0"},
      {"65.9/-64.2", "65.9/-64.2", "66.3/-64.6", "67.1/-64.0", "67.1/-64.0"},
  };
  const json out = ReproduceJson({"--gpus", "v100", "--seeds", "1-3", "--eta", "0,0.25,0.5,0.75,1"});
  const json& s = out["sensitivity"];
  EXPECT_EQ(s["knob"], "eta");
  ASSERT_EQ(s["rows"].size(), kWorkloads.size());
  for (std::size_t w = 0; w < kWorkloads.size(); ++w) {
    const json& row = s["rows"][w];
    EXPECT_EQ(row["workload"], kWorkloads[w]);
    ASSERT_EQ(row["values"].size(), 5U);
    for (std::size_t v = 0; v < 5; ++v) {
      const json& cell = row["values"][v];
      EXPECT_EQ(OneDecimal(cell["savings_last_n_pct"]) + "/" + OneDecimal(cell["time_change_last_n_pct"]),
                expected[w][v])
          << kWorkloads[w] << " eta " << cell["eta"];
    }
  }
  // The main runs use the first value: eta 0, whose DeepSpeech2 saving is the table's.
  EXPECT_EQ(OneDecimal(out["jobs"][0]["savings_last_n_pct"]), "18.0");
}

// paper-notes 3.7, beta: cumulative regret in optimal-run units, V100, seeds 1-3; inf = no early stopping.
TEST_F(ReproduceExperimentsTest, BetaSensitivityEqualsPaperNotes37) {
  const std::vector<std::vector<std::string>> expected = {
      // beta = 1.5, 2, 3, 5, inf
      {"6.9", "7.7", "9.7", "18.7", "23.8"},  {"1.8", "1.8", "1.8", "1.8", "1.8"},
      {"1.6", "1.7", "1.7", "1.7", "1.7"},    {"4.3", "4.1", "5.1", "7.1", "7.3"},
      {"11.9", "10.4", "16.4", "18.6", "68.9"}, {"8.7", "13.1", "22.0", "43.1", "1671"},
  };
  const json out = ReproduceJson({"--gpus", "v100", "--seeds", "1-3", "--beta", "1.5,2,3,5,inf"});
  const json& s = out["sensitivity"];
  EXPECT_EQ(s["knob"], "beta");
  EXPECT_EQ(s["values"].back(), "inf");
  for (std::size_t w = 0; w < kWorkloads.size(); ++w) {
    const json& row = s["rows"][w];
    for (std::size_t v = 0; v < 5; ++v) {
      const double regret = row["values"][v]["regret_oracle_jobs"];
      // The paper-notes print NeuMF's 1,671 without decimals.
      const std::string printed = regret > 1000 ? fmt::format("{:.0f}", regret) : OneDecimal(regret);
      EXPECT_EQ(printed, expected[w][v]) << kWorkloads[w] << " beta " << row["values"][v]["beta"];
    }
  }
  // NeuMF without early stopping: "overall energy +264 % vs Default" (savings over all recurrences -264 %).
  EXPECT_NEAR(s["rows"][5]["values"][4]["savings_all_pct"].get<double>(), -264, 0.5);
}

// paper-notes 3.6 (V100, 3 seeds). Zeus's column to the printed precision. The grid search's order and stopping
// rules are not recovered (paper-notes 3.3): without early stopping ours lands within 6 % of the notes (NeuMF's
// ~160,000 included); with early stopping ours stops less (the notes' grid visits other sizes first), so only
// the claim "Zeus's regret is several times lower" is checked there.
TEST_F(ReproduceExperimentsTest, BaselinesAgainstPaperNotes36) {
  const std::vector<std::string> zeus = {"7.7", "1.8", "1.7", "4.1", "10.4", "13.1"};
  const std::vector<double> grid = {88.9, 9.3, 8.2, 47.9, 279.7, 160000};
  const json out = ReproduceJson({"--gpus", "v100", "--seeds", "1-3", "--baselines"});
  const json& rows = out["baselines"];
  ASSERT_EQ(rows.size(), kWorkloads.size());
  for (std::size_t w = 0; w < kWorkloads.size(); ++w) {
    SCOPED_TRACE(kWorkloads[w]);
    const json& row = rows[w];
    EXPECT_EQ(OneDecimal(row["zeus"]["regret_oracle_jobs"]), zeus[w]);
    const double no_stop = row["grid_search"]["regret_oracle_jobs"];
    EXPECT_NEAR(no_stop / grid[w], 1.0, 0.06) << no_stop;
    const double early_stop = row["grid_search_early_stopping"]["regret_oracle_jobs"];
    EXPECT_GT(early_stop, 4 * row["zeus"]["regret_oracle_jobs"].get<double>());
    EXPECT_LE(early_stop, no_stop * 1.07);
  }
}

// paper-notes 2.6: with a window, Thompson sampling forgets the costs from before the shift and returns to the
// (new) Oracle; without one it keeps the old costs and pays for it. DeepSpeech2 and ShuffleNet on V100.
TEST_F(ReproduceExperimentsTest, DriftWindowRecoversAndNoWindowDoesNot) {
  const json out = ReproduceJson(
      {"--gpus", "v100", "--workloads", "librispeech,cifar100", "--seeds", "1-3", "--drift", "--drift-window", "10"});
  const json& rows = out["drift"];
  ASSERT_EQ(rows.size(), 2U);
  for (const json& row : rows) {
    SCOPED_TRACE(row["workload"].get<std::string>());
    EXPECT_EQ(row["shift_after"].get<int>() * 2, row["recurrences"].get<int>());
    // The drift moves the Oracle (the old Oracle's batch size is 1.5x dearer).
    EXPECT_NE(row["oracle_before"]["batch_size"], row["oracle_after"]["batch_size"]);
    const json& none = row["variants"][0];
    const json& window = row["variants"][1];
    EXPECT_EQ(none["window"], 0);
    EXPECT_EQ(window["window"], 10);
    EXPECT_TRUE(none["stuck"].empty());
    EXPECT_TRUE(window["stuck"].empty());
    // Regret after the shift: the window's is less than half.
    EXPECT_LT(2 * window["regret_after"].get<double>(), none["regret_after"].get<double>());
    // Recovered: every windowed run ends on the new Oracle; some run without a window does not.
    double none_at_oracle = 0;
    for (const json& run : window["runs"]) EXPECT_EQ(run["last_n_oracle_fraction"], 1.0);
    for (const json& run : none["runs"]) none_at_oracle += run["last_n_oracle_fraction"].get<double>();
    EXPECT_LT(none_at_oracle, 3.0);
  }
}

TEST_F(ReproduceExperimentsTest, SameFlagsGiveByteIdenticalOutputAndReport) {
  std::string first_out, first_html, first_csv;
  for (const std::string jobs : {"1", "2"}) {
    const std::string dir = tmp_.File("report" + jobs);
    const testing::ProcessResult r =
        Zeus({"reproduce", "--trace-dir", kTraceDir, "--gpus", "v100", "--workloads", "squad,imagenet", "--seeds",
              "1-2", "--eta", "0.5,1", "--baselines", "--drift", "--json", "--jobs", jobs, "--report", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string html = ReadAll(dir + "/index.html");
    EXPECT_THAT(html, HasSubstr("Sensitivity to eta"));
    EXPECT_THAT(html, HasSubstr("Potential savings"));
    EXPECT_THAT(html, HasSubstr("Baselines: grid search"));
    EXPECT_THAT(html, HasSubstr("Data drift"));
    EXPECT_THAT(html, HasSubstr("Regret per recurrence, v100 imagenet/resnet50"));
    if (first_out.empty()) {
      first_out = r.out;
      first_html = html;
      first_csv = ReadAll(dir + "/runs.csv");
    } else {
      EXPECT_EQ(r.out, first_out);
      EXPECT_EQ(html, first_html);
      EXPECT_EQ(ReadAll(dir + "/runs.csv"), first_csv);
    }
  }
}

TEST_F(ReproduceExperimentsTest, BadListsAreOneLineErrors) {
  auto reproduce = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"reproduce", "--trace-dir", kTraceDir, "--no-report"});
    return Zeus(args);
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--eta", "0,2"}, "--eta must be between 0 and 1 (got 2)"},
      {{"--eta", "0,,1"}, "--eta '0,,1' has an empty item"},
      {{"--eta", "0.5,0.5"}, "--eta: '0.5' is given twice"},
      {{"--beta", "0"}, "--beta must be a positive number or inf (got 0)"},
      {{"--beta", "2,x"}, "--beta: 'x' is not a number"},
      {{"--eta", "0,1", "--beta", "2,3"}, "not both"},
      {{"--drift", "--drift-magnitude", "1"}, "--drift-magnitude"},
  };
  for (const auto& [args, message] : cases) {
    const testing::ProcessResult r = reproduce(args);
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace zeus
