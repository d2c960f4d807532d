// Copyright 2026 The Zeus C++ Authors.
//
// The process's one log seam. Library code never writes to stderr itself: it
// hands a record (level, the component that speaks, the message) to Log or
// LogOnce, and the composition root decides where records go by installing a
// sink. The CLIs and daemons keep the default sink (stderr, one line
// "zeus: <component>: <message>"); the Python module forwards records to the
// `zeus.<component>` logger, and user warnings to Python's `warnings`, so a
// user can silence or redirect every line (python/src/log.cc).

#ifndef ZEUS_BASE_LOG_H_
#define ZEUS_BASE_LOG_H_

#include <functional>
#include <string_view>

namespace zeus {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

struct LogRecord {
  LogLevel level = LogLevel::kInfo;
  // Who speaks, lower case with dashes ("monitor", "power-limit-optimizer");
  // Python's logger is `zeus.<component>` (dashes become underscores).
  std::string_view component;
  // One line, no trailing newline. Keep values that change from call to call
  // (a window's length, a time stamp) out of warnings that may repeat, so
  // that a reader's "show once" filter can recognise the repeat.
  std::string_view message;
  // Advice about the caller's code or data (a window too short to measure, a
  // value outside a histogram's buckets): Python raises it as a UserWarning
  // through `warnings`, so `-W` and `warnings.filterwarnings` apply. Other
  // records go to `logging` at their level.
  bool user_warning = false;
};

// Receives every record. May be called from any thread, concurrently; must
// not call Log itself.
using LogSink = std::function<void(const LogRecord&)>;

// Installs `sink` for the whole process and returns the one it replaces. An
// empty sink restores the default (stderr).
LogSink SetLogSink(LogSink sink);

// Hands `record` to the sink.
void Log(const LogRecord& record);

// Hands `record` to the sink the first time `once_key` is seen in this
// process and drops later records with the same key; returns whether it was
// logged. For advice that would otherwise repeat on every call.
bool LogOnce(std::string_view once_key, const LogRecord& record);

// Shorthands for Log.
void LogWarning(std::string_view component, std::string_view message);
void LogInfo(std::string_view component, std::string_view message);

// Forgets the keys LogOnce has seen (tests only).
void ResetLogOnceKeysForTesting();

}  // namespace zeus

#endif  // ZEUS_BASE_LOG_H_
