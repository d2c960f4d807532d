// Copyright 2026 The Zeus C++ Authors.
//
// `zeus top`: the flags, the GPUs, the refresh loop, and the terminal. In
// terminal mode the screen is the alternate screen with the cursor hidden
// and the keyboard raw (no echo, no line buffering, no signal keys: Ctrl-C
// arrives as a byte); every exit path restores it, because the Terminal
// object that changed it is destroyed on the way out of RunTop. Signals
// (SIGINT, SIGTERM, SIGHUP, SIGQUIT: quit; SIGWINCH: redraw) are blocked and
// read from a signalfd in the same poll() as the keyboard, so none can end
// the process between a change and its restoration.

#include "apps/zeus/top_command.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus/top_render.h"
#include "zeus/base/clock.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/monitor/process_energy.h"

namespace zeus::cli {
namespace {

using std::chrono::nanoseconds;

constexpr double kMinIntervalS = 0.1;   // the tracker samples at most every 100 ms
constexpr double kMaxIntervalS = 3600;
constexpr long long kMaxIterations = 1'000'000'000;

struct TopFlags {
  double interval_s = 1.0;
  long long iterations = 0;  // 0: until q, Ctrl-C or a signal
  bool plain = false;
  bool json = false;
  std::vector<std::string> idle_power;  // MODEL=WATTS
};

// Writes all of `data` to `fd` (retrying short writes and EINTR); false on error.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The signals that end `zeus top` or make it redraw, blocked and read from a
// signalfd. Blocked before any thread starts (threads inherit the mask).
class SignalWatch {
 public:
  static Result<SignalWatch> Install() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH}) sigaddset(&set, s);
    sigset_t old;
    if (int rc = pthread_sigmask(SIG_BLOCK, &set, &old); rc != 0) {
      return Fail(ErrorFromErrno(rc, "zeus top: cannot block signals"));
    }
    const int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0) {
      const int err = errno;
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      return Fail(ErrorFromErrno(err, "zeus top: cannot watch signals (signalfd)"));
    }
    return SignalWatch(fd, old);
  }
  SignalWatch(SignalWatch&& o) noexcept : fd_(std::exchange(o.fd_, -1)), old_(o.old_) {}
  SignalWatch& operator=(SignalWatch&&) = delete;
  ~SignalWatch() {
    if (fd_ < 0) return;
    ::close(fd_);
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  int fd() const { return fd_; }
  // The next pending signal's number; 0 when none.
  int Take() {
    signalfd_siginfo info;
    const ssize_t n = ::read(fd_, &info, sizeof(info));
    return n == static_cast<ssize_t>(sizeof(info)) ? static_cast<int>(info.ssi_signo) : 0;
  }

 private:
  SignalWatch(int fd, sigset_t old) : fd_(fd), old_(old) {}
  int fd_ = -1;
  sigset_t old_;
};

// The terminal in `zeus top`'s mode: the alternate screen, the cursor
// hidden, the keyboard raw when stdin is a terminal. The destructor puts
// everything back.
class Terminal {
 public:
  static std::unique_ptr<Terminal> Enter() {
    std::unique_ptr<Terminal> t(new Terminal());
    if (::isatty(STDIN_FILENO) == 1 && ::tcgetattr(STDIN_FILENO, &t->saved_) == 0) {
      termios raw = t->saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
      raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
      raw.c_cc[VMIN] = 1;
      raw.c_cc[VTIME] = 0;
      t->keyboard_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0;
    }
    WriteAll(STDOUT_FILENO, "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
    return t;
  }
  ~Terminal() {
    WriteAll(STDOUT_FILENO, "\x1b[?25h\x1b[?1049l");
    if (keyboard_) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Whether keys are read from stdin (a terminal, now raw).
  bool keyboard() const { return keyboard_; }
  void StopKeyboard() { keyboard_reading_ = false; }
  bool reading_keyboard() const { return keyboard_ && keyboard_reading_; }

  // Columns and rows; 80x24 when the terminal does not say.
  static std::pair<std::size_t, std::size_t> Size() {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
      return {ws.ws_col, ws.ws_row};
    }
    return {80, 24};
  }

  // Redraws the screen in place with `lines` (at most the screen's rows: the
  // last row says how many lines did not fit).
  static void Draw(std::vector<std::string> lines, std::size_t width, std::size_t rows) {
    if (lines.size() > rows) {
      const std::size_t hidden = lines.size() - (rows - 1);
      lines.resize(rows - 1);
      lines.push_back(TruncateLine(fmt::format("... {} more line{} (enlarge the terminal, or use --plain)", hidden,
                                               hidden == 1 ? "" : "s"),
                                   width));
    }
    std::string out = "\x1b[H";
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out += lines[i];
      out += "\x1b[K";
      if (i + 1 < lines.size()) out += "\r\n";
    }
    out += "\x1b[J";
    WriteAll(STDOUT_FILENO, out);
  }

