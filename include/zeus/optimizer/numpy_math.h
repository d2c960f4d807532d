// Copyright 2026 The Zeus C++ Authors.
//
// Reductions that round exactly as numpy's do, so that means and variances
// (and therefore the Thompson-sampling posteriors and the simulated energies)
// are bit-identical to the original Python implementation.
//
// numpy sums float64 arrays with pairwise summation: fewer than 8 values are
// added left to right; up to 128 values use 8 interleaved partial sums
// combined as ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) plus the leftover tail;
// longer arrays are split in two halves (the first a multiple of 8 long).
//
// Pure functions; thread-safe.

#ifndef ZEUS_OPTIMIZER_NUMPY_MATH_H_
#define ZEUS_OPTIMIZER_NUMPY_MATH_H_

#include <span>

namespace zeus::optimizer {

// numpy.sum(values). 0 for an empty span.
double NumpySum(std::span<const double> values);

// numpy.mean(values) = NumpySum / n. REQUIRES: !values.empty().
double NumpyMean(std::span<const double> values);

// numpy.var(values) (population variance, ddof = 0): the NumpyMean of the
// squared deviations from NumpyMean. REQUIRES: !values.empty().
double NumpyVar(std::span<const double> values);

// Python's float floor division `a // b` (fmod based; differs from
// std::floor(a / b) when a / b rounds up to an integer).
// REQUIRES: b != 0.
double PythonFloorDiv(double a, double b);

}  // namespace zeus::optimizer

#endif  // ZEUS_OPTIMIZER_NUMPY_MATH_H_
