// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/cost.h"

#include <cmath>
#include <limits>
#include <vector>

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

TEST(ZeusCostTest, MultipliesOneMinusEtaByMaxPowerBeforeTime) {
  // The original computes ((1 - eta) * max_power) * time. Worked by hand with
  // eta = 0.25, max_power = 3, time = 2^52 + 1, energy = 0:
  //   (1 - 0.25) * 3 = 2.25 (exact);
  //   2.25 * (2^52 + 1) = 9 * 2^50 + 2.25; doubles in [2^53, 2^54) are 2 apart,
  //   so it rounds to 9 * 2^50 + 2 = 10133099161583618.
  // The other orders land on 9 * 2^50 + 4:
  //   (1 - eta) * (max_power * time): 3 * 2^52 + 3 is a tie, rounds to the
  //   even 3 * 2^52 + 4; times 0.75 is 9 * 2^50 + 3, a tie, rounds to + 4.
  //   ((1 - eta) * time) * max_power: 3 * 2^50 + 0.75 (spacing 0.5) is a tie,
  //   rounds to 3 * 2^50 + 1; times 3 is 9 * 2^50 + 3, again + 4.
  EXPECT_EQ(ZeusCost(0.0, 4503599627370497.0, 0.25, 3.0), 10133099161583618.0);

  // The same order keeps a product that fits from overflowing on the way:
  // (0.5 * 1.5e308) * 1.5 = 1.125e308, while 1.5e308 * 1.5 alone is
  // infinite. energy 2 J adds 0.5 * 2 = 1, far below the spacing at 1e308.
  EXPECT_DOUBLE_EQ(ZeusCost(2.0, 1.5, 0.5, 1.5e308), 1.125e308);
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

// Doubles near 1e16 are 2 apart, and 1e16 = 2 * 5e15 has an even mantissa:
// 1e16 + 1 is a tie and rounds back to 1e16; 1e16 + 2 is exact.

TEST(NumpyMathTest, ShortArraysAreSummedLeftToRight) {
  // (1e16 + 1) + 1 = 1e16 + 1 = 1e16: both ones are lost. Summing the ones
  // first would give 1e16 + 2.
  const double v[] = {1e16, 1.0, 1.0};
  EXPECT_EQ(NumpySum(v), 1e16);
}

TEST(NumpyMathTest, EightOrMoreUseEightPartialSums) {
  // Nine values: partial sums p0..p7 = 1e16, 1, 1, 1, 1, 1, 1, 1, combined as
  // ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)) = (1e16 + 2) + 4
  // (1e16 + 1 rounds to 1e16), then the ninth value is added: 1e16 + 7 is a
  // tie between 1e16 + 6 (odd mantissa 5e15 + 3) and 1e16 + 8 (even): 1e16 + 8.
  // Left to right loses every one (1e16); dropping the ninth value, or
  // folding it into p0 (where 1e16 + 1 rounds to 1e16), gives 1e16 + 6.
  const double v[] = {1e16, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(NumpySum(v), 10000000000000008.0);
}

TEST(NumpyMathTest, LongArraysSplitAtAMultipleOfEight) {
  // 300 values, zero but for v[0] = 1e16 and ones at 72, 144 and 216.
  // 300 splits at 150 rounded down to a multiple of 8, 144; [0, 144) into
  // [0, 72) + [72, 144); [144, 300) at 78 -> 72: [144, 216) + [216, 300).
  // Blocks: 1e16, 1, 1, 1; (1e16 + 1) + (1 + 1) = 1e16 + 2.
  // Splitting at 150 instead gives blocks [0,72) [72,150) [150,222) [222,300)
  // = 1e16, 2, 1, 0 and (1e16 + 2) + 1 = 1e16 + 3, a tie that rounds to
  // 1e16 + 4; left to right gives 1e16.
  std::vector<double> v(300, 0.0);
  v[0] = 1e16;
  v[72] = v[144] = v[216] = 1.0;
  EXPECT_EQ(NumpySum(v), 10000000000000002.0);
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
