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

// The current environment with `env` applied (a nullopt value unsets that
// variable), as NAME=VALUE strings for execve. Build it before fork: a child
// of a multi-threaded process may call only async-signal-safe functions.
std::vector<std::string> MergedEnvironment(const std::map<std::string, std::optional<std::string>>& env);

// Runs argv[0] with the arguments, the current environment plus `env`
// (a nullopt value unsets that variable), and stdin from /dev/null. Blocks
// until it exits.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::optional<std::string>>& env = {});

// A child process that runs in the background (a server under test). Its
// stdout and stderr go to files. The destructor kills it (SIGKILL) if it is
// still running and reaps it.
class BackgroundProcess {
 public:
  // Starts argv[0] like RunProcess does; stdout/stderr to the given files
  // (appended). Aborts the test binary if fork fails.
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                    const std::string& stderr_path,
                    const std::map<std::string, std::optional<std::string>>& env = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  int pid() const { return pid_; }
  // Sends `signal` (no-op after Wait).
  void Signal(int signal);
  // Waits for the exit; the status as in ProcessResult::exit_code. Repeated
  // calls return the same value.
  int Wait();
  // True while it has not exited.
  bool Running();

 private:
  int pid_ = -1;
  std::optional<int> exit_code_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_SUBPROCESS_H_
