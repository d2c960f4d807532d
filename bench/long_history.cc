// Copyright 2026 The Zeus C++ Authors.
//
// The cost of one observation against the length of the history (issue 15):
//
//   1. `Simulate` of one job (librispeech on the V100 trace, seed 1, the Zeus
//      policy, tries not kept, as `zeus simulate` without --output) for
//      10^3, 10^4, 10^5 and 10^6 recurrences: wall time and time per
//      recurrence, on one thread.
//   2. The batch-size service on SQLite (a temporary file), one job with
//      window_size 0: round trips (GET /jobs/batch_size, then a final
//      POST /report) from one HTTP client on loopback to an in-process
//      server, after 10^2, 10^4 and 10^5 stored trials. The trials are
//      stored beforehand through the service's API in process (8 threads,
//      so SQLite's group commit shares commits), not through HTTP.
//
//   zeus_long_history [round trips per measure = 500] [max recurrences = 1000000] [max trials = 100000]
//
// (Not named *_bench: scripts/bench passes Google Benchmark flags to those.)

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bso/service.h"
#include "zeus/bso/client.h"
#include "zeus/bso/server.h"
#include "zeus/simulator/job_trace.h"
#include "zeus/simulator/simulator.h"
#include "zeus/simulator/trace.h"
#include "zeus/simulator/workload.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

[[noreturn]] void Die(const std::string& what, const zeus::Error& e) {
  std::fprintf(stderr, "error: %s: %s\n", what.c_str(), e.message().c_str());
  std::exit(1);
}

void BenchSimulator(long max_recurrences) {
  const std::string dir = std::string(ZEUS_SHARED_DIR) + "/traces/zeus-nsdi23";
  auto train = zeus::simulator::LoadTrainTrace(zeus::simulator::TrainTracePath(dir));
  if (!train) Die("train trace", train.error());
  auto power = zeus::simulator::LoadPowerTrace(zeus::simulator::PowerTracePath(dir, "v100"), "v100");
  if (!power) Die("power trace", power.error());
  auto workload = zeus::simulator::ResolveWorkload("librispeech", {});
  if (!workload) Die("workload", workload.error());
  auto job = zeus::simulator::BuildJobTrace(*train, *power, *workload);
  if (!job) Die("job", job.error());
  fmt::print("Simulator: librispeech on v100, seed 1, Zeus policy, tries not kept, one thread\n");
  fmt::print("{:>12} {:>10} {:>16} {:>14}\n", "recurrences", "wall (s)", "per recurrence", "kept (MB)");
  for (long r = 1000; r <= max_recurrences; r *= 10) {
    zeus::simulator::SimulationOptions options;
    options.seed = 1;
    options.num_recurrences = static_cast<int>(r);
    options.record_tries = false;
    const auto start = Clock::now();
    auto result = zeus::simulator::Simulate(*job, options);
    const double s = Seconds(start);
    if (!result) Die("simulate", result.error());
    const std::size_t kept_bytes = result->recurrences.capacity() * sizeof(zeus::simulator::RecurrenceRecord);
    const double kept_mb = static_cast<double>(kept_bytes) / 1e6;
    fmt::print("{:>12} {:>10.3f} {:>13.2f} us {:>14.1f}\n", r, s, 1e6 * s / static_cast<double>(r), kept_mb);
    std::fflush(stdout);
  }
}

zeus::bso::JobSpec Job() {
  zeus::bso::JobSpec s;
  s.job_id = "bench-long-history";
  s.job_id_prefix = "bench";
  s.batch_sizes = {16, 32, 64, 128, 256};
  s.default_batch_size = 64;
  s.beta_knob.reset();
  s.window_size = 0;
  s.mab_seed = 1;
  s.max_power = 300;
  s.number_of_gpus = 1;
  s.gpu_model = "bench";
  return s;
}

