// Copyright 2026 The Zeus C++ Authors.
//
// The standard process_* metrics of the running process, from /proc/self.

#ifndef ZEUS_SRC_EXPORTER_PROCESS_METRICS_H_
#define ZEUS_SRC_EXPORTER_PROCESS_METRICS_H_

#include <prometheus/metric_family.h>

#include <vector>

namespace zeus::exporter {

// Appends process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds and
// process_open_fds (those /proc lets us read) to `families`.
void AppendProcessMetrics(std::vector<prometheus::MetricFamily>& families);

}  // namespace zeus::exporter

#endif  // ZEUS_SRC_EXPORTER_PROCESS_METRICS_H_
