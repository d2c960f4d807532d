// Copyright 2026 The Zeus C++ Authors.

#include "zeus/bso/models.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::bso {
namespace {

TEST(ModelsTest, JobSpecDefaultsMatchTheOriginal) {
  Parsed<JobSpec> spec = ParseJobSpec(
      R"({"job_id_prefix": "p", "batch_sizes": [32], "default_batch_size": 32, "max_power": 250,
          "number_of_gpus": 2, "gpu_model": "V100", "unknown_field": 1})");
  ASSERT_TRUE(spec) << spec.error().Summary();
  EXPECT_FALSE(spec->job_id);
  EXPECT_EQ(spec->eta_knob, 0.5);
  EXPECT_EQ(spec->beta_knob, 2.0);
  EXPECT_EQ(spec->target_metric, 0.5);
  EXPECT_TRUE(spec->higher_is_better_metric);
  EXPECT_EQ(spec->max_epochs, 100);
  EXPECT_EQ(spec->num_pruning_rounds, 2);
  EXPECT_EQ(spec->window_size, 0);
  EXPECT_EQ(spec->mab_prior_mean, 0.0);
  EXPECT_EQ(spec->mab_prior_precision, 0.0);
  EXPECT_EQ(spec->mab_num_explorations, 2);
  EXPECT_FALSE(spec->mab_seed);
  EXPECT_EQ(spec->policy, "zeus");  // an original client sends no policy
}

TEST(ModelsTest, PolicyIsParsedAndChecked) {
  const std::string base = R"({"job_id_prefix": "p", "batch_sizes": [32], "default_batch_size": 32, "max_power": 250,
                              "number_of_gpus": 1, "gpu_model": "V100", "policy": )";
  Parsed<JobSpec> robust = ParseJobSpec(base + R"("zeus-robust"})");
  ASSERT_TRUE(robust) << robust.error().Summary();
  EXPECT_EQ(robust->policy, "zeus-robust");
  Parsed<JobSpec> unknown = ParseJobSpec(base + R"("greedy"})");
  ASSERT_FALSE(unknown);
  ASSERT_EQ(unknown.error().errors.size(), 1u);
  EXPECT_EQ(unknown.error().errors[0].loc, (std::vector<std::string>{"body", "policy"}));
  EXPECT_THAT(unknown.error().errors[0].msg, ::testing::HasSubstr("unknown batch-size policy 'greedy'"));
  EXPECT_FALSE(ParseJobSpec(base + "3}"));  // not a string
}

TEST(ModelsTest, NullBetaDisablesEarlyStopping) {
  Parsed<JobSpec> spec = ParseJobSpec(
      R"({"job_id_prefix": "p", "batch_sizes": [32], "default_batch_size": 32, "max_power": 250,
          "number_of_gpus": 1, "gpu_model": "V100", "beta_knob": null})");
  ASSERT_TRUE(spec);
  EXPECT_FALSE(spec->beta_knob);
}

TEST(ModelsTest, RoundTrips) {
  JobSpec s;
  s.job_id = "p-1";
  s.job_id_prefix = "p";
  s.batch_sizes = {8, 16};
  s.default_batch_size = 16;
  s.beta_knob.reset();
  s.mab_seed = 42;
  s.max_power = 600;
  s.number_of_gpus = 2;
  s.gpu_model = "NVIDIA H200";
  s.policy = "zeus-robust";
  Parsed<JobSpec> back = ParseJobSpec(ToJson(s));
  ASSERT_TRUE(back) << back.error().Summary();
  EXPECT_EQ(*back, s);

  TrainingResult r{"p-1", 16, 3, 1.25, 100.5, 0.75, 2, true};
  Parsed<TrainingResult> r2 = ParseTrainingResult(ToJson(r));
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->time, 1.25);
  EXPECT_EQ(r2->energy, 100.5);
  EXPECT_TRUE(r2->finished);

  TrialId t{"p-1", 16, 3, TrialType::kConcurrent};
  Parsed<TrialId> t2 = ParseTrialId(ToJson(t));
  ASSERT_TRUE(t2);
  EXPECT_EQ(t2->type, TrialType::kConcurrent);

  Parsed<ReportResponse> rr = ParseReportResponse(ToJson(ReportResponse{true, false, "m"}));
  ASSERT_TRUE(rr);
  EXPECT_TRUE(rr->stop_train);
  EXPECT_FALSE(rr->converged);
}

TEST(ModelsTest, ValidationListsEveryProblem) {
  Parsed<JobSpec> spec = ParseJobSpec(R"({"job_id_prefix": "p", "batch_sizes": [32], "default_batch_size": 32})");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().errors.size(), 3u);  // max_power, number_of_gpus, gpu_model
  EXPECT_THAT(spec.error().Summary(), ::testing::HasSubstr("max_power: field required"));
  EXPECT_THAT(ToJson(spec.error()), ::testing::HasSubstr(R"("loc":["body","gpu_model"])"));
}

TEST(ModelsTest, IntegersMustBeIntegral) {
  const char* kBase = R"({"job_id_prefix": "p", "batch_sizes": [32], "max_power": 250, "number_of_gpus": 1,
                          "gpu_model": "V100", "default_batch_size": )";
  EXPECT_TRUE(ParseJobSpec(std::string(kBase) + "32.0}"));
  EXPECT_FALSE(ParseJobSpec(std::string(kBase) + "32.5}"));
  EXPECT_FALSE(ParseJobSpec(std::string(kBase) + "1e20}"));
  EXPECT_FALSE(ParseJobSpec(std::string(kBase) + "true}"));
}

}  // namespace
}  // namespace zeus::bso
