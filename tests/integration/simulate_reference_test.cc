// Copyright 2026 The Zeus C++ Authors.
//
// Acceptance: `zeus simulate` reproduces the original Zeus simulator. For
// every (GPU, workload, seed) in ../shared/testdata/zeus-reference-sim, the
// real binary's --output CSV has the original's batch size, power limit,
// epochs and reached flag on every try, and energy, time and cost within
// 1e-12 relative.

#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "simulator/reference_data.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/reference_data.h"
#include "tests/integration/simulate_cli_test_util.h"

namespace zeus {
namespace {

using simulator::testing::NearRelative;
using simulator::testing::ReferenceTable;

const std::string kShared = ZEUS_SHARED_DIR;
using simulate_cli_test::kTraceDir;
const std::string kReferenceDir = kShared + "/testdata/zeus-reference-sim";

class SimulateReferenceTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  static void SetUpTestSuite() {
    if (std::ifstream(kReferenceDir + "/baselines.csv").good()) {
      tries_ = new ReferenceTable(ReferenceTable::Load(kReferenceDir + "/tries.csv.gz"));
    }
  }
  static void TearDownTestSuite() {
    delete tries_;
    tries_ = nullptr;
  }
  void SetUp() override {
    ZEUS_REQUIRE_REFERENCE_DATA(kReferenceDir + "/tries.csv.gz");
    ASSERT_NE(tries_, nullptr);
    ASSERT_FALSE(tries_->empty()) << "could not read tries.csv.gz (is gzip installed?)";
  }
  static ReferenceTable* tries_;
  testing::TempDir tmp_;
};

ReferenceTable* SimulateReferenceTest::tries_ = nullptr;

TEST_P(SimulateReferenceTest, EveryTryMatchesTheOriginal) {
  const auto& [gpu, dataset] = GetParam();
  for (int seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(fmt::format("{} {} seed {}", gpu, dataset, seed));
    const std::string csv = tmp_.File(fmt::format("tries-{}.csv", seed));
    testing::ProcessResult r = testing::RunProcess({ZEUS_TEST_CLI_PATH, "simulate", "--trace-dir", kTraceDir, "--gpu",
                                                    gpu, "--workload", dataset, "--seed", std::to_string(seed),
                                                    "--output", csv, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ReferenceTable got = ReferenceTable::Load(csv);
    ASSERT_FALSE(got.empty());
    // The reference names workloads dataset/network; find ours by dataset.
    std::vector<std::size_t> want;
    for (std::size_t i = 0; i < tries_->size(); ++i) {
      if (tries_->Text(i, "gpu") == gpu && tries_->Text(i, "seed") == std::to_string(seed) &&
          tries_->Text(i, "workload").rfind(dataset + "/", 0) == 0) {
        want.push_back(i);
      }
    }
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      const std::size_t w = want[i];
      SCOPED_TRACE(fmt::format("CSV row {}", i + 2));
      ASSERT_EQ(got.Text(i, "recurrence"), tries_->Text(w, "recurrence"));
      ASSERT_EQ(got.Text(i, "try"), tries_->Text(w, "try"));
      ASSERT_EQ(got.Number(i, "batch_size"), tries_->Number(w, "bs"));
      ASSERT_EQ(got.Number(i, "power_limit"), tries_->Number(w, "pl"));
      ASSERT_EQ(got.Number(i, "epochs"), tries_->Number(w, "epochs"));
      ASSERT_EQ(got.Text(i, "reached") == "true", tries_->Bool(w, "reached"));
      EXPECT_TRUE(NearRelative(got.Number(i, "energy"), tries_->Number(w, "energy"), 1e-12));
      EXPECT_TRUE(NearRelative(got.Number(i, "time"), tries_->Number(w, "time"), 1e-12));
      EXPECT_TRUE(NearRelative(got.Number(i, "cost"), tries_->Number(w, "cost"), 1e-12));
    }
  }
}

std::vector<std::pair<std::string, std::string>> Cases() {
  std::vector<std::pair<std::string, std::string>> cases;
  for (const char* gpu : {"v100", "a40"}) {
    for (const char* w : {"librispeech", "squad", "sentiment140", "imagenet", "cifar100", "movielens-1m"}) {
      cases.emplace_back(gpu, w);
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllReferenceRuns, SimulateReferenceTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& param) {
                           std::string name = param.param.first + "_" + param.param.second;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace zeus
