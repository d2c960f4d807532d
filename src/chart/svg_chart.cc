// Copyright 2026 The Zeus C++ Authors.

#include "chart/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>

#include <fmt/format.h>

namespace zeus::chart {
namespace {

// Margins around the frame; the bottom one holds the x ticks, the x label
// and the legend's first two rows.
constexpr double kLeft = 70, kRight = 16, kTop = 28, kBottom = 76;
constexpr double kSubtitlePx = 16;  // added to the top margin by a subtitle
constexpr double kLegendRowPx = 16;
constexpr double kLegendSwatchPx = 24;
constexpr double kLegendMarkHalfPx = 5;
constexpr double kCharWidthPx = 6.2;  // a character of the 11 px font, for the legend's layout

// The frame and the axes that map data into it.
struct Plot {
  double left = 0, top = 0, width = 0, height = 0;
  Axis x, y;
  double X(double v) const { return left + x.Fraction(v) * width; }
  double Y(double v) const { return top + (1 - y.Fraction(v)) * height; }
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

Plot FitPlot(const Chart& c) {
  Plot p;
  p.left = kLeft;
  p.top = kTop + (c.subtitle.empty() ? 0 : kSubtitlePx);
  p.width = c.width_px - kLeft - kRight;
  p.height = c.height_px - p.top - kBottom;
  std::vector<double> xs, ys;
  for (const Series& s : c.series) {
    for (const auto& [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
  for (const Mark& m : c.marks) {
    xs.push_back(m.x);
    ys.push_back(m.y);
  }
  for (const ReferenceLine& r : c.references) ys.push_back(r.y);
  if (c.x_from_zero) xs.push_back(0);
  if (c.y_from_zero) ys.push_back(0);
  p.x = FitAxis(xs, c.x_scale, p.width);
  p.y = FitAxis(ys, c.y_scale, p.height);
  return p;
}

std::string SeriesColor(const Chart& c, std::size_t k) {
  return c.series[k].color.empty() ? kPalette[k % std::size(kPalette)] : c.series[k].color;
}

const char* ShapeName(MarkerShape shape) {
  switch (shape) {
    case MarkerShape::kCircle: return "circle";
    case MarkerShape::kSquare: return "square";
    case MarkerShape::kDiamond: return "diamond";
    case MarkerShape::kTriangle: return "triangle";
    case MarkerShape::kRing: return "ring";
    case MarkerShape::kStar: return "star";
  }
  return "circle";
}

std::string Polygon(const std::vector<std::pair<double, double>>& corners, MarkerShape shape,
                    const std::string& color, double opacity) {
  std::string points;
  for (const auto& [x, y] : corners) {
    if (!points.empty()) points += ' ';
    points += fmt::format("{:.1f},{:.1f}", x, y);
  }
  return fmt::format("<polygon class=\"marker {}\" points=\"{}\" fill=\"{}\" fill-opacity=\"{:g}\"/>\n",
                     ShapeName(shape), points, color, opacity);
}

std::string DashAttribute(const std::string& dash) {
  return dash.empty() ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash);
}

std::string AxisLabel(const std::string& label, const Axis& a) {
  if (a.log_base == 10) return label + " (log scale)";
  if (a.log_base == 2) return label + " (log2 scale)";
  return label;
}

// The legend's entries, left to right in rows that wrap at the frame's width.
class Legend {
 public:
  Legend(double left, double right, double first_row_y) : left_(left), right_(right), x_(left), y_(first_row_y) {}

  // Adds an entry: the swatch drawn by swatch(x, y) (the swatch's left end
  // and middle line), then the label.
  template <typename SwatchFn>
  void Add(const std::string& label, SwatchFn swatch) {
    const double width = kLegendSwatchPx + 10 + kCharWidthPx * static_cast<double>(label.size());
    if (x_ > left_ && x_ + width > right_) {  // wrap
      x_ = left_;
      y_ += kLegendRowPx;
    }
    svg_ += fmt::format("<g class=\"legend-item\">\n{}<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n</g>\n",
                        swatch(x_, y_ - 4), x_ + kLegendSwatchPx + 4, y_, XmlEscape(label));
    x_ += width;
  }
  const std::string& svg() const { return svg_; }
  double last_row_y() const { return y_; }

 private:
  double left_, right_, x_, y_;
  std::string svg_;
};

std::string LineSwatch(double x, double y, const std::string& color, double width, double opacity,
                       const std::string& dash) {
  return fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                     "stroke-width=\"{:g}\" stroke-opacity=\"{:g}\"{}/>\n",
                     x, x + kLegendSwatchPx, y, y, color, width, opacity, DashAttribute(dash));
}

// Fills `legend` with an entry per labelled series, reference line and mark.
void AddLegendEntries(const Chart& c, Legend& legend) {
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    if (s.label.empty()) continue;
    const std::string color = SeriesColor(c, k);
    legend.Add(s.label, [&](double x, double y) {
      std::string swatch;
      if (s.line) swatch += LineSwatch(x, y, color, std::max(2.0, s.stroke_width), s.opacity, s.dash);
      if (s.markers) {
        swatch += MarkerSvg(s.marker_shape, x + kLegendSwatchPx / 2, y, std::max(3.0, s.marker_radius), color,
                            s.opacity);
      }
      return swatch;
    });
  }
  for (const ReferenceLine& r : c.references) {
    legend.Add(r.label, [&](double x, double y) { return LineSwatch(x, y, r.color, 2, 1, "5,3"); });
  }
  for (const Mark& m : c.marks) {
    if (m.label.empty()) continue;
    legend.Add(m.label, [&](double x, double y) {
      return MarkerSvg(m.shape, x + kLegendSwatchPx / 2, y, kLegendMarkHalfPx, m.color);
    });
  }
}

// The frame, the grid, the ticks and the axis labels.
std::string AxesSvg(const Chart& c, const Plot& p) {
  std::string svg = fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", p.left,
      p.top, p.width, p.height);
  for (double t : p.x.ticks) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#f2f2f2\"/>\n", p.X(t),
                       p.top, p.bottom());
    svg += fmt::format("<text class=\"x-tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", p.X(t),
                       p.bottom() + 14, TickLabel(t, p.x.log_base));
  }
  for (double t : p.y.ticks) {
    svg += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", p.left,
                       p.right(), p.Y(t), p.Y(t));
    svg += fmt::format("<text class=\"y-tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", p.left - 4,
                       p.Y(t) + 4, TickLabel(t, p.y.log_base));
  }
  svg += fmt::format("<text class=\"x-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     p.left + p.width / 2, p.bottom() + 30, XmlEscape(AxisLabel(c.x_label, p.x)));
  svg += fmt::format(
      "<text class=\"y-label\" transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      p.top + p.height / 2, XmlEscape(AxisLabel(c.y_label, p.y)));
  return svg;
}

// A series' line (a step line holds each value until the next x), markers
// and point labels.
std::string SeriesSvg(const Series& s, const std::string& color, const Plot& p) {
  std::string svg;
  if (s.line && s.points.size() > 1) {
    std::string pts;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& [x, y] = s.points[i];
      const double held_y = i > 0 ? s.points[i - 1].second : y;
      if (s.step && held_y != y) pts += fmt::format(" {:.1f},{:.1f}", p.X(x), p.Y(held_y));
      pts += fmt::format("{}{:.1f},{:.1f}", i == 0 ? "" : " ", p.X(x), p.Y(y));
    }
    svg += fmt::format(
        "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"{:g}\" stroke-opacity=\"{:g}\" "
        "stroke-linejoin=\"round\"{} points=\"{}\"/>\n",
        color, s.stroke_width, s.opacity, DashAttribute(s.dash), pts);
  }
  const bool labels = s.point_labels.size() == s.points.size();
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const auto& [x, y] = s.points[i];
    if (s.markers) svg += MarkerSvg(s.marker_shape, p.X(x), p.Y(y), s.marker_radius, color, s.opacity);
    if (labels && !s.point_labels[i].empty()) {
      svg += fmt::format("<text class=\"point-label\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"#333\">{}"
                         "</text>\n",
                         p.X(x) + s.marker_radius + 3, p.Y(y) - s.marker_radius - 3, XmlEscape(s.point_labels[i]));
    }
  }
  return svg;
}

