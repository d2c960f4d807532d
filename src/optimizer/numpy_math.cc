// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/numpy_math.h"

#include <cassert>
#include <cmath>
#include <vector>

namespace zeus::optimizer {
namespace {

constexpr std::size_t kUnroll = 8;
constexpr std::size_t kBlock = 128;

double PairwiseSum(const double* a, std::size_t n) {
  if (n < kUnroll) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= kBlock) {
    double partial[kUnroll];
    for (std::size_t j = 0; j < kUnroll; ++j) partial[j] = a[j];
    std::size_t i = kUnroll;
    for (; i < n - (n % kUnroll); i += kUnroll) {
      for (std::size_t j = 0; j < kUnroll; ++j) partial[j] += a[i + j];
    }
    double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                 ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % kUnroll;
  return PairwiseSum(a, half) + PairwiseSum(a + half, n - half);
}

}  // namespace

double NumpySum(std::span<const double> values) {
  // numpy's add.reduce starts from the identity 0 and adds the pairwise sum.
  return 0.0 + PairwiseSum(values.data(), values.size());
}

double NumpyMean(std::span<const double> values) {
  assert(!values.empty());
  return NumpySum(values) / static_cast<double>(values.size());
}

double NumpyVar(std::span<const double> values) {
  assert(!values.empty());
  const double mean = NumpyMean(values);
  std::vector<double> squared(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double d = values[i] - mean;
    squared[i] = d * d;
  }
  return NumpySum(squared) / static_cast<double>(values.size());
}

double PythonFloorDiv(double a, double b) {
  assert(b != 0.0);
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) div -= 1.0;
  }
  if (div != 0.0) {
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
  }
  return std::copysign(0.0, a / b);
}

}  // namespace zeus::optimizer
