// Copyright 2026 The Zeus C++ Authors.
//
// Round trips through the batch-size service on loopback: each one is
// GET /jobs/batch_size then a final POST /report, what one recurrence of a
// job costs the service. First times the service alone (no HTTP) from 1
// and 16 threads, then starts an in-process server (its default worker
// threads, or $ZEUS_BENCH_SERVER_THREADS) and, for 1 and 16 client
// connections, prints throughput and latency percentiles; on SQLite (a
// temporary file) and, when a URL is given, on PostgreSQL.
// ZEUS_BENCH_NO_HTTP=1 skips the HTTP runs. Each connection drives its own job and starts a new job
// every 200 recurrences (a long-running recurring job), so the measure is
// the steady state of many jobs, not one ever-growing history.
//
//   zeus_bso_round_trip [seconds per run = 5] [postgresql://...]
//   ZEUS_BENCH_POSTGRES_URL=postgresql://... zeus_bso_round_trip

#include <pthread.h>
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

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double round_trips_per_s = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  std::size_t errors = 0;
};

zeus::bso::JobSpec Job(const std::string& id) {
  zeus::bso::JobSpec s;
  s.job_id = id;
  s.job_id_prefix = "bench";
  s.batch_sizes = {16, 32, 64, 128, 256};
  s.default_batch_size = 64;
  s.mab_seed = 1;
  s.max_power = 300;
  s.number_of_gpus = 1;
  s.gpu_model = "bench";
  return s;
}

Figures Run(const std::string& url, int connections, double seconds, const std::string& tag) {
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(connections));
  std::atomic<std::size_t> errors{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      pthread_setname_np(pthread_self(), "bench-client");
      auto client = std::move(*zeus::bso::BsoClient::Create(url));
      std::vector<double>& mine = latencies[static_cast<std::size_t>(c)];
      for (int job = 0; !stop.load(); ++job) {
        const std::string id = fmt::format("bench-{}-{}-{}", tag, c, job);
        if (!client->RegisterJob(Job(id))) {
          errors++;
          return;
        }
        for (int r = 0; r < 200 && !stop.load(); ++r) {
          const auto start = Clock::now();
          zeus::Result<zeus::bso::TrialId> t = client->GetBatchSize(id);
          if (!t) {
            errors++;
            continue;
          }
          const double time = 100.0 + (t->batch_size % 7) + r % 3;
          zeus::bso::TrainingResult result{id, t->batch_size, t->trial_number, time, 250.0 * time,
                                           t->batch_size == 16 ? 0.1 : 0.9, 10, true};
          if (!client->Report(result)) {
            errors++;
            continue;
          }
          mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        }
      }
    });
  }
  const auto begin = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  std::vector<double> all;
  for (const auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Figures f;
  f.errors = errors;
  if (all.empty()) return f;
  f.round_trips_per_s = static_cast<double>(all.size()) / elapsed;
  f.p50_ms = all[all.size() / 2];
  f.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  return f;
}

// The same round trips straight on the service, no HTTP: what the database
// transactions cost alone, from `threads` threads (each its own jobs).
void BenchInProcess(const std::string& name, const std::string& database, double seconds, int threads) {
  auto service = zeus::bso::BsoService::Open(database);
  if (!service) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), service.error().message().c_str());
    std::exit(1);
  }
  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(threads));
  const auto begin = Clock::now();
  const auto end = begin + std::chrono::duration<double>(seconds);
  std::vector<std::thread> workers;
  for (int w = 0; w < threads; ++w) {
    workers.emplace_back([&, w] {
      std::vector<double>& latencies = per_thread[static_cast<std::size_t>(w)];
      for (int job = 0; Clock::now() < end; ++job) {
        const std::string id = fmt::format("bench-{}-direct{}-{}-{}", name, threads, w, job);
        if (!(*service)->RegisterJob(Job(id))) std::exit(1);
        for (int r = 0; r < 200 && Clock::now() < end; ++r) {
          const auto start = Clock::now();
          zeus::Result<zeus::bso::TrialId> t = (*service)->NextBatchSize(id);
          if (!t) std::exit(1);
          const double time = 100.0 + (t->batch_size % 7) + r % 3;
          if (!(*service)->Report({id, t->batch_size, t->trial_number, time, 250.0 * time,
                                   t->batch_size == 16 ? 0.1 : 0.9, 10, true})) {
            std::exit(1);
          }
          latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        }
      }
    });
  }
  for (std::thread& t : workers) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  std::vector<double> latencies;
  for (const auto& v : per_thread) latencies.insert(latencies.end(), v.begin(), v.end());
  std::sort(latencies.begin(), latencies.end());
  const zeus::bso::TransactionStats stats = (*service)->stats();
  fmt::print("{:<10} in process, {:>2} thread(s), no HTTP: {:>7.0f} round trips/s   p50 {:>6.2f} ms   p99 {:>6.2f} ms"
             "   {:.1f} operations per commit\n",
             name, threads, static_cast<double>(latencies.size()) / elapsed, latencies[latencies.size() / 2],
             latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)],
             static_cast<double>(stats.operations) / static_cast<double>(std::max<std::uint64_t>(1, stats.transactions)));
  std::fflush(stdout);
}

void Bench(const std::string& name, const std::string& database, double seconds) {
  BenchInProcess(name, database, seconds, 1);
  BenchInProcess(name, database, seconds, 16);
  if (std::getenv("ZEUS_BENCH_NO_HTTP") != nullptr) return;
  zeus::bso::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.database_url = database;
  // The server's default unless ZEUS_BENCH_SERVER_THREADS says otherwise.
  options.threads = std::getenv("ZEUS_BENCH_SERVER_THREADS") != nullptr
                        ? std::atoi(std::getenv("ZEUS_BENCH_SERVER_THREADS"))
                        : 0;
  options.log_level = "warn";
  options.access_log = false;
  auto server = zeus::bso::BsoServer::Start(options);
  if (!server) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), server.error().message().c_str());
    std::exit(1);
  }
  for (int connections : {1, 16}) {
    const Figures f = Run((*server)->url(), connections, seconds, fmt::format("{}{}", name, connections));
    fmt::print("{:<10} {:>2} connection(s): {:>7.0f} round trips/s   p50 {:>6.2f} ms   p99 {:>6.2f} ms   errors {}\n",
               name, connections, f.round_trips_per_s, f.p50_ms, f.p99_ms, f.errors);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  std::string postgres = argc > 2 ? argv[2] : "";
  if (postgres.empty() && std::getenv("ZEUS_BENCH_POSTGRES_URL") != nullptr) {
    postgres = std::getenv("ZEUS_BENCH_POSTGRES_URL");
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("zeus-bso-bench-{}", ::getpid());
  std::filesystem::create_directories(dir);
  fmt::print("Batch-size service round trips (GET /jobs/batch_size + POST /report) on loopback, {} s per run,\n"
             "server with {} HTTP threads, clients in the same process; {} cores.\n",
             seconds,
             std::getenv("ZEUS_BENCH_SERVER_THREADS") != nullptr ? std::atoi(std::getenv("ZEUS_BENCH_SERVER_THREADS"))
                                                                 : zeus::bso::DefaultWorkerThreads(),
             std::thread::hardware_concurrency());
  Bench("sqlite", "sqlite:///" + (dir / "bench.db").string(), seconds);
  if (!postgres.empty()) {
    Bench("postgresql", postgres, seconds);
  } else {
    fmt::print("postgresql: skipped (pass a URL or set ZEUS_BENCH_POSTGRES_URL)\n");
  }
  std::filesystem::remove_all(dir);
  return 0;
}
