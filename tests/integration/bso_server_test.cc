// Copyright 2026 The Zeus C++ Authors.
//
// `zeus bso-server` as a real process, on SQLite and on a real PostgreSQL 15
// (ZEUS_TEST_POSTGRES_URL, started by `make test`): many jobs over several
// servers, SIGKILL in the middle of a load, graceful SIGTERM, bad flags, and
// `zeus simulate --via-server` against the in-process simulator.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "http/http.h"
#include "bso/service.h"
#include "bso/sql/sql_connection.h"
#include "testing/ports.h"
#include "testing/postgres.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "zeus/bso/client.h"
#include "zeus/optimizer/batch_size_optimizer.h"
#include "zeus/optimizer/cost.h"

namespace zeus::bso {

// The HTTP layer's types, used unqualified here.
using http::FindHeader;
using http::HttpClient;
using http::HttpClientOptions;
using http::HttpRequest;
using http::HttpResponse;
using http::HttpServer;
using http::HttpServerOptions;
namespace {

using ::testing::HasSubstr;
using zeus::testing::BackgroundProcess;
using zeus::testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Sends `request` on a new connection to 127.0.0.1:port and returns all
// that comes back until the server closes (it must: a refused connection).
std::string RawExchange(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    timeval timeout{30, 0};  // a generous deadline, should the server never close
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    char chunk[4096];
    for (ssize_t n; (n = ::recv(fd, chunk, sizeof(chunk), 0)) > 0;) out.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// One `zeus bso-server` process.
class Server {
 public:
  Server(const TempDir& dir, const std::string& name, const std::string& database, std::uint16_t port = 0,
         const std::vector<std::string>& extra_args = {})
      : ready_(dir.File(name + ".ready")), err_(dir.File(name + ".stderr")) {
    std::filesystem::remove(ready_);
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "bso-server", "--listen", fmt::format("127.0.0.1:{}", port),
                                     "--database", database, "--ready-file", ready_, "--threads", "2",
                                     "--no-access-log"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    process_ = std::make_unique<BackgroundProcess>(argv, dir.File(name + ".stdout"), err_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(ready_)) {
      if (!process_->Running() || std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "bso-server did not start: " << ReadFile(err_);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    url_ = ReadFile(ready_);
    while (!url_.empty() && url_.back() == '\n') url_.pop_back();
  }
  const std::string& url() const { return url_; }
  std::uint16_t port() const { return static_cast<std::uint16_t>(std::stoi(url_.substr(url_.rfind(':') + 1))); }
  BackgroundProcess& process() { return *process_; }
  std::string log() const { return ReadFile(err_); }

 private:
  std::string ready_;
  std::string err_;
  std::string url_;
  std::unique_ptr<BackgroundProcess> process_;
};

enum class Db { kSqlite, kPostgres };

// Readable parameters: test names .../Sqlite, and "GetParam() = Sqlite".
std::string DbName(const ::testing::TestParamInfo<Db>& param) {
  return param.param == Db::kSqlite ? "Sqlite" : "Postgres";
}
void PrintTo(Db db, std::ostream* os) { *os << (db == Db::kSqlite ? "Sqlite" : "Postgres"); }

class BsoServerTest : public ::testing::TestWithParam<Db> {
 protected:
  void SetUp() override {
    Result<std::optional<std::string>> url = zeus::testing::TestDatabaseUrl(GetParam() == Db::kPostgres, dir_, &pg_);
    ASSERT_TRUE(url) << url.error().message();
    if (!*url) GTEST_SKIP() << "ZEUS_TEST_POSTGRES_URL is not set (make test starts a PostgreSQL server)";
    database_ = **url;
  }

  static JobSpec Spec(const std::string& id, std::int64_t seed) {
    JobSpec s;
    s.job_id = id;
    s.job_id_prefix = "it";
    s.batch_sizes = {16, 32, 64, 128, 256};
    s.default_batch_size = 64;
    s.beta_knob.reset();
    s.target_metric = 0.5;
    s.max_epochs = 20;
    s.mab_seed = seed;
    s.max_power = 250;
    s.number_of_gpus = 1;
    s.gpu_model = "Tesla V100";
    return s;
  }

  // A deterministic training run: batch size 16 never converges; the cost
  // grows with the distance from 128, plus per-recurrence noise.
  static TrainingResult Run(const TrialId& t, int recurrence) {
    const double distance = std::abs(std::log2(t.batch_size / 128.0));
    const double time = 10.0 * (1.0 + distance) * (1.0 + 0.01 * ((recurrence * 7 + t.batch_size) % 11));
    return TrainingResult{t.job_id, t.batch_size, t.trial_number, time, 200.0 * time,
                          t.batch_size == 16 ? 0.1 : 0.9, 5, true};
  }

  // Every stored trial of a sequential job must be exactly what the
  // in-process policy decides for the same observations and seed.
  static void ExpectPolicyHistory(const JobSpec& spec, const std::vector<TrialRecord>& trials) {
    optimizer::BatchSizeOptimizerOptions options;
    options.seed = static_cast<std::uint64_t>(*spec.mab_seed);
    Result<optimizer::BatchSizeOptimizer> local =
        optimizer::BatchSizeOptimizer::Create(spec.batch_sizes, spec.default_batch_size, options);
    ASSERT_TRUE(local);
    for (const TrialRecord& t : trials) {
      if (t.status != TrialStatus::kSucceeded) continue;
      Result<int> expected = local->Predict();
      ASSERT_TRUE(expected);
      ASSERT_EQ(t.batch_size, *expected) << *spec.job_id << " trial " << t.trial_number;
      ASSERT_TRUE(local->Observe(t.batch_size, optimizer::ZeusCost(*t.energy, *t.time, 0.5, spec.max_power),
                                 *t.converged));
    }
  }

  TempDir dir_;
  std::unique_ptr<zeus::testing::ScopedPostgresDatabase> pg_;
  std::string database_;
};

TEST_P(BsoServerTest, FiftyJobsOverThreeServers) {
  Server a(dir_, "a", database_), b(dir_, "b", database_), c(dir_, "c", database_);
  ASSERT_FALSE(a.url().empty() || b.url().empty() || c.url().empty());
  const std::vector<std::string> urls = {a.url(), b.url(), c.url()};
  constexpr int kJobs = 50;
  constexpr int kRecurrences = 20;
  std::atomic<int> failures{0};
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int j = 0; j < kJobs; ++j) {
    threads.emplace_back([&, j] {
      std::vector<std::unique_ptr<BsoClient>> clients;
      for (const std::string& url : urls) clients.push_back(std::move(*BsoClient::Create(url)));
      auto fail = [&](const std::string& what) {
        failures++;
        std::lock_guard lock(mu);
        errors.push_back(what);
      };
      const JobSpec spec = Spec(fmt::format("it-{}", j), 100 + j % 5);
      if (!clients[static_cast<std::size_t>(j) % 3]->RegisterJob(spec)) return fail("register");
      for (int r = 0; r < kRecurrences; ++r) {
        BsoClient& client = *clients[static_cast<std::size_t>(j + r) % 3];
        Result<TrialId> t = client.GetBatchSize(*spec.job_id);
        if (!t) return fail(t.error().message());
        Result<ReportResponse> report = clients[static_cast<std::size_t>(j + r + 1) % 3]->Report(Run(*t, r));
        if (!report) return fail(report.error().message());
        if (!report->stop_train) return fail("a final report did not end the trial");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(failures.load(), 0) << fmt::format("{}", fmt::join(errors, "\n"));

  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service);
  for (int j = 0; j < kJobs; ++j) {
    const JobSpec spec = Spec(fmt::format("it-{}", j), 100 + j % 5);
    Result<std::vector<TrialRecord>> trials = (*service)->Trials(*spec.job_id);
    ASSERT_TRUE(trials);
    ASSERT_EQ(trials->size(), static_cast<std::size_t>(kRecurrences)) << *spec.job_id;  // none lost or duplicated
    for (int i = 0; i < kRecurrences; ++i) {
      EXPECT_EQ((*trials)[static_cast<std::size_t>(i)].trial_number, i + 1);
      EXPECT_EQ((*trials)[static_cast<std::size_t>(i)].status, TrialStatus::kSucceeded);
    }
    ExpectPolicyHistory(spec, *trials);
  }
}

// Several clients of one job at once, over three servers: explorations are
// serialised across processes (the others get Concurrent trials), and no
// trial number is handed out twice.
TEST_P(BsoServerTest, OneJobManyClientsOverThreeServers) {
  Server a(dir_, "a", database_), b(dir_, "b", database_), c(dir_, "c", database_);
  const std::vector<std::string> urls = {a.url(), b.url(), c.url()};
  ASSERT_TRUE((*BsoClient::Create(urls[0]))->RegisterJob(Spec("it-shared", 1)));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < 6; ++w) {
    threads.emplace_back([&, w] {
      auto client = std::move(*BsoClient::Create(urls[static_cast<std::size_t>(w) % 3]));
      for (int r = 0; r < 10; ++r) {
        Result<TrialId> t = client->GetBatchSize("it-shared");
        if (!t || !client->Report(Run(*t, r))) failures++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service);
  Result<std::vector<TrialRecord>> trials = (*service)->Trials("it-shared");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 60u);
  std::set<int> numbers;
  int explorations = 0;
  for (const TrialRecord& t : *trials) {
    numbers.insert(t.trial_number);
    EXPECT_EQ(t.status, TrialStatus::kSucceeded);
    if (t.type == TrialType::kExploration) ++explorations;
  }
  EXPECT_EQ(numbers.size(), 60u);
  EXPECT_EQ(*numbers.rbegin(), 60);
  // Pruning 5 sizes from 64 (16 never converges): 5 explorations, then 4 from 128.
  EXPECT_EQ(explorations, 9);
  // Explorations never overlapped: each ended before the next one started.
  std::optional<std::int64_t> last_end;
  for (const TrialRecord& t : *trials) {
    if (t.type != TrialType::kExploration) continue;
    if (last_end) {
      EXPECT_GE(t.start_us, *last_end) << "trial " << t.trial_number;
    }
    last_end = t.end_us;
  }
}

TEST_P(BsoServerTest, SigkillMidLoadLosesNoAcknowledgedReport) {
  auto server = std::make_unique<Server>(dir_, "first", database_);
  ASSERT_FALSE(server->url().empty());
  const std::string url = server->url();
  const std::uint16_t port = server->port();
  constexpr int kClients = 4;
  // Pruning takes 9 runs, so the kill lands while jobs update their arms.
  constexpr int kRecurrences = 25;
  std::mutex mu;
  std::map<std::pair<std::string, int>, TrainingResult> acknowledged;
  std::condition_variable acknowledged_more;
  // Clients that reach kHoldAt acknowledged runs wait here until the kill,
  // so that none has finished its load when it lands.
  constexpr int kHoldAt = 14;
  bool killed = false;  // guarded by mu
  std::atomic<int> done{0};
  std::atomic<int> completed{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kClients; ++w) {
    threads.emplace_back([&, w] {
      ClientOptions options;
      options.max_attempts = 40;
      options.initial_backoff = std::chrono::milliseconds(50);
      options.max_backoff = std::chrono::milliseconds(500);
      options.request_timeout = std::chrono::milliseconds(3000);
      auto client = std::move(*BsoClient::Create(url, options));
      const JobSpec spec = Spec(fmt::format("it-crash-{}", w), w);
      Result<JobSpec> registered = client->RegisterJob(spec);
      for (int i = 0; !registered && i < 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        registered = client->RegisterJob(spec);
      }
      if (!registered) {
        done++;
        return;
      }
      int finished = 0;
      for (int attempt = 0; finished < kRecurrences && attempt < 200; ++attempt) {
        Result<TrialId> t = client->GetBatchSize(*spec.job_id);
        if (!t) continue;  // not retried (not idempotent): ask again
        const TrainingResult result = Run(*t, finished);
        Result<ReportResponse> r = client->Report(result);
        if (!r) continue;
        std::unique_lock lock(mu);
        acknowledged[{t->job_id, t->trial_number}] = result;
        ++finished;
        acknowledged_more.notify_all();
        if (finished == kHoldAt) acknowledged_more.wait(lock, [&] { return killed; });
      }
      if (finished == kRecurrences) completed++;
      done++;
    });
  }
  // Kill once the load is under way (10 acknowledged reports per client on
  // average: most jobs are past pruning) and before any client is done (each
  // waits at kHoldAt at the latest), so every client has work left that must
  // resume after it.
  {
    std::unique_lock lock(mu);
    const bool loaded = acknowledged_more.wait_for(lock, std::chrono::seconds(120), [&] {
      return acknowledged.size() >= static_cast<std::size_t>(kClients * 10) || done.load() > 0;
    });
    server->process().Signal(SIGKILL);
    killed = true;
    acknowledged_more.notify_all();
    EXPECT_TRUE(loaded) << "no load after 120 s";
  }
  EXPECT_EQ(done.load(), 0) << "a client gave up before the kill";
  EXPECT_EQ(server->process().Wait(), 128 + SIGKILL);
  Server restarted(dir_, "second", database_, port);
  ASSERT_EQ(restarted.url(), url);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(completed.load(), kClients) << "clients did not resume after the restart";

  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service);
  ASSERT_GE(acknowledged.size(), static_cast<std::size_t>(kClients * kRecurrences));
  for (const auto& [key, result] : acknowledged) {
    Result<std::vector<TrialRecord>> trials = (*service)->Trials(key.first);
    ASSERT_TRUE(trials);
    const auto it = std::find_if(trials->begin(), trials->end(),
                                 [&](const TrialRecord& t) { return t.trial_number == key.second; });
    ASSERT_NE(it, trials->end()) << key.first << " trial " << key.second;
    EXPECT_EQ(it->status, TrialStatus::kSucceeded);
    EXPECT_EQ(it->time, result.time);
    EXPECT_EQ(it->energy, result.energy);
  }
  // Each arm's stored statistics (posterior and moments, updated in the
  // report's transaction) equal a refit from every stored trial: the crash
  // left none out of step. A job whose exploration was issued but never
  // answered when the server died (the client asked again) stays in pruning
  // until the exploration timeout, so it has no arms yet; the others do.
  int jobs_with_arms = 0;
  for (int w = 0; w < kClients; ++w) {
    const JobSpec spec = Spec(fmt::format("it-crash-{}", w), w);
    Result<std::vector<TrialRecord>> trials = (*service)->Trials(*spec.job_id);
    Result<std::vector<ArmRecord>> arms = (*service)->Arms(*spec.job_id);
    ASSERT_TRUE(trials && arms);
    if (!arms->empty()) ++jobs_with_arms;
    for (const ArmRecord& arm : *arms) {
      SCOPED_TRACE(fmt::format("{} arm {}", *spec.job_id, arm.batch_size));
      std::vector<double> rewards;
      for (const TrialRecord& t : *trials) {
        if (t.batch_size == arm.batch_size && t.status == TrialStatus::kSucceeded) {
          rewards.push_back(-optimizer::ZeusCost(*t.energy, *t.time, spec.eta_knob, spec.max_power));
        }
      }
      const optimizer::ArmPosterior fit = optimizer::FitArm(arm.batch_size, rewards, {});
      const optimizer::RewardMoments moments = optimizer::MomentsOf(rewards);
      EXPECT_EQ(arm.num_observations, static_cast<int>(rewards.size()));
      EXPECT_EQ(arm.mean, fit.mean);
      EXPECT_EQ(arm.precision, fit.precision);
      EXPECT_EQ(arm.reward_mean, moments.mean);
      EXPECT_EQ(arm.reward_m2, moments.m2);
    }
  }
  EXPECT_GT(jobs_with_arms, 0) << "no job reached the bandit: the statistics were never compared";
}

// A client that dies mid-exploration (SIGKILL: no exit hook runs) never
// reports; with --exploration-timeout the job's next request fails that
// exploration and explores the same batch size again. Time is moved rather
// than waited for: the orphan's dispatch is moved two timeouts into the past
// in the database, which is all the server compares with its clock.
TEST_P(BsoServerTest, AnExplorationWhoseClientDiedTimesOut) {
  Server server(dir_, "s", database_, 0, {"--exploration-timeout", "3600"});
  ASSERT_FALSE(server.url().empty());
  auto client = std::move(*BsoClient::Create(server.url()));
  ASSERT_TRUE(client->RegisterJob(Spec("it-orphan", 1)));
  Result<TrialId> orphan = client->GetBatchSize("it-orphan");
  ASSERT_TRUE(orphan) << orphan.error().message();
  ASSERT_EQ(orphan->type, TrialType::kExploration);
  // Within the timeout the exploration still runs: the next run gets a
  // concurrent trial.
  Result<TrialId> concurrent = client->GetBatchSize("it-orphan");
  ASSERT_TRUE(concurrent) << concurrent.error().message();
  EXPECT_EQ(concurrent->type, TrialType::kConcurrent);

  Result<std::unique_ptr<SqlConnection>> db = OpenSqlConnection(database_);
  ASSERT_TRUE(db) << db.error().message();
  const std::vector<SqlValue> params = {std::int64_t{2 * 3600 * 1'000'000LL}, orphan->job_id,
                                        std::int64_t{orphan->trial_number}};
  Result<std::int64_t> moved = (*db)->Execute(
      "UPDATE bso_trial SET start_us = start_us - $1 WHERE job_id = $2 AND trial_number = $3", params);
  ASSERT_TRUE(moved) << moved.error().message();
  ASSERT_EQ(*moved, 1);

  Result<TrialId> retry = client->GetBatchSize("it-orphan");
  ASSERT_TRUE(retry) << retry.error().message();
  EXPECT_EQ(retry->type, TrialType::kExploration);
  EXPECT_EQ(retry->batch_size, orphan->batch_size);
  EXPECT_EQ(retry->trial_number, concurrent->trial_number + 1);
  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service) << service.error().message();
  Result<std::vector<TrialRecord>> trials = (*service)->Trials("it-orphan");
  ASSERT_TRUE(trials && trials->size() == 3u);
  EXPECT_EQ((*trials)[0].status, TrialStatus::kFailed) << "the orphan";
  EXPECT_THAT(server.log(), HasSubstr(R"("exploration_timeout_s":3600)"));
}

// zeus-emulated-train as a recurring job: each process is one run of the
// job, on an emulated GPU with the power-limit optimizer, taking its batch
// size from the server through zeus::BatchSizeOptimizer. The emulator's
// manual clock makes every run's time and energy exact, so the whole history
// is the policy's.
class RecurringTrainingTest : public BsoServerTest {
 protected:
  void SetUp() override {
    BsoServerTest::SetUp();
    if (IsSkipped()) return;
    nlohmann::json gpu = {
        {"name", "Tesla V100-SXM2-32GB"}, {"architecture", "volta"},  {"min_power_limit_w", 100},
        {"max_power_limit_w", 300},       {"default_power_limit_w", 300}, {"energy_counter", true},
        {"workload",
         {{"power_limits_w", {100, 150, 200, 250, 300}},
          {"power_w", {100, 150, 200, 240, 260}},
          {"iteration_time_s", {2.0, 1.4, 1.1, 1.0, 0.98}}}}};
    nlohmann::json scenario = {{"clock", "manual"}, {"state_file", dir_.File("gpu-state")}, {"gpus", {gpu}}};
    scenario_ = dir_.Write("scenario.json", scenario.dump());
  }

  std::vector<std::string> Args(const std::string& url, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {ZEUS_TEST_TRAIN_PATH, "--bso-server", url, "--bso-job-id", "it-train",
                                     "--default-batch-size", "128", "--epochs", "6", "--steps-per-epoch", "20",
                                     "--warmup-steps", "2", "--profile-steps", "3", "--stride-w", "50", "--json"};
    if (std::find(extra.begin(), extra.end(), "--convergence") == extra.end()) {
      args.insert(args.end(), {"--convergence", "32:5,64:3,128:2,256:4,512:0"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"ZEUS_NVML_LIBRARY", ZEUS_TEST_EMULATOR_PATH},
            {"ZEUS_EMULATOR_CONFIG", scenario_},
            {"CUDA_VISIBLE_DEVICES", std::nullopt}};
  }

  // The job as zeus-emulated-train registers it.
  static JobSpec TrainSpec() {
    JobSpec s;
    s.job_id = "it-train";
    s.job_id_prefix = "it-train";
    s.batch_sizes = {32, 64, 128, 256, 512};
    s.default_batch_size = 128;
    s.target_metric = 0.9;
    s.max_epochs = 6;
    s.mab_seed = 1;
    s.max_power = 300;
    s.number_of_gpus = 1;
    s.gpu_model = "Tesla V100-SXM2-32GB";
    return s;
  }

  std::string scenario_;
};

TEST_P(RecurringTrainingTest, RunsLearnTheCheapestBatchSize) {
  Server server(dir_, "s", database_);
  ASSERT_FALSE(server.url().empty());
  const std::map<int, int> epochs_needed = {{32, 5}, {64, 3}, {128, 2}, {256, 4}, {512, 0}};
  std::vector<int> chosen;
  for (int run = 1; run <= 14; ++run) {
    zeus::testing::ProcessResult r = zeus::testing::RunProcess(Args(server.url()), Env());
    ASSERT_EQ(r.exit_code, 0) << "run " << run << ": " << r.err;
    const nlohmann::json out = nlohmann::json::parse(r.out);
    const int batch_size = out.at("batch_size").get<int>();
    EXPECT_EQ(out.at("trial_number").get<int>(), run);
    if (batch_size == 32 || batch_size == 512) {
      // Both cost more than beta_knob (2) x the least cost by epoch 5.
      EXPECT_FALSE(out.at("converged").get<bool>()) << "run " << run;
      EXPECT_EQ(out.at("epochs").get<int>(), 5) << "run " << run;
      EXPECT_THAT(out.at("bso_message").get<std::string>(), HasSubstr("exceeded the cost upper bound"));
    } else {
      // The others run exactly until they reach the target.
      EXPECT_TRUE(out.at("converged").get<bool>()) << "run " << run << ": " << out.dump();
      EXPECT_EQ(out.at("epochs").get<int>(), epochs_needed.at(batch_size)) << "run " << run;
    }
    EXPECT_GT(out.at("bso_energy_j").get<double>(), 0);
    chosen.push_back(batch_size);
  }
  // Pruning from the default down, then up; 32 (too costly) and 512 (never
  // converges) are early-stopped and pruned; the second round tries the
  // survivors; then Thompson sampling settles on the cheapest.
  EXPECT_EQ(std::vector<int>(chosen.begin(), chosen.begin() + 8),
            (std::vector<int>{128, 64, 32, 256, 512, 128, 64, 256}));
  for (std::size_t i = 8; i < chosen.size(); ++i) {
    EXPECT_NE(chosen[i], 32);
    EXPECT_NE(chosen[i], 512);
  }
  EXPECT_EQ(chosen.back(), 128);
  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service) << service.error().message();
  Result<std::vector<TrialRecord>> trials = (*service)->Trials("it-train");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 14u);
  for (const TrialRecord& t : *trials) EXPECT_EQ(t.status, TrialStatus::kSucceeded) << t.trial_number;
  ExpectPolicyHistory(TrainSpec(), *trials);
}

// A run killed by SIGTERM reports nothing; its exit hook marks the trial
// failed (and the power-limit optimizer's restores the limit), so the next
// run explores the same batch size again.
TEST_P(RecurringTrainingTest, ARunEndedBySigtermIsExploredAgain) {
  Server server(dir_, "s", database_);
  ASSERT_FALSE(server.url().empty());
  const std::string err = dir_.File("killed.err");
  {
    BackgroundProcess killed(Args(server.url(), {"--pause-at-step", "30"}), dir_.File("killed.out"), err, Env());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ReadFile(err).find("paused at step 30") == std::string::npos) {
      ASSERT_TRUE(killed.Running()) << ReadFile(err);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << ReadFile(err);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    killed.Signal(SIGTERM);
    EXPECT_EQ(killed.Wait(), 128 + SIGTERM);
  }
  EXPECT_THAT(ReadFile(err), HasSubstr("before trial 1 of job it-train finished; marked it failed on the server"));
  EXPECT_THAT(ReadFile(err), HasSubstr("original power limits restored"));
  zeus::testing::ProcessResult again = zeus::testing::RunProcess(Args(server.url()), Env());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const nlohmann::json out = nlohmann::json::parse(again.out);
  EXPECT_EQ(out.at("batch_size").get<int>(), 128);
  EXPECT_EQ(out.at("trial_number").get<int>(), 2);
  Result<std::unique_ptr<BsoService>> service = BsoService::Open(database_);
  ASSERT_TRUE(service) << service.error().message();
  Result<std::vector<TrialRecord>> trials = (*service)->Trials("it-train");
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].status, TrialStatus::kFailed);
  EXPECT_EQ((*trials)[0].type, TrialType::kExploration);
  EXPECT_EQ((*trials)[1].status, TrialStatus::kSucceeded);
}

TEST_P(RecurringTrainingTest, ABadConvergenceTableIsAClearError) {
  if (GetParam() == Db::kPostgres) GTEST_SKIP() << "needs no database";
  zeus::testing::RefusingPort refusing;  // the table is checked before any connection
  ASSERT_NE(refusing.port(), 0);
  for (const char* table : {"32:5,abc", "32:5,32:4", "0:3", "64:-1", "", "64"}) {
    zeus::testing::ProcessResult r =
        zeus::testing::RunProcess(Args("http://" + refusing.address(), {"--convergence", table}), Env());
    EXPECT_EQ(r.exit_code, 2) << table << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("--convergence: bad entry")) << table;
  }
}

INSTANTIATE_TEST_SUITE_P(Databases, RecurringTrainingTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);

TEST_P(BsoServerTest, SigtermStopsGracefullyWithStructuredLogs) {
  Server server(dir_, "s", database_);
  ASSERT_FALSE(server.url().empty());
  auto client = std::move(*BsoClient::Create(server.url()));
  ASSERT_TRUE(client->Health());
  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(), 0);
  const std::string log = server.log();
  EXPECT_THAT(log, HasSubstr(R"("event":"listening")"));
  EXPECT_THAT(log, HasSubstr(R"("event":"shutdown","signal":"SIGTERM")"));
  EXPECT_THAT(log, HasSubstr(R"("event":"stopped")"));
  Status after = client->Health();
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code(), ErrorCode::kUnavailable);
}

