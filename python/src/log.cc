// Copyright 2026 The Zeus C++ Authors.

#include "python/src/log.h"

#include <Python.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "python/src/bindings.h"
#include "zeus/base/log.h"

namespace zeus::python {
namespace {

struct OwnedRecord {
  LogLevel level;
  std::string component;
  std::string message;
  bool user_warning;
  std::thread::id thread;  // the logging thread, when it waits in a native call
  bool for_caller;
};

thread_local int pending_scope_depth = 0;

bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() == 0 || Py_IsFinalizing() != 0;
#else
  return Py_IsInitialized() == 0 || _Py_IsFinalizing() != 0;
#endif
}

// Process-lifetime state; never destroyed (the delivery thread may outlive
// module teardown until the atexit hook stops it). A forked child gets a new
// one: the parent's delivery thread and lock holders do not exist there.
struct Bridge {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<OwnedRecord> queue;
  std::thread delivery;  // started with the first background record
  bool stopping = false;
  std::atomic<bool> active{false};
};

Bridge* bridge_instance = new Bridge();

Bridge& TheBridge() { return *bridge_instance; }

void ForgetParentBridge() {
  const bool active = bridge_instance->active.load();
  bridge_instance = new Bridge();  // the parent's is leaked on purpose
  bridge_instance->active.store(active);
}

int PythonLevel(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return 10;
    case LogLevel::kInfo: return 20;
    case LogLevel::kWarning: return 30;
    case LogLevel::kError: return 40;
  }
  return 30;
}

// Calls zeus._logging.deliver; needs the GIL. A Python error raised by the
// delivery (a warning turned into an error by `-W error`, a broken handler)
// is reported as unraisable: the native call that logged has finished.
void DeliverNow(const OwnedRecord& record) {
  if (Finalizing()) return;
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  try {
    py::module_::import("zeus._logging")
        .attr("deliver")(PythonLevel(record.level), record.component, record.message, record.user_warning);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("zeus: delivering a native log record");
  }
  PyErr_Restore(type, value, trace);
}

void DeliveryLoop() {
  Bridge& bridge = TheBridge();
  std::unique_lock lock(bridge.mutex);
  while (true) {
    bridge.wake.wait(lock, [&] {
      if (bridge.stopping) return true;
      for (const OwnedRecord& r : bridge.queue) {
        if (!r.for_caller) return true;
      }
      return false;
    });
    if (bridge.stopping) return;
    std::deque<OwnedRecord> mine;
    for (auto it = bridge.queue.begin(); it != bridge.queue.end();) {
      if (it->for_caller) {
        ++it;
      } else {
        mine.push_back(std::move(*it));
        it = bridge.queue.erase(it);
      }
    }
    lock.unlock();
    {
      py::gil_scoped_acquire gil;
      for (const OwnedRecord& r : mine) DeliverNow(r);
    }
    lock.lock();
  }
}

void WriteToStderr(const OwnedRecord& record) {
  std::string line = "zeus: " + record.component + ": " + record.message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Sink(const LogRecord& record) {
  Bridge& bridge = TheBridge();
  OwnedRecord owned{record.level, std::string(record.component), std::string(record.message),
                    record.user_warning, std::this_thread::get_id(), pending_scope_depth > 0};
  if (!bridge.active.load() || Finalizing()) {
    WriteToStderr(owned);
    return;
  }
  if (PyGILState_Check() != 0) {
    DeliverNow(owned);
    return;
  }
  {
    std::lock_guard lock(bridge.mutex);
    if (bridge.stopping) {
      WriteToStderr(owned);
      return;
    }
    const bool for_caller = owned.for_caller;
    bridge.queue.push_back(std::move(owned));
    if (for_caller) return;
    if (!bridge.delivery.joinable()) bridge.delivery = std::thread(DeliveryLoop);
  }
  bridge.wake.notify_one();
}

// atexit: stop the delivery thread before the interpreter finalises; later
// records go to stderr.
void Shutdown() {
  Bridge& bridge = TheBridge();
  bridge.active.store(false);
  std::deque<OwnedRecord> left;
  {
    std::lock_guard lock(bridge.mutex);
    bridge.stopping = true;
    left.swap(bridge.queue);
  }
  bridge.wake.notify_all();
  if (bridge.delivery.joinable()) {
    py::gil_scoped_release release;
    bridge.delivery.join();
  }
  for (const OwnedRecord& r : left) DeliverNow(r);
  SetLogSink(LogSink());
}

}  // namespace

PendingLogScope::PendingLogScope() { ++pending_scope_depth; }

PendingLogScope::~PendingLogScope() {
  --pending_scope_depth;
  if (pending_scope_depth == 0) DeliverPendingLogRecords();
}

void DeliverPendingLogRecords() {
  Bridge& bridge = TheBridge();
  std::deque<OwnedRecord> mine;
  {
    std::lock_guard lock(bridge.mutex);
    const auto self = std::this_thread::get_id();
    for (auto it = bridge.queue.begin(); it != bridge.queue.end();) {
      if (it->for_caller && it->thread == self) {
        mine.push_back(std::move(*it));
        it = bridge.queue.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const OwnedRecord& r : mine) DeliverNow(r);
}

void RegisterLog(py::module_& m) {
  py::module_ log = m.def_submodule("log", "Native log records, delivered to logging and warnings.");
  Bridge& bridge = TheBridge();
  if (!bridge.active.exchange(true)) {
    {
      std::lock_guard lock(bridge.mutex);
      bridge.stopping = false;
    }
    SetLogSink(Sink);
    static const int registered = pthread_atfork(nullptr, nullptr, &ForgetParentBridge);
    (void)registered;
    py::module_::import("atexit").attr("register")(py::cpp_function(&Shutdown));
  }
  log.def(
      "emit",
      [](int level, const std::string& component, const std::string& message, bool user_warning, bool once_key_set,
         const std::string& once_key) {
        const LogLevel native = level >= 40 ? LogLevel::kError
                                : level >= 30 ? LogLevel::kWarning
                                : level >= 20 ? LogLevel::kInfo
                                              : LogLevel::kDebug;
        const LogRecord record{.level = native, .component = component, .message = message,
                               .user_warning = user_warning};
        if (once_key_set) return LogOnce(once_key, record);
        Log(record);
        return true;
      },
      py::arg("level"), py::arg("component"), py::arg("message"), py::arg("user_warning") = false,
      py::arg("once") = false, py::arg("once_key") = "",
      "Logs a record through the native seam (tests and the package's own once-only advice).");
  log.def(
      "emit_from_thread",
      [](const std::string& component, const std::string& message, bool user_warning) {
        ReleaseGil release;
        std::thread([component, message, user_warning] {
          Log({.level = LogLevel::kWarning, .component = component, .message = message,
               .user_warning = user_warning});
        }).join();
      },
      py::arg("component"), py::arg("message"), py::arg("user_warning") = false,
      "Logs from a native background thread, as a poller would (tests).");
  log.def(
      "emit_in_call",
      [](const std::string& component, const std::string& message, bool user_warning) {
        ReleaseGil release;
        Log({.level = LogLevel::kWarning, .component = component, .message = message, .user_warning = user_warning});
      },
      py::arg("component"), py::arg("message"), py::arg("user_warning") = false,
      "Logs inside a native call that released the GIL, as a measurement would (tests).");
  log.def("reset_once_keys", &ResetLogOnceKeysForTesting);
}

}  // namespace zeus::python
