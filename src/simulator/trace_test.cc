// Copyright 2026 The Zeus C++ Authors.

#include "zeus/simulator/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <future>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "simulator/tiny_trace_test_util.h"
#include "testing/temp_dir.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/workload.h"

namespace zeus::simulator {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using tiny_trace::kPowerHeader;
using tiny_trace::kTrainHeader;

TEST(TraceParseTest, ReadsTrainRowsWithNeverReachedTargets) {
  Result<TrainTrace> t = ParseTrainTrace(std::string(kTrainHeader) +
                                             "d,n,32,adam,1e-3,1,0.5,3\n"
                                             "d,n,32,adam,1e-3,2,0.5,nan\r\n"
                                             "d,n,64,adam,1e-3,1,0.5,\n\n",
                                         "train.csv");
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->rows.size(), 3U);
  EXPECT_EQ(t->rows[0].dataset, "d");
  EXPECT_EQ(t->rows[0].batch_size, 32);
  EXPECT_EQ(t->rows[0].run, 1);
  EXPECT_EQ(t->rows[0].target_metric, 0.5);
  EXPECT_EQ(t->rows[0].target_epoch, 3);
  EXPECT_TRUE(std::isnan(t->rows[1].target_epoch));
  EXPECT_TRUE(std::isnan(t->rows[2].target_epoch));
}

TEST(TraceParseTest, ColumnsAreFoundByNameAndQuotedFieldsWork) {
  Result<PowerTrace> p = ParsePowerTrace(
      "average_power,time_per_epoch,power_limit,optimizer,batch_size,network,dataset,extra\n"
      "150.5,10.25,200,\"ad,am\",32,n,d,ignored\n",
      "p.csv", "x100");
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->rows.size(), 1U);
  EXPECT_EQ(p->gpu, "x100");
  EXPECT_EQ(p->rows[0].optimizer, "ad,am");
  EXPECT_EQ(p->rows[0].power_limit_w, 200);
  EXPECT_EQ(p->rows[0].time_per_epoch_s, 10.25);
  EXPECT_EQ(p->rows[0].average_power_w, 150.5);
}

TEST(TraceParseTest, NumbersAreCorrectlyRounded) {
  // pandas' fast parser reads this 1 ulp off; strtod-exact parsing does not.
  Result<PowerTrace> p =
      ParsePowerTrace(std::string(kPowerHeader) + "d,n,48,adamw,150,6186.11,127.72441888951339\n", "p.csv", "g");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rows[0].average_power_w, std::strtod("127.72441888951339", nullptr));
}

TEST(TraceParseTest, MissingColumnNamesFileLineAndColumn) {
  Result<PowerTrace> p = ParsePowerTrace("dataset,network,batch_size,optimizer,power_limit,average_power\n", "p.csv", "g");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(p.error().message(), StartsWith("p.csv:1: missing column 'time_per_epoch'"));
}

TEST(TraceParseTest, NonNumericCellNamesFileLineColumnAndValue) {
  Result<PowerTrace> p = ParsePowerTrace(std::string(kPowerHeader) +
                                             "d,n,32,adam,200,10,150\n"
                                             "d,n,32,adam,175,abc,140\n",
                                         "summary_power_g.csv", "g");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(), "summary_power_g.csv:3:6: column 'time_per_epoch': \"abc\" is not a number");
}

TEST(TraceParseTest, BadCellsAreErrors) {
  struct BadCell {
    std::string row;
    std::string expected;
  };
  const std::vector<BadCell> cases = {
      {"d,n,-4,adam,1e-3,1,0.5,3\n", "t.csv:2:3: column 'batch_size': \"-4\" is not a positive integer"},
      {"d,n,32.5,adam,1e-3,1,0.5,3\n", "t.csv:2:3: column 'batch_size'"},
      {"d,n,32,adam,1e-3,1,inf,3\n", "t.csv:2:7: column 'target_metric': \"inf\" is not a finite number"},
      {"d,n,32,adam,1e-3,1,0.5,-1\n", "t.csv:2:8: column 'target_epoch'"},
      {",n,32,adam,1e-3,1,0.5,3\n", "t.csv:2:1: column 'dataset': is empty"},
      {"d,n,32,adam,1e-3,1,0.5\n", "t.csv:2: 7 fields, but the header has 8"},
      {"d,n,32,\"adam,1e-3,1,0.5,3\n", "t.csv:2: a quoted field is never closed"},
      {"d,n,32,\"adam\"x,1e-3,1,0.5,3\n", "t.csv:2: unexpected \"x\" after a closing quote"},
  };
  for (const BadCell& c : cases) {
    Result<TrainTrace> t = ParseTrainTrace(kTrainHeader + c.row, "t.csv");
    ASSERT_FALSE(t) << c.row;
    EXPECT_THAT(t.error().message(), StartsWith(c.expected)) << c.row;
  }
  EXPECT_THAT(ParseTrainTrace("", "t.csv").error().message(), HasSubstr("empty"));
}

