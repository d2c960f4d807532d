// Copyright 2026 The Zeus C++ Authors.
//
// zeus::BatchSizeOptimizer against an in-process `zeus bso-server` (SQLite),
// with FakeGpus and a fake clock so that time and energy are exact.

#include "zeus/runtime/batch_size_optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/ports.h"
#include "testing/temp_dir.h"
#include "testing/test_monitor.h"
#include "zeus/bso/server.h"

namespace zeus::runtime {
namespace {

using ::testing::HasSubstr;

class BatchSizeOptimizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bso::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.database_url = "sqlite:///" + dir_.File("bso.db");
    options.threads = 1;
    options.log_level = "warn";
    Result<std::unique_ptr<bso::BsoServer>> server = bso::BsoServer::Start(options);
    ASSERT_TRUE(server) << server.error().message();
    server_ = std::move(*server);
    std::vector<std::unique_ptr<device::Gpu>> list;
    for (unsigned i = 0; i < 2; ++i) {
      testing::FakeGpuConfig config;
      config.power_w = 200;
      config.max_power_limit_mw = 250'500;  // floored to 250 W, as the original
      list.push_back(std::make_unique<testing::FakeGpu>(config, clock_, i));
    }
    gpus_ = std::make_unique<device::GpuSet>("test", std::move(list));
    monitor_ = testing::MakeTestMonitor(gpus_.get(), &clock_);
  }

  static bso::JobSpec Job() {
    bso::JobSpec job;
    job.job_id = "train-1";
    job.job_id_prefix = "train";
    job.batch_sizes = {32, 64, 128};
    job.default_batch_size = 64;
    job.target_metric = 0.8;
    job.max_epochs = 5;
    return job;
  }

  void Epoch(double seconds) { clock_.Advance(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(seconds))); }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  std::unique_ptr<bso::BsoServer> server_;
  std::unique_ptr<device::GpuSet> gpus_;
  std::unique_ptr<monitor::Monitor> monitor_;
};

TEST_F(BatchSizeOptimizerTest, RegistersWithTheGpuConfigurationAndTrains) {
  auto bso = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  ASSERT_TRUE(bso) << bso.error().message();
  EXPECT_EQ((*bso)->job().max_power, 500.0);  // 250 W x 2 GPUs
  EXPECT_EQ((*bso)->job().number_of_gpus, 2);
  EXPECT_EQ((*bso)->job().gpu_model, "Fake V100");
  Result<int> bs = (*bso)->GetBatchSize();
  ASSERT_TRUE(bs) << bs.error().message();
  EXPECT_EQ(*bs, 64);
  EXPECT_EQ((*bso)->GetBatchSize().value(), 64);  // cached
  ASSERT_TRUE((*bso)->OnTrainBegin());
  Epoch(10);
  ASSERT_TRUE((*bso)->OnEpochEnd());
  Epoch(100);  // evaluation: not charged
  Result<EpochDecision> first = (*bso)->OnEvaluate(0.5);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_FALSE(first->stop_train);
  EXPECT_EQ((*bso)->current_epoch(), 1);
  Epoch(10);
  Result<EpochDecision> second = (*bso)->OnEvaluate(0.9);
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->stop_train);
  EXPECT_TRUE(second->converged);
  EXPECT_EQ(second->message, "Train succeeded");
  EXPECT_DOUBLE_EQ((*bso)->time_s(), 20.0);
  EXPECT_DOUBLE_EQ((*bso)->energy_j(), 20.0 * 200.0 * 2);  // two GPUs at 200 W
  EXPECT_TRUE((*bso)->training_finished());
  // After the final decision nothing more is sent.
  Result<EpochDecision> again = (*bso)->OnEvaluate(0.1);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->converged);
}

TEST_F(BatchSizeOptimizerTest, AnUnfinishedRunIsMarkedFailedAndExploredAgain) {
  {
    auto bso = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
    ASSERT_TRUE(bso);
    ASSERT_EQ((*bso)->GetBatchSize().value(), 64);
    ASSERT_TRUE((*bso)->OnTrainBegin());
    Epoch(5);
  }  // destroyed before its final report: PATCH /trials
  auto next = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)->GetBatchSize().value(), 64);  // explored again, not a Concurrent trial
  EXPECT_EQ((*next)->trial_number(), 2);
}

