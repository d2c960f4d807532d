// Copyright 2026 The Zeus C++ Authors.
//
// The chart renderer: axis choice, ticks, markers inside the frame, legend
// swatches, step lines, labelled points, escaping. Expected values are
// computed by hand in the comments.

#include "chart/svg_chart.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "chart/svg_chart_test_util.h"

namespace zeus::chart {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using svg_test::Attr;
using svg_test::Box;
using svg_test::Elements;
using svg_test::Frame;
using svg_test::LegendItem;
using svg_test::MarkerBoxes;
using svg_test::PlotPart;
using svg_test::Points;
using svg_test::Texts;

// A line series (the other fields at their defaults).
Series Line(std::string label, std::vector<std::pair<double, double>> points, std::string color = "") {
  Series s;
  s.label = std::move(label);
  s.color = std::move(color);
  s.points = std::move(points);
  return s;
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

TEST(FitAxisTest, ASingleValueOrNoneStillGetsARangeAndTicks) {
  const Axis one = FitAxis({5, 5}, AxisScale::kAuto, 124);  // 5 +- 0.5, padded
  EXPECT_LT(one.lo, 5);
  EXPECT_GT(one.hi, 5);
  EXPECT_FALSE(one.ticks.empty());
  const Axis none = FitAxis({}, AxisScale::kAuto, 124);  // [0, 1], padded
  EXPECT_LT(none.lo, 0);
  EXPECT_GT(none.hi, 1);
  EXPECT_FALSE(none.ticks.empty());
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
  EXPECT_THAT(Texts(svg, "x-tick"), ElementsAre("10", "20", "50", "100", "200", "500"));
}

// An axis from zero shows 0 even when the data stay far from it.
TEST(RenderChartTest, AxesFromZeroShowZero) {
  Chart c;
  Series s;
  s.points = {{10, 200}, {20, 250}};
  c.series.push_back(s);
  EXPECT_THAT(Texts(RenderChart(c), "y-tick"), Not(::testing::Contains("0")));
  c.x_from_zero = true;
  c.y_from_zero = true;
  const std::string svg = RenderChart(c);
  EXPECT_EQ(Texts(svg, "x-tick").front(), "0");
  EXPECT_EQ(Texts(svg, "y-tick").front(), "0");
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
  const std::vector<std::pair<double, double>> points = Points(polylines[0]);
  ASSERT_EQ(points.size(), 3u);
  for (const auto& [x, y] : points) {
    EXPECT_GE(y, frame.y0 + kInnerPadPx - 0.1);
    EXPECT_LE(y, frame.y1 - kInnerPadPx + 0.1);
  }
  EXPECT_THAT(svg, HasSubstr("(log2 scale)"));
}

// A step series (a sampled power timeline) holds each value until the next
// sample: its line goes across, then up or down, never diagonally.
TEST(RenderChartTest, StepSeriesHoldEachValueUntilTheNextPoint) {
  Chart c;
  Series s;
  s.step = true;
  s.points = {{0, 100}, {1, 150}, {2, 120}, {3, 120}};
  c.series.push_back(s);
  const std::vector<std::string> polylines = Elements(RenderChart(c), "polyline");
  ASSERT_EQ(polylines.size(), 1u);
  const std::vector<std::pair<double, double>> points = Points(polylines[0]);
  ASSERT_EQ(points.size(), 6u);  // 4 points and a corner before each of the two changes
  for (std::size_t i = 1; i < points.size(); ++i) {
    const bool across = points[i].second == points[i - 1].second;
    const bool vertical = points[i].first == points[i - 1].first;
    EXPECT_TRUE(across != vertical) << "segment " << i << " is diagonal or empty";
  }
  EXPECT_EQ(points[1].second, points[0].second);  // 100 held until x = 1
  EXPECT_LT(points[2].second, points[1].second);  // then up to 150 (SVG y grows downwards)

  c.series[0].step = false;
  EXPECT_EQ(Points(Elements(RenderChart(c), "polyline")[0]).size(), 4u);
}

TEST(RenderChartTest, TitleLabelsAndLegendAreEscapedAndEverySeriesIsListed) {
  Chart c;
  c.title = "Power <&> \"test\"";
  c.subtitle = "sleep 1 & echo <done>";
  c.x_label = "time (s)";
  c.y_label = "power (W)";
  c.series.push_back(Line("GPU 0", {{0, 100}, {1, 150}, {2, 120}}));
  c.series.push_back(Line("GPU <1>", {}));  // no points: in the legend only
  const std::string svg = RenderChart(c);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr(">Power &lt;&amp;&gt; &quot;test&quot;</text>"));
  EXPECT_THAT(svg, HasSubstr(">sleep 1 &amp; echo &lt;done&gt;</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("<&>")));
  EXPECT_THAT(Texts(svg, "x-label"), ElementsAre("time (s)"));
  EXPECT_THAT(Texts(svg, "y-label"), ElementsAre("power (W)"));
  EXPECT_THAT(LegendItem(svg, "GPU 0"), HasSubstr("<line"));
  EXPECT_THAT(LegendItem(svg, "GPU &lt;1&gt;"), HasSubstr("<line"));
  EXPECT_EQ(Elements(svg, "polyline").size(), 1u);
  EXPECT_THAT(svg, HasSubstr("</svg>"));
}

// Series without a colour take the palette's in order, in the plot and the legend alike.
TEST(RenderChartTest, SeriesWithoutAColourTakeThePalettes) {
  Chart c;
  c.series.push_back(Line("a", {{0, 1}, {1, 2}}));
  c.series.push_back(Line("b", {{0, 2}, {1, 1}}));
  c.series.push_back(Line("c", {{0, 3}, {1, 3}}, "#123456"));
  const std::string svg = RenderChart(c);
  const std::vector<std::string> lines = Elements(svg, "polyline");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr(std::string("stroke=\"") + kPalette[0] + "\""));
  EXPECT_THAT(lines[1], HasSubstr(std::string("stroke=\"") + kPalette[1] + "\""));
  EXPECT_THAT(lines[2], HasSubstr("stroke=\"#123456\""));
  EXPECT_THAT(LegendItem(svg, "b"), HasSubstr(std::string("stroke=\"") + kPalette[1] + "\""));
}

TEST(RenderChartTest, ScatterSeriesHaveMarkersAndPointLabelsButNoLine) {
  Chart c;
  Series scatter;
  scatter.label = "limits";
  scatter.points = {{1, 300}, {2, 240}};
  scatter.line = false;
  scatter.markers = true;
  scatter.point_labels = {"300 W", "200 <W>"};
  c.series.push_back(scatter);
  const std::string svg = RenderChart(c);
  EXPECT_THAT(Elements(svg, "polyline"), ::testing::IsEmpty());
  EXPECT_EQ(Elements(PlotPart(svg), "circle").size(), 2u);
  EXPECT_THAT(Texts(svg, "point-label"), ElementsAre("300 W", "200 &lt;W&gt;"));
  // Labels need one entry per point; otherwise there are none.
  c.series[0].point_labels.pop_back();
  EXPECT_THAT(Texts(RenderChart(c), "point-label"), ::testing::IsEmpty());
}

TEST(RenderChartTest, ABackgroundOnlyWhenAsked) {
  Chart c;
  EXPECT_THAT(RenderChart(c), Not(HasSubstr("class=\"background\"")));
  c.background = "white";
  EXPECT_THAT(RenderChart(c), HasSubstr("<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"white\"/>"));
}

// A legend wider than the chart wraps into rows, and the picture grows to hold them.
TEST(RenderChartTest, ALongLegendWrapsAndTheChartGrows) {
  Chart c;
  for (int k = 0; k < 12; ++k) c.series.push_back(Line("a series with a long name " + std::to_string(k), {{0, 1}}));
  const std::string svg = RenderChart(c);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("<svg [^>]*height=\"([0-9]+)\"")));
  EXPECT_GT(std::stoi(m[1]), c.height_px);
  std::set<double> rows;
  for (const std::string& t : Elements(svg.substr(svg.find("<g class=\"legend\"")), "text")) rows.insert(Attr(t, "y"));
  EXPECT_GE(rows.size(), 6u);  // about 200 px per entry, two to a row of 374 px
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

TEST(RenderChartTest, SameChartSameBytes) {
  Chart c;
  c.title = "t";
  c.series.push_back(Line("seed 1", {{1, 3}, {2, 4000}}, "#1f77b4"));
  c.series[0].dash = "7,3";
  c.marks.push_back({"Oracle", "#0a0", 1, 3, MarkerShape::kStar});
  EXPECT_EQ(RenderChart(c), RenderChart(c));
}

}  // namespace
}  // namespace zeus::chart
