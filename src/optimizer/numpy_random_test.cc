// Copyright 2026 The Zeus C++ Authors.
//
// Pins NumpyRandom to numpy's own outputs: ../shared/testdata/numpy-rng-vectors.csv
// (numpy.random.default_rng(seed) for seeds 1-5).

#include "zeus/optimizer/numpy_random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optimizer/ziggurat_tables.h"
#include "testing/reference_data.h"

namespace zeus::optimizer {
namespace {

const std::string kVectorsPath = std::string(ZEUS_SHARED_DIR) + "/testdata/numpy-rng-vectors.csv";

// One CSV record split on commas outside double quotes.
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// (seed, kind prefix) -> the space-separated values.
class Vectors {
 public:
  Vectors() {
    std::ifstream in(kVectorsPath);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      const std::vector<std::string> cells = SplitCsv(line);
      if (cells.size() != 3) continue;
      rows_.push_back({std::stoi(cells[0]), cells[1], cells[2]});
    }
  }
  bool empty() const { return rows_.empty(); }
  // The values of the row whose kind starts with `prefix`.
  std::string Values(int seed, const std::string& prefix) const {
    for (const Row& r : rows_) {
      if (r.seed == seed && r.kind.rfind(prefix, 0) == 0) return r.values;
    }
    ADD_FAILURE() << "no row for seed " << seed << " kind " << prefix;
    return "";
  }

 private:
  struct Row {
    int seed;
    std::string kind;
    std::string values;
  };
  std::vector<Row> rows_;
};

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class NumpyRandomVectorsTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ZEUS_REQUIRE_REFERENCE_DATA(kVectorsPath);
    ASSERT_FALSE(vectors_.empty());
  }
  Vectors vectors_;
};

TEST_P(NumpyRandomVectorsTest, StateAfterSeedingMatchesNumpy) {
  const int seed = GetParam();
  // "state=0x... inc=0x..."
  const std::vector<std::string> words = Words(vectors_.Values(seed, "pcg64_state_after_seeding"));
  ASSERT_EQ(words.size(), 2U);
  const std::string state_hex = words[0].substr(std::string("state=0x").size());
  const std::string inc_hex = words[1].substr(std::string("inc=0x").size());
  ASSERT_EQ(state_hex.size(), 32U);
  ASSERT_EQ(inc_hex.size(), 32U);
  const Pcg64State s = NumpyRandom(static_cast<std::uint64_t>(seed)).state();
  EXPECT_EQ(s.state_high, std::stoull(state_hex.substr(0, 16), nullptr, 16));
  EXPECT_EQ(s.state_low, std::stoull(state_hex.substr(16), nullptr, 16));
  EXPECT_EQ(s.inc_high, std::stoull(inc_hex.substr(0, 16), nullptr, 16));
  EXPECT_EQ(s.inc_low, std::stoull(inc_hex.substr(16), nullptr, 16));
}

TEST_P(NumpyRandomVectorsTest, RawOutputsMatchNumpy) {
  const int seed = GetParam();
  NumpyRandom rng(static_cast<std::uint64_t>(seed));
  const std::vector<std::string> expected = Words(vectors_.Values(seed, "random_raw_uint64"));
  ASSERT_EQ(expected.size(), 8U);
  for (const std::string& e : expected) EXPECT_EQ(rng.NextUint64(), std::stoull(e));
}

TEST_P(NumpyRandomVectorsTest, BoundedIntegersMatchNumpy) {
  const int seed = GetParam();
  for (int n : {5, 10}) {
    NumpyRandom rng(static_cast<std::uint64_t>(seed));
    const std::vector<std::string> expected = Words(vectors_.Values(seed, "integers(0," + std::to_string(n) + ")"));
    ASSERT_EQ(expected.size(), 12U);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(rng.Integers(0, n), std::stoll(expected[i])) << "n=" << n << " draw " << i;
    }
  }
}