TEST_F(BatchSizeOptimizerTest, FinishEndsTheRunAsReported) {
  auto bso = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  ASSERT_TRUE(bso);
  ASSERT_TRUE((*bso)->GetBatchSize());
  ASSERT_TRUE((*bso)->OnTrainBegin());
  Epoch(3);
  ASSERT_TRUE((*bso)->OnEvaluate(0.1));
  Epoch(3);
  Result<EpochDecision> done = (*bso)->Finish(0.2);
  ASSERT_TRUE(done) << done.error().message();
  EXPECT_TRUE(done->stop_train);
  EXPECT_FALSE(done->converged);
  EXPECT_THAT(done->message, HasSubstr("stopped by the client at epoch 1"));
  EXPECT_DOUBLE_EQ((*bso)->time_s(), 6.0);
  // This run was recorded as not converged: pruning turns upwards from 64.
  auto next = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)->GetBatchSize().value(), 128);
}

TEST_F(BatchSizeOptimizerTest, ErrorsAreClear) {
  testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  const std::string unreachable_url = "http://" + refusing.address();
  auto unreachable = BatchSizeOptimizer::Create(*gpus_, *monitor_, unreachable_url, Job(), 0,
                                                BatchSizeOptimizerOptions{{std::chrono::milliseconds(500),
                                                                           std::chrono::milliseconds(500), 2,
                                                                           std::chrono::milliseconds(10),
                                                                           std::chrono::milliseconds(10)},
                                                                          false});
  ASSERT_FALSE(unreachable);
  EXPECT_EQ(unreachable.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(unreachable.error().message(), HasSubstr("cannot connect to " + unreachable_url + ": "));

  bso::JobSpec bad = Job();
  bad.default_batch_size = 48;
  auto invalid = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), bad);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(invalid.error().message(), HasSubstr("default_batch_size 48 is not in batch_sizes"));

  auto rank1 = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job(), /*rank=*/1);
  ASSERT_TRUE(rank1);
  Result<int> bs = (*rank1)->GetBatchSize();
  ASSERT_FALSE(bs);
  EXPECT_EQ(bs.error().code(), ErrorCode::kFailedPrecondition);

  auto ok = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  ASSERT_TRUE(ok);
  Status early = (*ok)->OnTrainBegin();
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code(), ErrorCode::kFailedPrecondition);
}

TEST_F(BatchSizeOptimizerTest, AnotherRankAdoptsRankZerosTrialAndGetsItsOutcome) {
  std::unique_ptr<monitor::Monitor> rank1_monitor = testing::MakeTestMonitor(gpus_.get(), &clock_);
  auto rank0 = BatchSizeOptimizer::Create(*gpus_, *monitor_, server_->url(), Job());
  auto rank1 = BatchSizeOptimizer::Create(*gpus_, *rank1_monitor, server_->url(), Job(), /*rank=*/1);
  ASSERT_TRUE(rank0 && rank1);
  ASSERT_EQ((*rank0)->GetBatchSize().value(), 64);
  EXPECT_EQ((*rank0)->AdoptTrial({"train-1", 64, 1, std::nullopt}).error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ((*rank1)->AdoptTrial({"train-1", 48, 1, std::nullopt}).error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ((*rank1)->AdoptTrial({"", 64, 1, std::nullopt}).error().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE((*rank1)->AdoptTrial({"train-1", 64, (*rank0)->trial_number(), std::nullopt}));
  EXPECT_EQ((*rank1)->batch_size(), 64);
  ASSERT_TRUE((*rank0)->OnTrainBegin());
  ASSERT_TRUE((*rank1)->OnTrainBegin());
  Epoch(10);
  Result<EpochDecision> first = (*rank0)->OnEvaluate(0.9);
  ASSERT_TRUE(first && first->converged);
  Result<EpochDecision> other = (*rank1)->OnEvaluate(0.9);
  ASSERT_TRUE(other) << other.error().message();
  EXPECT_TRUE(other->stop_train);
  EXPECT_TRUE(other->converged);
  EXPECT_THAT(other->message, HasSubstr("already reported"));
  EXPECT_EQ((*rank1)->AdoptTrial({"train-1", 64, 1, std::nullopt}).error().code(), ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace zeus::runtime