 private:
  Terminal() = default;
  termios saved_{};
  bool keyboard_ = false;
  bool keyboard_reading_ = true;
};

enum class Event { kRefresh, kQuit, kResize };

// Waits until `deadline` (kRefresh), a quitting key or signal (kQuit), or a
// resize (kResize).
Event WaitForEvent(SignalWatch& signals, Terminal* terminal, nanoseconds deadline) {
  for (;;) {
    const nanoseconds left = deadline - SteadyClock().Now();
    if (left <= nanoseconds(0)) return Event::kRefresh;
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    const nfds_t count = terminal != nullptr && terminal->reading_keyboard() ? 2 : 1;
    const auto timeout_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    const int ready = ::poll(fds, count, static_cast<int>(std::min<long long>(timeout_ms, 60'000)));
    if (ready < 0 && errno != EINTR) return Event::kQuit;  // cannot wait: stop rather than spin
    if (ready <= 0) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      const int signo = signals.Take();
      if (signo == SIGWINCH) return Event::kResize;
      if (signo != 0) return Event::kQuit;
    }
    if (count == 2 && fds[1].revents != 0) {
      char keys[64];
      const ssize_t n = ::read(STDIN_FILENO, keys, sizeof(keys));
      if (n <= 0) {
        if (n == 0 || errno != EINTR) terminal->StopKeyboard();  // end of input: keys no longer arrive
        continue;
      }
      for (ssize_t i = 0; i < n; ++i) {
        if (keys[i] == 'q' || keys[i] == 'Q' || keys[i] == '\x03') return Event::kQuit;
      }
    }
  }
}

TopFrame MakeFrame(monitor::ProcessEnergyTracker& tracker, const std::vector<std::string>& names,
                   nanoseconds elapsed, nanoseconds refresh) {
  TopFrame frame;
  frame.elapsed = elapsed;
  frame.refresh = refresh;
  frame.gpu_names = names;
  frame.intervals = tracker.LastIntervals();
  frame.snapshot = tracker.Snapshot();
  for (const auto& entry : frame.snapshot.processes) {
    if (!frame.labels.contains(entry.process)) frame.labels[entry.process] = tracker.Labels(entry.process);
  }
  return frame;
}

void DrawOnTerminal(const TopFrame& frame) {
  const auto [width, rows] = Terminal::Size();
  std::vector<std::string> lines = RenderTopFrame(frame, 0);
  lines[0] += "  (q quits)";
  for (std::string& line : lines) line = TruncateLine(line, width);
  Terminal::Draw(std::move(lines), width, rows);
}

void PrintFrame(const TopFrame& frame, bool as_json) {
  if (as_json) {
    fmt::print("{}\n", TopFrameJson(frame).dump());
  } else {
    for (const std::string& line : RenderTopFrame(frame, 0)) fmt::print("{}\n", line);
    fmt::print("\n");
  }
  std::fflush(stdout);
}

// Opens the GPUs, or says why there are none to watch.
Result<std::unique_ptr<device::GpuSet>> OpenTopGpus() {
  auto gpus = device::OpenGpus();
  if (!gpus) return Fail(gpus.error());
  if ((*gpus)->empty()) {
    return Fail(ErrorCode::kUnavailable,
                "no GPUs to watch: CUDA_VISIBLE_DEVICES hides every GPU; unset it or name a GPU (see `zeus info`)");
  }
  return gpus;
}

int RunTop(const TopFlags& flags) {
  auto signals = SignalWatch::Install();  // first: from here on no signal is lost or fatal
  if (!signals) return Failure(signals.error());
  monitor::ProcessEnergyOptions options;
  auto idle = ParseIdlePowerFlags(flags.idle_power);
  if (!idle) return Failure(idle.error());
  options.idle.idle_power_mw_by_model = std::move(*idle);
  options.identity.proc_root = device::ChooseProcRoot();
  auto gpus = OpenTopGpus();
  if (!gpus) return Failure(gpus.error());
  auto tracker = monitor::ProcessEnergyTracker::Create(**gpus, std::move(options));
  if (!tracker) return Failure(tracker.error());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < (*gpus)->size(); ++i) {
    auto name = (*gpus)->gpu(i).Name();
    names.push_back(name ? *name : "");
  }
  const nanoseconds refresh = std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(flags.interval_s));
  std::unique_ptr<Terminal> terminal;
  if (!flags.json && !flags.plain && ::isatty(STDOUT_FILENO) == 1) terminal = Terminal::Enter();

  (*tracker)->Sample();  // the baseline
  const nanoseconds start = SteadyClock().Now();
  std::optional<TopFrame> shown;
  if (terminal) {
    shown = MakeFrame(**tracker, names, nanoseconds(0), refresh);
    DrawOnTerminal(*shown);
  }
  nanoseconds next = start + refresh;
  for (long long done = 0; flags.iterations == 0 || done < flags.iterations;) {
    const Event event = WaitForEvent(*signals, terminal.get(), next);
    if (event == Event::kQuit) break;
    if (event == Event::kResize) {
      if (terminal && shown) DrawOnTerminal(*shown);
      continue;
    }
    (*tracker)->Sample();
    const nanoseconds now = SteadyClock().Now();
    shown = MakeFrame(**tracker, names, now - start, refresh);
    if (terminal) {
      DrawOnTerminal(*shown);
    } else {
      PrintFrame(*shown, flags.json);
    }
    ++done;
    next += refresh;
    if (next <= now) next = now + refresh;  // a slow round: skip the missed refreshes
  }
  return 0;
}

}  // namespace

void RegisterTopCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<TopFlags>();
  auto* cmd = app.add_subcommand("top", "Show each GPU's power and the processes using it, live");
  cmd->add_option("--interval", flags->interval_s, "Seconds between refreshes (default 1; at least 0.1)")
      ->check(NumberRange(kMinIntervalS, kMaxIntervalS));
  cmd->add_option("--iterations", flags->iterations, "Stop after N refreshes (default: until q or Ctrl-C)")
      ->transform(IntegerFlag<long long>(1, kMaxIterations));
  cmd->add_flag("--plain", flags->plain, "Print each refresh as plain text, even on a terminal");
  cmd->add_flag("--json", flags->json, "Print one JSON object per refresh, one per line");
  cmd->add_option("--idle-power", flags->idle_power,
                  "A GPU model's idle power, MODEL=WATTS (the model as `zeus info` shows it; repeatable). Default: "
                  "the lowest power seen over the last ten minutes")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->footer(
      "Each GPU's power, idle power (and where that estimate comes from) and energy since zeus top started, and\n"
      "under it the processes running on it, highest current power first: PID, user, command, Slurm job or\n"
      "Kubernetes pod/container, the process's share of the GPU's power over the last refresh, and its energy.\n"
      "A process's share is a model (the GPU's active power split by the processes' SM utilization), not a\n"
      "measurement. 'unattributed' is active energy no process's utilization explains; 'other' is the share of\n"
      "processes past the tracked limit, and of ended processes.\n"
      "On a terminal the view is redrawn in place; q or Ctrl-C quits (as do SIGINT, SIGTERM and SIGHUP, exit\n"
      "code 0), and the terminal is restored. When stdout is not a terminal (or with --plain) each refresh prints\n"
      "a frame followed by a blank line.\n"
      "Exit codes: 0 ok, 2 bad flag, 4 no driver or no GPU visible; others as for every zeus command.");
  cmd->callback([flags, exit_code] { *exit_code = RunTop(*flags); });
}

}  // namespace zeus::cli
