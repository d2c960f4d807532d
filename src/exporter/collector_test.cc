// Copyright 2026 The Zeus C++ Authors.

#include "zeus/exporter/collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testing/fake_clock.h"
#include "testing/fake_gpu.h"
#include "testing/wait.h"
#include "testing/result.h"

namespace zeus::exporter {
namespace {

class CollectorTest : public ::testing::Test {
 protected:
  CollectorTest() {
    std::vector<std::unique_ptr<device::Gpu>> gpus;
    testing::FakeGpuConfig a;
    a.uuid = "GPU-a";
    a.power_w = 150;  // limit 250 W
    testing::FakeGpuConfig b;
    b.uuid = "GPU-b";
    b.name = "Fake A40";
    b.power_w = 80;
    auto gpu_a = std::make_unique<testing::FakeGpu>(a, clock_, 0);
    auto gpu_b = std::make_unique<testing::FakeGpu>(b, clock_, 1);
    b_ = gpu_b.get();
    gpus.push_back(std::move(gpu_a));
    gpus.push_back(std::move(gpu_b));
    gpus_ = std::make_unique<device::GpuSet>("1.0", std::move(gpus));
    CollectorOptions options;
    options.hostname = "h1";
    options.log = [this](std::string_view line) { log_.emplace_back(line); };
    auto collector = Collector::Create(gpus_.get(), nullptr, options);
    collector_ = zeus::testing::Unwrap(std::move(collector));
  }

  testing::FakeClock clock_;
  testing::FakeGpu* b_ = nullptr;
  std::unique_ptr<device::GpuSet> gpus_;
  std::vector<std::string> log_;
  std::unique_ptr<Collector> collector_;
};

bool Contains(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST_F(CollectorTest, ExportsEveryGpuWithItsLabels) {
  clock_.Advance(std::chrono::seconds(2));  // 150 W x 2 s on GPU a's counter
  const std::string text = collector_->Scrape();
  EXPECT_TRUE(Contains(text, R"(zeus_gpu_power_watts{gpu="0",hostname="h1",model="Fake V100",uuid="GPU-a"} 150)"))
      << text;
  EXPECT_TRUE(
      Contains(text, R"(zeus_gpu_power_limit_watts{gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 250)"));
  EXPECT_TRUE(
      Contains(text, R"(zeus_gpu_energy_joules_total{gpu="0",hostname="h1",model="Fake V100",uuid="GPU-a"} 300)"));
  EXPECT_TRUE(
      Contains(text, R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 1)"));
  EXPECT_NE(text.find("# TYPE zeus_gpu_energy_joules_total counter"), std::string::npos);
  EXPECT_NE(text.find("zeus_exporter_scrape_duration_seconds{hostname=\"h1\"} "), std::string::npos);
  EXPECT_NE(text.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_TRUE(log_.empty());
}

TEST(CollectorCarbonTest, EmissionsCounterIsEnergyTimesIntensity) {
  testing::FakeClock clock;
  testing::FakeGpuConfig a;
  a.uuid = "GPU-a";
  a.power_w = 150;
  std::vector<std::unique_ptr<device::Gpu>> list;
  list.push_back(std::make_unique<testing::FakeGpu>(a, clock, 0));
  device::GpuSet gpus("1.0", std::move(list));
  CollectorOptions options;
  options.hostname = "h1";
  options.carbon_intensity_g_per_kwh = 400.0;
  options.carbon_zone = "DEU";
  auto collector = zeus::testing::Unwrap(Collector::Create(&gpus, nullptr, options));
  clock.Advance(std::chrono::seconds(36));  // 150 W x 36 s = 5400 J = 1.5 Wh -> 0.6 g at 400 g/kWh
  const std::string text = collector->Scrape();
  EXPECT_TRUE(Contains(
      text, R"(zeus_gpu_emissions_grams_total{gpu="0",hostname="h1",model="Fake V100",uuid="GPU-a",zone="DEU"} 0.6)"))
      << text;
  EXPECT_NE(text.find("# TYPE zeus_gpu_emissions_grams_total counter"), std::string::npos);
}

TEST_F(CollectorTest, NoEmissionsWithoutCarbon) {
  EXPECT_EQ(collector_->Scrape().find("zeus_gpu_emissions_grams_total"), std::string::npos);
}

// Issue 20: a GPU whose driver call hangs stalled the scrape (and, when only
// its power sampling hung, stayed up while its series vanished, unlogged).
TEST_F(CollectorTest, AHungGpuIsDownAndLoggedWithoutStallingTheScrape) {
  b_->HangOn("PowerLimitMw");
  for (int i = 0; i < 2; ++i) {
    const std::string text = collector_->Scrape();  // waits at most device_timeout for GPU b
    EXPECT_TRUE(
        Contains(text, R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 0)"))
        << text;
    EXPECT_TRUE(
        Contains(text, R"(zeus_device_up{device="gpu",gpu="0",hostname="h1",model="Fake V100",uuid="GPU-a"} 1)"));
    EXPECT_NE(text.find(R"(zeus_gpu_power_limit_watts{gpu="0")"), std::string::npos);
  }
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_THAT(log_[0], ::testing::HasSubstr("GPU 1 is down: it did not answer within 1000 ms"));
  b_->ReleaseHangs();
  EXPECT_TRUE(zeus::testing::WaitUntil([&] {
    return Contains(collector_->Scrape(),
                    R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 1)");
  }));
  EXPECT_THAT(log_.back(), ::testing::HasSubstr("GPU 1 is up again"));
}

TEST_F(CollectorTest, AFailingGpuIsDownAndLoggedOncePerChange) {
  b_->FailWith("PowerLimitMw", Error(ErrorCode::kUnavailable, "GPU is lost"));
  for (int i = 0; i < 3; ++i) {
    const std::string text = collector_->Scrape();
    EXPECT_TRUE(
        Contains(text, R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 0)"));
    EXPECT_EQ(text.find(R"(zeus_gpu_power_limit_watts{gpu="1")"), std::string::npos);
    // The other GPU is untouched.
    EXPECT_TRUE(
        Contains(text, R"(zeus_device_up{device="gpu",gpu="0",hostname="h1",model="Fake V100",uuid="GPU-a"} 1)"));
    EXPECT_NE(text.find(R"(zeus_gpu_power_limit_watts{gpu="0")"), std::string::npos);
  }
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0], "GPU 1 is down: GPU is lost");
  b_->ClearFailures();
  EXPECT_TRUE(Contains(collector_->Scrape(),
                       R"(zeus_device_up{device="gpu",gpu="1",hostname="h1",model="Fake A40",uuid="GPU-b"} 1)"));
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1], "GPU 1 is up again");
}

TEST(MetricsServerTest, RejectsAMalformedListenAddress) {
  auto collector = Collector::Create(nullptr, nullptr, {});
  ASSERT_TRUE(collector);
  for (const char* bad : {"9400", ":9400", "localhost:", "localhost:94x0"}) {
    auto server = MetricsServer::Start(**collector, bad);
    ASSERT_FALSE(server) << bad;
    EXPECT_EQ(server.error().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace zeus::exporter
