// Copyright 2026 The Zeus C++ Authors.

#include "runtime/exit_restore.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace zeus::runtime::internal {
namespace {

// The pipe's write end, for the signal handler. -1 when not installed.
std::atomic<int> g_signal_write_fd{-1};
std::atomic<bool> g_registry_gone{false};

extern "C" void ZeusRuntimeOnSignal(int signo) {
  const int saved_errno = errno;
  const int fd = g_signal_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signo);
    [[maybe_unused]] const ssize_t n = write(fd, &byte, 1);
  }
  errno = saved_errno;
}

void OnTerminate();

constexpr int kSignals[] = {SIGINT, SIGTERM};

class Registry {
 public:
  static Registry& Get() {
    static Registry registry;
    return registry;
  }

  ~Registry() {
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
    if (pipe_[0] >= 0) close(pipe_[0]);
    if (pipe_[1] >= 0) close(pipe_[1]);
    g_registry_gone.store(true);
  }

  void Register(ExitRestorable* object) {
    std::lock_guard lock(mu_);
    live_.push_back(object);
    if (live_.size() == 1) Install();
  }

  void Unregister(ExitRestorable* object) {
    std::lock_guard lock(mu_);
    auto it = std::find(live_.begin(), live_.end(), object);
    if (it == live_.end()) return;
    live_.erase(it);
    if (live_.empty()) Uninstall();
  }

  void RestoreAll(std::string_view why) {
    std::lock_guard lock(mu_);
    for (ExitRestorable* object : live_) object->RestoreForExit(why);
  }

  std::terminate_handler previous_terminate() {
    std::lock_guard lock(mu_);
    return previous_terminate_;
  }

 private:
  Registry() = default;

  // Requires mu_.
  void Install() {
    if (pipe_[0] < 0) {
      if (pipe2(pipe_, O_CLOEXEC) != 0) {
        pipe_[0] = pipe_[1] = -1;
        return;  // no signal restore; the destructor and terminate paths still work
      }
      fcntl(pipe_[1], F_SETFL, O_NONBLOCK);
      watcher_ = std::thread([this] { Watch(); });
    }
    g_signal_write_fd.store(pipe_[1]);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      struct sigaction action {};
      action.sa_handler = ZeusRuntimeOnSignal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART;
      installed_[i] = sigaction(kSignals[i], &action, &previous_[i]) == 0;
    }
    previous_terminate_ = std::set_terminate(OnTerminate);
    terminate_installed_ = true;
  }

  // Requires mu_.
  void Uninstall() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      if (installed_[i]) sigaction(kSignals[i], &previous_[i], nullptr);
      installed_[i] = false;
    }
    if (terminate_installed_) std::set_terminate(previous_terminate_);
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
  std::terminate_handler previous_terminate_ = nullptr;
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
