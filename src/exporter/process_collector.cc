// Copyright 2026 The Zeus C++ Authors.

#include "exporter/process_collector.h"

#include <string>
#include <utility>

namespace zeus::exporter {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

ClientMetric Counter(std::vector<ClientMetric::Label> labels, std::int64_t energy_mj) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = static_cast<double>(energy_mj) / 1000.0;
  return m;
}

}  // namespace

Result<std::unique_ptr<ProcessCollector>> ProcessCollector::Create(const device::GpuSet& gpus,
                                                                   std::vector<std::string> gpu_index,
                                                                   std::vector<std::string> gpu_uuid,
                                                                   std::string hostname,
                                                                   monitor::ProcessEnergyOptions options) {
  if (gpu_index.size() != gpus.size() || gpu_uuid.size() != gpus.size()) {
    return Fail(ErrorCode::kInternal, "the per-process collector needs one index and UUID label per GPU");
  }
  auto tracker = monitor::ProcessEnergyTracker::Create(gpus, std::move(options));
  if (!tracker) return Fail(tracker.error().WithContext("per-process energy"));
  std::unique_ptr<ProcessCollector> collector(new ProcessCollector());
  collector->tracker_ = std::move(*tracker);
  collector->gpu_index_ = std::move(gpu_index);
  collector->gpu_uuid_ = std::move(gpu_uuid);
  collector->hostname_ = std::move(hostname);
  return collector;
}

ProcessCollector::~ProcessCollector() {
  if (sampler_) sampler_->Stop();
}

void ProcessCollector::StartSampling(std::chrono::nanoseconds interval) {
  if (!sampler_) sampler_ = std::make_unique<monitor::PeriodicProcessSampler>(*tracker_, interval);
}

void ProcessCollector::Sample() { tracker_->Sample(); }

void ProcessCollector::Append(std::vector<MetricFamily>& families) const {
  MetricFamily process{"zeus_gpu_process_energy_joules_total",
                       "GPU energy attributed to a process (model: its share of the GPU's active energy by SM "
                       "utilization) since its series appeared. Dropped after --process-retention without use.",
                       MetricType::Counter, {}};
  MetricFamily idle{"zeus_gpu_idle_energy_joules_total",
                    "GPU energy below the idle power estimate since the exporter started (not attributed).",
                    MetricType::Counter, {}};
  MetricFamily unlisted{"zeus_gpu_unlisted_energy_joules_total",
                        "GPU active energy in no live process series since the exporter started: kind=unattributed "
                        "(no process was using the GPU), other (processes past --max-process-series), ended "
                        "(processes whose series were dropped after --process-retention).",
                        MetricType::Counter, {}};
  MetricFamily attributed{"zeus_gpu_attributed_energy_joules_total",
                          "GPU energy measured by the per-process attribution since the exporter started: the sum "
                          "of the idle, unlisted and process counters of the GPU.",
                          MetricType::Counter, {}};
  MetricFamily series{"zeus_exporter_process_series",
                      "zeus_gpu_process_energy_joules_total series in this scrape (capped by --max-process-series).",
                      MetricType::Gauge, {}};

  const monitor::AttributionSnapshot snapshot = tracker_->Snapshot();
  for (const monitor::GpuEnergyTotals& gpu : snapshot.gpus) {
    if (gpu.gpu_index >= gpu_index_.size()) continue;
    const std::vector<ClientMetric::Label> labels{
        {"gpu", gpu_index_[gpu.gpu_index]}, {"hostname", hostname_}, {"uuid", gpu_uuid_[gpu.gpu_index]}};
    idle.metric.push_back(Counter(labels, gpu.idle_energy_mj));
    attributed.metric.push_back(Counter(labels, gpu.measured_energy_mj));
    for (const auto& [kind, energy_mj] : {std::pair{"unattributed", gpu.unattributed_energy_mj},
                                          std::pair{"other", gpu.other_energy_mj},
                                          std::pair{"ended", gpu.ended_energy_mj}}) {
      auto with_kind = labels;
      with_kind.insert(with_kind.begin() + 2, {"kind", kind});
      unlisted.metric.push_back(Counter(std::move(with_kind), energy_mj));
    }
  }
  // Entries come in (GPU, PID, start time) order, so two whose labels
  // coincide (same GPU and PID) are next to each other: they are summed.
  std::int64_t last_energy_mj = 0;
  for (const monitor::ProcessEnergyEntry& entry : snapshot.processes) {
    if (entry.gpu_index >= gpu_index_.size()) continue;
    const monitor::ProcessLabels who = tracker_->Labels(entry.process);
    std::vector<ClientMetric::Label> labels{{"comm", who.comm},
                                            {"container", who.container},
                                            {"gpu", gpu_index_[entry.gpu_index]},
                                            {"hostname", hostname_},
                                            {"pid", std::to_string(entry.process.pid)},
                                            {"pod", who.pod},
                                            {"slurm_job_id", who.slurm_job_id},
                                            {"user", who.user},
                                            {"uuid", gpu_uuid_[entry.gpu_index]}};
    if (!process.metric.empty() && process.metric.back().label == labels) {
      last_energy_mj += entry.energy_mj;
      process.metric.back().counter.value = static_cast<double>(last_energy_mj) / 1000.0;
      continue;
    }
    last_energy_mj = entry.energy_mj;
    process.metric.push_back(Counter(std::move(labels), entry.energy_mj));
  }
  ClientMetric count;
  count.label = {{"hostname", hostname_}};
  count.gauge.value = static_cast<double>(process.metric.size());
  series.metric.push_back(std::move(count));

  for (MetricFamily* family : {&process, &idle, &unlisted, &attributed}) {
    if (!family->metric.empty()) families.push_back(std::move(*family));
  }
  families.push_back(std::move(series));
}

}  // namespace zeus::exporter
