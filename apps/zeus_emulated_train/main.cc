// Copyright 2026 The Zeus C++ Authors.
//
// zeus-emulated-train: a training loop on emulated GPUs. Each step takes the
// time the emulator's workload curve gives at the power limit in force, and
// the GPUs draw the curve's power meanwhile, so the power-limit optimizer
// sees what it would see on a real job. It uses zeus::monitor::Monitor and
// zeus::runtime::PowerLimitOptimizer exactly as a user's loop would.
//
//   export ZEUS_NVML_LIBRARY=build/lib/libzeus-nvml-emulator.so ZEUS_EMULATOR_CONFIG=scenario.json
//   build/bin/zeus-emulated-train --epochs 2 --steps-per-epoch 500 --selector zeus-cost --eta 0.5 --json
//
// With --observe the optimizer runs in observer mode: it profiles, puts the
// original limits back, and the report adds what each selector would have
// saved (zeus/runtime/power_limit_what_if.h), as `zeus what-if` prints it.
//
// With --mpi (when built with MPI), run one process per GPU under mpirun:
// steps are in lockstep (the slowest rank's iteration time, as with DDP) and
// the optimizer reduces its measurements over all ranks.
//
// With --bso-server URL, each run is one recurrence of a job whose batch size
// comes from the batch-size optimizer service (zeus::BatchSizeOptimizer): the
// run reports its metric after every epoch and stops when the service says
// so. --convergence says how many epochs each batch size needs to reach the
// target (0: never), which is all the "model" there is:
//
//   zeus bso-server --database sqlite:///bso.db &
//   JOB="--epochs 6 --default-batch-size 128 --convergence 32:5,64:3,128:2,256:4,512:0"
//   for run in $(seq 12); do build/bin/zeus-emulated-train --bso-server http://127.0.0.1:8000 $JOB; done

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/zeus/cli_flags.h"
#include "apps/zeus_emulated_train/report.h"
#include "emulator/control/control.h"
#include "zeus/device/discovery.h"
#include "zeus/device/environment.h"
#include "zeus/monitor/monitor.h"
#include "zeus/runtime/batch_size_optimizer.h"
#include "zeus/runtime/power_limit_optimizer.h"
#include "zeus/runtime/power_limit_what_if.h"
#ifdef ZEUS_HAVE_MPI
#include "zeus/runtime/mpi_communicator.h"
#endif

namespace {

using zeus::ErrorCode;
using zeus::runtime::OptimumSelector;
using zeus::runtime::PowerLimitOptimizer;

struct Flags {
  int epochs = 2;
  int steps_per_epoch = 200;
  std::string selector = "zeus-cost";
  double eta = 0.5;
  double max_slowdown = 1.1;
  std::string profile_path;
  double time_scale = 1.0;
  bool json = false;
  std::string output;
  int wait_steps = 1;
  int warmup_steps = 10;
  int profile_steps = 40;
  double stride_w = 25;
  bool mpi = false;
  int throw_at_step = 0;
  bool catch_exception = false;
  int pause_at_step = 0;
  std::string bso_server;
  std::string bso_job_id = "emulated-train";
  std::string convergence = "32:5,64:3,128:2,256:4,512:0";
  int default_batch_size = 128;
  std::int64_t bso_seed = 1;
  bool quiet = false;
  bool observe = false;
};

// --convergence "BS:EPOCHS,...": epochs to reach the target per batch size.
zeus::Result<std::map<int, int>> ParseConvergence(const std::string& text) {
  std::map<int, int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t colon = item.find(':');
    int batch_size = 0;
    int epochs = -1;
    bool ok = colon != std::string::npos;
    if (ok) {
      const auto [p1, e1] = std::from_chars(item.data(), item.data() + colon, batch_size);
      const auto [p2, e2] = std::from_chars(item.data() + colon + 1, item.data() + item.size(), epochs);
      ok = e1 == std::errc() && p1 == item.data() + colon && e2 == std::errc() && p2 == item.data() + item.size() &&
           batch_size > 0 && epochs >= 0 && !out.contains(batch_size);
    }
    if (!ok) {
      return zeus::Fail(ErrorCode::kInvalidArgument,
                        fmt::format("--convergence: bad entry '{}'; expected BATCH_SIZE:EPOCHS pairs with distinct "
                                    "positive batch sizes, e.g. 32:5,64:3,128:0 (0: never converges)",
                                    item));
    }
    out[batch_size] = epochs;
    start = comma + 1;
  }
  return out;
}

