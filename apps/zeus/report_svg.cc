// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/report_svg.h"
#include "apps/zeus/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace zeus::cli::report {
namespace {

constexpr double kLeft = 70, kRight = 16, kTop = 28, kBottom = 76;

// About `target` round tick values covering [lo, hi].
std::vector<double> Ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

// Compact tick labels: 1.2M, 350k, 0.5.
std::string TickLabel(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

struct Scale {
  double lo, hi, px_lo, px_hi;
  bool log2;
  double operator()(double v) const {
    const double t = log2 ? (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo)) : (v - lo) / (hi - lo);
    return px_lo + t * (px_hi - px_lo);
  }
};

}  // namespace

std::string Escape(const std::string& text) { return XmlEscape(text); }

std::string RenderChart(const Chart& c) {
  const double w = c.width_px, h = c.height_px;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  auto include = [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y) || (c.log2_y && y <= 0)) return;
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
  };
  for (const Series& s : c.series) {
    for (const auto& [x, y] : s.points) include(x, y);
  }
  for (const Mark& m : c.marks) include(m.x, m.y);
  for (const ReferenceLine& r : c.references) include(x_lo, r.y);
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  if (!(x_hi > x_lo)) x_hi = x_lo + 1;
  if (c.log2_y) {
    y_lo = std::exp2(std::floor(std::log2(y_lo)));
    y_hi = std::exp2(std::ceil(std::log2(y_hi)));
    if (!(y_hi > y_lo)) y_hi = y_lo * 2;
  } else {
    const double pad = (y_hi - y_lo) * 0.05 + (y_hi == y_lo ? std::fabs(y_hi) * 0.1 + 1 : 0);
    y_lo -= pad;
    y_hi += pad;
  }
  const Scale sx{x_lo, x_hi, kLeft, w - kRight, false};
  const Scale sy{y_lo, y_hi, h - kBottom, kTop, c.log2_y};

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      c.width_px, c.height_px);
  svg += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", kLeft,
                     Escape(c.title));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", kLeft, kTop,
                     w - kLeft - kRight, h - kTop - kBottom);
  // Axes and ticks.
  for (double t : Ticks(x_lo, x_hi, 6)) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", sx(t), h - kBottom + 14,
                       TickLabel(t));
  }
  std::vector<double> y_ticks;
  if (c.log2_y) {
    for (double t = y_lo; t <= y_hi * 1.0001; t *= 2) y_ticks.push_back(t);
  } else {
    y_ticks = Ticks(y_lo, y_hi, 5);
  }
  for (double t : y_ticks) {
    svg += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", kLeft,
                       w - kRight, sy(t), sy(t));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 4, sy(t) + 4,
                       TickLabel(t));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", (kLeft + w - kRight) / 2,
                     h - kBottom + 30, Escape(c.x_label));
  svg += fmt::format("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     (kTop + h - kBottom) / 2, Escape(c.y_label));
  // Data.
  for (const ReferenceLine& r : c.references) {
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-dasharray=\"5,3\"/>\n", kLeft,
        w - kRight, sy(r.y), sy(r.y), r.color);
  }
  for (const Series& s : c.series) {
    if (s.line && s.points.size() > 1) {
      std::string pts;
      for (const auto& [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", sx(x), sy(y));
      svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.3\" points=\"{}\"/>\n", s.color, pts);
    }
    if (s.markers) {
      for (const auto& [x, y] : s.points) {
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" fill-opacity=\"0.7\"/>\n", sx(x),
                           sy(y), s.marker_radius, s.color);
      }
    }
  }
  for (const Mark& m : c.marks) {
    const double x = sx(m.x), y = sy(m.y);
    if (m.shape == "square") {
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"9\" height=\"9\" fill=\"{}\"/>\n", x - 4.5, y - 4.5,
                         m.color);
    } else if (m.shape == "ring") {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"8\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                         x, y, m.color);
    } else if (m.shape == "star") {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"16\" fill=\"{}\">&#9733;</text>\n",
                         x, y + 5, m.color);
    } else {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", x, y, m.color);
    }
  }
  // Legend below the plot.
  double lx = kLeft;
  double ly = h - kBottom + 46;
  auto legend = [&](const std::string& label, const std::string& color, bool dashed) {
    const double width = 26 + 6.2 * static_cast<double>(label.size());
    if (lx > kLeft && lx + width > w - kRight) {  // wrap
      lx = kLeft;
      ly += 14;
    }
    svg += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"3\"{}/>\n",
                       lx, lx + 14, ly - 4, ly - 4, color, dashed ? " stroke-dasharray=\"4,2\"" : "");
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", lx + 18, ly, Escape(label));
    lx += width;
  };
  for (const Series& s : c.series) {
    if (!s.label.empty()) legend(s.label, s.color, false);
  }
  for (const ReferenceLine& r : c.references) legend(r.label, r.color, true);
  for (const Mark& m : c.marks) {
    if (!m.label.empty()) legend(m.label, m.color, false);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace zeus::cli::report