// Reference lines under the series, marks on top.
std::string DataSvg(const Chart& c, const Plot& p) {
  std::string svg;
  for (const ReferenceLine& r : c.references) {
    svg += fmt::format(
        "<line class=\"reference\" x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-dasharray=\"5,3\"/>\n",
        p.left, p.right(), p.Y(r.y), p.Y(r.y), r.color);
  }
  for (std::size_t k = 0; k < c.series.size(); ++k) svg += SeriesSvg(c.series[k], SeriesColor(c, k), p);
  for (const Mark& m : c.marks) svg += MarkerSvg(m.shape, p.X(m.x), p.Y(m.y), kMarkHalfSizePx, m.color);
  return svg;
}

}  // namespace

std::string XmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string MarkerSvg(MarkerShape shape, double cx, double cy, double h, const std::string& color,
                      double opacity) {
  switch (shape) {
    case MarkerShape::kCircle:
      return fmt::format("<circle class=\"marker circle\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:g}\" fill=\"{}\" "
                         "fill-opacity=\"{:g}\"/>\n",
                         cx, cy, h, color, opacity);
    case MarkerShape::kRing:
      return fmt::format("<circle class=\"marker ring\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:g}\" fill=\"none\" "
                         "stroke=\"{}\" stroke-width=\"2\" stroke-opacity=\"{:g}\"/>\n",
                         cx, cy, h - 1, color, opacity);
    case MarkerShape::kSquare: {
      const double s = 0.85 * h;  // a square looks bigger than a circle of the same width
      return fmt::format("<rect class=\"marker square\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                         "fill=\"{}\" fill-opacity=\"{:g}\"/>\n",
                         cx - s, cy - s, 2 * s, 2 * s, color, opacity);
    }
    case MarkerShape::kDiamond:
      return Polygon({{cx, cy - h}, {cx + h, cy}, {cx, cy + h}, {cx - h, cy}}, shape, color, opacity);
    case MarkerShape::kTriangle:
      return Polygon({{cx, cy - h}, {cx + h, cy + h}, {cx - h, cy + h}}, shape, color, opacity);
    case MarkerShape::kStar: {
      std::vector<std::pair<double, double>> corners;
      for (int i = 0; i < 10; ++i) {
        const double r = i % 2 == 0 ? h : 0.45 * h;
        const double angle = std::numbers::pi * (-0.5 + 0.2 * i);
        corners.emplace_back(cx + r * std::cos(angle), cy + r * std::sin(angle));
      }
      return Polygon(corners, shape, color, opacity);
    }
  }
  return {};
}

std::string RenderChart(const Chart& c) {
  const Plot p = FitPlot(c);
  // The legend first: its rows decide the height of the picture.
  Legend legend(p.left, p.right(), p.bottom() + 46);
  AddLegendEntries(c, legend);
  const int total_h = std::max(c.height_px, static_cast<int>(std::ceil(legend.last_row_y() + 10)));

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      c.width_px, total_h);
  if (!c.background.empty()) {
    svg += fmt::format("<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"{}\"/>\n", c.background);
  }
  svg += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", p.left,
                     XmlEscape(c.title));
  if (!c.subtitle.empty()) {
    svg += fmt::format("<text class=\"subtitle\" x=\"{}\" y=\"{}\" fill=\"#555\">{}</text>\n", p.left,
                       16 + kSubtitlePx, XmlEscape(c.subtitle));
  }
  svg += AxesSvg(c, p);
  svg += DataSvg(c, p);
  svg += "<g class=\"legend\">\n" + legend.svg() + "</g>\n</svg>\n";
  return svg;
}

}  // namespace zeus::chart
