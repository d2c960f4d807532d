// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/log.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace zeus {
namespace {

void WriteToStderr(const LogRecord& record) {
  std::string line = "zeus: ";
  if (!record.component.empty()) {
    line.append(record.component);
    line.append(": ");
  }
  if (record.level == LogLevel::kWarning) line.append("warning: ");
  if (record.level == LogLevel::kError) line.append("error: ");
  line.append(record.message);
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

struct LogState {
  std::mutex mutex;
  std::shared_ptr<const LogSink> sink;  // null: the default
  std::set<std::string, std::less<>> once_keys;
};

// Never destroyed, so records logged during static destruction still work.
LogState& State() {
  static LogState* const state = new LogState();
  return *state;
}

}  // namespace

LogSink SetLogSink(LogSink sink) {
  LogState& state = State();
  std::shared_ptr<const LogSink> next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  std::lock_guard lock(state.mutex);
  std::shared_ptr<const LogSink> previous = std::exchange(state.sink, std::move(next));
  return previous ? *previous : LogSink();
}

void Log(const LogRecord& record) {
  std::shared_ptr<const LogSink> sink;
  {
    LogState& state = State();
    std::lock_guard lock(state.mutex);
    sink = state.sink;
  }
  if (sink) {
    (*sink)(record);
  } else {
    WriteToStderr(record);
  }
}

bool LogOnce(std::string_view once_key, const LogRecord& record) {
  {
    LogState& state = State();
    std::lock_guard lock(state.mutex);
    if (!state.once_keys.emplace(once_key).second) return false;
  }
  Log(record);
  return true;
}

void LogWarning(std::string_view component, std::string_view message) {
  Log({.level = LogLevel::kWarning, .component = component, .message = message});
}

void LogInfo(std::string_view component, std::string_view message) {
  Log({.level = LogLevel::kInfo, .component = component, .message = message});
}

void ResetLogOnceKeysForTesting() {
  LogState& state = State();
  std::lock_guard lock(state.mutex);
  state.once_keys.clear();
}

}  // namespace zeus
