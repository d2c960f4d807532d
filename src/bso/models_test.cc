// Copyright 2026 The Zeus C++ Authors.

#include "zeus/bso/models.h"

#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bso/job_spec_test_util.h"
#include "zeus/bso/job_spec_fields.h"

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

// The JSON is made from the field list: every field under its name, and
// back unchanged (EveryFieldSet differs from the defaults in every field).
TEST(ModelsTest, EveryFieldOfTheListRoundTripsUnderItsName) {
  const JobSpec spec = testing::EveryFieldSet();
  const JobSpec defaults;
  const nlohmann::json j = nlohmann::json::parse(ToJson(spec));
  std::size_t fields = 0;
  ForEachJobSpecField([&](const auto& field) {
    EXPECT_NE(spec.*field.member, defaults.*field.member) << field.name << ": EveryFieldSet leaves it at the default";
    EXPECT_TRUE(j.contains(std::string(field.name))) << field.name;
    ++fields;
  });
  EXPECT_EQ(j.size(), fields);
  Parsed<JobSpec> back = ParseJobSpec(ToJson(spec));
  ASSERT_TRUE(back) << back.error().Summary();
  EXPECT_EQ(*back, spec);
}

// The required fields are the list's, in its order.
TEST(ModelsTest, RequiredFieldsAreTheListsOwn) {
  std::vector<std::string> required;
  ForEachJobSpecField([&](const auto& field) {
    if (field.required) required.emplace_back(field.name);
  });
  EXPECT_EQ(required, (std::vector<std::string>{"job_id_prefix", "batch_sizes", "default_batch_size", "max_power",
                                                "number_of_gpus", "gpu_model"}));
  Parsed<JobSpec> empty = ParseJobSpec("{}");
  ASSERT_FALSE(empty);
  std::vector<std::string> missing;
  for (const FieldError& e : empty.error().errors) {
    EXPECT_EQ(e.msg, "field required");
    missing.push_back(e.loc.back());
  }
  EXPECT_EQ(missing, required);
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

// Issue 20: time and energy are bounded (1e12 s, 1e18 J), and the message
// names the field, the value and the range.
TEST(ModelsTest, ReportTimeAndEnergyAreBounded) {
  auto report = [](std::string time, std::string energy) {
    return ParseTrainingResult(R"({"job_id": "p-1", "batch_size": 16, "trial_number": 1, "metric": 1,
                                   "current_epoch": 1, "time": )" +
                               time + R"(, "energy": )" + energy + "}");
  };
  EXPECT_TRUE(report("1e12", "1e18"));
  EXPECT_TRUE(report("0", "0"));
  for (const auto& [time, energy, field, message] : std::vector<std::tuple<std::string, std::string, std::string,
                                                                          std::string>>{
           {"1e308", "1", "time", "at most 1e+12 seconds since training began (got 1e+308)"},
           {"1.0000000000000002e12", "1", "time", "(got 1000000000000.0002)"},
           {"-1e-300", "1", "time", "time must be finite and >= 0"},
           {"1", "1e19", "energy", "energy must be finite and >= 0, at most 1e+18 joules since training began "
                                   "(got 1e+19)"},
           {"1", "-0.5", "energy", "(got -0.5)"}}) {
    Parsed<TrainingResult> r = report(time, energy);
    ASSERT_FALSE(r) << time << " s, " << energy << " J";
    ASSERT_EQ(r.error().errors.size(), 1u);
    EXPECT_EQ(r.error().errors[0].loc, (std::vector<std::string>{"body", field}));
    EXPECT_THAT(r.error().errors[0].msg, ::testing::HasSubstr(message));
  }
}

// And so are what a job's arms are computed from (max_power, the prior).
TEST(ModelsTest, MaxPowerAndThePriorAreBounded) {
  const std::string base = R"({"job_id_prefix": "p", "batch_sizes": [32], "default_batch_size": 32,
                              "number_of_gpus": 1, "gpu_model": "V100", )";
  EXPECT_TRUE(ParseJobSpec(base + R"("max_power": 1e12, "mab_prior_mean": -1e30, "mab_prior_precision": 1e30})"));
  for (const auto& [fields, message] : std::vector<std::pair<std::string, std::string>>{
           {R"("max_power": 1e300)", "max_power: max_power must be positive and at most 1e+12 W"},
           {R"("max_power": 250, "mab_prior_mean": 2e30)",
            "mab_prior_mean: mab_prior_mean must be finite, between -1e+30 and 1e+30 (got 2e+30)"},
           {R"("max_power": 250, "mab_prior_precision": 1e200)",
            "mab_prior_precision: mab_prior_precision must be >= 0 and at most 1e+30 (got 1e+200)"}}) {
    Parsed<JobSpec> spec = ParseJobSpec(base + fields + "}");
    ASSERT_FALSE(spec) << fields;
    EXPECT_THAT(spec.error().Summary(), ::testing::HasSubstr(message));
  }
}

}  // namespace
}  // namespace zeus::bso
