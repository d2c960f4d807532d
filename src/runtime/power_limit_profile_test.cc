// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

#include <nlohmann/json.hpp>

#include "testing/temp_dir.h"

namespace zeus::runtime {
namespace {

using ::testing::HasSubstr;

PowerLimitProfileExpectation ExpectedJob() {
  return {"Fake V100", {100'000, 250'000}, 2, {250'000, 200'000, 150'000, 100'000}};
}

PowerLimitProfileFile Full() {
  PowerLimitProfileFile f;
  f.measurements = {{250, 100.5, 1.0}, {200, 90.25, 1.1}, {150, 80, 1.3}, {100, 70, 2}};
  f.gpu_model = "Fake V100";
  f.constraints_mw = device::PowerLimitConstraints{100'000, 250'000};
  f.gpu_count = 2;
  return f;
}

TEST(PowerLimitProfileTest, RoundTripsInTheOriginalFormatPlusHardwareKeys) {
  testing::TempDir tmp;
  const std::string path = tmp.File("profile.json");
  ASSERT_TRUE(SavePowerLimitProfile(path, Full()));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str());
  EXPECT_EQ(doc["measurements"][0]["power_limit"], 250);
  EXPECT_TRUE(doc["measurements"][0]["power_limit"].is_number_integer());
  EXPECT_EQ(doc["measurements"][1]["energy"], 90.25);
  EXPECT_EQ(doc["measurements"][3]["time"], 2.0);
  EXPECT_EQ(doc["gpu_model"], "Fake V100");
  auto loaded = LoadPowerLimitProfile(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  ASSERT_EQ(loaded->measurements.size(), 4u);
  EXPECT_EQ(loaded->measurements[1].power_limit_w, 200);
  EXPECT_EQ(loaded->measurements[1].energy_j, 90.25);
  EXPECT_EQ(loaded->constraints_mw->max_mw, 250'000u);
  EXPECT_EQ(*loaded->gpu_count, 2);
  EXPECT_TRUE(CheckPowerLimitProfile(*loaded, ExpectedJob(), path));
}

TEST(PowerLimitProfileTest, FractionalWattsAreKept) {
  testing::TempDir tmp;
  PowerLimitProfileFile f = Full();
  f.measurements[0].power_limit_w = 212.5;
  ASSERT_TRUE(SavePowerLimitProfile(tmp.File("p.json"), f));
  EXPECT_EQ(LoadPowerLimitProfile(tmp.File("p.json"))->measurements[0].power_limit_w, 212.5);
}

TEST(PowerLimitProfileTest, LoadsAFileOfTheOriginalZeus) {
  testing::TempDir tmp;
  const std::string path = tmp.Write("p.json", R"({"measurements": [
      {"power_limit": 250, "energy": 10.0, "time": 1.0}, {"power_limit": 200, "energy": 9.0, "time": 1.1},
      {"power_limit": 150, "energy": 8.0, "time": 1.3}, {"power_limit": 100, "energy": 7.0, "time": 2.0}]})");
  auto loaded = LoadPowerLimitProfile(path);
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_FALSE(loaded->gpu_model);
  EXPECT_TRUE(CheckPowerLimitProfile(*loaded, ExpectedJob(), path));
  // Without hardware keys, the limits must be this job's.
  PowerLimitProfileExpectation other = ExpectedJob();
  other.power_limits_mw = {250'000, 175'000, 100'000};
  auto s = CheckPowerLimitProfile(*loaded, other, path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(s.error().message(), HasSubstr("not the ones this job would profile"));
}

TEST(PowerLimitProfileTest, MismatchesAreErrorsThatSayWhat) {
  testing::TempDir tmp;
  const std::string path = tmp.File("p.json");
  PowerLimitProfileExpectation job = ExpectedJob();
  job.gpu_model = "NVIDIA H100";
  auto s = CheckPowerLimitProfile(Full(), job, path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_THAT(s.error().message(), HasSubstr("\"Fake V100\""));
  EXPECT_THAT(s.error().message(), HasSubstr("\"NVIDIA H100\""));
  EXPECT_THAT(s.error().message(), HasSubstr(path));

  job = ExpectedJob();
  job.constraints_mw.max_mw = 300'000;
  EXPECT_THAT(CheckPowerLimitProfile(Full(), job, path).error().message(), HasSubstr("100-250 W"));
  job = ExpectedJob();
  job.gpu_count = 4;
  EXPECT_THAT(CheckPowerLimitProfile(Full(), job, path).error().message(), HasSubstr("2 GPU(s)"));
  PowerLimitProfileFile outside = Full();
  outside.constraints_mw.reset();
  outside.measurements[0].power_limit_w = 260;
  EXPECT_THAT(CheckPowerLimitProfile(outside, ExpectedJob(), path).error().message(), HasSubstr("260 W"));
}

TEST(PowerLimitProfileTest, RejectsMalformedFiles) {
  testing::TempDir tmp;
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"[]", "expected a JSON object"},
      {R"({"measurements": []})", "empty"},
      {R"({"measurement": []})", "unknown key \"measurement\""},
      {R"({"measurements": [{"power_limit": 100, "energy": 1}]})", "needs power_limit"},
      {R"({"measurements": [{"power_limit": 100, "energy": 1, "time": 0}]})", "time: must be > 0"},
      {R"({"measurements": [{"power_limit": 100, "energy": -1, "time": 1}]})", "energy: must be >= 0"},
      {R"({"measurements": [{"power_limit": "100", "energy": 1, "time": 1}]})", "expected a finite number"},
      {R"({"measurements": [{"power_limit": 100, "energy": 1, "time": 1},
                            {"power_limit": 100, "energy": 1, "time": 1}]})", "appears twice"},
      {R"({"measurements": [{"power_limit": 100, "energy": 1, "time": 1}], "gpu_count": 0})", "gpu_count"},
  };
  for (const Case& c : cases) {
    const std::string path = tmp.Write("bad.json", c.text);
    auto loaded = LoadPowerLimitProfile(path);
    ASSERT_FALSE(loaded) << c.text;
    EXPECT_EQ(loaded.error().code(), ErrorCode::kInvalidArgument) << c.text;
    EXPECT_THAT(loaded.error().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(loaded.error().message(), HasSubstr(path)) << c.text;
  }
  EXPECT_EQ(LoadPowerLimitProfile(tmp.File("missing.json")).error().code(), ErrorCode::kNotFound);
}

// A FIFO (or a directory) given as the profile is refused at once, naming the
// path: opening a FIFO for reading would wait for ever for a writer.
TEST(PowerLimitProfileTest, ProfileThatIsNotARegularFileIsRefusedWithoutBlocking) {
  testing::TempDir tmp;
  const std::string fifo = tmp.File("profile.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::future<Result<PowerLimitProfileFile>> loaded =
      std::async(std::launch::async, [&] { return LoadPowerLimitProfile(fifo); });
  if (loaded.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Release the blocked reader (a writer that closes at once: it reads EOF), then fail.
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    loaded.wait();
    FAIL() << "loading a FIFO blocked";
  }
  Result<PowerLimitProfileFile> fifo_result = loaded.get();
  ASSERT_FALSE(fifo_result);
  EXPECT_EQ(fifo_result.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fifo_result.error().message(),
            "power-limit profile " + fifo + " is a FIFO (named pipe); it must be a regular file");
  auto dir = LoadPowerLimitProfile(tmp.path());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(dir.error().message(), HasSubstr(tmp.path() + " is a directory; it must be a regular file"));
}

TEST(PowerLimitProfileTest, SaveFailureNamesThePath) {
  auto s = SavePowerLimitProfile("/nonexistent-dir/p.json", Full());
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().message(), HasSubstr("/nonexistent-dir/p.json"));
}

}  // namespace
}  // namespace zeus::runtime
