// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace zeus::cli {
namespace {

using std::chrono::nanoseconds;

constexpr int kRelayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct RelayState {
  bool installed = false;
  sigset_t relayed;    // kRelayed minus those ignored at start
  sigset_t waited;     // relayed + SIGCHLD
  sigset_t original;   // the mask zeus started with
  bool sigchld_ignored = false;
};

RelayState& State() {
  static RelayState state;
  return state;
}

timespec ToTimespec(nanoseconds d) {
  if (d < nanoseconds(0)) d = nanoseconds(0);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(d.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(d.count() % 1'000'000'000);
  return ts;
}

// Everything exec needs, built before fork: the child may then call only
// async-signal-safe functions.
struct ExecPlan {
  std::vector<std::string> args;
  std::vector<char*> argv;
  std::vector<std::string> candidates;  // paths to try, in PATH order
  std::vector<char*> sh_argv;           // "/bin/sh", <candidate>, args[1..] for ENOEXEC
  std::string sh = "/bin/sh";
};

ExecPlan PlanExec(const std::vector<std::string>& command) {
  ExecPlan plan;
  plan.args = command;
  for (std::string& a : plan.args) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  const std::string& name = command.front();
  if (name.find('/') != std::string::npos) {
    plan.candidates.push_back(name);
  } else if (!name.empty()) {
    const char* path_env = std::getenv("PATH");
    const std::string path = path_env != nullptr ? path_env : "/bin:/usr/bin";
    std::size_t begin = 0;
    while (true) {
      const std::size_t end = path.find(':', begin);
      std::string dir = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      plan.candidates.push_back((dir.empty() ? std::string(".") : dir) + "/" + name);
      if (end == std::string::npos) break;
      begin = end + 1;
    }
  }
  plan.sh_argv.push_back(plan.sh.data());
  plan.sh_argv.push_back(nullptr);  // the candidate, set in the child
  for (std::size_t i = 1; i < plan.args.size(); ++i) plan.sh_argv.push_back(plan.args[i].data());
  plan.sh_argv.push_back(nullptr);
  return plan;
}

// The child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecChild(ExecPlan& plan, const RelayState& state, pid_t parent, int error_fd) {
  if (state.sigchld_ignored) {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &sa, nullptr);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // zeus may have died before the line above took effect.
  if (::getppid() != parent) ::_exit(127);
  ::sigprocmask(SIG_SETMASK, &state.original, nullptr);
  int err = ENOENT;
  bool denied = false;
  for (std::string& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), environ);
    err = errno;
    if (err == ENOEXEC) {  // a script without #!: run it with sh, as execvp does
      plan.sh_argv[1] = candidate.data();
      ::execve(plan.sh.c_str(), plan.sh_argv.data(), environ);
      err = errno;
      break;
    }
    if (err == EACCES) {
      denied = true;
      continue;
    }
    if (err != ENOENT && err != ENOTDIR && err != ELOOP && err != ENAMETOOLONG) break;
  }
  if (denied && (err == ENOENT || err == ENOTDIR)) err = EACCES;
  ssize_t ignored = ::write(error_fd, &err, sizeof(err));
  (void)ignored;
  ::_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

}  // namespace

std::string SignalName(int signal) {
  if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr) return fmt::format("SIG{}", abbrev);
  return fmt::format("signal {}", signal);
}

SignalRelay& SignalRelay::Install() {
  static SignalRelay relay;
  RelayState& s = State();
  if (s.installed) return relay;
  sigemptyset(&s.relayed);
  for (int sig : kRelayed) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&s.relayed, sig);
  }
  s.waited = s.relayed;
  sigaddset(&s.waited, SIGCHLD);
  // An ignored SIGCHLD would reap the child for us; waitpid needs it.
  struct sigaction chld {};
  if (::sigaction(SIGCHLD, nullptr, &chld) == 0 && chld.sa_handler == SIG_IGN) {
    s.sigchld_ignored = true;
    chld.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &chld, nullptr);
  }
  ::pthread_sigmask(SIG_BLOCK, &s.waited, &s.original);
  s.installed = true;
  return relay;
}

std::optional<int> SignalRelay::TakePending() {
  const RelayState& s = State();
  const timespec zero{};
  siginfo_t info{};
  const int sig = ::sigtimedwait(&s.relayed, &info, &zero);
  if (sig > 0) return sig;
  return std::nullopt;
}

std::optional<int> SignalRelay::WaitFor(nanoseconds timeout) {
  const RelayState& s = State();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const timespec ts = ToTimespec(deadline - std::chrono::steady_clock::now());
    siginfo_t info{};
    const int sig = ::sigtimedwait(&s.relayed, &info, &ts);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return std::nullopt;
    // EINTR (e.g. SIGCONT after a stop): wait on.
  }
}

Result<ChildOutcome> SignalRelay::Run(const std::vector<std::string>& command, nanoseconds kill_after) {
  const RelayState& s = State();
  ExecPlan plan = PlanExec(command);
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) return Fail(ErrorFromErrno(errno, "pipe2"));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(error_pipe[0]);
    ::close(error_pipe[1]);
    return Fail(ErrorFromErrno(err, "fork"));
  }
  if (pid == 0) {
    ::close(error_pipe[0]);
    ExecChild(plan, s, parent, error_pipe[1]);
  }
  ::close(error_pipe[1]);
  ChildOutcome outcome;
  int exec_errno = 0;
  ssize_t got = 0;
  do {
    got = ::read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (got < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    outcome.exec_error = fmt::format("cannot run {}: {}", command.front(), std::strerror(exec_errno));
  }

  // The grace deadline, once a signal has been relayed (a plain time point: an
  // optional trips g++'s -Wmaybe-uninitialized).
  bool grace_running = false;
  std::chrono::steady_clock::time_point kill_at{};
  int status = 0;
  while (true) {
    const pid_t reaped = ::waitpid(pid, &status, WNOHANG);
    if (reaped == pid) break;
    if (reaped < 0 && errno != EINTR) return Fail(ErrorFromErrno(errno, "waitpid"));
    siginfo_t info{};
    int sig = 0;
    if (grace_running) {
      const timespec ts = ToTimespec(kill_at - std::chrono::steady_clock::now());
      sig = ::sigtimedwait(&s.waited, &info, &ts);
    } else {
      sig = ::sigwaitinfo(&s.waited, &info);
    }
    if (sig < 0) {
      if (errno == EAGAIN && grace_running && std::chrono::steady_clock::now() >= kill_at) {
        ::kill(pid, SIGKILL);
        outcome.killed_after_grace = true;
        grace_running = false;
      }
      continue;  // EINTR, or a timeout to re-check
    }
    if (sig == SIGCHLD) continue;
    // The terminal signals the whole foreground group: the command has it already.
    const bool from_terminal = info.si_code == SI_KERNEL;
    if (!from_terminal) ::kill(pid, sig);
    if (!outcome.signal_received) {
      outcome.signal_received = sig;
      outcome.signal_forwarded = !from_terminal;
    }
    if (!grace_running && !outcome.killed_after_grace) {
      grace_running = true;
      kill_at = std::chrono::steady_clock::now() + kill_after;
    }
  }
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.exit_code = 128 + WTERMSIG(status);
  } else {
    outcome.exit_code = 1;
  }
  return outcome;
}

}  // namespace zeus::cli
