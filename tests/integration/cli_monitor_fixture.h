// Copyright 2026 The Zeus C++ Authors.
//
// The fixture of the `zeus monitor` integration tests (cli_monitor_test.cc,
// cli_monitor_tree_test.cc): the real binary on two emulated GPUs, started in
// the foreground (RunProcess) or in the background with the relayed signals
// at their defaults, optionally on a pseudo-terminal.

#ifndef ZEUS_TESTS_INTEGRATION_CLI_MONITOR_FIXTURE_H_
#define ZEUS_TESTS_INTEGRATION_CLI_MONITOR_FIXTURE_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait.h"

extern char** environ;

namespace zeus::monitor_test {

using json = nlohmann::json;
using testing::ProcessResult;
using testing::RunProcess;

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// WaitUntil: testing/wait.h (readiness with a generous deadline, never a fixed sleep).
using zeus::testing::WaitUntil;

// A process gone or a zombie (nobody may reap an orphan in a container).
inline bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

// `zeus monitor` started in the background (see CliMonitorTest::Start).
struct Zeus {
  pid_t pid = -1;
  int Wait() {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Zeus() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      Wait();
    }
  }
};

class CliMonitorTest : public ::testing::Test {
 protected:
  CliMonitorTest() {
    // The acceptance scenario: 150 W with an energy counter, 90 W without.
    json scenario = {
        {"state_file", tmp_.File("state")},
        {"gpus",
         {{{"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"}, {"min_power_limit_w", 100},
           {"max_power_limit_w", 300}, {"default_power_limit_w", 300}, {"energy_counter", true}, {"power_w", 150}},
          {{"name", "Tesla P100-PCIE-16GB"}, {"architecture", "pascal"}, {"min_power_limit_w", 125},
           {"max_power_limit_w", 250}, {"default_power_limit_w", 250}, {"energy_counter", false},
           {"power_w", 90}}}}};
    env_ = {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", tmp_.Write("scenario.json", scenario.dump())},
            {"ZEUS_POWERCAP_ROOT", tmp_.File("powercap")},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  ProcessResult Monitor(std::vector<std::string> args) {
    args.insert(args.begin(), {ZEUS_TEST_CLI_PATH, "monitor"});
    return RunProcess(args, env_);
  }

  // Starts `zeus monitor ARGS` (`binary_ monitor ARGS`) in the background with env_, the relayed
  // signals at their defaults (whatever the test runner ignores or blocks),
  // stdout and stderr to zeus.out and zeus.err. With `tty_slave`, zeus runs
  // in a new session with that terminal as its controlling terminal and stdin.
  void Start(Zeus* zeus, std::vector<std::string> args, const std::string& tty_slave = "") {
    args.insert(args.begin(), {binary_, "monitor"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const std::string name = entry.substr(0, entry.find('='));
      if (!env_.contains(name)) env_strings.push_back(entry);
    }
    for (const auto& [name, value] : env_) {
      if (value) env_strings.push_back(name + "=" + *value);
    }
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string out = tmp_.File("zeus.out");
    const std::string err = tmp_.File("zeus.err");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      int in = ::open("/dev/null", O_RDONLY);
      if (!tty_slave.empty()) {
        ::setsid();
        in = ::open(tty_slave.c_str(), O_RDWR);
        if (in < 0 || ::ioctl(in, TIOCSCTTY, 0) != 0) ::_exit(125);
      }
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in, 0);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    zeus->pid = pid;
  }

  // Waits for a file the measured command (or zeus) writes when it is ready.
  void WaitForFile(const std::string& path) {
    ASSERT_TRUE(WaitUntil([&] { return Exists(path); })) << "never appeared: " << path << "\n"
                                                         << Slurp(tmp_.File("zeus.err"));
  }

  // Holds the test driver at a point where a test delivers a signal: it
  // creates `hold_file` there and waits until the test removes it. Start
  // then runs the driver (monitor_test_driver.cc), `zeus monitor` with that
  // hold, instead of zeus. `early`: at the start of main, before the command
  // line is parsed; else just before the command starts (devices open).
  void HoldDriverAt(const std::string& hold_file, bool early) {
    binary_ = ZEUS_TEST_MONITOR_DRIVER_PATH;
    env_[early ? "ZEUS_MONITOR_TEST_EARLY_HOLD_FILE" : "ZEUS_MONITOR_TEST_HOLD_FILE"] = hold_file;
  }

  testing::TempDir tmp_;
  std::map<std::string, std::optional<std::string>> env_;
  std::string binary_ = ZEUS_TEST_CLI_PATH;  // what Start runs
};

}  // namespace zeus::monitor_test

#endif  // ZEUS_TESTS_INTEGRATION_CLI_MONITOR_FIXTURE_H_
