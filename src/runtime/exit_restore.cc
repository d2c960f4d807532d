// Copyright 2026 The Zeus C++ Authors.

#include "runtime/exit_restore.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace zeus::runtime::internal {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};

// The pipe's ends, for the signal handler and the fork handler. -1 when not
// created, and in a forked child.
std::atomic<int> g_signal_write_fd{-1};
std::atomic<int> g_signal_read_fd{-1};
std::atomic<bool> g_registry_gone{false};
// The process that owns the registry (created it; installed the handlers).
// A forked child inherits the handlers and the registry's memory but owns
// neither: there the handler gives the signal its previous action, and the
// registry does nothing.
std::atomic<pid_t> g_owner_pid{0};
// The actions our handlers replaced, for a forked child's handler. Written
// before our handler is installed for that signal; read only by it.
struct sigaction g_previous_actions[std::size(kSignals)] = {};

bool InOwnerProcess() { return getpid() == g_owner_pid.load(std::memory_order_relaxed); }

extern "C" void ZeusRuntimeOnSignal(int signo) {
  const int saved_errno = errno;
  if (!InOwnerProcess()) {
    // A forked child: not ours to restore. Act as if we had never been
    // installed: put the previous action back and deliver the signal again
    // (blocked until this handler returns).
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      if (kSignals[i] == signo) sigaction(signo, &g_previous_actions[i], nullptr);
    }
    raise(signo);
    errno = saved_errno;
    return;
  }
  const int fd = g_signal_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signo);
    [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
  }
  errno = saved_errno;
}

// pthread_atfork child handler: the child gets no copy of the pipe, so
// nothing it does can reach the parent's watcher.
extern "C" void ZeusRuntimeAfterForkInChild() {
  if (const int fd = g_signal_write_fd.exchange(-1); fd >= 0) close(fd);
  if (const int fd = g_signal_read_fd.exchange(-1); fd >= 0) close(fd);
}

void OnTerminate();

class Registry {
 public:
  static Registry& Get() {
    static Registry registry;
    return registry;
  }

  ~Registry() {
    if (!InOwnerProcess()) {
      // A forked child exiting: the parent's limits and watcher are not its
      // own. The watcher thread does not exist here: forget its handle in
      // storage that is never destroyed (joining or destroying it would not).
      if (watcher_.joinable()) {
        alignas(std::thread) static unsigned char forgotten[sizeof(std::thread)];
        new (forgotten) std::thread(std::move(watcher_));
      }
      g_registry_gone.store(true);
      return;
    }
    RestoreAll("the process is exiting");
    std::thread watcher;
    {
      std::lock_guard lock(mu_);
      live_.clear();
      Uninstall();
      watcher = std::move(watcher_);
    }
    if (watcher.joinable()) {
      const unsigned char stop = 0;
      [[maybe_unused]] const ssize_t n = write(pipe_[1], &stop, 1);
      watcher.join();
    }
    g_signal_write_fd.store(-1);
    g_signal_read_fd.store(-1);
    if (pipe_[0] >= 0) close(pipe_[0]);
    if (pipe_[1] >= 0) close(pipe_[1]);
    g_registry_gone.store(true);
  }

  // In a forked child Register, Unregister and RestoreAll do nothing: the
  // registry (and its mutex, maybe held by a thread that does not exist
  // there) is the parent's.
  void Register(ExitRestorable* object) {
    if (!InOwnerProcess()) return;
    std::lock_guard lock(mu_);
    live_.push_back(object);
    if (live_.size() == 1) Install();
  }

  void Unregister(ExitRestorable* object) {
    if (!InOwnerProcess()) return;
    std::lock_guard lock(mu_);
    auto it = std::find(live_.begin(), live_.end(), object);
    if (it == live_.end()) return;
    live_.erase(it);
    if (live_.empty()) Uninstall();
  }

  void RestoreAll(std::string_view why) {
    if (!InOwnerProcess()) return;
    std::lock_guard lock(mu_);
    for (ExitRestorable* object : live_) object->RestoreForExit(why);
  }

  std::terminate_handler previous_terminate() { return previous_terminate_.load(); }

 private:
  Registry() { g_owner_pid.store(getpid()); }

  // Requires mu_.
  void Install() {
    if (pipe_[0] < 0) {
      if (pipe2(pipe_, O_CLOEXEC) != 0) {
        pipe_[0] = pipe_[1] = -1;
        return;  // no signal restore; the destructor and terminate paths still work
      }
      fcntl(pipe_[1], F_SETFL, O_NONBLOCK);
      g_signal_read_fd.store(pipe_[0]);
      static const bool at_fork = pthread_atfork(nullptr, nullptr, ZeusRuntimeAfterForkInChild) == 0;
      (void)at_fork;
      watcher_ = std::thread([this] { Watch(); });
    }
    g_signal_write_fd.store(pipe_[1]);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      installed_[i] = false;
      if (sigaction(kSignals[i], nullptr, &previous_[i]) != 0) continue;
      // An ignored signal (a background job, nohup) does not end the
      // process: leave it ignored, there is nothing to restore for it.
      if (!(previous_[i].sa_flags & SA_SIGINFO) && previous_[i].sa_handler == SIG_IGN) continue;
      g_previous_actions[i] = previous_[i];
      struct sigaction action {};
      action.sa_handler = ZeusRuntimeOnSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      installed_[i] = sigaction(kSignals[i], &action, nullptr) == 0;
    }
    previous_terminate_.store(std::set_terminate(OnTerminate));
    terminate_installed_ = true;
  }

  // Requires mu_.
  void Uninstall() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      if (installed_[i]) sigaction(kSignals[i], &previous_[i], nullptr);
      installed_[i] = false;
    }
    if (terminate_installed_) std::set_terminate(previous_terminate_.load());
    terminate_installed_ = false;
  }

  void Watch() {
    for (;;) {
      unsigned char byte = 0;
      const ssize_t n = read(pipe_[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || byte == 0) return;
      const int signo = byte;
      RestoreAll(signo == SIGINT ? "SIGINT" : "SIGTERM");
      {
        // Give the signal back its previous action, then deliver it again.
        std::lock_guard lock(mu_);
        for (std::size_t i = 0; i < std::size(kSignals); ++i) {
          if (kSignals[i] == signo && installed_[i]) {
            sigaction(signo, &previous_[i], nullptr);
            installed_[i] = false;
          }
        }
      }
      kill(getpid(), signo);
    }
  }

  std::recursive_mutex mu_;  // recursive: terminate may fire on a thread inside RestoreAll
  std::vector<ExitRestorable*> live_;
  int pipe_[2] = {-1, -1};
  std::thread watcher_;
  bool installed_[std::size(kSignals)] = {};
  struct sigaction previous_[std::size(kSignals)] = {};
  bool terminate_installed_ = false;
  std::atomic<std::terminate_handler> previous_terminate_{nullptr};
};

void OnTerminate() {
  Registry& registry = Registry::Get();
  registry.RestoreAll("std::terminate (an uncaught exception?)");
  if (std::terminate_handler previous = registry.previous_terminate(); previous != nullptr) previous();
  std::abort();
}

}  // namespace

void RegisterForExit(ExitRestorable* object) {
  if (g_registry_gone.load()) return;
  Registry::Get().Register(object);
}

void UnregisterForExit(ExitRestorable* object) {
  if (g_registry_gone.load()) return;
  Registry::Get().Unregister(object);
}

}  // namespace zeus::runtime::internal
