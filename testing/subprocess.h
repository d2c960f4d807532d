// Copyright 2026 The Zeus C++ Authors.
//
// Runs a real binary for integration tests and captures what it printed.

#ifndef ZEUS_TESTING_SUBPROCESS_H_
#define ZEUS_TESTING_SUBPROCESS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zeus::testing {

struct ProcessResult {
  int exit_code = -1;  // the exit status, or 128 + signal number
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] with the arguments, the current environment plus `env`
// (a nullopt value unsets that variable), and stdin from /dev/null. Blocks
// until it exits.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::optional<std::string>>& env = {});

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_SUBPROCESS_H_
