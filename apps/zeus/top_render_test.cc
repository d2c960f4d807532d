// Copyright 2026 The Zeus C++ Authors.
//
// `zeus top`'s frames from hand-made tracker views: the layout, the order of
// processes, the unattributed and other rows, truncation, a GPU without
// processes, a GPU with an error, and the JSON form.

#include "apps/zeus/top_render.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using monitor::GpuIntervalView;
using monitor::ProcessKey;
using std::chrono::seconds;

GpuIntervalView View(std::size_t gpu, std::uint32_t power_mw, std::vector<monitor::ProcessEnergy> shares,
                     std::int64_t unattributed_mj = 0) {
  GpuIntervalView v;
  v.gpu_index = gpu;
  v.duration = seconds(2);
  v.power_mw = power_mw;
  v.idle_power_mw = 60'000;
  v.idle_source = monitor::IdlePowerSource::kTrailingMinimum;
  v.split.processes = std::move(shares);
  v.split.unattributed_energy_mj = unattributed_mj;
  return v;
}

monitor::GpuEnergyTotals Totals(std::size_t gpu, std::int64_t measured_mj, std::int64_t unattributed_mj = 0) {
  monitor::GpuEnergyTotals t;
  t.gpu_index = gpu;
  t.measured_energy_mj = measured_mj;
  t.unattributed_energy_mj = unattributed_mj;
  return t;
}

monitor::ProcessEnergyEntry Entry(std::size_t gpu, ProcessKey process, std::int64_t energy_mj) {
  monitor::ProcessEnergyEntry e;
  e.gpu_index = gpu;
  e.process = process;
  e.energy_mj = energy_mj;
  return e;
}

struct LabelFields {
  std::string comm = "";
  std::string user = "";
  std::string job = "";
  std::string step = "";
  std::string pod = "";
  std::string container = "";
  std::string unit = "";
};
monitor::ProcessLabels Labels(const LabelFields& f) {
  monitor::ProcessLabels l;
  l.comm = f.comm;
  l.user = f.user;
  l.slurm_job_id = f.job;
  l.slurm_step = f.step;
  l.pod = f.pod;
  l.container = f.container;
  l.systemd_unit = f.unit;
  return l;
}

