// Copyright 2026 The Zeus C++ Authors.
//
// zeus_chart (private): SVG charts of series over two axes, dependency-free
// but for fmt. One renderer for every chart of the `zeus` CLI: `zeus monitor
// --plot` (power over time, step lines), `zeus what-if --svg` (labelled
// points and a front) and the `zeus reproduce` report (lines, scatter
// series, reference lines and marks over linear, log10 or log2 axes).
// Deterministic text: the same chart gives the same bytes.
//
// Layout guarantees (tested): every point, mark and reference line lies
// inside the plot frame with a margin of kInnerPadPx, whatever the scale;
// nothing is clipped or clamped. A log axis says so in its label. The legend
// is below the frame, in rows that wrap (the picture grows to hold them), and
// each swatch is drawn in the shape and stroke style of what it names. All
// text is XML-escaped.

#ifndef ZEUS_SRC_CHART_SVG_CHART_H_
#define ZEUS_SRC_CHART_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace zeus::chart {

// kAuto: log10 when the data are all positive and span decades (see
// ChooseLog), linear otherwise. kLog10 and kLog2 fall back to linear when a
// value is not positive (a log axis cannot show it).
enum class AxisScale { kAuto, kLinear, kLog10, kLog2 };

// Marker shapes, for marks and for scatter series. kRing is an unfilled circle.
enum class MarkerShape { kCircle, kSquare, kDiamond, kTriangle, kRing, kStar };

struct Series {
  std::string label;  // its legend entry; "" = none
  std::string color;  // CSS colour; "" = kPalette[the series' index]
  std::vector<std::pair<double, double>> points;  // (x, y); x ascending for a line
  bool line = true;      // connect the points
  bool step = false;     // the line holds each y until the next point's x (a sampled timeline)
  bool markers = false;  // draw a marker at each point
  double marker_radius = 2.5;
  MarkerShape marker_shape = MarkerShape::kCircle;
  std::string dash;  // SVG stroke-dasharray of the line ("" = solid), e.g. "6,3"
  double stroke_width = 1.3;
  double opacity = 1.0;  // of the line and the markers
  // Text beside each point (e.g. "250 W"); used when it has one entry per
  // point, an empty entry drawing nothing.
  std::vector<std::string> point_labels = {};
};

// A horizontal line at y (e.g. the Default or Oracle cost), dashed.
struct ReferenceLine {
  std::string label;
  std::string color;
  double y = 0;
};

// A labelled point drawn on top (e.g. the chosen configuration).
struct Mark {
  std::string label;
  std::string color;
  double x = 0;
  double y = 0;
  MarkerShape shape = MarkerShape::kCircle;
};

struct Chart {
  std::string title;
  std::string subtitle;  // a second line under the title; "" = none
  std::string x_label;   // with its unit, e.g. "time (s)"; "(log scale)" / "(log2 scale)" is appended on a log axis
  std::string y_label;
  AxisScale x_scale = AxisScale::kAuto;
  AxisScale y_scale = AxisScale::kAuto;
  bool x_from_zero = false;  // the axis shows 0 too (a linear axis: 0 makes it linear under kAuto)
  bool y_from_zero = false;
  std::vector<Series> series;
  std::vector<ReferenceLine> references;
  std::vector<Mark> marks;
  int width_px = 460;
  int height_px = 330;  // room for two legend rows; more rows make the picture taller
  std::string background;  // fill behind everything, e.g. "white" for a file of its own; "" = none (to embed)
};

// Colours of series without one: distinguishable for the common colour-vision deficiencies.
inline constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#000000", "#F0E442"};

// AxisScale::kAuto picks log10 for positive data when max/min exceeds
// kLogSpanRatio, or when max/min exceeds kSkewSpanRatio and the median lies in
// the lowest kSkewMedianFraction of [min, max] (most points would crowd
// against the low end of a linear axis).
inline constexpr double kLogSpanRatio = 20.0;
inline constexpr double kSkewSpanRatio = 4.0;
inline constexpr double kSkewMedianFraction = 0.3;
// Distance in pixels between the data's extremes and the plot frame.
inline constexpr double kInnerPadPx = 12.0;
// Half the size in pixels of a Mark's marker (its bounding box is twice this).
inline constexpr double kMarkHalfSizePx = 7.0;

// Whether kAuto gives a log10 axis for `values`: never if one is not finite
// and positive, else by the rule above.
bool ChooseLog(const std::vector<double>& values);

// One axis after fitting: the data range shown by the frame (padding
// included), whether it is logarithmic (and its base), and the tick values.
struct Axis {
  double lo = 0;  // data value at the frame's start
  double hi = 1;  // data value at the frame's end
  double log_base = 0;  // 0: linear; 10 or 2: logarithmic
  std::vector<double> ticks;  // ascending, all within [lo, hi]
  // The fraction (0 at lo, 1 at hi) of the frame where `v` lies.
  double Fraction(double v) const;
};

// Fits an axis of `length_px` pixels around `values` (non-finite ones are
// ignored; none left gives [0, 1]) so that the extremes sit kInnerPadPx inside
// the ends. Linear ticks are round multiples of 1, 2 or 5 x 10^k; log10 ticks
// are 1-2-5 x 10^k over at most two decades and powers of ten beyond (every
// other power past eight decades); log2 ticks are the powers of two.
Axis FitAxis(const std::vector<double>& values, AxisScale scale, double length_px);

// A tick label: "0.5", "350", "5k", "1.5M", "2G"; powers of two (log2 axes)
// are written in full ("16384").
std::string TickLabel(double value, double log_base = 0);

// The SVG element(s) of a marker of `shape` centred on (cx, cy), `half_px`
// from its centre to its bounding box, with class "marker <shape>". Used for
// marks, scatter points and legend swatches alike, so a swatch has its
// marker's shape.
std::string MarkerSvg(MarkerShape shape, double cx, double cy, double half_px, const std::string& color,
                      double opacity = 1.0);

// The chart as one <svg> element (no XML prologue): a file of its own, or
// inline in HTML. Its parts carry classes that tests find them by: "frame",
// "x-tick", "y-tick", "x-label", "y-label", "reference", "series", "marker",
// "point-label", and the legend "legend" with a "legend-item" per entry.
std::string RenderChart(const Chart& chart);

// Escapes &, <, >, " for XML text and attribute values (SVG, HTML).
std::string XmlEscape(const std::string& text);

}  // namespace zeus::chart

#endif  // ZEUS_SRC_CHART_SVG_CHART_H_
