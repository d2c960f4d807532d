// Copyright 2026 The Zeus C++ Authors.
//
// The 256-layer ziggurat tables of numpy's standard normal sampler
// (numpy/random/src/distributions/ziggurat_constants.h, BSD-3-Clause, Copyright
// (c) 2005-2024 NumPy Developers). These are data, not code: bit-exact normals
// need numpy's exact table values, which are not reproducible by recomputing
// the Marsaglia-Tsang recurrence in double, long double or binary128 (they
// differ from the exact layer boundaries in the last few bits). A unit test
// checks that they are consistent with that recurrence to 1e-12.
//
// Layer i covers x in [x_{i}, x_{i-1}); for a 52-bit uniform `rabs` and a
// layer index:
//   kZigguratKi[i] = floor(2^52 * x_{i-1} / x_i)   (the "always accept" bound)
//   kZigguratWi[i] = x_i / 2^52                     (scales rabs to x)
//   kZigguratFi[i] = exp(-x_i^2 / 2)                (density at the boundary)
// with layer 0 the base strip whose tail starts at kZigguratR.

#ifndef ZEUS_SRC_OPTIMIZER_ZIGGURAT_TABLES_H_
#define ZEUS_SRC_OPTIMIZER_ZIGGURAT_TABLES_H_

#include <cstdint>

namespace zeus::optimizer::internal {

inline constexpr double kZigguratR = 3.6541528853610087963519472518;
inline constexpr double kZigguratInvR = 0.27366123732975827203338247596;

extern const std::uint64_t kZigguratKi[256];
extern const double kZigguratWi[256];
extern const double kZigguratFi[256];

}  // namespace zeus::optimizer::internal

#endif  // ZEUS_SRC_OPTIMIZER_ZIGGURAT_TABLES_H_
