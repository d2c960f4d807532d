// Copyright 2026 The Zeus C++ Authors.
//
// Shared by the tests that run `zeus simulate` and `zeus reproduce`: the
// traces they read, the CLI run as a user runs it, and a file's bytes.

#ifndef ZEUS_TESTS_INTEGRATION_SIMULATE_CLI_TEST_UTIL_H_
#define ZEUS_TESTS_INTEGRATION_SIMULATE_CLI_TEST_UTIL_H_

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "testing/subprocess.h"

namespace zeus::simulate_cli_test {

// The NSDI '23 traces beside the checkout (../shared).
inline const std::string kTraceDir = std::string(ZEUS_SHARED_DIR) + "/traces/zeus-nsdi23";

// Runs the built `zeus` with `args`, without ZEUS_TRACE_DIR.
inline zeus::testing::ProcessResult Zeus(std::vector<std::string> args) {
  args.insert(args.begin(), ZEUS_TEST_CLI_PATH);
  return zeus::testing::RunProcess(args, {{"ZEUS_TRACE_DIR", std::nullopt}});
}

// The whole file at `path` ("" when it cannot be read).
inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace zeus::simulate_cli_test

#endif  // ZEUS_TESTS_INTEGRATION_SIMULATE_CLI_TEST_UTIL_H_
