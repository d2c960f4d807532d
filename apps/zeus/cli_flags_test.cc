// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/cli_flags.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zeus::cli {
namespace {

// The validator's message for `input` ("" when accepted); `input` is rewritten.
std::string Check(const CLI::Validator& v, std::string& input) { return v(input); }

TEST(IntegerFlagTest, SignedBoundsAtTheTypeLimits) {
  const CLI::Validator v = IntegerFlag<std::int64_t>();
  std::string min = "-9223372036854775808";
  EXPECT_EQ(Check(v, min), "");
  std::string below = "-9223372036854775809";
  EXPECT_EQ(Check(v, below), "must be at least -9223372036854775808 (got -9223372036854775809)");
  std::string above = "9223372036854775808";
  EXPECT_EQ(Check(v, above), "must be at most 9223372036854775807 (got 9223372036854775808)");
}

TEST(IntegerFlagTest, UnsignedRejectsSignsAndOverflow) {
  const CLI::Validator v = IntegerFlag<std::uint32_t>();
  std::string neg = "-1";
  EXPECT_EQ(Check(v, neg), "must be at least 0 (got -1)");
  std::string minus_zero = "-0";
  EXPECT_EQ(Check(v, minus_zero), "");
  EXPECT_EQ(minus_zero, "0");
  std::string big = "4294967296";
  EXPECT_EQ(Check(v, big), "must be at most 4294967295 (got 4294967296)");
  std::string huge = "123456789012345678901234567890";
  EXPECT_EQ(Check(v, huge), "must be at most 4294967295 (got 123456789012345678901234567890)");
}

TEST(IntegerFlagTest, RangeInWordsAndDecimalRewrite) {
  const CLI::Validator v = IntegerFlag<int>(1, 10);
  std::string zero = "0";
  EXPECT_EQ(Check(v, zero), "must be between 1 and 10 (got 0)");
  std::string octal_looking = "010";
  EXPECT_EQ(Check(v, octal_looking), "");
  EXPECT_EQ(octal_looking, "10");
  for (std::string bad : {"", "+", "0x5", "1e3", " 5", "5 "}) {
    std::string input = bad;
    EXPECT_EQ(Check(v, input), "must be a whole number (got '" + bad + "')") << bad;
  }
}

TEST(NumberRangeTest, Words) {
  std::string v = "-1";
  EXPECT_EQ(Check(NumberRange(0, 1), v), "must be between 0 and 1 (got -1)");
  v = "0";
  EXPECT_EQ(Check(PositiveNumber(), v), "must be greater than 0 (got 0)");
  v = "0.5";
  EXPECT_EQ(Check(NumberAtLeast(1), v), "must be at least 1 (got 0.5)");
  v = "nan";
  EXPECT_EQ(Check(FiniteNumber(), v), "must be a finite number (got nan)");
  v = "1e400";
  EXPECT_EQ(Check(NumberRange(0, 1), v), "must be a finite number between 0 and 1 (got 1e400)");
  v = "0.25";
  EXPECT_EQ(Check(NumberRange(0, 1), v), "");
}

// Flags at every depth refuse a value; without RejectFlagValues CLI11 reads
// --json=3 as true.
TEST(RejectFlagValuesTest, FlagsInSubcommandsRefuseAValue) {
  CLI::App app{"t", "zeus"};
  CLI::App* sub = app.add_subcommand("monitor");
  CLI::App* subsub = sub->add_subcommand("power");
  bool json = false;
  bool quiet = false;
  int count = 0;
  sub->add_flag("--json", json);
  subsub->add_flag("-q,--quiet", quiet);
  subsub->add_option("--count", count);
  RejectFlagValues(app);
  auto error = [&app](std::vector<std::string> args) -> std::string {
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return FormatParseError(app, e);
    }
    return "";
  };
  EXPECT_EQ(error({"monitor", "--json=3"}), "--json takes no value; give --json alone; see zeus monitor --help");
  EXPECT_EQ(error({"monitor", "power", "--quiet=no"}),
            "--quiet takes no value; give --quiet alone; see zeus monitor power --help");
  EXPECT_EQ(error({"monitor", "power", "--quiet", "--count=3"}), "");  // options keep their values
  EXPECT_TRUE(quiet);
  EXPECT_EQ(count, 3);
}

// --help after a word that names no command is the unknown-command error (exit
// 2), not the parent's help (exit 0): CLI11 answers --help before it rejects
// the word.
TEST(HandleParseErrorTest, HelpAfterAnUnknownCommandIsAUsageError) {
  auto run = [](std::vector<std::string> args, std::string* out, std::string* err) {
    CLI::App app{"t", "zeus"};
    app.require_subcommand(1);
    app.add_subcommand("info");
    CLI::App* monitor = app.add_subcommand("monitor");
    monitor->add_subcommand("power");
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    int code = -1;
    try {
      app.parse(args);
      code = 0;
    } catch (const CLI::ParseError& e) {
      code = HandleParseError(app, e);
    }
    *out = ::testing::internal::GetCapturedStdout();
    *err = ::testing::internal::GetCapturedStderr();
    return code;
  };
  std::string out, err;
  EXPECT_EQ(run({"bogus", "--help"}, &out, &err), 2);
  EXPECT_EQ(err, "error: unknown command 'bogus'; commands: info, monitor; see zeus --help\n");
  EXPECT_EQ(out, "");
  EXPECT_EQ(run({"--help", "bogus"}, &out, &err), 2);
  EXPECT_EQ(err, "error: unknown command 'bogus'; commands: info, monitor; see zeus --help\n");
  EXPECT_EQ(run({"monitor", "bogus", "-h"}, &out, &err), 2);
  EXPECT_EQ(err, "error: unknown command 'bogus'; commands: power; see zeus monitor --help\n");
  // Help where every word is placed still prints and exits 0.
  EXPECT_EQ(run({"--help"}, &out, &err), 0);
  EXPECT_NE(out.find("info"), std::string::npos) << out;
  EXPECT_EQ(err, "");
  EXPECT_EQ(run({"monitor", "--help"}, &out, &err), 0);
  EXPECT_NE(out.find("power"), std::string::npos) << out;
  EXPECT_EQ(run({"monitor", "power", "--help"}, &out, &err), 0);
  EXPECT_EQ(err, "");
}

TEST(IdlePowerFlagsTest, ModelEqualsWatts) {
  auto parsed = ParseIdlePowerFlags({"NVIDIA H100 80GB HBM3=70", "A=B=1.5", "T4=0"});
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(parsed->at("NVIDIA H100 80GB HBM3"), 70'000u);
  EXPECT_EQ(parsed->at("A=B"), 1'500u);  // the last '=' splits: model names may hold one
  EXPECT_EQ(parsed->at("T4"), 0u);
  for (const char* bad : {"H100", "=70", "H100=", "H100=-1", "H100=10001", "H100=nan", "H100=7x"}) {
    auto refused = ParseIdlePowerFlags({bad});
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.error().message().find(bad), std::string::npos) << refused.error().message();
  }
}
}  // namespace
}  // namespace zeus::cli