INSTANTIATE_TEST_SUITE_P(Databases, BsoServerTest, ::testing::Values(Db::kSqlite, Db::kPostgres), DbName);

TEST(BsoServerCliTest, BadFlagsAndConfigurationAreClearErrors) {
  TempDir dir;
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::optional<std::string>> env;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--database", "mysql://x/y"}, {}, 2, "mysql://x/y"},
      {{"--listen", "nonsense"}, {}, 2, "bad listen address 'nonsense'"},
      {{"--listen", "127.0.0.1:99999"}, {}, 2, "bad listen address"},
      {{"--database", "sqlite:///" + dir.File("missing/dir/x.db")}, {}, 1, "missing/dir/x.db"},
      {{}, {{"ZEUS_BSO_THREADS", "many"}}, 2, "ZEUS_BSO_THREADS must be a whole number (got 'many')"},
      {{}, {{"ZEUS_BSO_EXPLORATION_TIMEOUT", "1h"}}, 2, "ZEUS_BSO_EXPLORATION_TIMEOUT must be a whole number (got '1h')"},
      {{"--exploration-timeout", "-5"}, {}, 2, "--exploration-timeout must be between 0 and 31536000 (got -5)"},
      // Caps checked before anything slow, naming the range.
      {{"--threads", "100000"}, {}, 2, "--threads must be between 0 and 1024 (got 100000)"},
      {{}, {{"ZEUS_BSO_THREADS", "100000"}}, 2, "ZEUS_BSO_THREADS must be between 0 and 1024 (got '100000')"},
      {{"--max-connections", "70000"}, {}, 2, "--max-connections must be between 1 and 65536 (got 70000)"},
      {{}, {{"ZEUS_BSO_MAX_CONNECTIONS", "0"}}, 2, "ZEUS_BSO_MAX_CONNECTIONS must be between 1 and 65536 (got '0')"},
      {{}, {{"ZEUS_BSO_MAX_REQUESTS_IN_FLIGHT", "x"}}, 2,
       "ZEUS_BSO_MAX_REQUESTS_IN_FLIGHT must be a whole number (got 'x')"},
      // Negative and oversized values from the environment: rejected, never wrapped, the range readable.
      {{}, {{"ZEUS_BSO_THREADS", "-1"}}, 2, "ZEUS_BSO_THREADS must be between 0 and 1024 (got '-1')"},
      {{}, {{"ZEUS_BSO_MAX_CONNECTIONS", "4294967297"}}, 2,
       "ZEUS_BSO_MAX_CONNECTIONS must be between 1 and 65536 (got '4294967297')"},
      {{}, {{"ZEUS_BSO_EXPLORATION_TIMEOUT", "-1"}}, 2,
       "ZEUS_BSO_EXPLORATION_TIMEOUT must be between 0 and 31536000 (got '-1')"},
      {{}, {{"ZEUS_BSO_EXPLORATION_TIMEOUT", "99999999999999999999"}}, 2,
       "ZEUS_BSO_EXPLORATION_TIMEOUT must be between 0 and 31536000 (got '99999999999999999999')"},
      {{}, {{"ZEUS_BSO_LOG_LEVEL", "loud"}}, 2,
       "ZEUS_BSO_LOG_LEVEL must be one of trace, debug, info, warn, error, off (got 'loud')"},
      {{"--max-requests-in-flight", "0"}, {}, 2, "--max-requests-in-flight must be between 1 and 65536 (got 0)"},
      // The ready file's directory must exist before the server starts.
      {{"--ready-file", dir.File("missing/dir/ready")}, {}, 2, "the directory " + dir.File("missing/dir") + " does not exist"},
      {{"--ready-file", dir.path()}, {}, 2, "is a directory"},
      {{"--database", "postgresql://nobody@" + refusing.address() + "/none"}, {}, 4, "cannot open the database"},
      // Configuration from the environment when no flag is given.
      {{}, {{"ZEUS_BSO_DATABASE_URL", "mysql://from/env"}}, 2, "mysql://from/env"},
      {{"--database", "sqlite:///" + dir.File("ok.db")}, {{"ZEUS_BSO_LISTEN", "env-nonsense"}}, 2,
       "bad listen address 'env-nonsense'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {ZEUS_TEST_CLI_PATH, "bso-server"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    if (std::find(c.args.begin(), c.args.end(), "--listen") == c.args.end() && !c.env.contains("ZEUS_BSO_LISTEN")) {
      argv.insert(argv.end(), {"--listen", "127.0.0.1:0"});
    }
    if (std::find(c.args.begin(), c.args.end(), "--database") == c.args.end() &&
        !c.env.contains("ZEUS_BSO_DATABASE_URL")) {
      argv.insert(argv.end(), {"--database", "sqlite:///" + dir.File("ok.db")});
    }
    zeus::testing::ProcessResult r = zeus::testing::RunProcess(argv, c.env);
    EXPECT_EQ(r.exit_code, c.exit_code) << fmt::format("{}", fmt::join(c.args, " ")) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
}

