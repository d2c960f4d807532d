// Copyright 2026 The Zeus C++ Authors.

#include "apps/zeus/exporter_command.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "base/serial_worker.h"
#include "zeus/base/error.h"
#include "zeus/carbon/intensity.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/exporter/collector.h"
#include "zeus/zeusd_client/cpu.h"

namespace zeus::cli {
namespace {

struct ExporterFlags {
  std::string listen = "0.0.0.0:9401";  // next to dcgm-exporter's 9400, so both can run
  int interval_ms = 100;
  std::string hostname;
  std::string carbon;
  bool no_cpus = false;
  std::string ready_file;
  bool per_process = false;
  int process_retention_s = 300;  // AttributionLedgerOptions' default
  int max_process_series = 1000;
  std::vector<std::string> idle_power;  // MODEL=WATTS
  std::string proc_root;
};

int Failed(const Error& e) {
  std::fprintf(stderr, "error: %s\n", e.message().c_str());
  return ExitCodeFor(e.code());
}

int RunExporter(const ExporterFlags& flags) {
  std::unique_ptr<cli::OutputFile> ready;
  if (!flags.ready_file.empty()) {
    auto file = OutputFile::Open("--ready-file", flags.ready_file);
    if (!file) return Failed(file.error());
    ready = std::make_unique<OutputFile>(std::move(*file));
  }
  // No NVIDIA driver is not an error: the CPUs are still exported.
  const device::GpuLibraryChoice library = device::ChooseNvmlLibrary();
  std::unique_ptr<device::GpuSet> gpus;
  // The counter check runs in the collector, on each GPU's own scrape thread
  // (CollectorOptions::energy_counter_check_deadline), so that one hung GPU
  // cannot keep the exporter from starting. OpenGpus checks nothing.
  const Result<bool> check_counters = device::ChooseEnergyCounterCheck();
  if (!check_counters) return Failed(check_counters.error());
  device::GpuOptions gpu_options;
  if (auto opened = device::OpenGpus(gpu_options)) {
    gpus = std::move(*opened);
  } else if (!device::MayContinueWithoutGpus(opened.error(), library)) {
    return Failed(opened.error());
  } else {
    std::fprintf(stderr, "zeus exporter: %s; exporting CPUs only\n", opened.error().message().c_str());
  }
  std::unique_ptr<device::CpuSet> cpus;
  if (!flags.no_cpus) {
    // Local RAPL, or zeusd's when local RAPL is unreadable and ZEUSD_* is set.
    auto opened = zeusd::OpenCpusLocalOrZeusd({}, zeusd::CpuDemand::kIfServed);
    if (!opened) return Failed(opened.error());
    if (opened->note) std::fprintf(stderr, "zeus exporter: %s\n", opened->note->c_str());
    cpus = std::move(opened->cpus);
  }

  // SIGINT and SIGTERM are taken by sigwait below: blocked before any thread
  // starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  exporter::CollectorOptions options;
  options.sample_interval = std::chrono::milliseconds(flags.interval_ms);
  // Above the check's own bound (EnergyCounterCheckOptions::wall_deadline,
  // 3 s): only a GPU whose driver call hangs reaches it.
  if (*check_counters) options.energy_counter_check_deadline = std::chrono::milliseconds(6250);
  options.hostname = flags.hostname;
  if (!flags.carbon.empty()) {
    Result<std::string> path = carbon::FindIntensityData();
    if (!path) return Failed(path.error().WithContext("--carbon"));
    Result<carbon::IntensityTable> table = carbon::LoadIntensityTable(*path);
    if (!table) return Failed(table.error().WithContext("--carbon"));
    Result<carbon::Zone> zone = carbon::LookupZone(*table, flags.carbon);
    if (!zone) return Failed(Error(ErrorCode::kInvalidArgument, "--carbon: " + zone.error().message()));
    options.carbon_intensity_g_per_kwh = zone->intensity_g_per_kwh;
    options.carbon_zone = zone->code;
  }
  if (flags.per_process) {
    options.per_process = true;
    options.process_energy.ledger.retention = std::chrono::seconds(flags.process_retention_s);
    options.process_energy.ledger.max_entries = static_cast<std::size_t>(flags.max_process_series);
    options.process_energy.identity.proc_root =
        device::ChooseProcRoot(flags.proc_root.empty() ? std::nullopt : std::optional(flags.proc_root));
    auto idle = ParseIdlePowerFlags(flags.idle_power);
    if (!idle) return Failed(idle.error());
    options.process_energy.idle.idle_power_mw_by_model = std::move(*idle);
  }
  auto collector = exporter::Collector::Create(gpus.get(), cpus.get(), options);
  if (!collector) return Failed(collector.error());
  auto server = exporter::MetricsServer::Start(**collector, flags.listen);
  if (!server) return Failed(server.error());
  const std::string address = flags.listen.substr(0, flags.listen.rfind(':'));
  const std::string url = fmt::format("http://{}:{}/metrics", address, (*server)->port());
  std::fprintf(stderr, "zeus exporter: serving %zu GPU%s and %zu CPU package%s at %s\n", gpus ? gpus->size() : 0,
               gpus && gpus->size() == 1 ? "" : "s", cpus ? cpus->size() : 0, cpus && cpus->size() == 1 ? "" : "s",
               url.c_str());
  if (ready) {
    if (Status s = ready->Commit(url + "\n"); !s) return Failed(s.error());
  }
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::fprintf(stderr, "zeus exporter: stopping on signal %d\n", signal_number);
  server->reset();
  // The collector's sampling threads may be inside a hung driver call: stop
  // them within a deadline, and leave without destructors if one is stuck.
  base::SerialWorker closer("zeus-close");
  closer.Post([owned = std::shared_ptr<exporter::Collector>(std::move(*collector))]() mutable { owned.reset(); });
  if (!closer.StopWithin(std::chrono::seconds(2))) {
    std::fprintf(stderr, "zeus exporter: exiting with a driver call still hung\n");
    std::fflush(stderr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

void RegisterExporterCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ExporterFlags>();
  CLI::App* cmd = app.add_subcommand("exporter", "Serve GPU and CPU power, energy, limits and temperatures to "
                                                 "Prometheus at http://ADDR:PORT/metrics");
  cmd->add_option("--listen", flags->listen, "ADDR:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--interval-ms", flags->interval_ms, "Power and temperature sampling period, milliseconds")
      ->transform(IntegerFlag<int>(1, 60000))
      ->capture_default_str();
  cmd->add_option("--carbon", flags->carbon,
                  "Also export zeus_gpu_emissions_grams_total: each GPU's energy at the yearly average carbon "
                  "intensity of this country or region (FR, FRA, France, World), from the table shipped with zeus");
  cmd->add_option("--hostname", flags->hostname, "The hostname label (default: this machine's hostname)");
  cmd->add_flag("--no-cpus", flags->no_cpus, "Do not export RAPL CPU and DRAM energy");
  cmd->add_option("--ready-file", flags->ready_file,
                  "Write the metrics URL (with the port bound) to this file once serving");
  cmd->add_flag("--per-process", flags->per_process,
                "Also export each process's share of GPU energy (zeus_gpu_process_energy_joules_total, labelled "
                "pid, comm, user, slurm_job_id, pod, container) and the idle and unlisted parts");
  cmd->add_option("--process-retention", flags->process_retention_s,
                  "Seconds after which the series of a process no longer on its GPU are dropped (--per-process)")
      ->transform(IntegerFlag<int>(1, 7 * 24 * 3600))
      ->capture_default_str();
  cmd->add_option("--max-process-series", flags->max_process_series,
                  "Most process series at once, over all GPUs; the energy of processes past it is exported as "
                  "zeus_gpu_unlisted_energy_joules_total{kind=\"other\"} (--per-process)")
      ->transform(IntegerFlag<int>(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--idle-power", flags->idle_power,
                  "MODEL=WATTS: the idle power of a GPU model (as `zeus info` names it), not attributed to "
                  "processes; repeatable. Default: the lowest power seen in the last 10 minutes (--per-process)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--proc-root", flags->proc_root,
                  "Where the host's procfs is mounted, e.g. /host/proc in a container (default: $ZEUS_PROC_ROOT, "
                  "else /proc; --per-process)");
  cmd->footer(
      "Runs until SIGINT or SIGTERM. Metrics: zeus_gpu_power_watts, zeus_gpu_power_limit_watts,\n"
      "zeus_gpu_temperature_celsius, zeus_gpu_energy_joules_total, zeus_cpu_energy_joules_total,\n"
      "zeus_dram_energy_joules_total, zeus_device_up, zeus_exporter_scrape_duration_seconds, process_*.\n"
      "With --per-process: zeus_gpu_process_energy_joules_total, zeus_gpu_idle_energy_joules_total,\n"
      "zeus_gpu_unlisted_energy_joules_total{kind=unattributed|other|ended} and\n"
      "zeus_gpu_attributed_energy_joules_total (per GPU, the sum of the three), zeus_exporter_process_series.");
  cmd->callback([flags, exit_code] { *exit_code = RunExporter(*flags); });
}

}  // namespace zeus::cli
