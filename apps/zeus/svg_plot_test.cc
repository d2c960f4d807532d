// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/svg_plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(NiceTicksTest, RoundValuesCoveringTheRange) {
  EXPECT_THAT(NiceTicks(0, 260), ElementsAre(0, 50, 100, 150, 200, 250, 300));
  EXPECT_THAT(NiceTicks(0, 1.21), ElementsAre(0, 0.25, 0.5, 0.75, 1, 1.25));
  EXPECT_THAT(NiceTicks(3, 7, 4), ElementsAre(3, 4, 5, 6, 7));
  EXPECT_FALSE(NiceTicks(5, 5).empty());  // degenerate range still gets ticks
}

TEST(RenderSvgTest, HasAxesLabelsLegendAndPaths) {
  LinePlot plot;
  plot.title = "Power <&> \"test\"";
  plot.x_label = "time (s)";
  plot.y_label = "power (W)";
  plot.series.push_back({"GPU 0", {{0, 100}, {1, 150}, {2, 120}}, true});
  plot.series.push_back({"GPU 1", {}, false});
  const std::string svg = RenderSvg(plot);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("Power &lt;&amp;&gt; &quot;test&quot;"));
  EXPECT_THAT(svg, Not(HasSubstr("<&>")));
  EXPECT_THAT(svg, HasSubstr("time (s)"));
  EXPECT_THAT(svg, HasSubstr("power (W)"));
  EXPECT_THAT(svg, HasSubstr(">GPU 0<"));
  EXPECT_THAT(svg, HasSubstr(">GPU 1<"));
  EXPECT_THAT(svg, HasSubstr(" H"));  // step segments
  EXPECT_THAT(svg, HasSubstr("</svg>"));
}

TEST(RenderSvgTest, ScatterSeriesHaveMarkersAndLabelsButNoLine) {
  LinePlot plot;
  PlotSeries scatter;
  scatter.label = "limits";
  scatter.points = {{1, 300}, {2, 240}};
  scatter.line = false;
  scatter.markers = true;
  scatter.point_labels = {"300 W", "200 <W>"};
  plot.series.push_back(scatter);
  const std::string svg = RenderSvg(plot);
  EXPECT_THAT(svg, Not(HasSubstr("<path")));
  EXPECT_THAT(svg, HasSubstr("<circle"));
  EXPECT_THAT(svg, HasSubstr(">300 W</text>"));
  EXPECT_THAT(svg, HasSubstr(">200 &lt;W&gt;</text>"));
}

}  // namespace
}  // namespace zeus::cli
