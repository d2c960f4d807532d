// Copyright 2026 The Zeus C++ Authors.
//
// Native log records (zeus/base/log.h) in Python. RegisterLog installs a sink
// that delivers each record to zeus._logging.deliver: `logging` (the
// `zeus.<component>` logger) for log lines, `warnings.warn` for user warnings.
//
// When a record is delivered:
// - at once, when the logging thread holds the GIL;
// - when the native call returns, for records logged by a thread inside a
//   call that released the GIL through ReleaseGil (so a warning raised by
//   `monitor.end_window` is raised by that call, under the caller's
//   `warnings.catch_warnings`);
// - soon, by a delivery thread, for records of native background threads
//   (pollers, pushers).
// After the interpreter starts finalising, records go to stderr.

#ifndef ZEUS_PYTHON_SRC_LOG_H_
#define ZEUS_PYTHON_SRC_LOG_H_

#include <pybind11/pybind11.h>

namespace zeus::python {

// Marks the current thread as inside a native call for the log sink; on
// destruction (with the GIL held) delivers the records this thread logged.
class PendingLogScope {
 public:
  PendingLogScope();
  ~PendingLogScope();
  PendingLogScope(const PendingLogScope&) = delete;
  PendingLogScope& operator=(const PendingLogScope&) = delete;
};

// Use instead of py::gil_scoped_release around native work: releases the GIL
// for the scope, then, with the GIL back, delivers the scope's log records.
class ReleaseGil {
 public:
  ReleaseGil() = default;

 private:
  PendingLogScope pending_;                  // destroyed second, with the GIL
  pybind11::gil_scoped_release release_;     // destroyed first: takes the GIL back
};

// Delivers the records waiting for the current thread (needs the GIL).
void DeliverPendingLogRecords();

void RegisterLog(pybind11::module_& m);

}  // namespace zeus::python

#endif  // ZEUS_PYTHON_SRC_LOG_H_
