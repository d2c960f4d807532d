// Copyright 2026 The Zeus C++ Authors.

#include "testing/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"

extern char** environ;

namespace zeus::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<std::string> MergedEnvironment(const std::map<std::string, std::optional<std::string>>& env) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : env) {
    if (value) {
      merged[name] = *value;
    } else {
      merged.erase(name);
    }
  }
  std::vector<std::string> strings;
  for (const auto& [name, value] : merged) strings.push_back(name + "=" + value);
  return strings;
}

namespace {

// Forks and execs argv with env merged into the current environment, stdin
// from /dev/null, stdout/stderr to the files (truncated or appended).
pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::optional<std::string>>& env,
            const std::string& out_path, const std::string& err_path, bool append) {
  // Build the environment before forking: only async-signal-safe calls after.
  std::vector<std::string> env_strings = MergedEnvironment(env);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argvp;
  for (std::string& s : args) argvp.push_back(s.data());
  argvp.push_back(nullptr);
  const int flags = O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC);

  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(out_path.c_str(), flags, 0600);
    int err = ::open(err_path.c_str(), flags, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(argvp[0], argvp.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

int ExitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                                     const std::string& stderr_path,
                                     const std::map<std::string, std::optional<std::string>>& env) {
  pid_ = Spawn(argv, env, stdout_path, stderr_path, /*append=*/true);
  if (pid_ < 0) std::abort();
}

BackgroundProcess::~BackgroundProcess() {
  if (!exit_code_) {
    Signal(SIGKILL);
    Wait();
  }
}

void BackgroundProcess::Signal(int signal) {
  if (!exit_code_) ::kill(pid_, signal);
}

int BackgroundProcess::Wait() {
  if (!exit_code_) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exit_code_ = ExitCodeOf(status);
  }
  return *exit_code_;
}

bool BackgroundProcess::Running() {
  if (exit_code_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_code_ = ExitCodeOf(status);
    return false;
  }
  return true;
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::optional<std::string>>& env) {
  TempDir tmp;
  const std::string out_path = tmp.File("stdout");
  const std::string err_path = tmp.File("stderr");

  pid_t pid = Spawn(argv, env, out_path, err_path, /*append=*/false);
  ProcessResult result;
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid) {
    result.exit_code = ExitCodeOf(status);
  }
  result.out = Slurp(out_path);
  result.err = Slurp(err_path);
  return result;
}

}  // namespace zeus::testing
