// Copyright 2026 The Zeus C++ Authors.
//
// Two ranks under `mpirun -np 2`, one emulated GPU each (CUDA_VISIBLE_DEVICES
// per rank), stepping in lockstep on the emulator's shared manual clock. Both
// ranks must report the same limit, and it must be the optimum of the summed
// energy and the slowest rank's time, computed here by hand from the curves.

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "zeus/device/discovery.h"

namespace zeus {
namespace {

using json = nlohmann::json;

struct Curve {
  std::vector<double> power_w, iteration_s;  // at 100, 150, 200, 250, 300 W
};
const std::vector<double> kLimitsW = {100, 150, 200, 250, 300};
// GPU 0 alone would choose 250 W (zeus-cost, eta 0.5); with GPU 1 the job's
// optimum is 200 W.
const Curve kGpu0 = {{100, 150, 200, 240, 260}, {2.0, 1.4, 1.1, 1.0, 0.98}};
const Curve kGpu1 = {{60, 90, 120, 200, 280}, {1.5, 1.2, 1.05, 1.0, 0.99}};

json Gpu(const Curve& c) {
  return {{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
          {"max_power_limit_w", 300}, {"default_power_limit_w", 300}, {"power_limit_w", 275},
          {"energy_counter", true},
          {"workload", {{"power_limits_w", kLimitsW}, {"power_w", c.power_w}, {"iteration_time_s", c.iteration_s}}}};
}

// argmin over limits (high to low, ties to the higher) of the Zeus cost.
double Optimum(const std::vector<const Curve*>& gpus, double eta) {
  double best = std::numeric_limits<double>::infinity();
  double best_w = 0;
  for (std::size_t k = kLimitsW.size(); k-- > 0;) {
    double power = 0;
    double step = 0;
    for (const Curve* c : gpus) {
      power += std::min(c->power_w[k], kLimitsW[k]);
      step = std::max(step, c->iteration_s[k]);
    }
    const double cost = eta * power * step + (1 - eta) * 300.0 * static_cast<double>(gpus.size()) * step;
    if (cost < best) {
      best = cost;
      best_w = kLimitsW[k];
    }
  }
  return best_w;
}

std::string AsanOptionsWithoutLeakCheck() {
  const char* current = std::getenv("ASAN_OPTIONS");
  return std::string(current != nullptr && *current != '\0' ? std::string(current) + ":" : "") + "detect_leaks=0";
}

TEST(PowerLimitMpiTest, BothRanksChooseTheOptimumOfTheWholeJob) {
  ASSERT_EQ(Optimum({&kGpu0}, 0.5), 250);  // what rank 0 alone would pick
  const double expected_w = Optimum({&kGpu0, &kGpu1}, 0.5);
  ASSERT_EQ(expected_w, 200);

  testing::TempDir tmp;
  // Limits apply at once (no settling ramp) and the energy counters move
  // continuously, so each profiling window's energy is the curve's power x
  // time exactly.
  json scenario = {{"clock", "manual"},
                   {"state_file", tmp.File("state")},
                   {"power_settle_ms", 0},
                   {"counter_update_period_ms", 0},
                   {"gpus", {Gpu(kGpu0), Gpu(kGpu1)}}};
  const std::string config = tmp.Write("scenario.json", scenario.dump());
  std::vector<std::string> argv = {"/usr/bin/timeout", "300", ZEUS_TEST_MPIEXEC};
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  argv.push_back("--oversubscribe");
  for (int rank = 0; rank < 2; ++rank) {
    if (rank > 0) argv.push_back(":");
    for (const std::string& a : std::vector<std::string>{"-np", "1", "/usr/bin/env", "CUDA_VISIBLE_DEVICES=" + std::to_string(rank),
                          std::string(ZEUS_TEST_TRAIN_PATH), "--mpi", "--epochs", "2", "--steps-per-epoch", "40",
                          "--wait-steps", "1", "--warmup-steps", "2", "--profile-steps", "5", "--stride-w", "50",
                          "--selector", "zeus-cost", "--eta", "0.5", "--json", "-o",
                          tmp.File("rank" + std::to_string(rank) + ".json")}) {
      argv.push_back(a);
    }
  }
  auto r = testing::RunProcess(argv, {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
                                      {"ZEUS_EMULATOR_CONFIG", config},
                                      {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                                      {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
                                      // OpenMPI's own allocations look leaked to LeakSanitizer.
                                      {"ASAN_OPTIONS", AsanOptionsWithoutLeakCheck()}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  std::vector<json> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(tmp.File("rank" + std::to_string(rank) + ".json"));
    ASSERT_TRUE(in.good()) << r.err;
    ranks.push_back(json::parse(in));
  }
  for (int rank = 0; rank < 2; ++rank) {
    const json& out = ranks[static_cast<std::size_t>(rank)];
    EXPECT_EQ(out["rank"], rank);
    EXPECT_EQ(out["world_size"], 2);
    EXPECT_EQ(out["total_gpus"], 2);
    EXPECT_EQ(out["optimal_power_limit_w"].get<double>(), expected_w) << out.dump(2);
    // Each measurement is the job's: summed energy, the slowest rank's time.
    ASSERT_EQ(out["measurements"].size(), kLimitsW.size());
    for (std::size_t i = 0; i < kLimitsW.size(); ++i) {
      const std::size_t k = kLimitsW.size() - 1 - i;
      const double step = std::max(kGpu0.iteration_s[k], kGpu1.iteration_s[k]);
      const json& m = out["measurements"][i];
      EXPECT_EQ(m["power_limit_w"].get<double>(), kLimitsW[k]);
      EXPECT_NEAR(m["time_s"].get<double>(), 5 * step, 1e-9);
      EXPECT_NEAR(m["energy_j"].get<double>(), (kGpu0.power_w[k] + std::min(kGpu1.power_w[k], kLimitsW[k])) * 5 * step,
                  0.005);
    }
  }
  EXPECT_EQ(ranks[0]["measurements"], ranks[1]["measurements"]);

  // Both GPUs are back at their original 275 W, seen from this process.
  testing::ScopedEnv env("ZEUS_EMULATOR_CONFIG", config);
  testing::ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  device::GpuOptions options;
  options.nvml_library = ZEUS_TEST_EMULATOR_PATH;
  auto gpus = device::OpenGpus(options);
  ASSERT_TRUE(gpus) << gpus.error().message();
  EXPECT_EQ((*gpus)->gpu(0).PowerLimitMw().value(), 275'000u);
  EXPECT_EQ((*gpus)->gpu(1).PowerLimitMw().value(), 275'000u);
}

}  // namespace
}  // namespace zeus
