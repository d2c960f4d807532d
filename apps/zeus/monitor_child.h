// Copyright 2026 The Zeus C++ Authors.
//
// The measured command of `zeus monitor` as a child process, and the signals
// relayed to it.
//
// Signals. SignalRelay::Install() blocks SIGINT, SIGTERM, SIGHUP, SIGQUIT
// (those not ignored when zeus started), SIGCHLD, SIGCONT and SIGTTOU in the
// calling thread, before anything slow happens and before any thread exists,
// so every thread started later inherits the mask. A signal that arrives
// before the command starts therefore stays pending instead of killing zeus:
// TakePending() finds it, and the command is not started. `zeus monitor`
// calls Install() before main (a constructor in monitor_child.cc, when
// argv[1] is "monitor"), so only exec and the dynamic loader come before the
// hold. While the command runs, the main thread takes the signals
// synchronously (sigtimedwait), forwards each relayed one to the command's
// whole process group, followed by SIGCONT (as a shell's `kill` does, so a
// stopped command acts on it), and after the first gives the group
// `kill_after` to exit, then sends the group SIGKILL.
//
// The process tree. The command runs in a process group of its own (setpgid
// in the child before exec, and in zeus after fork, so neither can signal or
// read the terminal before the group exists), and everything zeus sends goes
// to the group (kill(-pgid, sig)): a forwarded SIGTERM and --kill-after's
// SIGKILL reach `sleep` under `sh -c`, a pipeline, a launcher's workers, not
// only the first process. After a relayed signal zeus waits, within the same
// grace period, until no process of the group is left (zombies that nobody
// reaps do not count), not just for the first one. A command that exits on
// its own while processes it started in the background still run leaves
// them running, as a shell does. A descendant that leaves the group (setsid,
// a daemon, a shell with `set -m`) leaves zeus's reach.
// If zeus itself is killed (SIGKILL): the command's first process has
// PR_SET_PDEATHSIG = SIGKILL, which kills only that process; the rest of the
// group is killed by a watchdog, a small process forked from zeus before the
// command (in its own process group, every signal blocked, named
// zeus-watchdog) that holds the read end of a pipe from zeus: EOF without
// zeus's "done" means zeus died, and it sends the group SIGKILL. Only when
// the watchdog is SIGKILLed too (kill -9 of both pids) do the command's
// descendants survive as orphans.
// Why a process group and not a cgroup: a process group needs no privilege,
// no systemd and no delegated cgroup v2 subtree, so it works for every user,
// in containers and under any scheduler; a cgroup would also hold processes
// that leave the group, but needs one of those. Run zeus in a cgroup
// (`systemd-run --user --scope zeus monitor ...`) when that matters.
//
// The terminal. The command gets the terminal zeus started with when stdin
// is zeus's controlling terminal and zeus's group is its foreground group:
// the command's group is made the foreground group (tcsetpgrp) for the run,
// so the command reads the terminal and gets Ctrl-C, Ctrl-\ and Ctrl-Z from
// it directly, once, as from a shell (zeus does not see those, so the report
// shows the command's exit, e.g. 130, but no relayed signal, and
// --kill-after does not apply to them); zeus takes the terminal back when
// the command ends. Job control: when the command stops (Ctrl-Z, or a read
// of the terminal from the background), zeus takes the terminal back and
// stops its own group, so the shell sees the job stopped; when zeus is
// continued (fg, bg) it hands the terminal back if it is in the foreground
// and continues the command's group. Without job control (zeus's group
// orphaned, e.g. zeus a session leader) the stop is dropped and the command
// is continued at once. Otherwise (stdin not a terminal, zeus in the
// background, CI, nohup) the command's group stays in the background, and
// terminal signals that reach zeus (Ctrl-C when zeus is in the foreground)
// are forwarded to it like any other.
//
// The command is started with the signal mask and dispositions zeus started
// with (an ignored signal stays ignored, as with nohup). Between fork and
// exec the child makes only async-signal-safe calls; a failed exec is
// reported to the parent through a close-on-exec pipe.

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
  // Whether it was forwarded to the command's process group (false only when
  // the group was already gone).
  bool signal_forwarded = false;
  // The command, or a process of its group, outlived the grace period after
  // that signal, and the group got SIGKILL.
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

  // Runs `command` (argv; PATH is searched) in a process group of its own to
  // its end, relaying signals to the group as described above; SIGKILL to the
  // group `kill_after` after the first relayed signal. Returns when the first
  // process has exited and, after a relayed signal, no process of the group
  // runs. Errors: only fork/pipe/wait failures (a command that cannot be run
  // is an outcome with exit_code 126/127).
  Result<ChildOutcome> Run(const std::vector<std::string>& command, std::chrono::nanoseconds kill_after);

 private:
  SignalRelay() = default;
};

// "SIGTERM" for SIGTERM, "signal 42" for a number without a name.
std::string SignalName(int signal);

}  // namespace zeus::cli

#endif  // ZEUS_APPS_ZEUS_MONITOR_CHILD_H_