// The "model": the metric after `epoch` epochs at a batch size that needs
// `needed` epochs to reach kTargetMetric (0: it never does).
constexpr double kTargetMetric = 0.9;
double Metric(int epoch, int needed) {
  if (needed > 0 && epoch >= needed) return 0.95;
  return 0.5 * epoch / (needed > 0 ? needed : epoch + 1);
}

// Caps, so that a typo cannot run for ever: epochs x steps per epoch is at
// most kMaxTotalSteps, about 15 minutes on the manual clock (some 110,000
// steps a second); on a wall-clock scenario each step takes its emulated time.
constexpr int kMaxEpochs = 1'000'000;
constexpr std::int64_t kMaxTotalSteps = 100'000'000;

// The report, to stdout or to the -o file opened before training.
int Report(const std::string& text, std::optional<zeus::cli::OutputFile>& output) {
  if (!output) {
    std::fputs(text.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (zeus::Status s = output->Commit(text); !s) {
    std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
    return zeus::ExitCodeFor(s.error().code());
  }
  return 0;
}

// Path flags that can be checked before any device is opened.
zeus::Status CheckPaths(const Flags& flags, std::optional<zeus::cli::OutputFile>& output) {
  if (!flags.profile_path.empty()) {
    // Read if it exists, written after profiling otherwise: it must not be a
    // directory, and the directory it goes into must exist.
    std::error_code ec;
    const std::filesystem::path path(flags.profile_path);
    if (std::filesystem::is_directory(path, ec)) {
      return zeus::Fail(zeus::ErrorCode::kInvalidArgument,
                        fmt::format("--profile-path {}: expected a file, not a directory: {}", flags.profile_path,
                                    std::strerror(EISDIR)));
    }
    const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(parent, ec)) {
      return zeus::Fail(zeus::ErrorCode::kInvalidArgument,
                        fmt::format("--profile-path {}: directory {} does not exist", flags.profile_path,
                                    parent.string()));
    }
  }
  if (!flags.output.empty()) {
    auto opened = zeus::cli::OutputFile::Open("--output", flags.output);
    if (!opened) return zeus::Fail(opened.error());
    output.emplace(std::move(*opened));
  }
  return zeus::OkStatus();
}

struct Totals {
  double time_s = 0;
  double energy_j = 0;
  long steps = 0;
  int epochs = 0;
};

// Called after each epoch with its number (from 1); true stops training.
using AfterEpoch = std::function<zeus::Result<bool>(int epoch)>;

// The training loop; throws only for --throw-at-step (a user's exception).
zeus::Status Train(const Flags& flags, const zeus::device::GpuSet& gpus, zeus::monitor::Monitor& monitor,
                   PowerLimitOptimizer* optimizer, zeus::runtime::Communicator& comm,
                   const zeus::emulator::EmulatorControl& emulator, const zeus::Clock& clock, Totals& totals,
                   const AfterEpoch& after_epoch) {
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    const std::string window = fmt::format("epoch_{}", epoch);
    if (optimizer) optimizer->OnEpochBegin();
    if (auto s = monitor.BeginWindow(window); !s) return s;
    for (int step = 1; step <= flags.steps_per_epoch; ++step) {
      ++totals.steps;
      if (optimizer) optimizer->OnStepBegin();
      if (totals.steps == flags.throw_at_step) throw std::runtime_error(fmt::format("failure at step {}", totals.steps));
      if (totals.steps == flags.pause_at_step) {
        std::fprintf(stderr, "zeus-emulated-train: paused at step %ld\n", totals.steps);
        std::fflush(stderr);
        for (;;) pause();
      }
      // The "GPU work": the slowest GPU's iteration time, over every rank.
      double step_s[1] = {0.0};
      for (std::size_t i : monitor.gpu_indices()) {
        auto t = emulator.IterationTimeS(gpus.gpu(i).nvml_index());
        if (!t) return zeus::Fail(t.error());
        step_s[0] = std::max(step_s[0], *t);
      }
      if (auto s = comm.AllReduce(step_s, zeus::runtime::ReduceOp::kMax); !s) return s;
      const auto duration = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(step_s[0]));
      if (emulator.manual()) {
        // One shared clock: rank 0 moves it; the others wait for that.
        if (comm.rank() == 0) {
          if (auto s = emulator.Advance(duration); !s) return s;
        }
        double barrier[1] = {0.0};
        if (auto s = comm.AllReduce(barrier, zeus::runtime::ReduceOp::kMax); !s) return s;
      } else {
        clock.SleepFor(duration);
      }
      if (optimizer) optimizer->OnStepEnd();
    }
    auto m = monitor.EndWindow(window);
    if (!m) return zeus::Fail(m.error());
    totals.time_s += m->time_s;
    for (const auto& g : m->gpus) {
      if (g.error) std::fprintf(stderr, "zeus-emulated-train: GPU %zu: %s\n", g.index, g.error->message().c_str());
      totals.energy_j += g.energy_j;
    }
    if (optimizer) optimizer->OnEpochEnd();
    totals.epochs = epoch;
    if (after_epoch) {
      zeus::Result<bool> stop = after_epoch(epoch);
      if (!stop) return zeus::Fail(stop.error());
      if (*stop) break;
    }
  }
  if (optimizer) {
    if (auto s = optimizer->OnTrainEnd(); !s) std::fprintf(stderr, "zeus-emulated-train: %s\n", s.error().message().c_str());
  }
  return zeus::OkStatus();
}

