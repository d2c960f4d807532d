// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/report_svg.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <initializer_list>
#include <numbers>

#include <fmt/format.h>

#include "apps/zeus/svg_plot.h"

namespace zeus::cli::report {
namespace {

constexpr double kLeft = 70, kRight = 16, kTop = 28, kPlotBottom = 76;  // margins around the frame
constexpr double kLegendRowPx = 16;
constexpr double kLegendSwatchPx = 24;
constexpr double kLegendMarkHalfPx = 5;

double Transform(double v, double log_base) {
  if (log_base == 10) return std::log10(v);
  if (log_base == 2) return std::log2(v);
  return v;
}

double Inverse(double t, double log_base) {
  if (log_base == 10) return std::pow(10.0, t);
  if (log_base == 2) return std::exp2(t);
  return t;
}

// m x 10^k, written so that the result is the double nearest the decimal value.
double Decimal(double m, int k) { return k >= 0 ? m * std::pow(10.0, k) : m / std::pow(10.0, -k); }

// Multiples of 1, 2 or 5 x 10^k, about `target` of them, within [lo, hi].
std::vector<double> LinearTicks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / target;
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  double step = Decimal(10, exponent);
  for (double m : {1.0, 2.0, 5.0}) {
    if (Decimal(m, exponent) >= raw * (1 - 1e-9)) {
      step = Decimal(m, exponent);
      break;
    }
  }
  std::vector<double> ticks;
  const auto first = static_cast<long long>(std::ceil(lo / step - 1e-9));
  const auto last = static_cast<long long>(std::floor(hi / step + 1e-9));
  for (long long i = first; i <= last; ++i) {
    const double t = static_cast<double>(i) * step;
    ticks.push_back(i == 0 ? 0.0 : t);  // never "-0"
  }
  return ticks;
}

// m x 10^k for every m in `mantissas` and every k, within [lo, hi].
std::vector<double> DecimalTicks(double lo, double hi, std::initializer_list<double> mantissas, int decade_step) {
  std::vector<double> ticks;
  const int k_lo = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int k_hi = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int k = k_lo; k <= k_hi; ++k) {
    if (decade_step > 1 && ((k % decade_step) + decade_step) % decade_step != 0) continue;
    for (double m : mantissas) {
      const double t = Decimal(m, k);
      if (t >= lo * (1 - 1e-12) && t <= hi * (1 + 1e-12)) ticks.push_back(t);
    }
  }
  return ticks;
}

std::vector<double> Log10Ticks(double lo, double hi) {
  const double decades = std::log10(hi) - std::log10(lo);
  if (decades > 8) return DecimalTicks(lo, hi, {1}, 2);
  if (decades > 2) return DecimalTicks(lo, hi, {1}, 1);
  std::vector<double> ticks = DecimalTicks(lo, hi, {1, 2, 5}, 1);
  if (ticks.size() < 3) ticks = DecimalTicks(lo, hi, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1);
  if (ticks.size() < 2) ticks = LinearTicks(lo, hi, 4);
  return ticks;
}

std::vector<double> Log2Ticks(double lo, double hi) {
  const int k_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
  const int k_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
  const int step = k_hi - k_lo > 14 ? 2 : 1;
  std::vector<double> ticks;
  for (int k = k_lo; k <= k_hi; k += step) ticks.push_back(std::exp2(k));
  if (ticks.size() < 2) ticks = LinearTicks(lo, hi, 4);
  return ticks;
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

}  // namespace

std::string Escape(const std::string& text) { return XmlEscape(text); }

bool ChooseLog(const std::vector<double>& values) {
  if (values.empty()) return false;
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) return false;
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const double lo = sorted.front(), hi = sorted.back();
  if (hi / lo > kLogSpanRatio) return true;
  const std::size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return hi / lo > kSkewSpanRatio && (median - lo) / (hi - lo) < kSkewMedianFraction;
}

