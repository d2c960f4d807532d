// Copyright 2026 The Zeus C++ Authors.
//
// The reproduce report's charts: axis choice, ticks, markers inside the frame,
// legend swatches and per-seed line styles. Expected values are computed by
// hand in the comments.

#include "apps/zeus/report_svg.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apps/zeus/report_html.h"

namespace zeus::cli::report {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

struct Box {
  double x0, y0, x1, y1;
};

double Attr(const std::string& element, const std::string& name) {
  std::smatch m;
  const std::regex re("\\s" + name + "=\"(-?[0-9.]+)\"");
  if (!std::regex_search(element, m, re)) {
    ADD_FAILURE() << "no " << name << " in " << element;
    return 0;
  }
  return std::stod(m[1]);
}

std::vector<std::string> Elements(const std::string& svg, const std::string& tag) {
  std::vector<std::string> out;
  const std::regex re("<" + tag + "\\s[^>]*>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

// The SVG without its legend (everything from the first legend element on).
std::string PlotPart(const std::string& svg) {
  const std::size_t legend = svg.find("<g class=\"legend\"");
  return legend == std::string::npos ? svg : svg.substr(0, legend);
}

// The plot frame: the first <rect> of the chart.
Box Frame(const std::string& svg) {
  const std::vector<std::string> rects = Elements(svg, "rect");
  if (rects.empty()) {
    ADD_FAILURE() << "no frame";
    return {};
  }
  const double x = Attr(rects[0], "x"), y = Attr(rects[0], "y");
  return {x, y, x + Attr(rects[0], "width"), y + Attr(rects[0], "height")};
}

// Bounding boxes of every marker drawn in the plot (circles, rects other than
// the frame, polygons), stroke included.
std::vector<Box> MarkerBoxes(const std::string& svg) {
  const std::string plot = PlotPart(svg);
  std::vector<Box> boxes;
  for (const std::string& c : Elements(plot, "circle")) {
    const double stroke = c.find("stroke-width=\"2\"") != std::string::npos ? 1 : 0;
    const double r = Attr(c, "r") + stroke, cx = Attr(c, "cx"), cy = Attr(c, "cy");
    boxes.push_back({cx - r, cy - r, cx + r, cy + r});
  }
  const std::vector<std::string> rects = Elements(plot, "rect");
  for (std::size_t i = 1; i < rects.size(); ++i) {  // [0] is the frame
    const double x = Attr(rects[i], "x"), y = Attr(rects[i], "y");
    boxes.push_back({x, y, x + Attr(rects[i], "width"), y + Attr(rects[i], "height")});
  }
  for (const std::string& p : Elements(plot, "polygon")) {
    std::smatch m;
    std::regex_search(p, m, std::regex("points=\"([^\"]*)\""));
    Box b{1e9, 1e9, -1e9, -1e9};
    const std::string points = m[1];
    const std::regex pair_re("(-?[0-9.]+),(-?[0-9.]+)");
    for (auto it = std::sregex_iterator(points.begin(), points.end(), pair_re); it != std::sregex_iterator(); ++it) {
      const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
      b = {std::min(b.x0, x), std::min(b.y0, y), std::max(b.x1, x), std::max(b.y1, y)};
    }
    boxes.push_back(b);
  }
  return boxes;
}

std::vector<std::string> TickTexts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// The legend entry whose text is `label`, swatch included.
std::string LegendItem(const std::string& svg, const std::string& label) {
  const std::regex re("<g class=\"legend-item\">\\n((?:(?!</g>)[\\s\\S])*>" + label + "</text>\\n)</g>");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) return {};
  return m[1];
}

TEST(ChooseLogTest, LogWhenPositiveDataSpanDecadesOrCrowdTheLowEnd) {
  EXPECT_TRUE(ChooseLog({1, 10, 100, 1000}));       // max/min = 1000 > 20
  EXPECT_TRUE(ChooseLog({2, 50}));                  // 25 > 20
  EXPECT_FALSE(ChooseLog({100, 150, 200, 250}));    // 2.5
  EXPECT_FALSE(ChooseLog({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));  // 10, median 5.5 at (5.5-1)/9 = 50% of the range
  // max/min = 6 > 4 and the median (12 + 13) / 2 = 12.5 lies at 2.5/50 = 5% of [10, 60]: crowded low.
  EXPECT_TRUE(ChooseLog({10, 11, 12, 13, 14, 60}));
  // max/min = 6 but the median 35 lies at 50%: evenly spread, linear reads best.
  EXPECT_FALSE(ChooseLog({10, 20, 30, 40, 50, 60}));
  EXPECT_FALSE(ChooseLog({0, 10, 1000}));   // a log axis cannot show 0
  EXPECT_FALSE(ChooseLog({-1, 10, 1000}));
  EXPECT_FALSE(ChooseLog({}));
}

// The renderer's decision, seen from the SVG: a log y axis says so, and puts
// 10 halfway between 1 and 100.
TEST(RenderChartTest, LogAxisWhenDataSpanDecadesLinearOtherwise) {
  Chart decades;
  decades.x_label = "time (s)";
  decades.y_label = "energy (J)";
  Series s;
  s.line = false;
  s.markers = true;
  s.color = "#000";
  s.points = {{1, 1}, {2, 10}, {3, 100}};
  decades.series.push_back(s);
  const std::string log_svg = RenderChart(decades);
  EXPECT_THAT(log_svg, HasSubstr(">energy (J) (log scale)</text>"));
  EXPECT_THAT(log_svg, HasSubstr(">time (s)</text>"));  // x spans 3x only: linear, no note
  std::vector<std::string> circles = Elements(PlotPart(log_svg), "circle");
  ASSERT_EQ(circles.size(), 3u);
  const double y1 = Attr(circles[0], "cy"), y10 = Attr(circles[1], "cy"), y100 = Attr(circles[2], "cy");
  EXPECT_NEAR(y1 - y10, y10 - y100, 0.2);  // equal steps per decade
  EXPECT_GT(y1 - y10, 50);

  Chart linear = decades;
  linear.series[0].points = {{1, 100}, {2, 150}, {3, 250}};
  const std::string lin_svg = RenderChart(linear);
  EXPECT_THAT(lin_svg, Not(HasSubstr("log scale")));
  circles = Elements(PlotPart(lin_svg), "circle");
  ASSERT_EQ(circles.size(), 3u);
  // Linear: 150 is a third of the way from 100 to 250, so the steps are 50 : 100.
  const double a = Attr(circles[0], "cy") - Attr(circles[1], "cy");
  const double b = Attr(circles[1], "cy") - Attr(circles[2], "cy");
  EXPECT_NEAR(b / a, 2.0, 0.02);
}

// With length 124 px the usable length is 100 px, so each end gets a padding
// of 12/100 of the data's span (in the axis' own units).
TEST(FitAxisTest, LinearTicksAreRoundAndTheRangeIsPadded) {
  const Axis a = FitAxis({0, 100}, AxisScale::kAuto, 124);
  EXPECT_EQ(a.log_base, 0);
  EXPECT_THAT(a.lo, DoubleNear(-12, 1e-9));
  EXPECT_THAT(a.hi, DoubleNear(112, 1e-9));
  // (112 + 12) / 5 = 24.8 per tick: the next round step is 50.
  EXPECT_THAT(a.ticks, ElementsAre(0, 50, 100));
}

TEST(FitAxisTest, LogTicksAreOneTwoFiveWithinTwoDecades) {
  // log10 10 = 1 .. log10 400 = 2.6021; padding 0.12 * 1.6021 = 0.1922: shown
  // 10^0.8078 = 6.425 .. 10^2.7943 = 622.7, under two decades.
  const Axis a = FitAxis({10, 400}, AxisScale::kAuto, 124);
  EXPECT_EQ(a.log_base, 10);
  EXPECT_THAT(a.lo, DoubleNear(6.425, 0.01));
  EXPECT_THAT(a.hi, DoubleNear(622.7, 0.1));
  EXPECT_THAT(a.ticks, ElementsAre(10, 20, 50, 100, 200, 500));
}

TEST(FitAxisTest, LogTicksAreDecadesBeyondTwoAndEveryOtherBeyondEight) {
  // 0 .. 6 decades, padding 0.72: 10^-0.72 = 0.19 .. 10^6.72.
  EXPECT_THAT(FitAxis({1, 1e6}, AxisScale::kAuto, 124).ticks, ElementsAre(1, 10, 100, 1e3, 1e4, 1e5, 1e6));
  // 0 .. 10 decades, padding 1.2: 12.4 decades shown, even powers only.
  EXPECT_THAT(FitAxis({1, 1e10}, AxisScale::kAuto, 124).ticks, ElementsAre(1, 100, 1e4, 1e6, 1e8, 1e10));
  // Decimal ticks below 1 are the decimal values, not products with rounding error.
  // (The case above divided by 1000: 0.006425 .. 0.6227.)
  EXPECT_THAT(FitAxis({0.01, 0.4}, AxisScale::kLog10, 124).ticks, ElementsAre(0.01, 0.02, 0.05, 0.1, 0.2, 0.5));
}

TEST(FitAxisTest, Log2TicksArePowersOfTwoAndTheExtremesAreNotOnTheFrame) {
  // log2 8 = 3 .. log2 192 = 7.585, padding 0.12 * 4.585 = 0.550: 2^2.45 .. 2^8.135.
  const Axis a = FitAxis({8, 192}, AxisScale::kLog2, 124);
  EXPECT_EQ(a.log_base, 2);
  EXPECT_THAT(a.ticks, ElementsAre(8, 16, 32, 64, 128, 256));
  EXPECT_THAT(a.Fraction(8), DoubleNear(0.12 / 1.24, 1e-9));   // 12 px into 124 px
  EXPECT_THAT(a.Fraction(192), DoubleNear(1.12 / 1.24, 1e-9));
  // A log scale asked for data it cannot show falls back to linear.
  EXPECT_EQ(FitAxis({0, 8}, AxisScale::kLog2, 124).log_base, 0);
  EXPECT_EQ(FitAxis({-3, 8}, AxisScale::kLog10, 124).log_base, 0);
}

TEST(TickLabelTest, CompactAndExact) {
  EXPECT_EQ(TickLabel(0), "0");
  EXPECT_EQ(TickLabel(-0.0), "0");
  EXPECT_EQ(TickLabel(0.5), "0.5");
  EXPECT_EQ(TickLabel(350), "350");
  EXPECT_EQ(TickLabel(5000), "5k");
  EXPECT_EQ(TickLabel(20000), "20k");
  EXPECT_EQ(TickLabel(1.5e6), "1.5M");
  EXPECT_EQ(TickLabel(2e9), "2G");
  EXPECT_EQ(TickLabel(16384, 2), "16384");
}

// The rendered labels of a log axis (frame width 210 - 70 - 16 = 124 px, the
// axis of FitAxisTest.LogTicksAreOneTwoFiveWithinTwoDecades).
TEST(RenderChartTest, LogTickLabelsAtOneTwoFive) {
  Chart c;
  c.width_px = 210;
  Series s;
  s.color = "#000";
  s.points = {{10, 5}, {400, 6}};
  c.series.push_back(s);
  const std::string svg = RenderChart(c);
  EXPECT_THAT(TickTexts(svg, "x-tick"), ElementsAre("10", "20", "50", "100", "200", "500"));
}

// Default and Oracle sit at the data's extremes (the Oracle is the least
// energy, often the least time). Everything must be drawn inside the frame,
// markers whole, with the padding to spare.
TEST(RenderChartTest, MarksAndReferenceLinesAreInsideTheFrame) {
  for (AxisScale scale : {AxisScale::kAuto, AxisScale::kLinear, AxisScale::kLog10}) {
    Chart c;
    c.x_scale = scale;
    c.y_scale = scale;
    Series points;
    points.line = false;
    points.markers = true;
    points.color = "#00f";
    points.points = {{35e3, 4.4e6}, {60e3, 9e6}, {120e3, 14e6}, {235e3, 25e6}};
    c.series.push_back(points);
    c.marks.push_back({"Oracle", "#0a0", 33e3, 4.3e6, MarkerShape::kRing});      // least time and energy
    c.marks.push_back({"Default", "#555", 240e3, 26e6, MarkerShape::kSquare});  // the other corner
    c.references.push_back({"floor", "#999", 4e6});                             // below every point
    const std::string svg = RenderChart(c);
    const Box frame = Frame(svg);
    const std::vector<Box> boxes = MarkerBoxes(svg);
    ASSERT_EQ(boxes.size(), 6u) << svg;  // 4 points and 2 marks
    for (const Box& b : boxes) {
      EXPECT_GE(b.x0, frame.x0) << svg;
      EXPECT_LE(b.x1, frame.x1) << svg;
      EXPECT_GE(b.y0, frame.y0) << svg;
      EXPECT_LE(b.y1, frame.y1) << svg;
    }
    const std::vector<std::string> lines = Elements(PlotPart(svg), "line");
    const auto reference = std::find_if(lines.begin(), lines.end(),
                                        [](const std::string& l) { return l.find("#999") != std::string::npos; });
    ASSERT_NE(reference, lines.end());
    EXPECT_GT(Attr(*reference, "y1"), frame.y0);
    EXPECT_LT(Attr(*reference, "y1"), frame.y1);
  }
}

// On a log2 batch-size axis the largest batch size is not drawn on the frame.
TEST(RenderChartTest, LinesStayOffTheFrameOnALog2Axis) {
  Chart c;
  c.y_scale = AxisScale::kLog2;
  Series s;
  s.color = "#000";
  s.points = {{1, 512}, {2, 16384}, {3, 16384}};
  c.series.push_back(s);
  const std::string svg = RenderChart(c);
  const Box frame = Frame(svg);
  const std::vector<std::string> polylines = Elements(svg, "polyline");
  ASSERT_EQ(polylines.size(), 1u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(polylines[0], m, std::regex("points=\"([^\"]*)\"")));
  const std::string points = m[1];
  const std::regex pair_re("(-?[0-9.]+),(-?[0-9.]+)");
  int n = 0;
  for (auto it = std::sregex_iterator(points.begin(), points.end(), pair_re); it != std::sregex_iterator(); ++it) {
    const double y = std::stod((*it)[2]);
    EXPECT_GE(y, frame.y0 + kInnerPadPx - 0.1);
    EXPECT_LE(y, frame.y1 - kInnerPadPx + 0.1);
    ++n;
  }
  EXPECT_EQ(n, 3);
  EXPECT_THAT(svg, HasSubstr("(log2 scale)"));
}

TEST(RenderChartTest, LegendSwatchesHaveTheShapeOfTheirMarkers) {
  Chart c;
  Series scatter;
  scatter.label = "configs";
  scatter.color = "#00f";
  scatter.line = false;
  scatter.markers = true;
  scatter.marker_shape = MarkerShape::kTriangle;
  scatter.points = {{1, 1}, {2, 2}};
  c.series.push_back(scatter);
  Series dashed;
  dashed.label = "seed 2";
  dashed.color = "#f00";
  dashed.dash = "7,3";
  dashed.points = {{1, 2}, {2, 1}};
  c.series.push_back(dashed);
  c.references.push_back({"Oracle cost", "#0a0", 1.5});
  const std::vector<std::pair<MarkerShape, std::string>> shapes = {
      {MarkerShape::kCircle, "<circle class=\"marker circle\""},
      {MarkerShape::kSquare, "<rect class=\"marker square\""},
      {MarkerShape::kDiamond, "<polygon class=\"marker diamond\""},
      {MarkerShape::kRing, "<circle class=\"marker ring\""},
      {MarkerShape::kStar, "<polygon class=\"marker star\""}};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    c.marks.push_back({"mark" + std::to_string(i), "#333", 1.5, 1.5, shapes[i].first});
  }
  const std::string svg = RenderChart(c);
  const std::string plot = PlotPart(svg);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string& element = shapes[i].second;
    EXPECT_THAT(plot, HasSubstr(element));  // the marker in the plot...
    const std::string item = LegendItem(svg, "mark" + std::to_string(i));
    EXPECT_THAT(item, HasSubstr(element)) << "mark" << i;  // ... and its swatch
    EXPECT_THAT(item, Not(HasSubstr("<line"))) << "mark" << i;
  }
  // Diamond and star polygons have 4 and 10 corners, in plot and legend alike.
  EXPECT_THAT(LegendItem(svg, "mark2"), testing::ContainsRegex("points=\"([0-9.]+,[0-9.]+ ){3}[0-9.]+,[0-9.]+\""));
  EXPECT_THAT(LegendItem(svg, "mark4"), testing::ContainsRegex("points=\"([0-9.]+,[0-9.]+ ){9}[0-9.]+,[0-9.]+\""));
  // A scatter series: its marker, no line.
  const std::string configs = LegendItem(svg, "configs");
  EXPECT_THAT(configs, HasSubstr("<polygon class=\"marker triangle\""));
  EXPECT_THAT(configs, Not(HasSubstr("<line")));
  // A dashed line and a reference line: their dash patterns.
  EXPECT_THAT(LegendItem(svg, "seed 2"), HasSubstr("stroke-dasharray=\"7,3\""));
  EXPECT_THAT(LegendItem(svg, "Oracle cost"), HasSubstr("stroke-dasharray=\"5,3\""));
}

TEST(SeedSeriesTest, EverySeedDiffersInColourOrDashAndLinesAreThinAndTranslucent) {
  std::set<std::pair<std::string, std::string>> styles;
  std::set<std::string> dashes;
  for (std::size_t k = 0; k < 30; ++k) {
    const Series s = SeedSeries(k, 100 + k);
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
  const Chart chart = BatchSizeChart(runs);
  ASSERT_EQ(chart.series.size(), 3u);
  const std::string svg = RenderChart(chart);
  const std::vector<std::string> polylines = Elements(svg, "polyline");
  ASSERT_EQ(polylines.size(), 3u);
  std::set<std::string> dashes;
  for (const std::string& p : polylines) {
    std::smatch m;
    dashes.insert(std::regex_search(p, m, std::regex("stroke-dasharray=\"([^\"]*)\"")) ? m[1].str() : "solid");
    EXPECT_THAT(p, HasSubstr("stroke-opacity=\"0.75\""));
  }
  EXPECT_EQ(dashes.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const Series& s = chart.series[k];
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
  const std::string svg = RenderChart(ParetoChart(runs, JobAggregate{}));
  EXPECT_THAT(svg, HasSubstr("time to target (s) (log scale)"));
  EXPECT_THAT(svg, HasSubstr("energy to target (J) (log scale)"));
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

TEST(RenderChartTest, SameChartSameBytes) {
  Chart c;
  c.title = "t";
  c.series.push_back(SeedSeries(0, 1));
  c.series[0].points = {{1, 3}, {2, 4000}};
  c.marks.push_back({"Oracle", "#0a0", 1, 3, MarkerShape::kStar});
  EXPECT_EQ(RenderChart(c), RenderChart(c));
}

}  // namespace
}  // namespace zeus::cli::report
