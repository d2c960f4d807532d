// Copyright 2026 The Zeus C++ Authors.
//
// Axis fitting and tick labels of svg_chart.h.

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>

#include <fmt/format.h>

#include "chart/svg_chart.h"

namespace zeus::chart {
namespace {

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

double LogBase(AxisScale scale, const std::vector<double>& finite) {
  const bool all_positive =
      !finite.empty() && std::all_of(finite.begin(), finite.end(), [](double v) { return v > 0; });
  switch (scale) {
    case AxisScale::kAuto: return ChooseLog(finite) ? 10 : 0;
    case AxisScale::kLinear: return 0;
    case AxisScale::kLog10: return all_positive ? 10 : 0;
    case AxisScale::kLog2: return all_positive ? 2 : 0;
  }
  return 0;
}

}  // namespace

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
  Axis axis;
  axis.log_base = LogBase(scale, finite);
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

}  // namespace zeus::chart
