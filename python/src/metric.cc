// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.metric: the push helpers of zeus::exporter (EnergyHistogram,
// EnergyCumulativeCounter, PowerGauge) over a ZeusMonitor's NativeMonitor,
// for zeus.metric. Each object keeps the NativeMonitor alive and is destroyed
// before it. Failed pushes are logged by the native helpers through the log
// seam (the `zeus.metric` logger); they never raise. A window's energy outside
// the histogram's buckets is a UserWarning (once per place, as its text does
// not change from epoch to epoch).

#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/exporter/push.h"

namespace zeus::python {
namespace {

template <class Helper>
struct Native : ForkAware {
  std::shared_ptr<NativeMonitor> monitor;
  std::unique_ptr<Helper> helper;  // destroyed first (declared last)
  ~Native() override { helper.reset(); }
};

exporter::PushTarget Target(const std::string& url, const std::string& job) { return {url, job, nullptr}; }

std::chrono::nanoseconds Period(double update_period_s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(update_period_s));
}

template <class Helper>
void Begin(Native<Helper>& self, const std::string& name, const char* what) {
  CheckNotForked(self, what);
  Status s = [&] {
    ReleaseGil release;
    return self.helper->BeginWindow(name);
  }();
  Unwrap(std::move(s));
}

template <class Helper>
void End(Native<Helper>& self, const std::string& name, const char* what) {
  CheckNotForked(self, what);
  auto s = [&] {
    ReleaseGil release;
    return self.helper->EndWindow(name);  // joins the window's thread
  }();
  if (!s) ThrowError(s.error());
}

}  // namespace

void RegisterMetric(py::module_& m) {
  py::module_ sub = m.def_submodule("metric", "Prometheus push helpers (zeus::exporter).");

  using Histogram = Native<exporter::EnergyHistogram>;
  py::class_<Histogram, std::shared_ptr<Histogram>>(sub, "EnergyHistogram")
      .def(py::init([](std::shared_ptr<NativeMonitor> monitor, const std::string& url, const std::string& job,
                       std::vector<double> gpu_buckets, std::vector<double> cpu_buckets,
                       std::vector<double> dram_buckets) {
             auto out = std::make_shared<Histogram>();
             out->monitor = std::move(monitor);
             exporter::EnergyBuckets buckets{std::move(gpu_buckets), std::move(cpu_buckets), std::move(dram_buckets)};
             out->helper = Unwrap(exporter::EnergyHistogram::Create(*out->monitor->monitor, Target(url, job), buckets));
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("monitor"), py::arg("pushgateway_url"), py::arg("job"), py::arg("gpu_buckets"),
           py::arg("cpu_buckets"), py::arg("dram_buckets"))
      .def("begin_window", [](Histogram& self, const std::string& name) { Begin(self, name, "EnergyHistogram"); })
      .def("end_window", [](Histogram& self, const std::string& name) { End(self, name, "EnergyHistogram"); })
      .def_property_readonly("pushes_attempted", [](Histogram& self) { return self.helper->pushes_attempted(); })
      .def_property_readonly("pushes_failed", [](Histogram& self) { return self.helper->pushes_failed(); });

  using Counter = Native<exporter::EnergyCumulativeCounter>;
  py::class_<Counter, std::shared_ptr<Counter>>(sub, "EnergyCumulativeCounter")
      .def(py::init([](std::shared_ptr<NativeMonitor> monitor, double update_period_s, const std::string& url,
                       const std::string& job) {
             auto out = std::make_shared<Counter>();
             out->monitor = std::move(monitor);
             out->helper = Unwrap(exporter::EnergyCumulativeCounter::Create(*out->monitor->monitor,
                                                                            Period(update_period_s), Target(url, job)));
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("monitor"), py::arg("update_period"), py::arg("pushgateway_url"), py::arg("job"))
      .def("begin_window", [](Counter& self, const std::string& name) { Begin(self, name, "EnergyCumulativeCounter"); })
      .def("end_window", [](Counter& self, const std::string& name) { End(self, name, "EnergyCumulativeCounter"); })
      .def_property_readonly("pushes_attempted", [](Counter& self) { return self.helper->pushes_attempted(); })
      .def_property_readonly("pushes_failed", [](Counter& self) { return self.helper->pushes_failed(); });

  using Gauge = Native<exporter::PowerGauge>;
  py::class_<Gauge, std::shared_ptr<Gauge>>(sub, "PowerGauge")
      .def(py::init([](std::shared_ptr<NativeMonitor> monitor, double update_period_s, const std::string& url,
                       const std::string& job) {
             auto out = std::make_shared<Gauge>();
             out->monitor = std::move(monitor);
             out->helper = Unwrap(exporter::PowerGauge::Create(*out->monitor->gpus,
                                                               out->monitor->monitor->gpu_indices(),
                                                               Period(update_period_s), Target(url, job)));
             RegisterForForkCheck(out);
             return out;
           }),
           py::arg("monitor"), py::arg("update_period"), py::arg("pushgateway_url"), py::arg("job"))
      .def("begin_window", [](Gauge& self, const std::string& name) { Begin(self, name, "PowerGauge"); })
      .def("end_window", [](Gauge& self, const std::string& name) { End(self, name, "PowerGauge"); })
      .def_property_readonly("pushes_attempted", [](Gauge& self) { return self.helper->pushes_attempted(); })
      .def_property_readonly("pushes_failed", [](Gauge& self) { return self.helper->pushes_failed(); });
}

}  // namespace zeus::python