TEST_P(NumpyRandomVectorsTest, StandardNormalsMatchNumpyExactly) {
  const int seed = GetParam();
  NumpyRandom rng(static_cast<std::uint64_t>(seed));
  const std::vector<std::string> expected = Words(vectors_.Values(seed, "standard_normal"));
  ASSERT_EQ(expected.size(), 6U);
  for (const std::string& e : expected) EXPECT_EQ(rng.StandardNormal(), std::strtod(e.c_str(), nullptr));
}

TEST_P(NumpyRandomVectorsTest, ThompsonDrawOrderMatchesNumpy) {
  // Three choice(5, 5, replace=False) permutations, then one normal(0, 1).
  const int seed = GetParam();
  NumpyRandom rng(static_cast<std::uint64_t>(seed));
  const std::vector<std::string> words = Words(vectors_.Values(seed, "choice(arange(5)"));
  ASSERT_EQ(words.size(), 19U);  // 3 x (5 values + "|") + 1 normal
  std::size_t w = 0;
  for (int perm = 0; perm < 3; ++perm) {
    const std::vector<std::int64_t> got = rng.ChoiceWithoutReplacement(5, 5);
    for (std::int64_t v : got) EXPECT_EQ(v, std::stoll(words[w++])) << "permutation " << perm;
    EXPECT_EQ(words[w++], "|");
  }
  EXPECT_EQ(rng.Normal(0.0, 1.0), std::strtod(words[w].c_str(), nullptr));
}

INSTANTIATE_TEST_SUITE_P(Seeds1To5, NumpyRandomVectorsTest, ::testing::Range(1, 6),
                         [](const ::testing::TestParamInfo<int>& seed) { return "seed" + std::to_string(seed.param); });

TEST(NumpyRandomTest, SameSeedSameStreamDifferentSeedDifferentStream) {
  NumpyRandom a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t va = a.NextUint64();
    EXPECT_EQ(va, b.NextUint64());
    EXPECT_NE(va, c.NextUint64());
  }
}

TEST(NumpyRandomTest, Uint32DrawsAreLowThenHighHalfOfOne64BitDraw) {
  NumpyRandom whole(3), halves(3);
  const std::uint64_t raw = whole.NextUint64();
  EXPECT_EQ(halves.NextUint32(), static_cast<std::uint32_t>(raw));
  EXPECT_EQ(halves.NextUint32(), static_cast<std::uint32_t>(raw >> 32));
  EXPECT_EQ(halves.NextUint64(), whole.NextUint64());
}

TEST(NumpyRandomTest, SingleValueRangeConsumesNothing) {
  NumpyRandom a(11), b(11);
  EXPECT_EQ(a.Integers(4, 5), 4);
  EXPECT_EQ(a.NextUint64(), b.NextUint64());
}

TEST(NumpyRandomTest, IntegersStayInRangeAndCoverIt) {
  NumpyRandom rng(5);
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < 7000; ++i) {
    const std::int64_t v = rng.Integers(-3, 4);
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++counts[v];
  }
  EXPECT_EQ(counts.size(), 7U);
  for (const auto& [v, n] : counts) EXPECT_GT(n, 800) << v;  // expected 1000 each
}

TEST(NumpyRandomTest, ChoiceIsAPermutationWhenSizeEqualsPopulation) {
  NumpyRandom rng(9);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::int64_t> p = rng.ChoiceWithoutReplacement(8, 8);
    std::sort(p.begin(), p.end());
    for (std::int64_t i = 0; i < 8; ++i) EXPECT_EQ(p[static_cast<std::size_t>(i)], i);
  }
}

TEST(NumpyRandomTest, LargePopulationsGiveDistinctValuesInRange) {
  NumpyRandom rng(4);
  for (const auto& [population, size] : {std::pair<std::int64_t, std::int64_t>{20000, 1000}, {20000, 100}}) {
    std::vector<std::int64_t> p = rng.ChoiceWithoutReplacement(population, size);
    ASSERT_EQ(p.size(), static_cast<std::size_t>(size));
    std::sort(p.begin(), p.end());
    EXPECT_EQ(std::adjacent_find(p.begin(), p.end()), p.end());
    EXPECT_GE(p.front(), 0);
    EXPECT_LT(p.back(), population);
  }
}