double Axis::Fraction(double v) const {
  const double t_lo = Transform(lo, log_base), t_hi = Transform(hi, log_base);
  return (Transform(v, log_base) - t_lo) / (t_hi - t_lo);
}

Axis FitAxis(const std::vector<double>& values, AxisScale scale, double length_px) {
  std::vector<double> finite;
  std::copy_if(values.begin(), values.end(), std::back_inserter(finite), [](double v) { return std::isfinite(v); });
  const bool all_positive =
      !finite.empty() && std::all_of(finite.begin(), finite.end(), [](double v) { return v > 0; });
  Axis axis;
  switch (scale) {
    case AxisScale::kAuto: axis.log_base = ChooseLog(finite) ? 10 : 0; break;
    case AxisScale::kLinear: axis.log_base = 0; break;
    case AxisScale::kLog10: axis.log_base = all_positive ? 10 : 0; break;
    case AxisScale::kLog2: axis.log_base = all_positive ? 2 : 0; break;
  }
  double t_lo = 0, t_hi = 1;
  if (!finite.empty()) {
    const auto [min_it, max_it] = std::minmax_element(finite.begin(), finite.end());
    t_lo = Transform(*min_it, axis.log_base);
    t_hi = Transform(*max_it, axis.log_base);
    if (!(t_hi > t_lo)) {  // one value: a range around it
      const double half = axis.log_base != 0 ? 0.5 : (t_lo == 0 ? 1.0 : 0.1 * std::fabs(t_lo));
      t_lo -= half;
      t_hi += half;
    }
  }
  // The data's extremes sit kInnerPadPx inside the ends of the frame.
  const double usable_px = std::max(1.0, length_px - 2 * kInnerPadPx);
  const double pad = (t_hi - t_lo) * kInnerPadPx / usable_px;
  axis.lo = Inverse(t_lo - pad, axis.log_base);
  axis.hi = Inverse(t_hi + pad, axis.log_base);
  if (axis.log_base == 10) {
    axis.ticks = Log10Ticks(axis.lo, axis.hi);
  } else if (axis.log_base == 2) {
    axis.ticks = Log2Ticks(axis.lo, axis.hi);
  } else {
    axis.ticks = LinearTicks(axis.lo, axis.hi, 5);
  }
  return axis;
}