TEST(BsoServerCliTest, HelpGivesTheDefaultsAndRanges) {
  zeus::testing::ProcessResult r = zeus::testing::RunProcess({ZEUS_TEST_CLI_PATH, "bso-server", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("default 21600 = 6 h; 0 = never"));
  EXPECT_THAT(r.out, HasSubstr("1 to 1024"));
  EXPECT_THAT(r.out, HasSubstr("--max-connections"));
  EXPECT_THAT(r.out, HasSubstr("--max-requests-in-flight"));
}

// Past --max-connections a connection is answered 503 with Retry-After at
// once; HEAD works where GET does; 405 names the allowed methods.
TEST(BsoServerCliTest, ConnectionCapHeadAndAllow) {
  TempDir dir;
  Server server(dir, "s", "sqlite:///" + dir.File("cap.db"), 0, {"--max-connections", "1"});
  ASSERT_FALSE(server.url().empty());
  const std::string log = server.log();
  EXPECT_THAT(log, HasSubstr(R"("max_connections":1)"));
  EXPECT_THAT(log, HasSubstr(R"("exploration_timeout_s":21600)"));

  // One kept-alive connection, the only one allowed.
  Result<std::unique_ptr<HttpClient>> http = HttpClient::Create(server.url());
  ASSERT_TRUE(http) << http.error().message();
  Result<HttpResponse> head = (*http)->Send("HEAD", "/healthz");
  ASSERT_TRUE(head) << head.error().message();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  const std::string* length = FindHeader(*head, "Content-Length");
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(*length, "15");  // {"status":"ok"}
  Result<HttpResponse> not_allowed = (*http)->Send("PUT", "/report", "{}");
  ASSERT_TRUE(not_allowed) << not_allowed.error().message();
  EXPECT_EQ(not_allowed->status, 405);
  const std::string* allow = FindHeader(*not_allowed, "Allow");
  ASSERT_NE(allow, nullptr);
  EXPECT_EQ(*allow, "POST");

  // The next connection gets 503 at once.
  const std::string refused = RawExchange(server.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(refused, ::testing::StartsWith("HTTP/1.1 503 "));
  EXPECT_THAT(refused, HasSubstr("Retry-After: 1\r\n"));
  EXPECT_THAT(refused, HasSubstr("connections open, its limit"));
  Result<HttpResponse> still = (*http)->Send("GET", "/healthz");  // the connection within the cap is served
  ASSERT_TRUE(still) << still.error().message();
  EXPECT_EQ(still->status, 200);
}

TEST(BsoServerCliTest, PortInUseIsUnavailable) {
  TempDir dir;
  Server first(dir, "first", "sqlite:///" + dir.File("a.db"));
  ASSERT_FALSE(first.url().empty());
  zeus::testing::ProcessResult r = zeus::testing::RunProcess(
      {ZEUS_TEST_CLI_PATH, "bso-server", "--listen", fmt::format("127.0.0.1:{}", first.port()), "--database",
       "sqlite:///" + dir.File("b.db")});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr(fmt::format("127.0.0.1:{}", first.port())));
}

// The service and the simulator share one policy: the same seed gives the
// same decisions, run by run, byte for byte in the tries CSV.
TEST(BsoServerReplayTest, SimulateViaServerEqualsSimulate) {
  TempDir dir;
  Server server(dir, "s", "sqlite:///" + dir.File("replay.db"));
  ASSERT_FALSE(server.url().empty());
  struct Workload {
    std::string gpu, workload, seed;
  };
  for (const Workload& w : {Workload{"v100", "cifar100", "1"}, Workload{"a40", "sentiment140", "3"},
                            Workload{"v100", "librispeech", "2"}}) {
    const std::string local = dir.File(w.workload + "-local.csv");
    const std::string remote = dir.File(w.workload + "-remote.csv");
    const std::vector<std::string> base = {ZEUS_TEST_CLI_PATH, "simulate", "--trace-dir", ZEUS_TEST_TRACE_DIR,
                                           "--gpu", w.gpu, "--workload", w.workload, "--seed", w.seed};
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--output", local});
    std::vector<std::string> b = base;
    b.insert(b.end(), {"--output", remote, "--via-server", server.url()});
    zeus::testing::ProcessResult ra = zeus::testing::RunProcess(a);
    zeus::testing::ProcessResult rb = zeus::testing::RunProcess(b);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    const std::string csv = ReadFile(local);
    EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 20);
    EXPECT_EQ(csv, ReadFile(remote)) << w.workload;
    EXPECT_EQ(ra.out, rb.out) << w.workload;  // the same summary
  }
}

}  // namespace
}  // namespace zeus::bso
