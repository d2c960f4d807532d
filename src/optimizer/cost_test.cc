// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/cost.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "zeus/optimizer/early_stopping.h"
#include "zeus/optimizer/numpy_math.h"

namespace zeus::optimizer {
namespace {

TEST(ZeusCostTest, WeighsEnergyAgainstMaxPowerTimesTime) {
  // 0.5 * 100 J + 0.5 * 300 W * 10 s = 50 + 1500.
  EXPECT_DOUBLE_EQ(ZeusCost(100.0, 10.0, 0.5, 300.0), 1550.0);
  EXPECT_DOUBLE_EQ(ZeusCost(100.0, 10.0, 1.0, 300.0), 100.0);   // energy only
  EXPECT_DOUBLE_EQ(ZeusCost(100.0, 10.0, 0.0, 300.0), 3000.0);  // time only
}

TEST(ZeusCostTest, UsesTheOriginalFloatingPointOrder) {
  const double e = 8495173.59414267, t = 56443.485714285714, eta = 0.3, p = 250.0;
  EXPECT_EQ(ZeusCost(e, t, eta, p), eta * e + ((1.0 - eta) * p) * t);
}

TEST(ZeusCostTest, EtaOutsideZeroOneIsRejected) {
  EXPECT_TRUE(ValidateEta(0.0));
  EXPECT_TRUE(ValidateEta(1.0));
  EXPECT_TRUE(ValidateEta(0.5));
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    Status s = ValidateEta(bad);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(NumpyMathTest, ShortArraysAreSummedLeftToRight) {
  // 1e16 + 1 rounds back to 1e16 (ties to even), so order matters.
  const double v[] = {1e16, 1.0, 1.0};
  EXPECT_EQ(NumpySum(v), (1e16 + 1.0) + 1.0);
  EXPECT_NE(NumpySum(v), 1e16 + (1.0 + 1.0));
}

TEST(NumpyMathTest, EightOrMoreUseEightPartialSums) {
  const double v[] = {1e16, 1, 1, 1, 1, 1, 1, 1, 1};
  const double expected = (((1e16 + 1) + (1 + 1)) + ((1 + 1) + (1 + 1))) + 1;
  double sequential = 0;
  for (double x : v) sequential += x;
  EXPECT_EQ(NumpySum(v), expected);
  EXPECT_NE(expected, sequential);  // the test can tell the two apart
}

TEST(NumpyMathTest, LongArraysSplitAtAMultipleOfEight) {
  std::vector<double> v(300);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.1 * static_cast<double>(i % 7) + 1e-3 * static_cast<double>(i);
  // 300 splits into 144 + 156 (the first half rounded down to a multiple of
  // 8); 144 into 72 + 72 and 156 into 72 + 84, each summed as a block.
  auto block = [&](std::size_t begin, std::size_t n) {
    return NumpySum(std::span<const double>(v).subspan(begin, n));
  };
  const double expected = (block(0, 72) + block(72, 72)) + (block(144, 72) + block(216, 84));
  EXPECT_EQ(NumpySum(v), expected);
}

TEST(NumpyMathTest, MeanAndPopulationVariance) {
  const double v[] = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(NumpyMean(v), 2.5);
  EXPECT_DOUBLE_EQ(NumpyVar(v), 1.25);
  const double same[] = {-7.5, -7.5};
  EXPECT_EQ(NumpyVar(same), 0.0);
}

TEST(NumpyMathTest, FloorDivisionFollowsPython) {
  EXPECT_EQ(PythonFloorDiv(7, 2), 3);
  EXPECT_EQ(PythonFloorDiv(-7, 2), -4);
  // 0.1 is slightly more than 1/10, so Python says 1.0 // 0.1 == 9.0 while
  // floor(1.0 / 0.1) == 10.
  EXPECT_EQ(PythonFloorDiv(1.0, 0.1), 9.0);
  EXPECT_EQ(std::floor(1.0 / 0.1), 10.0);
}

TEST(EarlyStoppingTest, UpperBoundIsBetaTimesMinCostOrInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(CostUpperBound(2.0, inf), inf);
  EXPECT_EQ(CostUpperBound(2.0, 1000.0), 2000.0);
}

TEST(EarlyStoppingTest, EpochBudgetIsFloorOfBoundOverEpochCostCappedAtMaxEpochs) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(EpochBudget(inf, 5.0, 16), 16);
  EXPECT_EQ(EpochBudget(100.0, 30.0, 16), 3);   // 100 // 30
  EXPECT_EQ(EpochBudget(1e9, 1.0, 16), 16);     // capped
  EXPECT_EQ(EpochBudget(10.0, 100.0, 16), 0);   // cannot run one epoch
  EXPECT_EQ(EpochBudget(1.0, 0.1, 100), 9);     // Python's //, not floor(a/b)
}

TEST(EarlyStoppingTest, WithinBudgetIncludesEquality) {
  EXPECT_TRUE(WithinCostBudget(10.0, 10.0));
  EXPECT_FALSE(WithinCostBudget(10.5, 10.0));
}

}  // namespace
}  // namespace zeus::optimizer
