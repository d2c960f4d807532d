// Copyright 2026 The Zeus C++ Authors.
//
// The measured command of `zeus monitor` as a child process, and the signals
// relayed to it.
//
// Signals. SignalRelay::Install() blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT
// (those not ignored when zeus started) and SIGCHLD in the calling thread,
// before anything slow happens and before any thread exists, so every thread
// started later inherits the mask. A signal that arrives before the command
// starts therefore stays pending instead of killing zeus: TakePending() finds
// it, and the command is not started. While the command runs, the main thread
// takes the signals synchronously (sigtimedwait) and:
//   * forwards a signal to the command unless the kernel sent it on behalf of
//     the terminal (si_code SI_KERNEL: Ctrl-C, Ctrl-\, a hang-up). The terminal
//     signals the whole foreground process group, which includes the command
//     (it stays in zeus's group, so job control and terminal input work as
//     without zeus); forwarding those would deliver them twice. A signal sent
//     to zeus's pid (`kill -TERM <pid>`) is forwarded once. A program that
//     signals zeus's whole process group (`kill -INT -<pgid>`) reaches the
//     command both directly and through zeus: signal zeus's pid instead.
//   * after the first such signal, gives the command `kill_after` to exit, then
//     sends it SIGKILL.
// The command is started with the signal mask and dispositions zeus started
// with (an ignored signal stays ignored, as with nohup), and with
// PR_SET_PDEATHSIG = SIGKILL, so it does not outlive a zeus that is killed.
// Between fork and exec the child makes only async-signal-safe calls; a
// failed exec is reported to the parent through a close-on-exec pipe.

#ifndef ZEUS_APPS_ZEUS_MONITOR_CHILD_H_
#define ZEUS_APPS_ZEUS_MONITOR_CHILD_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::cli {

struct ChildOutcome {
  // 0..255 as the command exited, 128+N if signal N killed it, 127 (not
  // found) or 126 (not executable) if it could not be run.
  int exit_code = 0;
  // "cannot run CMD: No such file or directory" when exec failed.
  std::optional<std::string> exec_error;
  // The first relayed signal that arrived while the command ran.
  std::optional<int> signal_received;
  // Whether it was forwarded (false when the terminal sent it to the command too).
  bool signal_forwarded = false;
  // The command outlived the grace period after that signal and got SIGKILL.
  bool killed_after_grace = false;
};

class SignalRelay {
 public:
  // Blocks the relayed signals and SIGCHLD in the calling thread (call it from
  // the main thread before starting any thread) and returns the process-wide
  // relay. Idempotent.
  static SignalRelay& Install();

  // A relayed signal that is pending (arrived since Install), consumed; nullopt if none.
  std::optional<int> TakePending();
  // Waits up to `timeout` for a relayed signal; nullopt on timeout. For
  // commands without a child (`zeus monitor power`).
  std::optional<int> WaitFor(std::chrono::nanoseconds timeout);

  // Runs `command` (argv; PATH is searched) to its end, relaying signals as
  // described above; SIGKILL `kill_after` after the first relayed signal.
  // Errors: only fork/pipe/wait failures (a command that cannot be run is an
  // outcome with exit_code 126/127).
  Result<ChildOutcome> Run(const std::vector<std::string>& command, std::chrono::nanoseconds kill_after);

 private:
  SignalRelay() = default;
};

// "SIGTERM" for SIGTERM, "signal 42" for a number without a name.
std::string SignalName(int signal);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_CHILD_H_