// One A40 (GPU 0) with two processes: pid 200 draws more now, pid 100 has
// more energy; and GPU 1 with nothing on it.
TopFrame TwoGpus() {
  TopFrame f;
  f.elapsed = std::chrono::milliseconds(12'300);
  f.refresh = seconds(1);
  f.gpu_names = {"NVIDIA A40", "Tesla V100-SXM2-32GB"};
  // Over 2 s: pid 100 got 100 J (50 W), pid 200 got 300 J (150 W).
  f.intervals = {View(0, 236'000, {{{100, 7}, 100'000}, {{200, 9}, 300'000}}), View(1, 40'000, {})};
  f.snapshot.gpus = {Totals(0, 2'890'100), Totals(1, 500)};
  f.snapshot.processes = {Entry(0, {100, 7}, 2'000'000), Entry(0, {200, 9}, 400'000)};
  f.labels[{100, 7}] = Labels({.comm = "python", .user = "alice", .job = "1234", .step = "0"});
  f.labels[{200, 9}] = Labels({.comm = "vllm", .user = "bob", .pod = "1a2b3c4d-5e6f-7788-99aa-bbccddeeff00",
                               .container = "0123456789abcdef0123"});
  return f;
}

TEST(TopRenderTest, HeaderGpuLinesAndProcessRows) {
  std::vector<std::string> lines = RenderTopFrame(TwoGpus(), 0);
  ASSERT_GE(lines.size(), 6u);
  EXPECT_EQ(lines[0], "zeus top  elapsed 12.3 s  2 GPUs  refresh 1.0 s");
  EXPECT_EQ(lines[1], "GPU 0  NVIDIA A40  power 236.0 W  idle 60.0 W (trailing_minimum)  energy 2890.1 J");
  EXPECT_THAT(lines[2], HasSubstr("PID"));
  EXPECT_THAT(lines[2], HasSubstr("POWER W"));
  // Sorted by current power: pid 200 (150 W) above pid 100 (50 W, more energy).
  EXPECT_THAT(lines[3], HasSubstr("200"));
  EXPECT_THAT(lines[3], HasSubstr("bob"));
  EXPECT_THAT(lines[3], HasSubstr("vllm"));
  EXPECT_THAT(lines[3], HasSubstr("pod 1a2b3c4d/ctr 0123456789ab "));
  EXPECT_THAT(lines[3], HasSubstr("150.0"));
  EXPECT_THAT(lines[3], HasSubstr("400.0"));
  EXPECT_THAT(lines[4], HasSubstr("100"));
  EXPECT_THAT(lines[4], HasSubstr("alice"));
  EXPECT_THAT(lines[4], HasSubstr("slurm 1234.0"));
  EXPECT_THAT(lines[4], HasSubstr("50.0"));
  EXPECT_THAT(lines[4], HasSubstr("2000.0"));
  EXPECT_EQ(lines[5], "GPU 1  Tesla V100-SXM2-32GB  power 40.0 W  idle 60.0 W (trailing_minimum)  energy 0.5 J");
  EXPECT_EQ(lines[6], "  (no processes)");
  EXPECT_EQ(lines.size(), 7u);
}

// A process names itself with ESC sequences (and the driver's GPU name could
// hold some): the text frame, which goes to a terminal, shows them as text.
TEST(TopRenderTest, ControlCharactersInNamesAreEscaped) {
  TopFrame f = TwoGpus();
  f.gpu_names[0] = "A40\x1b]0;owned\x07";
  f.labels[{200, 9}] = Labels({.comm = "\x1b[2Jev\xC2\x9B" "il", .user = "mal\x7f", .unit = "x\ty.service"});
  f.labels[{100, 7}] = Labels({.comm = "py", .user = "al", .job = "12\x1b", .step = "0"});
  const std::vector<std::string> lines = RenderTopFrame(f, 0);
  for (const std::string& line : lines) {
    for (char c : line) {
      const auto b = static_cast<unsigned char>(c);
      EXPECT_FALSE(b < 0x20 || b == 0x7f) << "control byte " << int{b} << " in: " << line;
    }
    EXPECT_THAT(line, Not(HasSubstr("\xC2\x9B")));
  }
  EXPECT_THAT(lines[1], StartsWith("GPU 0  A40\\x1b]0;owned\\x07  power"));
  EXPECT_THAT(lines[3], HasSubstr("\\x1b[2Jev\\u009b"));  // the column is 16 wide
  EXPECT_THAT(lines[3], HasSubstr("mal\\x7f"));
  EXPECT_THAT(lines[3], HasSubstr("x\\x09y.service"));
  EXPECT_THAT(lines[4], HasSubstr("slurm 12\\x1b.0"));
  // The JSON keeps the names as they are (valid UTF-8; JSON escapes controls itself).
  const nlohmann::json j = TopFrameJson(f);
  EXPECT_EQ(j["gpus"][0]["processes"][0]["comm"], "\x1b[2Jev\xC2\x9B" "il");
  EXPECT_THAT(j.dump(), HasSubstr("\\u001b[2Jev"));
}

// Columns line up: every process row is as wide as the table's header.
TEST(TopRenderTest, RowsAreAligned) {
  std::vector<std::string> lines = RenderTopFrame(TwoGpus(), 0);
  EXPECT_EQ(lines[3].size(), lines[2].size());
  EXPECT_EQ(lines[4].size(), lines[2].size());
  EXPECT_EQ(lines[3].find("150.0") + 5, lines[2].find("POWER W") + 7);
}

// Equal current power: more energy first, then the smaller PID.
TEST(TopRenderTest, TiesSortByEnergyThenPid) {
  TopFrame f;
  f.gpu_names = {"g"};
  f.intervals = {View(0, 100'000, {})};
  f.snapshot.gpus = {Totals(0, 0)};
  f.snapshot.processes = {Entry(0, {30, 1}, 5), Entry(0, {20, 1}, 9), Entry(0, {10, 1}, 5)};
  std::vector<std::string> lines = RenderTopFrame(f, 0);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_THAT(lines[3], StartsWith("       20 "));
  EXPECT_THAT(lines[4], StartsWith("       10 "));
  EXPECT_THAT(lines[5], StartsWith("       30 "));
  // Unknown labels are dashes.
  EXPECT_THAT(lines[3], HasSubstr(" -          -                -  "));
}

TEST(TopRenderTest, UnattributedAndOtherRowsWhenNonzero) {
  TopFrame f = TwoGpus();
  // GPU 0: 20 J unattributed this interval (10 W); a process without an
  // entry (the ledger was full) got 40 J (20 W); 3 J of ended processes.
  f.intervals[0] = View(0, 236'000, {{{100, 7}, 100'000}, {{200, 9}, 300'000}, {{300, 1}, 40'000}}, 20'000);
  f.snapshot.gpus[0].unattributed_energy_mj = 70'000;
  f.snapshot.gpus[0].other_energy_mj = 1'000;
  f.snapshot.gpus[0].ended_energy_mj = 2'000;
  std::vector<std::string> lines = RenderTopFrame(f, 0);
  ASSERT_GE(lines.size(), 7u);
  EXPECT_THAT(lines[5], HasSubstr("unattributed"));
  EXPECT_THAT(lines[5], HasSubstr("10.0"));
  EXPECT_THAT(lines[5], HasSubstr("70.0"));
  EXPECT_THAT(lines[6], HasSubstr("other"));
  EXPECT_THAT(lines[6], HasSubstr("20.0"));
  EXPECT_THAT(lines[6], HasSubstr("3.0"));
  // GPU 1 has neither.
  for (std::size_t i = 7; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], Not(HasSubstr("unattributed")));
    EXPECT_THAT(lines[i], Not(HasSubstr("other")));
  }
}

// A GPU with only unattributed energy still gets the table (no "(no processes)").
TEST(TopRenderTest, UnattributedAloneShowsTheTable) {
  TopFrame f;
  f.gpu_names = {"g"};
  f.intervals = {View(0, 100'000, {}, 4'000)};
  f.snapshot.gpus = {Totals(0, 9'000, 4'000)};
  std::vector<std::string> lines = RenderTopFrame(f, 0);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[2], HasSubstr("PID"));
  EXPECT_THAT(lines[3], HasSubstr("unattributed"));
  EXPECT_THAT(lines[3], HasSubstr("2.0"));
}

TEST(TopRenderTest, GpuWithAnErrorShowsIt) {
  TopFrame f = TwoGpus();
  f.intervals[1].power_mw.reset();
  f.intervals[1].duration = {};
  f.intervals[1].error = Error(ErrorCode::kDeviceLost, "GPU 1: the GPU has fallen off the bus; reset it");
  std::vector<std::string> lines = RenderTopFrame(f, 0);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_THAT(lines[5], StartsWith("GPU 1  Tesla V100-SXM2-32GB  power n/a  idle"));
  EXPECT_EQ(lines[6], "  ! GPU 1: the GPU has fallen off the bus; reset it");
  EXPECT_EQ(lines[7], "  (no processes)");
}

// Before the first Sample(), or with no GPU views at all: the GPUs from the
// names, no figures, no crash.
TEST(TopRenderTest, NoViewsYet) {
  TopFrame f;
  f.gpu_names = {"NVIDIA A40"};
  EXPECT_THAT(RenderTopFrame(f, 0), ElementsAre("zeus top  elapsed 0.0 s  1 GPU",
                                                "GPU 0  NVIDIA A40  power n/a  energy 0.0 J", "  (no processes)"));
  EXPECT_THAT(RenderTopFrame(TopFrame{}, 0), ElementsAre("zeus top  elapsed 0.0 s  0 GPUs"));
}

TEST(TopRenderTest, LinesAreCutToTheWidth) {
  const TopFrame f = TwoGpus();
  const std::vector<std::string> full = RenderTopFrame(f, 0);
  const std::vector<std::string> cut = RenderTopFrame(f, 40);
  ASSERT_EQ(cut.size(), full.size());
  for (std::size_t i = 0; i < cut.size(); ++i) {
    EXPECT_LE(cut[i].size(), 40u) << i;
    EXPECT_EQ(cut[i], full[i].substr(0, 40)) << i;
  }
  EXPECT_EQ(RenderTopFrame(f, 1000), full);
}

TEST(TopRenderTest, TruncationNeverSplitsACharacter) {
  EXPECT_EQ(TruncateLine("abcdef", 0), "abcdef");
  EXPECT_EQ(TruncateLine("abcdef", 3), "abc");
  EXPECT_EQ(TruncateLine("ab\xC3\xA9z", 3), "ab");      // é is 2 bytes at 2..3
  EXPECT_EQ(TruncateLine("ab\xC3\xA9z", 4), "ab\xC3\xA9");
  EXPECT_EQ(TruncateLine("\xE2\x82\xAC", 2), "");       // € is 3 bytes
}

TEST(TopRenderTest, JobColumnShortensIds) {
  EXPECT_EQ(JobColumn(Labels({.job = "77"})), "slurm 77");
  EXPECT_EQ(JobColumn(Labels({.job = "77", .step = "batch"})), "slurm 77.batch");
  EXPECT_EQ(JobColumn(Labels({.pod = "1a2b3c4d-5e6f"})), "pod 1a2b3c4d");
  EXPECT_EQ(JobColumn(Labels({.container = "0123456789abcdef"})), "ctr 0123456789ab");
  EXPECT_EQ(JobColumn(Labels({.unit = "jupyter.service"})), "jupyter.service");
  EXPECT_EQ(JobColumn(Labels({})), "-");
}

TEST(TopRenderTest, JsonCarriesTheSameFigures) {
  TopFrame f = TwoGpus();
  f.intervals[1].error = Error(ErrorCode::kNotSupported, "no per-process calls");
  nlohmann::json j = TopFrameJson(f);
  EXPECT_DOUBLE_EQ(j["elapsed_s"].get<double>(), 12.3);
  ASSERT_EQ(j["gpus"].size(), 2u);
  const nlohmann::json& g0 = j["gpus"][0];
  EXPECT_EQ(g0["name"], "NVIDIA A40");
  EXPECT_DOUBLE_EQ(g0["power_w"].get<double>(), 236.0);
  EXPECT_DOUBLE_EQ(g0["idle_power_w"].get<double>(), 60.0);
  EXPECT_EQ(g0["idle_source"], "trailing_minimum");
  EXPECT_DOUBLE_EQ(g0["energy_j"].get<double>(), 2890.1);
  EXPECT_TRUE(g0["error"].is_null());
  ASSERT_EQ(g0["processes"].size(), 2u);
  EXPECT_EQ(g0["processes"][0]["pid"], 200);
  EXPECT_EQ(g0["processes"][0]["user"], "bob");
  EXPECT_EQ(g0["processes"][0]["pod"], "1a2b3c4d-5e6f-7788-99aa-bbccddeeff00");
  EXPECT_TRUE(g0["processes"][0]["slurm_job_id"].is_null());
  EXPECT_DOUBLE_EQ(g0["processes"][0]["power_w"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(g0["processes"][1]["energy_j"].get<double>(), 2000.0);
  EXPECT_EQ(g0["processes"][1]["slurm_job_id"], "1234");
  EXPECT_EQ(j["gpus"][1]["error"], "no per-process calls");
  EXPECT_TRUE(j["gpus"][1]["processes"].empty());
}

}  // namespace
}  // namespace zeus::cli