TEST(TraceLoadTest, MissingFileIsNotFoundAndNamesThePath) {
  Result<TrainTrace> t = LoadTrainTrace("/nonexistent/summary_train.csv");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(t.error().message(), HasSubstr("/nonexistent/summary_train.csv"));
}

// A directory where the CSV file belongs: named as such, not read as an
// empty file ("the file is empty (expected a CSV header)").
TEST(TraceLoadTest, DirectoryWhereTheFileBelongsIsNamed) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("summary_train.csv");
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  Result<TrainTrace> t = LoadTrainTrace(path);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(t.error().message(), path + " is a directory, not a CSV file; a trace must be a regular file");
  Result<PowerTrace> p = LoadPowerTrace(path, "a40");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(), path + " is a directory, not a CSV file; a trace must be a regular file");
}

// A FIFO where the CSV file belongs is refused at once (kInvalidArgument), not
// opened: opening it for reading would wait for ever for a writer.
TEST(TraceLoadTest, FifoWhereTheFileBelongsIsRefusedWithoutBlocking) {
  zeus::testing::TempDir dir;
  const std::string path = dir.File("summary_power_a40.csv");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  for (int which = 0; which < 2; ++which) {
    std::future<Error> loaded = std::async(std::launch::async, [&] {
      if (which == 0) {
        Result<TrainTrace> t = LoadTrainTrace(path);
        return t ? Error(ErrorCode::kOk, "loaded") : t.error();
      }
      Result<PowerTrace> p = LoadPowerTrace(path, "a40");
      return p ? Error(ErrorCode::kOk, "loaded") : p.error();
    });
    if (loaded.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      // Release the blocked reader (a writer that closes at once: it reads EOF), then fail.
      const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (writer >= 0) ::close(writer);
      loaded.wait();
      FAIL() << "loading a FIFO blocked (which=" << which << ")";
    }
    const Error e = loaded.get();
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.message();
    EXPECT_EQ(e.message(), path + " is a FIFO (named pipe), not a CSV file; a trace must be a regular file");
  }
}

TEST(WorkloadTest, BuiltinDefaultsAndOverrides) {
  Result<WorkloadSpec> w = ResolveWorkload("librispeech");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->name(), "librispeech/deepspeech2");
  EXPECT_EQ(w->optimizer, "adamw");
  EXPECT_EQ(w->target_metric, 40.0);
  EXPECT_EQ(w->max_epochs, 16);
  EXPECT_EQ(w->default_batch_size, 192);
  Result<WorkloadSpec> o = ResolveWorkload("cifar100/shufflenetv2", {.target_metric = 0.5, .max_epochs = 50});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->target_metric, 0.5);
  EXPECT_EQ(o->max_epochs, 50);
  EXPECT_EQ(o->default_batch_size, 1024);
  EXPECT_EQ(BuiltinWorkloads().size(), 6U);
}

TEST(WorkloadTest, OtherWorkloadsNeedEveryField) {
  Result<WorkloadSpec> w = ResolveWorkload("mnist/lenet", {.optimizer = "sgd"});
  ASSERT_FALSE(w);
  EXPECT_THAT(w.error().message(), HasSubstr("target metric"));
  EXPECT_THAT(w.error().message(), HasSubstr("default batch size"));
  Result<WorkloadSpec> full = ResolveWorkload(
      "mnist/lenet", {.optimizer = "sgd", .target_metric = 0.99, .max_epochs = 10, .default_batch_size = 64});
  ASSERT_TRUE(full) << full.error().message();
  EXPECT_EQ(full->network, "lenet");
  EXPECT_FALSE(ResolveWorkload("librispeech", {.max_epochs = 0}));
}