// Prints `error: <message>` and returns the exit code for the error.
int Failed(const zeus::Error& error) {
  std::fprintf(stderr, "error: %s\n", error.message().c_str());
  return zeus::ExitCodeFor(error.code());
}

// The emulated GPUs, the emulator's controls and the time line they share,
// and the Monitor on it. Members are destroyed in reverse order: the monitor
// first, the GPUs last.
struct Emulated {
  std::unique_ptr<zeus::device::GpuSet> gpus;
  std::unique_ptr<zeus::emulator::EmulatorControl> control;
  std::unique_ptr<zeus::emulator::EmulatorClock> clock;
  std::unique_ptr<zeus::monitor::Monitor> monitor;
};

// GCC 12 with sanitizers warns that the disengaged std::optional<vector>s of
// a moved MonitorOptions "may be used uninitialized" (a false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
zeus::Result<std::unique_ptr<zeus::monitor::Monitor>> CreateMonitor(const zeus::device::GpuSet* gpus,
                                                                  const zeus::Clock* clock) {
  zeus::monitor::MonitorOptions options;
  options.clock = clock;  // measurement windows on the emulator's time line
  return zeus::monitor::Monitor::Create(gpus, nullptr, std::move(options));
}
#pragma GCC diagnostic pop

// Opens the GPUs of the NVML library in use, which must be the emulator.
zeus::Result<Emulated> OpenEmulated(const Flags& flags) {
  Emulated e;
  auto gpus = zeus::device::OpenGpus();
  if (!gpus) return zeus::Fail(gpus.error());
  e.gpus = std::move(*gpus);
  auto control = zeus::emulator::EmulatorControl::Open(zeus::device::ChooseNvmlLibrary().path);
  if (!control) {
    return zeus::Fail(control.error().code(),
                      fmt::format("{}; zeus-emulated-train needs it: set ZEUS_NVML_LIBRARY to "
                                  "build/lib/libzeus-nvml-emulator.so and ZEUS_EMULATOR_CONFIG to a scenario with a "
                                  "\"workload\" per GPU",
                                  control.error().message()));
  }
  e.control = std::move(*control);
  e.clock = std::make_unique<zeus::emulator::EmulatorClock>(*e.control, flags.time_scale);
  auto monitor = CreateMonitor(e.gpus.get(), e.clock.get());
  if (!monitor) return zeus::Fail(monitor.error());
  e.monitor = std::move(*monitor);
  return e;
}