std::string TickLabel(double v, double log_base) {
  if (v == 0) return "0";
  if (log_base == 2 && v >= 1) return fmt::format("{:.0f}", v);
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
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
  const double w = c.width_px, h = c.height_px;
  const double frame_w = w - kLeft - kRight, frame_h = h - kTop - kPlotBottom;
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
  const Axis ax = FitAxis(xs, c.x_scale, frame_w);
  const Axis ay = FitAxis(ys, c.y_scale, frame_h);
  auto sx = [&](double x) { return kLeft + ax.Fraction(x) * frame_w; };
  auto sy = [&](double y) { return kTop + (1 - ay.Fraction(y)) * frame_h; };
  auto axis_label = [](const std::string& label, const Axis& a) {
    if (a.log_base == 10) return label + " (log scale)";
    if (a.log_base == 2) return label + " (log2 scale)";
    return label;
  };

  // The legend first: its rows decide the height of the picture.
  std::string legend;
  double lx = kLeft;
  double ly = h - kPlotBottom + 46;
  auto place = [&](const std::string& label) {
    const double width = kLegendSwatchPx + 10 + 6.2 * static_cast<double>(label.size());
    if (lx > kLeft && lx + width > w - kRight) {  // wrap
      lx = kLeft;
      ly += kLegendRowPx;
    }
    const double x = lx;
    lx += width;
    return x;
  };
  auto add_item = [&](const std::string& label, const std::string& swatch, double x) {
    legend += fmt::format("<g class=\"legend-item\">\n{}<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n</g>\n", swatch,
                          x + kLegendSwatchPx + 4, ly, Escape(label));
  };
  for (const Series& s : c.series) {
    if (s.label.empty()) continue;
    const double x = place(s.label);
    std::string swatch;
    if (s.line) {
      swatch += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                            "stroke-width=\"{:g}\" stroke-opacity=\"{:g}\"{}/>\n",
                            x, x + kLegendSwatchPx, ly - 4, ly - 4, s.color, std::max(2.0, s.stroke_width), s.opacity,
                            DashAttribute(s.dash));
    }
    if (s.markers) {
      swatch += MarkerSvg(s.marker_shape, x + kLegendSwatchPx / 2, ly - 4, std::max(3.0, s.marker_radius), s.color,
                          s.opacity);
    }
    add_item(s.label, swatch, x);
  }
  for (const ReferenceLine& r : c.references) {
    const double x = place(r.label);
    add_item(r.label,
             fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                         "stroke-width=\"2\" stroke-dasharray=\"5,3\"/>\n",
                         x, x + kLegendSwatchPx, ly - 4, ly - 4, r.color),
             x);
  }
  for (const Mark& m : c.marks) {
    if (m.label.empty()) continue;
    const double x = place(m.label);
    add_item(m.label, MarkerSvg(m.shape, x + kLegendSwatchPx / 2, ly - 4, kLegendMarkHalfPx, m.color), x);
  }
  const int total_h = std::max(c.height_px, static_cast<int>(std::ceil(ly + 10)));

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      c.width_px, total_h);
  svg += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", kLeft,
                     Escape(c.title));
  svg += fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", kLeft,
      kTop, frame_w, frame_h);
  // Grid, ticks and axis labels.
  for (double t : ax.ticks) {
    svg += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#f2f2f2\"/>\n", sx(t), kTop,
                       kTop + frame_h);
    svg += fmt::format("<text class=\"x-tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", sx(t),
                       h - kPlotBottom + 14, TickLabel(t, ax.log_base));
  }
  for (double t : ay.ticks) {
    svg += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", kLeft,
                       w - kRight, sy(t), sy(t));
    svg += fmt::format("<text class=\"y-tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 4,
                       sy(t) + 4, TickLabel(t, ay.log_base));
  }
  svg += fmt::format("<text class=\"x-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     (kLeft + w - kRight) / 2, h - kPlotBottom + 30, Escape(axis_label(c.x_label, ax)));
  svg += fmt::format(
      "<text class=\"y-label\" transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      kTop + frame_h / 2, Escape(axis_label(c.y_label, ay)));
  // Data: reference lines under the series, marks on top.
  for (const ReferenceLine& r : c.references) {
    svg += fmt::format(
        "<line class=\"reference\" x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-dasharray=\"5,3\"/>\n",
        kLeft, w - kRight, sy(r.y), sy(r.y), r.color);
  }
  for (const Series& s : c.series) {
    if (s.line && s.points.size() > 1) {
      std::string pts;
      for (const auto& [x, y] : s.points) {
        if (!pts.empty()) pts += ' ';
        pts += fmt::format("{:.1f},{:.1f}", sx(x), sy(y));
      }
      svg += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{:g}\" stroke-opacity=\"{:g}\" "
          "stroke-linejoin=\"round\"{} points=\"{}\"/>\n",
          s.color, s.stroke_width, s.opacity, DashAttribute(s.dash), pts);
    }
    if (s.markers) {
      for (const auto& [x, y] : s.points) {
        svg += MarkerSvg(s.marker_shape, sx(x), sy(y), s.marker_radius, s.color, s.opacity);
      }
    }
  }
  for (const Mark& m : c.marks) svg += MarkerSvg(m.shape, sx(m.x), sy(m.y), kMarkHalfSizePx, m.color);
  svg += "<g class=\"legend\">\n" + legend + "</g>\n</svg>\n";
  return svg;
}

}  // namespace zeus::cli::report