// A run's outcome: 16 never converges; the others cost more the further
// they are from 128, with a little noise so the arms keep some variance.
zeus::bso::TrainingResult Outcome(const zeus::bso::TrialId& t, std::uint64_t n) {
  const double distance = t.batch_size >= 128 ? t.batch_size / 128.0 : 128.0 / t.batch_size;
  const double time = 100.0 * distance * (1.0 + 0.02 * static_cast<double>((n * 2654435761U) % 97) / 97.0);
  return {t.job_id, t.batch_size, t.trial_number, time, 250.0 * time, t.batch_size == 16 ? 0.1 : 0.9, 10, true};
}

// Stores trials through the service (in process) until the job has `target`.
void Populate(zeus::bso::BsoService& service, const std::string& id, std::atomic<long>& trials, long target) {
  std::vector<std::thread> workers;
  for (int w = 0; w < 8; ++w) {
    workers.emplace_back([&] {
      while (trials.load() < target) {
        auto t = service.NextBatchSize(id);
        if (!t) Die("populate: batch size", t.error());
        const long n = ++trials;
        if (auto r = service.Report(Outcome(*t, static_cast<std::uint64_t>(n))); !r) Die("populate: report", r.error());
      }
    });
  }
  for (std::thread& t : workers) t.join();
}

void BenchService(int round_trips, long max_trials) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("zeus-long-history-bench-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string database = "sqlite:///" + (dir / "bso.db").string();
  auto service = zeus::bso::BsoService::Open(database);
  if (!service) Die("service", service.error());
  zeus::bso::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.database_url = database;
  options.log_level = "warn";
  options.access_log = false;
  auto server = zeus::bso::BsoServer::Start(options);
  if (!server) Die("server", server.error());
  auto client = zeus::bso::BsoClient::Create((*server)->url());
  if (!client) Die("client", client.error());
  const zeus::bso::JobSpec spec = Job();
  if (auto r = (*client)->RegisterJob(spec); !r) Die("register", r.error());

  fmt::print("\nService: SQLite, one job, window_size 0, one HTTP client on loopback, {} round trips per measure\n",
             round_trips);
  fmt::print("{:>14} {:>12} {:>18} {:>10} {:>10} {:>20}\n", "stored trials", "populate (s)", "round trips/s",
             "p50 (ms)", "p99 (ms)", "largest arm");
  std::atomic<long> trials{0};
  for (long target : {100L, 10'000L, 100'000L}) {
    if (target > max_trials) break;
    const auto populate_start = Clock::now();
    Populate(**service, *spec.job_id, trials, target);
    const double populate_s = Seconds(populate_start);
    std::vector<double> latencies;
    const auto start = Clock::now();
    for (int i = 0; i < round_trips; ++i) {
      const auto t0 = Clock::now();
      auto t = (*client)->GetBatchSize(*spec.job_id);
      if (!t) Die("round trip: batch size", t.error());
      if (auto r = (*client)->Report(Outcome(*t, static_cast<std::uint64_t>(++trials))); !r) {
        Die("round trip: report", r.error());
      }
      latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    const double elapsed = Seconds(start);
    std::sort(latencies.begin(), latencies.end());
    auto arms = (*service)->Arms(*spec.job_id);
    if (!arms) Die("arms", arms.error());
    int largest = 0;
    for (const auto& a : *arms) largest = std::max(largest, a.num_observations);
    fmt::print("{:>14} {:>12.1f} {:>18.0f} {:>10.3f} {:>10.3f} {:>20}\n", target, populate_s,
               static_cast<double>(round_trips) / elapsed, latencies[latencies.size() / 2],
               latencies[latencies.size() * 99 / 100], largest);
    std::fflush(stdout);
  }
  client->reset();
  server->reset();
  service->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  const int round_trips = argc > 1 ? std::atoi(argv[1]) : 500;
  const long max_recurrences = argc > 2 ? std::atol(argv[2]) : 1'000'000;
  const long max_trials = argc > 3 ? std::atol(argv[3]) : 100'000;
  if (round_trips < 1 || max_recurrences < 0 || max_trials < 0) {
    std::fprintf(stderr,
                 "usage: zeus_long_history [round trips per measure >= 1] [max recurrences] [max stored trials]\n");
    return 2;
  }
  BenchSimulator(max_recurrences);
  BenchService(round_trips, max_trials);
  return 0;
}