TEST(NumpyRandomTest, NormalWithZeroScaleIsTheMeanAndStillConsumes) {
  NumpyRandom a(2), b(2);
  EXPECT_EQ(a.Normal(-12.5, 0.0), -12.5);
  b.StandardNormal();
  EXPECT_EQ(a.NextUint64(), b.NextUint64());
}

TEST(NumpyRandomTest, StandardNormalMomentsAreRight) {
  NumpyRandom rng(1234);
  const int n = 200000;
  double sum = 0, sum_sq = 0;
  int beyond_r = 0;
  for (int i = 0; i < n; ++i) {
    const double z = rng.StandardNormal();
    sum += z;
    sum_sq += z * z;
    if (std::fabs(z) > internal::kZigguratR) ++beyond_r;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
  EXPECT_GT(beyond_r, 0);  // the tail branch ran (P(|z| > R) ~ 2.6e-4)
}

// The tables are numpy's data; check they are the Marsaglia-Tsang layers
// (x_255 = R, each layer of equal area v), to catch a corrupted entry.
TEST(ZigguratTablesTest, TablesFollowTheLayerRecurrence) {
  using internal::kZigguratFi;
  using internal::kZigguratKi;
  using internal::kZigguratR;
  using internal::kZigguratWi;
  const long double two52 = 4503599627370496.0L;
  const long double r = kZigguratR;
  const long double f_r = std::exp(-0.5L * r * r);
  const long double v = r * f_r + std::sqrt(std::acos(-1.0L) / 2) * std::erfc(r / std::sqrt(2.0L));
  EXPECT_NEAR(static_cast<double>(kZigguratWi[255] * two52), kZigguratR, 1e-12);
  EXPECT_NEAR(static_cast<double>(kZigguratWi[0] * two52 * f_r / v), 1.0, 1e-12);
  long double x_prev = r;
  long double f_prev = f_r;
  for (int i = 254; i >= 1; --i) {
    const long double x = std::sqrt(-2.0L * std::log(v / x_prev + f_prev));
    EXPECT_NEAR(static_cast<double>(kZigguratWi[i] * two52 / x), 1.0, 1e-12) << i;
    EXPECT_NEAR(static_cast<double>(kZigguratFi[i] / std::exp(-0.5L * x * x)), 1.0, 1e-12) << i;
    EXPECT_NEAR(static_cast<double>(kZigguratKi[i + 1] / (x / x_prev * two52)), 1.0, 1e-12) << i + 1;
    x_prev = x;
    f_prev = std::exp(-0.5L * x * x);
  }
  EXPECT_EQ(kZigguratKi[1], 0U);
  EXPECT_EQ(kZigguratFi[0], 1.0);
}

}  // namespace
}  // namespace zeus::optimizer

namespace zeus::optimizer {
namespace {

// A generator resumed from its saved state continues the same stream, the
// buffered 32-bit half included (the batch-size service stores it per job).
TEST(NumpyRandomStateTest, ResumesTheStreamExactly) {
  NumpyRandom a(42);
  (void)a.NextUint32();  // leaves a buffered half
  (void)a.StandardNormal();
  const NumpyRandomState saved = a.full_state();
  EXPECT_TRUE(saved.has_uint32);
  NumpyRandom b(saved);
  EXPECT_EQ(b.full_state(), saved);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(a.NextUint32(), b.NextUint32());
    ASSERT_EQ(a.Integers(0, 7), b.Integers(0, 7));
    ASSERT_EQ(a.Normal(1.0, 2.0), b.Normal(1.0, 2.0));
  }
  EXPECT_NE(NumpyRandom(43).full_state(), NumpyRandom(42).full_state());
}

}  // namespace
}  // namespace zeus::optimizer
