// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/monitor_child.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

extern char** environ;

namespace zeus::cli {
namespace {

using std::chrono::nanoseconds;
using std::chrono::steady_clock;

constexpr int kRelayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// How often zeus looks whether the command's group has emptied once its
// first process has exited (the others are not zeus's children: no SIGCHLD).
constexpr std::chrono::milliseconds kGroupPollInterval{10};
// How long zeus waits, after the group's SIGKILL, for its processes to be
// gone (one in an uninterruptible kernel call ends only when that returns).
constexpr std::chrono::seconds kKillSettle{2};

struct RelayState {
  bool installed = false;
  sigset_t relayed;    // kRelayed minus those ignored at start
  sigset_t waited;     // relayed + SIGCHLD + SIGCONT
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

// stdin when it is zeus's controlling terminal, so job control applies;
// else -1.
int JobControlTerminal() {
  if (::isatty(STDIN_FILENO) != 1) return -1;
  return ::tcgetpgrp(STDIN_FILENO) >= 0 ? STDIN_FILENO : -1;
}

// The child between fork and exec: async-signal-safe calls only. It makes its
// own process group (and, when `tty` >= 0, that terminal's foreground group:
// SIGTTOU is blocked, so a call from the background works).
[[noreturn]] void ExecChild(ExecPlan& plan, const RelayState& state, pid_t parent, int tty, int error_fd) {
  if (state.sigchld_ignored) {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(SIGCHLD, &sa, nullptr);
  }
  ::setpgid(0, 0);
  if (tty >= 0) ::tcsetpgrp(tty, ::getpid());
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

// Whether a process of group `pgid` is running: kill(-pgid, 0) counts
// zombies, which nobody may reap (an orphan's in a container whose init does
// not reap), so /proc is read for a member in any other state.
bool GroupHasLiveMember(pid_t pgid) {
  if (::kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return true;
  bool live = false;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::ifstream stat(fmt::format("/proc/{}/stat", entry->d_name));
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const std::size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(line.substr(paren + 1));
    char state = 0;
    long ppid = 0;
    long pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp)) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      live = true;
      break;
    }
  }
  ::closedir(proc);
  return live;
}

// Reads exactly `size` bytes; false on EOF or an error first.
bool ReadFully(int fd, void* data, std::size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The watchdog process (see the header): async-signal-safe calls only. It
// keeps only its end of the pipe (as fd 3) and /dev/null, blocks every
// signal it can, and leaves zeus's process group, so that the terminal's and
// zeus's group's signals do not reach it. It reads the command's process
// group id, then waits: a byte means zeus is done; EOF means zeus died, and
// the command's group gets SIGKILL.
[[noreturn]] void RunWatchdog(int read_fd, int write_fd) {
  ::close(write_fd);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::setpgid(0, 0);
  if (read_fd != 3) ::dup2(read_fd, 3);
  if (::close_range(4, ~0U, 0) != 0) {
    for (int fd = 4; fd < 1024; ++fd) ::close(fd);
  }
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd = 0; fd < 3; ++fd) ::dup2(null_fd, fd);
    if (null_fd > 3) ::close(null_fd);
  }
  ::prctl(PR_SET_NAME, "zeus-watchdog");
  pid_t pgid = 0;
  if (!ReadFully(3, &pgid, sizeof pgid) || pgid <= 1) ::_exit(0);
  char done = 0;
  if (!ReadFully(3, &done, 1)) ::kill(-pgid, SIGKILL);
  ::_exit(0);
}

