// Copyright 2026 The Zeus C++ Authors.
//
// A small, dependency-free SVG line chart for CLI reports: one or more series
// over shared axes, with ticks at round numbers, axis labels with units, a
// title and a legend.

#ifndef ZEUS_APPS_ZEUS_SVG_PLOT_H_
#define ZEUS_APPS_ZEUS_SVG_PLOT_H_

#include <string>
#include <utility>
#include <vector>

namespace zeus::cli {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  bool step = false;  // draw as a step function (value holds until the next point)
  bool line = true;      // false: no line through the points (a scatter series)
  bool markers = false;  // a dot at each point
  // A text label beside each point (empty: none); used when its size equals
  // the number of points.
  std::vector<std::string> point_labels = {};
};

struct LinePlot {
  std::string title;
  std::string subtitle;
  std::string x_label;  // with its unit, e.g. "time (s)"
  std::string y_label;  // e.g. "power (W)"
  std::vector<PlotSeries> series;
  int width_px = 960;
  int height_px = 480;
  bool x_from_zero = true;
  bool y_from_zero = true;
};

// Renders the chart as a standalone SVG document. Series with no points are
// listed in the legend only. Text is XML-escaped.
std::string RenderSvg(const LinePlot& plot);

// Escapes &, <, >, " for XML text and attribute values (SVG, HTML).
std::string XmlEscape(const std::string& text);

// Round tick values covering [lo, hi] (about `target` of them).
std::vector<double> NiceTicks(double lo, double hi, int target = 6);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_SVG_PLOT_H_
