// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace zeus::cli {
namespace {

// A palette that stays distinguishable for the common colour-vision deficiencies.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#000000", "#F0E442"};

std::string Label(double v) {
  if (v == 0) return "0";
  return fmt::format("{:g}", v);
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

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1.0;
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  // From the last round value at or below lo to the first at or above hi.
  const double first = std::floor(lo / step + 1e-9) * step;
  const double last = std::ceil(hi / step - 1e-9) * step;
  for (double t = first; t <= last + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string RenderSvg(const LinePlot& plot) {
  const double left = 80, right = 190, top = plot.subtitle.empty() ? 50 : 68, bottom = 60;
  const double w = plot.width_px, h = plot.height_px;
  const double pw = w - left - right, ph = h - top - bottom;

  double x_lo = plot.x_from_zero ? 0.0 : std::numeric_limits<double>::infinity();
  double x_hi = -std::numeric_limits<double>::infinity();
  double y_lo = plot.y_from_zero ? 0.0 : std::numeric_limits<double>::infinity(), y_hi = -std::numeric_limits<double>::infinity();
  for (const PlotSeries& s : plot.series) {
    for (const auto& [x, y] : s.points) {
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  if (!std::isfinite(x_lo)) x_lo = 0;
  if (!std::isfinite(x_hi)) x_hi = x_lo + 1;
  if (!std::isfinite(y_lo)) y_lo = 0;
  if (!std::isfinite(y_hi)) y_hi = 1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  const std::vector<double> xt = NiceTicks(x_lo, x_hi);
  // Headroom above the highest line so it does not run along the frame.
  const std::vector<double> yt = NiceTicks(y_lo, y_hi + 0.04 * (y_hi - y_lo));
  x_lo = xt.front();
  x_hi = xt.back();
  y_lo = yt.front();
  y_hi = yt.back();
  auto X = [&](double x) { return left + (x - x_lo) / (x_hi - x_lo) * pw; };
  auto Y = [&](double y) { return top + ph - (y - y_lo) / (y_hi - y_lo) * ph; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      plot.width_px, plot.height_px);
  svg += fmt::format("<text x=\"{}\" y=\"28\" font-size=\"17\" font-weight=\"bold\">{}</text>\n", left,
                     XmlEscape(plot.title));
  if (!plot.subtitle.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"48\" fill=\"#555\">{}</text>\n", left, XmlEscape(plot.subtitle));
  }
  // Grid and ticks.
  for (double t : yt) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e5e5e5\"/>\n", left,
                       Y(t), left + pw, Y(t));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n", left - 8,
                       Y(t) + 4, Label(t));
  }
  for (double t : xt) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#f0f0f0\"/>\n", X(t),
                       top, X(t), top + ph);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#333\">{}</text>\n", X(t),
                       top + ph + 18, Label(t));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left,
                     top, pw, ph);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, h - 15,
                     XmlEscape(plot.x_label));
  svg += fmt::format(
      "<text x=\"20\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {:.1f})\">{}</text>\n",
      top + ph / 2, top + ph / 2, XmlEscape(plot.y_label));

  // Series and legend.
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const PlotSeries& s = plot.series[k];
    const char* color = kColors[k % std::size(kColors)];
    if (!s.points.empty()) {
      std::string path;
      for (std::size_t i = 0; i < s.points.size(); ++i) {
        const auto& [x, y] = s.points[i];
        if (i == 0) {
          path += fmt::format("M{:.1f},{:.1f}", X(x), Y(y));
        } else if (s.step) {
          path += fmt::format(" H{:.1f} V{:.1f}", X(x), Y(y));
        } else {
          path += fmt::format(" L{:.1f},{:.1f}", X(x), Y(y));
        }
      }
      if (s.line) {
        svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"/>\n", path, color);
      }
      const bool labels = s.point_labels.size() == s.points.size();
      for (std::size_t i = 0; i < s.points.size(); ++i) {
        const auto& [x, y] = s.points[i];
        if (s.markers) {
          svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", X(x), Y(y), color);
        }
        if (labels && !s.point_labels[i].empty()) {
          svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\">{}</text>\n",
                             X(x) + 6, Y(y) - 6, XmlEscape(s.point_labels[i]));
        }
      }
    }
    const double ly = top + 10 + 20.0 * static_cast<double>(k);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                       "stroke-width=\"3\"/>\n",
                       left + pw + 15, ly, left + pw + 35, ly, color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", left + pw + 42, ly + 4, XmlEscape(s.label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace zeus::cli
