// Copyright 2026 The Zeus C++ Authors.
//
// Test helper: a valid JobSpec whose every field differs from JobSpec{}'s
// default, so that a round trip (JSON, the database, Python) that drops or
// mixes up a field fails.

#ifndef ZEUS_SRC_BSO_JOB_SPEC_TEST_UTIL_H_
#define ZEUS_SRC_BSO_JOB_SPEC_TEST_UTIL_H_

#include "zeus/bso/models.h"

namespace zeus::bso::testing {

inline JobSpec EveryFieldSet() {
  JobSpec s;
  s.job_id = "every-1";
  s.job_id_prefix = "every";
  s.batch_sizes = {8, 24, 96};
  s.default_batch_size = 24;
  s.eta_knob = 0.25;
  s.beta_knob = 3.5;
  s.target_metric = 0.125;
  s.higher_is_better_metric = false;
  s.max_epochs = 17;
  s.num_pruning_rounds = 3;
  s.window_size = 5;
  s.mab_prior_mean = -12.5;
  s.mab_prior_precision = 0.0625;
  s.mab_num_explorations = 4;
  s.mab_seed = 123456789012;
  s.policy = "zeus-robust";
  s.max_power = 1234.5;
  s.number_of_gpus = 3;
  s.gpu_model = "NVIDIA H200";
  return s;
}

}  // namespace zeus::bso::testing

#endif  // ZEUS_SRC_BSO_JOB_SPEC_TEST_UTIL_H_
