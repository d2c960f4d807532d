// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/pruning.h"

#include <limits>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace zeus::optimizer {
namespace {

// Feeds (batch size, cost, reached) results and checks each was the one the
// explorer asked for.
void Feed(PruningExplorer& e, const std::vector<std::tuple<int, double, bool>>& steps) {
  for (const auto& [bs, cost, reached] : steps) {
    ASSERT_EQ(e.Next(), bs);
    ASSERT_TRUE(e.Observe(bs, cost, reached));
  }
}

TEST(PruningExplorerTest, TwoRoundsDownThenUpFromTheDefault) {
  Result<PruningExplorer> e = PruningExplorer::Create({64, 8, 128, 32, 16}, 32);
  ASSERT_TRUE(e) << e.error().message();
  EXPECT_EQ(e->round(), 0);
  // Round 1 from 32: down 32, 16 (new best), 8 fails -> up 64, 128 fails.
  Feed(*e, {{32, 10, true}, {16, 8, true}, {8, 50, false}, {64, 12, true}, {128, 90, false}});
  // Round 2 over sorted(good) = [16, 32, 64] from the best, 16: down [16],
  // up [32, 64]; 32 becomes the best, 64 fails.
  EXPECT_EQ(e->round(), 1);
  EXPECT_FALSE(e->done());
  Feed(*e, {{16, 9, true}, {32, 7, true}, {64, 20, false}});
  EXPECT_TRUE(e->done());
  EXPECT_FALSE(e->failed());
  EXPECT_EQ(e->survivors(), (std::vector<int>{16, 32}));
  EXPECT_EQ(e->Next(), std::nullopt);
  EXPECT_EQ(e->Observe(16, 1, true).error().code(), ErrorCode::kFailedPrecondition);
}

TEST(PruningExplorerTest, AFailedDefaultSkipsTheRestOfTheDownDirection) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16, 32}, 16, 1);
  ASSERT_TRUE(e);
  Feed(*e, {{16, 5, false}, {32, 6, true}});
  EXPECT_TRUE(e->done());
  EXPECT_EQ(e->survivors(), (std::vector<int>{32}));
}

TEST(PruningExplorerTest, OnlyAStrictlyLowerCostMovesTheDefault) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16}, 16, 2);
  ASSERT_TRUE(e);
  Feed(*e, {{16, 5, true}, {8, 5, true}});  // tie: 16 stays the default
  EXPECT_EQ(e->Next(), 16);                // round 2 starts from 16
  Feed(*e, {{16, 5, true}, {8, 4, true}});
  EXPECT_EQ(e->survivors(), (std::vector<int>{8, 16}));
}

TEST(PruningExplorerTest, ARoundWithNoSurvivorsFails) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16}, 8, 2);
  ASSERT_TRUE(e);
  Feed(*e, {{8, 5, false}, {16, 6, false}});
  EXPECT_TRUE(e->done());
  EXPECT_TRUE(e->failed());
  EXPECT_TRUE(e->survivors().empty());
}

TEST(PruningExplorerTest, AResultForTheWrongBatchSizeIsRejected) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16}, 16);
  ASSERT_TRUE(e);
  Status s = e->Observe(8, 1, true);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e->Next(), 16);  // unchanged
}

TEST(PruningExplorerTest, InvalidSetupsAreRejected) {
  EXPECT_FALSE(PruningExplorer::Create({}, 8));
  EXPECT_FALSE(PruningExplorer::Create({8, 16}, 32));
  EXPECT_FALSE(PruningExplorer::Create({8, 8}, 8));
  EXPECT_FALSE(PruningExplorer::Create({0, 8}, 8));
  EXPECT_FALSE(PruningExplorer::Create({8}, 8, 0));
}


// The stop rule with ratio 1.5, patience 1: down from 64 over
// {8, ..., 256}: 64 costs 10 (best), 32 costs 8 (best), 16 costs 13 > 1.5 x 8
// = 12, a strike that ends "down" (8 is never tried). The start, 64, cost
// 10 <= 12, so "up" runs: 128 costs 12.5 > 12 and ends it (256 never tried).
TEST(PruningExplorerTest, StopRuleEndsADirectionAtAMuchCostlierSize) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16, 32, 64, 128, 256}, 64, 1, {1.5, 1});
  ASSERT_TRUE(e) << e.error().message();
  Feed(*e, {{64, 10, true}, {32, 8, true}, {16, 13, true}, {128, 12.5, true}});
  EXPECT_TRUE(e->done());
  EXPECT_EQ(e->survivors(), (std::vector<int>{16, 32, 64, 128}));  // a strike is still a survivor
}

// "up" is skipped when the start cost more than ratio x the best of "down":
// 64 costs 20, 32 costs 10; 20 > 1.5 x 10.
TEST(PruningExplorerTest, StopRuleSkipsUpWhenTheStartWasMuchCostlier) {
  Result<PruningExplorer> e = PruningExplorer::Create({32, 64, 128}, 64, 1, {1.5, 1});
  ASSERT_TRUE(e);
  Feed(*e, {{64, 20, true}, {32, 10, true}});
  EXPECT_TRUE(e->done());
  EXPECT_EQ(e->survivors(), (std::vector<int>{32, 64}));
}

// Patience 2: one strike (16: 13 > 12) does not end "down"; 8 costs 7, the
// new best, which resets the count; "up" starts with a strike (64: 10 >
// 1.5 x 7 = 10.5? no: 10 <= 10.5, so none) and 128 (11 > 10.5) is a first
// strike, 256 (20) the second.
TEST(PruningExplorerTest, StopRuleWithPatienceTwoNeedsTwoStrikesInARow) {
  Result<PruningExplorer> e = PruningExplorer::Create({8, 16, 32, 64, 128, 256, 512}, 64, 1, {1.5, 2});
  ASSERT_TRUE(e);
  Feed(*e, {{64, 10, true}, {32, 8, true}, {16, 13, true}, {8, 7, true}, {128, 11, true}, {256, 20, true}});
  EXPECT_TRUE(e->done());
  EXPECT_EQ(e->survivors(), (std::vector<int>{8, 16, 32, 64, 128, 256}));
}

TEST(PruningExplorerTest, StopRuleIsValidated) {
  EXPECT_FALSE(PruningExplorer::Create({8}, 8, 1, {0.5, 1}));
  EXPECT_FALSE(PruningExplorer::Create({8}, 8, 1, {1.5, 0}));
  EXPECT_FALSE(PruningExplorer::Create({8}, 8, 1, {std::numeric_limits<double>::infinity(), 1}));
  EXPECT_TRUE(PruningExplorer::Create({8}, 8, 1, {1.0, 1}));
}

}  // namespace
}  // namespace zeus::optimizer
