// Copyright 2026 The Zeus C++ Authors.

#include "exporter/process_metrics.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace zeus::exporter {
namespace {

prometheus::MetricFamily Single(const char* name, const char* help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily family{name, help, type, {}};
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

// Seconds since the epoch at boot, from /proc/stat's btime; 0 if unreadable.
double BootTimeS() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double btime = 0;
      in >> btime;
      return btime;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0.0;
}

int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory stream's own descriptor
}

}  // namespace

void AppendProcessMetrics(std::vector<prometheus::MetricFamily>& families) {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return;
  // Fields after the command, numbered from 3 (state) as in proc(5).
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f(3);  // pad so that f[n] is field n
  std::string word;
  while (fields >> word) f.push_back(word);
  if (f.size() < 25) return;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double cpu_s = (std::stod(f[14]) + std::stod(f[15])) / ticks;
  families.push_back(Single("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                            prometheus::MetricType::Counter, cpu_s));
  families.push_back(Single("process_resident_memory_bytes", "Resident memory size in bytes.",
                            prometheus::MetricType::Gauge, std::stod(f[24]) * page));
  families.push_back(Single("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                            prometheus::MetricType::Gauge, std::stod(f[23])));
  const double boot_s = BootTimeS();
  if (boot_s > 0) {
    families.push_back(Single("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                              prometheus::MetricType::Gauge, boot_s + std::stod(f[22]) / ticks));
  }
  const int fds = OpenFds();
  if (fds >= 0) {
    families.push_back(Single("process_open_fds", "Number of open file descriptors.", prometheus::MetricType::Gauge,
                              static_cast<double>(fds)));
  }
}

}  // namespace zeus::exporter