zeus::runtime::PowerLimitOptimizerOptions OptimizerOptions(const Flags& flags, zeus::runtime::Communicator& comm) {
  zeus::runtime::PowerLimitOptimizerOptions options;
  options.wait_steps = flags.wait_steps;
  options.warmup_steps = flags.warmup_steps;
  options.profile_steps = flags.profile_steps;
  options.power_limit_stride_w = flags.stride_w;
  if (flags.selector == "energy") options.selector = OptimumSelector::Energy();
  if (flags.selector == "time") options.selector = OptimumSelector::Time();
  if (flags.selector == "zeus-cost") options.selector = OptimumSelector::ZeusCost(flags.eta);
  if (flags.selector == "max-slowdown") options.selector = OptimumSelector::MaxSlowdown(flags.max_slowdown);
  if (!flags.profile_path.empty()) options.profile_path = flags.profile_path;
  options.communicator = &comm;
  if (flags.quiet) options.log = [](std::string_view) {};
  options.observer_mode = flags.observe;
  return options;
}

// --bso-server: this run of the recurring job, its batch size from the
// service and what the service decided after the latest epoch.
struct BatchSizeRun {
  std::unique_ptr<zeus::BatchSizeOptimizer> bso;
  zeus::runtime::EpochDecision decision;
  int needed_epochs = 0;  // epochs the run's batch size needs to reach the target (0: never)

  // Reports epoch `epoch`'s metric; true when the service says to stop.
  zeus::Result<bool> AfterEpoch(int epoch) {
    if (auto s = bso->OnEpochEnd(); !s) return zeus::Fail(s.error());
    auto d = bso->OnEvaluate(Metric(epoch, needed_epochs));
    if (!d) return zeus::Fail(d.error());
    decision = *d;
    return d->stop_train;
  }
};

// Registers the job with the service, takes its batch size and begins training.
zeus::Status StartBatchSizeRun(const Flags& flags, const Emulated& emulated, int rank, BatchSizeRun& run) {
  auto convergence = ParseConvergence(flags.convergence);
  if (!convergence) return zeus::Fail(convergence.error());
  zeus::bso::JobSpec job;
  job.job_id = flags.bso_job_id;
  job.job_id_prefix = flags.bso_job_id;
  for (const auto& [batch_size, epochs] : *convergence) job.batch_sizes.push_back(batch_size);
  job.default_batch_size = flags.default_batch_size;
  job.target_metric = kTargetMetric;
  job.max_epochs = flags.epochs;
  job.mab_seed = flags.bso_seed;
  auto created = zeus::BatchSizeOptimizer::Create(*emulated.gpus, *emulated.monitor, flags.bso_server, job, rank);
  if (!created) return zeus::Fail(created.error());
  run.bso = std::move(*created);
  auto batch_size = run.bso->GetBatchSize();
  if (!batch_size) return zeus::Fail(batch_size.error());
  if (auto s = run.bso->OnTrainBegin(); !s) return s;
  run.needed_epochs = convergence->at(*batch_size);
  return zeus::OkStatus();
}

// Trains; nullopt when training ended as planned, else the exit code. With
// --catch-exception a user's exception ends the run with exit code 1 (the
// optimizer's destructor restores the limits on the way out).
std::optional<int> RunTraining(const Flags& flags, const Emulated& e, PowerLimitOptimizer& optimizer,
                               zeus::runtime::Communicator& comm, Totals& totals, const AfterEpoch& after_epoch) {
  auto train = [&] {
    return Train(flags, *e.gpus, *e.monitor, &optimizer, comm, *e.control, *e.clock, totals, after_epoch);
  };
  zeus::Status trained = zeus::OkStatus();
  if (flags.catch_exception) {
    try {
      trained = train();
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "error: training failed: %s\n", ex.what());
      return 1;
    }
  } else {
    trained = train();
  }
  if (!trained) return Failed(trained.error());
  return std::nullopt;
}

