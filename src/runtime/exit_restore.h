// Copyright 2026 The Zeus C++ Authors.
//
// Private: restoring device settings when the process ends abnormally.
//
// While at least one ExitRestorable is registered, this installs
//   * handlers for SIGINT and SIGTERM. The handler only writes the signal
//     number to a pipe (async-signal-safe); a watcher thread reads it, calls
//     RestoreForExit on every registered object, puts the signal's previous
//     action back and sends the signal to the process again, so it then does
//     what it would have done without us (by default: end the process by
//     that signal);
//   * a std::terminate handler (uncaught exceptions): restores, then calls
//     the previous terminate handler;
// and at std::exit (static destruction) restores whatever is still
// registered. The previous handlers are put back when the last object
// unregisters. The watcher thread is started once and stopped at exit.
//
// Thread-safety: all functions may be called from any thread.

#ifndef ZEUS_SRC_RUNTIME_EXIT_RESTORE_H_
#define ZEUS_SRC_RUNTIME_EXIT_RESTORE_H_

#include <string_view>

namespace zeus::runtime::internal {

class ExitRestorable {
 public:
  // Must not throw; may be called from the watcher thread, the thread that
  // calls std::terminate, or the thread that calls std::exit.
  virtual void RestoreForExit(std::string_view why) noexcept = 0;

 protected:
  ~ExitRestorable() = default;
};

void RegisterForExit(ExitRestorable* object);
// After it returns, `object` is not and will not be called.
void UnregisterForExit(ExitRestorable* object);

}  // namespace zeus::runtime::internal

#endif  // ZEUS_SRC_RUNTIME_EXIT_RESTORE_H_