// A two-run, two-batch-size, two-limit trace with hand-computable values.
class JobTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TrainTrace> t = ParseTrainTrace(std::string(kTrainHeader) +
                                               "w,net,32,sgd,0.1,1,0.9,3\n"
                                               "w,net,32,sgd,0.1,2,0.9,nan\n"
                                               "w,net,32,sgd,0.1,1,0.5,1\n"  // another target
                                               "w,net,64,sgd,0.1,1,0.9,2\n"
                                               "w,net,128,sgd,0.1,1,0.5,2\n"  // no run at 0.9
                                               "other,net,8,sgd,0.1,1,0.9,1\n",
                                           "train.csv");
    ASSERT_TRUE(t) << t.error().message();
    Result<PowerTrace> p = ParsePowerTrace(std::string(kPowerHeader) +
                                               "w,net,32,sgd,100,20,80\n"
                                               "w,net,32,sgd,200,10,150\n"
                                               "w,net,64,sgd,200,8,180\n"
                                               "w,net,128,sgd,200,6,190\n"
                                               "other,net,8,sgd,300,1,100\n"
                                               "unjoined,net,8,sgd,400,1,100\n",
                                           "power.csv", "g");
    ASSERT_TRUE(p) << p.error().message();
    train_ = *t;
    power_ = *p;
  }
  WorkloadSpec Spec(int default_bs = 256) { return {"w", "net", "sgd", 0.9, 5, default_bs}; }
  TrainTrace train_;
  PowerTrace power_;
};

TEST_F(JobTraceTest, SliceHasPathsProfilesAndConstants) {
  Result<JobTrace> job = BuildJobTrace(train_, power_, Spec(64));
  ASSERT_TRUE(job) << job.error().message();
  EXPECT_EQ(job->max_power_w, 300);           // joined rows only: 400 W has no train row
  EXPECT_EQ(job->batch_sizes, (std::vector<int>{32, 64, 128}));  // whatever the target
  EXPECT_EQ(job->default_batch_size, 64);
  ASSERT_EQ(job->per_batch_size.size(), 2U);  // 128 has no run at 0.9
  EXPECT_EQ(job->power_limits_w, (std::vector<double>{100, 200}));
  EXPECT_EQ(job->default_recurrences, 2 * 2 * 2);
  const BatchSizeTrace* bs32 = job->Find(32);
  ASSERT_NE(bs32, nullptr);
  EXPECT_EQ(bs32->max_power_limit_w, 200);
  EXPECT_EQ(bs32->power_limits_w, (std::vector<double>{200, 100}));
  ASSERT_EQ(bs32->paths[0].size(), 2U);  // two runs at 200 W
  EXPECT_EQ(bs32->paths[0][0].run, 1);
  EXPECT_EQ(bs32->paths[0][0].target_epoch, 3);
  EXPECT_EQ(bs32->paths[0][0].energy_per_epoch_j, 1500);
  EXPECT_TRUE(std::isnan(bs32->paths[0][1].target_epoch));
  EXPECT_EQ(bs32->paths[1][0].energy_per_epoch_j, 1600);
  // Rows (run 1: 100 W, 200 W; run 2: 100 W, 200 W): energies 1600, 1500, 1600, 1500.
  EXPECT_EQ(bs32->profiling_epoch_energy_j, 1550);
  EXPECT_EQ(bs32->profiling_epoch_time_s, 15);
  EXPECT_EQ(job->Find(128), nullptr);
}

TEST_F(JobTraceTest, UnknownWorkloadNamesTheFileAndWhatIsThere) {
  WorkloadSpec spec = Spec(64);
  spec.optimizer = "adam";
  Result<JobTrace> job = BuildJobTrace(train_, power_, spec);
  ASSERT_FALSE(job);
  EXPECT_THAT(job.error().message(), StartsWith("train.csv: no runs of workload w/net with optimizer adam"));
  EXPECT_THAT(job.error().message(), HasSubstr("w/net (sgd)"));
}

TEST_F(JobTraceTest, UnknownTargetAndDefaultBatchSizeAreErrors) {
  WorkloadSpec spec = Spec(64);
  spec.target_metric = 0.7;
  Result<JobTrace> job = BuildJobTrace(train_, power_, spec);
  ASSERT_FALSE(job);
  EXPECT_THAT(job.error().message(), HasSubstr("target_metric 0.7 (its targets: 0.5, 0.9)"));
  Result<JobTrace> bad_default = BuildJobTrace(train_, power_, Spec(100));
  ASSERT_FALSE(bad_default);
  EXPECT_THAT(bad_default.error().message(), HasSubstr("default batch size 100"));
  // 256 is capped to the largest measured size, 128, which has no run at 0.9.
  Result<JobTrace> capped = BuildJobTrace(train_, power_, Spec(256));
  ASSERT_FALSE(capped);
  EXPECT_THAT(capped.error().message(), HasSubstr("default batch size 128"));
}

}  // namespace
}  // namespace zeus::simulator