// Observer mode: what each selector would have saved against the original limit.
void AddWhatIf(const Flags& flags, zeus::emulated_train::RunReport& report) {
  const PowerLimitOptimizer& o = *report.optimizer;
  if (!flags.observe || o.state() != zeus::runtime::PowerLimitOptimizerState::kDone) return;
  zeus::runtime::PowerLimitWhatIfOptions w;
  w.profile_steps = flags.profile_steps;
  w.steps_per_epoch = flags.steps_per_epoch;
  w.epochs = flags.epochs;
  w.total_gpus = o.total_gpus();
  w.eta = flags.eta;
  w.max_slowdown = flags.max_slowdown;
  const auto& originals = o.original_power_limits_mw();
  if (std::all_of(originals.begin(), originals.end(), [&](auto mw) { return mw == originals.front(); })) {
    w.baseline_power_limit_w = originals.front() / 1000.0;
  }
  auto what_if = zeus::runtime::ComputePowerLimitWhatIf(o.measurements(), w);
  if (what_if) {
    report.what_if = std::move(*what_if);
  } else {
    report.what_if_error = what_if.error();
  }
}

int Run(const Flags& flags, zeus::runtime::Communicator& comm) {
  std::optional<zeus::cli::OutputFile> output;
  if (zeus::Status s = CheckPaths(flags, output); !s) return Failed(s.error());
  auto emulated = OpenEmulated(flags);
  if (!emulated) return Failed(emulated.error());
  const zeus::runtime::PowerLimitOptimizerOptions options = OptimizerOptions(flags, comm);
  auto optimizer = PowerLimitOptimizer::Create(*emulated->gpus, *emulated->monitor, options);
  if (!optimizer) return Failed(optimizer.error());

  BatchSizeRun batch;
  AfterEpoch after_epoch;
  if (!flags.bso_server.empty()) {
    if (zeus::Status s = StartBatchSizeRun(flags, *emulated, comm.rank(), batch); !s) return Failed(s.error());
    after_epoch = [&batch](int epoch) { return batch.AfterEpoch(epoch); };
  }
  Totals totals;
  if (auto failed = RunTraining(flags, *emulated, **optimizer, comm, totals, after_epoch)) return *failed;

  double job[2] = {totals.energy_j, 0.0};
  double slowest[1] = {totals.time_s};
  if (auto s = comm.AllReduce(job, zeus::runtime::ReduceOp::kSum); !s) return 1;
  if (auto s = comm.AllReduce(slowest, zeus::runtime::ReduceOp::kMax); !s) return 1;
  zeus::emulated_train::RunReport report{.optimizer = optimizer->get(),
                                         .selector = options.selector.Describe(),
                                         .observe = flags.observe,
                                         .rank = comm.rank(),
                                         .world_size = comm.world_size(),
                                         .steps = totals.steps,
                                         .epochs = totals.epochs,
                                         .rank_time_s = totals.time_s,
                                         .rank_energy_j = totals.energy_j,
                                         .job_time_s = slowest[0],
                                         .job_energy_j = job[0]};
  AddWhatIf(flags, report);
  if (batch.bso) {
    report.bso = batch.bso.get();
    report.decision = batch.decision;
    report.bso_job_id = flags.bso_job_id;
  }
  return Report(flags.json ? zeus::emulated_train::JsonReport(report) : zeus::emulated_train::TextReport(report),
                output);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"Trains on emulated GPUs with the Zeus power-limit optimizer"};
  using zeus::cli::IntegerFlag;
  app.add_option("--epochs", flags.epochs, fmt::format("epochs, at most {}", kMaxEpochs))
      ->transform(IntegerFlag<int>(1, kMaxEpochs));
  app.add_option("--steps-per-epoch", flags.steps_per_epoch,
                 fmt::format("training steps per epoch; epochs x steps per epoch is at most {}", kMaxTotalSteps))
      ->transform(IntegerFlag<int>(1, static_cast<int>(kMaxTotalSteps)));
  app.add_option("--selector", flags.selector, "how the optimum is chosen: zeus-cost, energy, time or max-slowdown")
      ->check(zeus::cli::OneOf({"zeus-cost", "energy", "time", "max-slowdown"}));
  app.add_option("--eta", flags.eta, "zeus-cost: weight of energy against time, 0..1")
      ->check(zeus::cli::NumberRange(0.0, 1.0));
  app.add_option("--max-slowdown", flags.max_slowdown, "max-slowdown: allowed time factor over the highest limit, >= 1")
      ->check(zeus::cli::NumberAtLeast(1.0));
  app.add_option("--profile-path", flags.profile_path, "profile file: used if it exists, written otherwise");
  app.add_option("--time-scale", flags.time_scale,
                 "wall-clock scenarios: emulated seconds per real second (set it to the scenario's time_scale)")
      ->check(zeus::cli::PositiveNumber());
  app.add_flag("--json", flags.json, "print one JSON object");
  app.add_flag("-q,--quiet", flags.quiet, "no progress lines from the power-limit optimizer on stderr");
  app.add_option("-o,--output", flags.output, "write the report to this file instead of stdout");
  app.add_option("--wait-steps", flags.wait_steps, "optimizer: steps before profiling")->transform(IntegerFlag<int>(0));
  app.add_option("--warmup-steps", flags.warmup_steps, "optimizer: warmup steps per limit")->transform(IntegerFlag<int>(0));
  app.add_option("--profile-steps", flags.profile_steps, "optimizer: measured steps per limit")->transform(IntegerFlag<int>(1));
  app.add_option("--stride-w", flags.stride_w, "optimizer: power-limit stride, W")->check(zeus::cli::PositiveNumber());
  app.add_flag("--observe", flags.observe,
               "observer mode: profile, then restore the original limits instead of applying the optimum, and "
               "report what each selector would save per epoch and over the run (--epochs x --steps-per-epoch)");
  app.add_flag("--mpi", flags.mpi, "one rank per process under mpirun (MPI communicator)");
  app.add_option("--throw-at-step", flags.throw_at_step, "testing: throw an exception at this step (0: never)")
      ->transform(IntegerFlag<int>(0));
  app.add_flag("--catch-exception", flags.catch_exception, "testing: catch that exception in main");
  app.add_option("--pause-at-step", flags.pause_at_step, "testing: stop at this step until a signal comes (0: never)")
      ->transform(IntegerFlag<int>(0));
  app.add_option("--bso-server", flags.bso_server,
                 "take the batch size from this batch-size optimizer service (zeus bso-server) and report to it "
                 "after every epoch; --epochs is then the job's max_epochs");
  app.add_option("--bso-job-id", flags.bso_job_id, "--bso-server: the recurring job's id");
  app.add_option("--convergence", flags.convergence,
                 "--bso-server: BATCH_SIZE:EPOCHS,... the job's batch sizes and the epochs each needs to reach the "
                 "target metric (0: never)");
  app.add_option("--default-batch-size", flags.default_batch_size, "--bso-server: the job's default batch size")
      ->transform(IntegerFlag<int>(1));
  app.add_option("--bso-seed", flags.bso_seed, "--bso-server: the job's mab_seed, >= 0")
      ->transform(IntegerFlag<std::int64_t>(0));
  zeus::cli::RejectFlagValues(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return zeus::cli::HandleParseError(app, e);
  }
  if (auto parsed = ParseConvergence(flags.convergence); !parsed) return zeus::cli::UsageError(parsed.error().message());
  if (static_cast<std::int64_t>(flags.epochs) * flags.steps_per_epoch > kMaxTotalSteps) {
    return zeus::cli::UsageError(fmt::format(
        "--epochs {} x --steps-per-epoch {} = {} steps; at most {} steps per run", flags.epochs,
        flags.steps_per_epoch, static_cast<std::int64_t>(flags.epochs) * flags.steps_per_epoch, kMaxTotalSteps));
  }

  if (!flags.mpi) {
    zeus::runtime::SingleProcessCommunicator single;
    return Run(flags, single);
  }
#ifdef ZEUS_HAVE_MPI
  MPI_Init(&argc, &argv);
  int rc = 1;
  {
    auto comm = zeus::runtime::MpiCommunicator::Create(MPI_COMM_WORLD);
    if (!comm) {
      std::fprintf(stderr, "error: %s\n", comm.error().message().c_str());
    } else {
      rc = Run(flags, **comm);
    }
  }
  MPI_Finalize();
  return rc;
#else
  std::fprintf(stderr, "error: --mpi: this zeus-emulated-train was built without MPI (install libopenmpi-dev)\n");
  return 2;
#endif
}
