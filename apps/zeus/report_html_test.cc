// Copyright 2026 The Zeus C++ Authors.
//
// The reproduce report's charts, as chart::RenderChart draws them: per-seed
// line styles, the batch-size chart's overlapping seeds, the energy-time
// chart's log axes with the baselines inside the frame.

#include "apps/zeus/report_html.h"

#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chart/svg_chart.h"
#include "chart/svg_chart_test_util.h"

namespace zeus::cli::report {
namespace {

using ::testing::HasSubstr;
using chart::svg_test::Box;
using chart::svg_test::Elements;
using chart::svg_test::Frame;
using chart::svg_test::LegendItem;
using chart::svg_test::MarkerBoxes;

TEST(SeedSeriesTest, EverySeedDiffersInColourOrDashAndLinesAreThinAndTranslucent) {
  std::set<std::pair<std::string, std::string>> styles;
  std::set<std::string> dashes;
  for (std::size_t k = 0; k < 30; ++k) {
    const chart::Series s = SeedSeries(k, 100 + k);
    EXPECT_EQ(s.label, "seed " + std::to_string(100 + k));
    styles.insert({s.color, s.dash});
    dashes.insert(s.dash);
    EXPECT_LT(s.stroke_width, 1.5);
    EXPECT_LT(s.opacity, 1.0);
    EXPECT_GT(s.opacity, 0.4);
  }
  EXPECT_EQ(styles.size(), 30u);
  EXPECT_GE(dashes.size(), 5u);  // the first five seeds have five dash patterns
}

// The batch-size chart of three seeds that chose the same batch sizes: the
// three lines lie on each other and differ by their dash patterns.
TEST(BatchSizeChartTest, OverlappingSeedLinesAreDistinguishable) {
  JobRuns runs;
  runs.seeds = {1, 2, 3};
  runs.baselines.oracle.batch_size = 32;
  for (int k = 0; k < 3; ++k) {
    simulator::SimulationResult result;
    for (int r = 1; r <= 4; ++r) {
      simulator::RecurrenceRecord rec;
      rec.recurrence = r;
      rec.batch_size = r == 1 ? 128 : 32;
      result.recurrences.push_back(rec);
    }
    runs.results.push_back(result);
  }
  const chart::Chart batch_chart = BatchSizeChart(runs);
  ASSERT_EQ(batch_chart.series.size(), 3u);
  const std::string svg = chart::RenderChart(batch_chart);
  EXPECT_THAT(svg, HasSubstr(">batch size (log2 scale)</text>"));
  const std::vector<std::string> polylines = Elements(svg, "polyline");
  ASSERT_EQ(polylines.size(), 3u);
  std::set<std::string> dashes;
  for (const std::string& p : polylines) {
    std::smatch m;
    dashes.insert(std::regex_search(p, m, std::regex("stroke-dasharray=\"([^\"]*)\"")) ? m[1].str() : "solid");
    EXPECT_THAT(p, HasSubstr("stroke-opacity=\"0.75\""));
  }
  EXPECT_EQ(dashes.size(), 3u);
  for (const chart::Series& s : batch_chart.series) {
    if (!s.dash.empty()) {
      EXPECT_THAT(LegendItem(svg, s.label), HasSubstr("stroke-dasharray=\"" + s.dash + "\"")) << s.label;
    }
  }
}

// The energy-time chart of a job whose configurations span decades (as
// movielens on the V100): log axes, and the Default and Oracle inside.
TEST(ParetoChartTest, DecadesGetLogAxesAndTheBaselinesStayInside) {
  JobRuns runs;
  const double times_s[] = {30, 100, 300, 1e3, 1e4, 3e5};
  for (std::size_t i = 0; i < std::size(times_s); ++i) {
    simulator::ConfigExpectation cfg;
    cfg.batch_size = 4 << i;
    cfg.power_limit_w = 175;
    cfg.time_s = times_s[i];
    cfg.energy_j = times_s[i] * 40;
    cfg.reach_fraction = i < 4 ? 1.0 : 0.5;
    runs.configs.push_back(cfg);
  }
  runs.baselines.oracle = runs.configs[0];
  runs.baselines.default_config = runs.configs[2];
  const std::string svg = chart::RenderChart(ParetoChart(runs, JobAggregate{}));
  EXPECT_THAT(svg, HasSubstr("time to target (s) (log scale)"));
  EXPECT_THAT(svg, HasSubstr("energy to target (J) (log scale)"));
  EXPECT_THAT(LegendItem(svg, "Oracle 4@175"), HasSubstr("marker star"));
  EXPECT_THAT(LegendItem(svg, "Default 16@175"), HasSubstr("marker square"));
  const Box frame = Frame(svg);
  const std::vector<Box> boxes = MarkerBoxes(svg);
  ASSERT_EQ(boxes.size(), 8u);  // 6 configurations, Default, Oracle
  for (const Box& b : boxes) {
    EXPECT_GE(b.x0, frame.x0);
    EXPECT_LE(b.x1, frame.x1);
    EXPECT_GE(b.y0, frame.y0);
    EXPECT_LE(b.y1, frame.y1);
  }
}

}  // namespace
}  // namespace zeus::cli::report