// Zeus's side of the watchdog. A watchdog that cannot be started is no
// error: PR_SET_PDEATHSIG still kills the command's first process.
class Watchdog {
 public:
  Watchdog() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) RunWatchdog(fds[0], fds[1]);
    ::close(fds[0]);
    if (pid_ < 0) {
      ::close(fds[1]);
      return;
    }
    write_fd_ = fds[1];
  }
  ~Watchdog() {
    if (pid_ <= 0) return;
    const char done = 'd';
    if (write_fd_ >= 0) {
      ssize_t ignored = ::write(write_fd_, &done, 1);
      (void)ignored;
      ::close(write_fd_);
    }
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // From now on, zeus's death kills the process group `pgid`.
  void Watch(pid_t pgid) {
    if (write_fd_ < 0) return;
    if (::write(write_fd_, &pgid, sizeof pgid) != static_cast<ssize_t>(sizeof pgid)) {
      ::close(write_fd_);  // the watchdog reads EOF before a group and exits
      write_fd_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
  int write_fd_ = -1;
};

// One run of the command, after its fork: the relay loop over its process
// group, the grace period, and the terminal's foreground under job control.
class CommandRun {
 public:
  CommandRun(const RelayState& state, pid_t pgid, int tty, nanoseconds kill_after)
      : state_(state), pgid_(pgid), tty_(tty), kill_after_(kill_after) {}
  // Gives the terminal back to zeus's group if the command's group has it.
  ~CommandRun() { TakeTerminal(); }
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

  // Relays signals until the command's first process has exited and, after
  // a relayed signal, its whole group is gone or was killed; fills `outcome`.
  Status Wait(ChildOutcome* outcome);

 private:
  void TakeTerminal() {
    if (tty_ >= 0 && ::tcgetpgrp(tty_) == pgid_) ::tcsetpgrp(tty_, ::getpgrp());
  }
  // When zeus's group is in the terminal's foreground, hands it to the
  // command's; then continues the command's group.
  void Resume() {
    if (tty_ >= 0 && ::tcgetpgrp(tty_) == ::getpgrp()) ::tcsetpgrp(tty_, pgid_);
    ::kill(-pgid_, SIGCONT);
  }
  void OnStopped(int stop_signal);
  void Relay(int sig, ChildOutcome* outcome);
  // The next wait for a signal: sigwaitinfo, or until the grace deadline or
  // the next look at the group. <0 with errno EAGAIN on timeout.
  int NextSignal(bool child_exited, siginfo_t* info);

  const RelayState& state_;
  const pid_t pgid_;
  const int tty_;
  const nanoseconds kill_after_;
  // The grace deadline, once a signal has been relayed (a plain time point:
  // an optional trips g++'s -Wmaybe-uninitialized).
  bool grace_running_ = false;
  steady_clock::time_point kill_at_{};
};

// The command stopped. A job-control stop (Ctrl-Z, or a read or write of the
// terminal from the background) with a terminal: zeus takes the terminal
// back and stops its own group as the terminal would have, so the shell sees
// the job stopped; the kernel drops that SIGTSTP when zeus's group has no
// job control (orphaned), and zeus goes on at once. Once continued (fg, bg,
// or at once), zeus resumes the command. Other stops are left alone.
void CommandRun::OnStopped(int stop_signal) {
  if (tty_ < 0 || (stop_signal != SIGTSTP && stop_signal != SIGTTIN && stop_signal != SIGTTOU)) return;
  TakeTerminal();
  ::kill(0, SIGTSTP);
  Resume();
}

// Forwards `sig` to the group, then continues it (as a shell's `kill` does
// for a stopped job): a stopped command acts on the signal at once.
void CommandRun::Relay(int sig, ChildOutcome* outcome) {
  const bool forwarded = ::kill(-pgid_, sig) == 0;
  ::kill(-pgid_, SIGCONT);
  if (!outcome->signal_received) {
    outcome->signal_received = sig;
    outcome->signal_forwarded = forwarded;
  }
  if (!grace_running_ && !outcome->killed_after_grace) {
    grace_running_ = true;
    kill_at_ = steady_clock::now() + kill_after_;
  }
}

int CommandRun::NextSignal(bool child_exited, siginfo_t* info) {
  if (!grace_running_ && !child_exited) return ::sigwaitinfo(&state_.waited, info);
  nanoseconds wait = kGroupPollInterval;
  if (grace_running_) {
    const nanoseconds to_deadline = kill_at_ - steady_clock::now();
    wait = child_exited ? std::min<nanoseconds>(wait, to_deadline) : to_deadline;
  }
  const timespec ts = ToTimespec(wait);
  return ::sigtimedwait(&state_.waited, info, &ts);
}

Status CommandRun::Wait(ChildOutcome* outcome) {
  bool child_exited = false;
  int status = 0;
  steady_clock::time_point settle_until{};  // set with the group's SIGKILL
  while (true) {
    if (!child_exited) {
      int st = 0;
      const pid_t reaped = ::waitpid(pgid_, &st, WNOHANG | WUNTRACED);
      if (reaped < 0 && errno != EINTR) return Fail(ErrorFromErrno(errno, "waitpid"));
      if (reaped == pgid_ && WIFSTOPPED(st)) {
        OnStopped(WSTOPSIG(st));
        continue;
      }
      if (reaped == pgid_) {
        child_exited = true;
        status = st;
        TakeTerminal();
      }
    }
    // Without a relayed signal, zeus is done when the first process exits
    // (what it left running in the background stays, as after a shell's
    // command); after one, the rest of the group has the same grace period,
    // and after its SIGKILL up to kKillSettle to be gone.
    if (child_exited) {
      if (!outcome->signal_received || !GroupHasLiveMember(pgid_)) break;
      if (outcome->killed_after_grace && steady_clock::now() >= settle_until) break;
    }
    siginfo_t info{};
    const int sig = NextSignal(child_exited, &info);
    if (sig < 0) {
      if (errno == EAGAIN && grace_running_ && steady_clock::now() >= kill_at_) {
        ::kill(-pgid_, SIGKILL);
        outcome->killed_after_grace = true;
        grace_running_ = false;
        settle_until = steady_clock::now() + kKillSettle;
      }
      continue;  // EINTR, or a timeout to re-check
    }
    if (sig == SIGCHLD) continue;
    if (sig == SIGCONT) {  // zeus was continued (fg, bg): so is the command
      if (!child_exited) Resume();
      continue;
    }
    Relay(sig, outcome);
  }
  if (WIFEXITED(status)) {
    outcome->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome->exit_code = 128 + WTERMSIG(status);
  } else {
    outcome->exit_code = 1;
  }
  return OkStatus();
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
  sigaddset(&s.waited, SIGCONT);
  // An ignored SIGCHLD would reap the child for us; waitpid needs it.
  struct sigaction chld {};
  if (::sigaction(SIGCHLD, nullptr, &chld) == 0 && chld.sa_handler == SIG_IGN) {
    s.sigchld_ignored = true;
    chld.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &chld, nullptr);
  }
  // SIGTTOU is blocked too (never waited for): zeus hands the terminal's
  // foreground to the command and takes it back, also from the background.
  sigset_t blocked = s.waited;
  sigaddset(&blocked, SIGTTOU);
  ::pthread_sigmask(SIG_BLOCK, &blocked, &s.original);
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
  const auto deadline = steady_clock::now() + timeout;
  while (true) {
    const timespec ts = ToTimespec(deadline - steady_clock::now());
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
  // The command gets the terminal only when zeus's group has it now; with
  // job control, a later fg hands it over (CommandRun::Resume).
  const int tty = JobControlTerminal();
  const int give_tty = tty >= 0 && ::tcgetpgrp(tty) == ::getpgrp() ? tty : -1;
  Watchdog watchdog;
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
    ExecChild(plan, s, parent, give_tty, error_pipe[1]);
  }
  // The child does the same; whichever runs first, the group exists before
  // zeus signals it or the command reads the terminal. (EACCES once it has
  // exec'd: then it did it itself.)
  ::setpgid(pid, pid);
  if (give_tty >= 0) ::tcsetpgrp(give_tty, pid);
  watchdog.Watch(pid);
  CommandRun run(s, pid, tty, kill_after);
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
  if (Status waited = run.Wait(&outcome); !waited) return Fail(waited.error());
  return outcome;
}

}  // namespace zeus::cli

namespace zeus::cli {
namespace {

// `zeus monitor` holds its signals before main: before CLI11 builds every
// command and parses the line (tens of ms), so only exec and the dynamic
// loader come before the hold. glibc calls constructors with main's argc,
// argv and envp; the executable's run after every shared library's
// initializers, in the main thread, before any thread of zeus exists.
[[gnu::constructor]] void HoldSignalsBeforeMain(int argc, char** argv, char** /*envp*/) {
  if (argc < 2 || argv == nullptr || argv[1] == nullptr || std::strcmp(argv[1], "monitor") != 0) return;
  SignalRelay::Install();
}

}  // namespace
}  // namespace zeus::cli
