// Copyright 2026 The Zeus C++ Authors.

#include "bso/service.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bso/arm_statistics.h"
#include "bso/schema.h"
#include "zeus/optimizer/cost.h"
#include "zeus/optimizer/early_stopping.h"
#include "zeus/optimizer/gaussian_ts.h"
#include "zeus/optimizer/numpy_random.h"
#include "zeus/optimizer/policy.h"
#include "zeus/optimizer/pruning.h"

namespace zeus::bso {
namespace {

using optimizer::NumpyRandom;
using optimizer::NumpyRandomState;

class SystemWallClockImpl final : public WallClock {
 public:
  std::chrono::system_clock::time_point Now() const override { return std::chrono::system_clock::now(); }
};

std::int64_t MicrosSinceEpoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// Error propagation for Result-returning expressions inside the service.
#define BSO_TRY(var, expr)                    \
  auto var##_result = (expr);                 \
  if (!var##_result) return Fail(var##_result.error()); \
  auto& var = *var##_result
#define BSO_CHECK(expr)                         \
  do {                                          \
    if (auto status_ = (expr); !status_) return Fail(status_.error()); \
  } while (false)

// ---- generator state ------------------------------------------------------

std::string Hex128(std::uint64_t high, std::uint64_t low) { return fmt::format("0x{:016x}{:016x}", high, low); }

bool ParseHex128(const std::string& text, std::uint64_t& high, std::uint64_t& low) {
  if (text.size() != 34 || !text.starts_with("0x")) return false;
  auto parse = [](std::string_view digits, std::uint64_t& out) {
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, 16);
    return ec == std::errc() && ptr == digits.data() + digits.size();
  };
  return parse(std::string_view(text).substr(2, 16), high) && parse(std::string_view(text).substr(18, 16), low);
}

std::string RngStateJson(const NumpyRandomState& s) {
  nlohmann::json j{{"bit_generator", "PCG64"},
                   {"state",
                    {{"state", Hex128(s.pcg.state_high, s.pcg.state_low)},
                     {"inc", Hex128(s.pcg.inc_high, s.pcg.inc_low)}}},
                   {"has_uint32", s.has_uint32 ? 1 : 0},
                   {"uinteger", s.uinteger}};
  return j.dump();
}

Result<NumpyRandomState> ParseRngState(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  NumpyRandomState s;
  try {
    if (!j.is_discarded() && j.value("bit_generator", "") == "PCG64" &&
        ParseHex128(j.at("state").at("state").get<std::string>(), s.pcg.state_high, s.pcg.state_low) &&
        ParseHex128(j.at("state").at("inc").get<std::string>(), s.pcg.inc_high, s.pcg.inc_low)) {
      s.has_uint32 = j.at("has_uint32").get<int>() != 0;
      s.uinteger = j.at("uinteger").get<std::uint32_t>();
      return s;
    }
  } catch (const nlohmann::json::exception&) {
  }
  return Fail(ErrorCode::kInternal, "the stored random generator state is corrupt");
}

// ---- rows -------------------------------------------------------------------

struct JobRow {
  JobSpec spec;
  std::string rng_state;
  bool bandit_stage = false;
  std::optional<double> min_cost;
  int min_cost_batch_size = 0;
  int next_trial_number = 1;
  // Not stored: the time of the operation that loaded the row (the
  // service's WallClock), for the timestamps it writes.
  std::int64_t now_us = 0;
};

constexpr std::string_view kJobColumns =
    "job_id, job_id_prefix, default_batch_size, higher_is_better_metric, eta_knob, beta_knob, target_metric, "
    "max_epochs, num_pruning_rounds, window_size, max_power, number_of_gpus, gpu_model, mab_prior_mean, "
    "mab_prior_precision, mab_num_explorations, mab_seed, rng_state, stage, min_cost, min_cost_batch_size, "
    "next_trial_number, batch_sizes, policy";

Result<JobRow> ReadJob(const SqlRow& row) {
  JobRow j;
  JobSpec& s = j.spec;
  BSO_TRY(job_id, row.Text(0));
  s.job_id = job_id;
  BSO_TRY(prefix, row.Text(1));
  s.job_id_prefix = prefix;
  BSO_TRY(default_bs, row.Int(2));
  s.default_batch_size = static_cast<int>(default_bs);
  BSO_TRY(higher, row.Int(3));
  s.higher_is_better_metric = higher != 0;
  BSO_TRY(eta, row.Double(4));
  s.eta_knob = eta;
  BSO_TRY(beta, row.OptionalDouble(5));
  s.beta_knob = beta;
  BSO_TRY(target, row.Double(6));
  s.target_metric = target;
  BSO_TRY(max_epochs, row.Int(7));
  s.max_epochs = static_cast<int>(max_epochs);
  BSO_TRY(rounds, row.Int(8));
  s.num_pruning_rounds = static_cast<int>(rounds);
  BSO_TRY(window, row.Int(9));
  s.window_size = static_cast<int>(window);
  BSO_TRY(max_power, row.Double(10));
  s.max_power = max_power;
  BSO_TRY(gpus, row.Int(11));
  s.number_of_gpus = static_cast<int>(gpus);
  BSO_TRY(model, row.Text(12));
  s.gpu_model = model;
  BSO_TRY(prior_mean, row.Double(13));
  s.mab_prior_mean = prior_mean;
  BSO_TRY(prior_precision, row.Double(14));
  s.mab_prior_precision = prior_precision;
  BSO_TRY(explorations, row.Int(15));
  s.mab_num_explorations = static_cast<int>(explorations);
  BSO_TRY(seed, row.OptionalInt(16));
  s.mab_seed = seed;
  BSO_TRY(rng, row.Text(17));
  j.rng_state = rng;
  BSO_TRY(stage, row.Text(18));
  j.bandit_stage = stage == "MAB";
  BSO_TRY(min_cost, row.OptionalDouble(19));
  j.min_cost = min_cost;
  BSO_TRY(min_bs, row.Int(20));
  j.min_cost_batch_size = static_cast<int>(min_bs);
  BSO_TRY(next, row.Int(21));
  j.next_trial_number = static_cast<int>(next);
  BSO_TRY(sizes, row.Text(22));
  const nlohmann::json list = nlohmann::json::parse(sizes, nullptr, false);
  if (!list.is_array()) return Fail(ErrorCode::kInternal, fmt::format("job {}: corrupt batch_sizes", *s.job_id));
  for (const nlohmann::json& bs : list) {
    if (!bs.is_number_integer()) return Fail(ErrorCode::kInternal, fmt::format("job {}: corrupt batch_sizes", *s.job_id));
    s.batch_sizes.push_back(bs.get<int>());
  }
  BSO_TRY(policy, row.Text(23));
  s.policy = policy;
  return j;
}

constexpr std::string_view kTrialColumns =
    "job_id, trial_number, batch_size, type, status, start_us, end_us, time, energy, converged, last_report_us";

Result<TrialRecord> ReadTrial(const SqlRow& row) {
  TrialRecord t;
  BSO_TRY(job_id, row.Text(0));
  t.job_id = job_id;
  BSO_TRY(number, row.Int(1));
  t.trial_number = static_cast<int>(number);
  BSO_TRY(bs, row.Int(2));
  t.batch_size = static_cast<int>(bs);
  BSO_TRY(type, row.Text(3));
  t.type = type == "Exploration" ? TrialType::kExploration
           : type == "Concurrent" ? TrialType::kConcurrent
                                  : TrialType::kMab;
  BSO_TRY(status, row.Text(4));
  t.status = status == "Dispatched"  ? TrialStatus::kDispatched
             : status == "Succeeded" ? TrialStatus::kSucceeded
                                     : TrialStatus::kFailed;
  BSO_TRY(start, row.Int(5));
  t.start_us = start;
  BSO_TRY(end, row.OptionalInt(6));
  t.end_us = end;
  BSO_TRY(time, row.OptionalDouble(7));
  t.time = time;
  BSO_TRY(energy, row.OptionalDouble(8));
  t.energy = energy;
  BSO_TRY(converged, row.OptionalInt(9));
  if (converged) t.converged = *converged != 0;
  BSO_TRY(last_report, row.OptionalInt(10));
  t.last_report_us = last_report;
  return t;
}

SqlValue Opt(const std::optional<double>& v) { return v ? SqlValue(*v) : SqlValue(std::monostate{}); }
SqlValue Opt(const std::optional<std::int64_t>& v) { return v ? SqlValue(*v) : SqlValue(std::monostate{}); }
SqlValue I(std::int64_t v) { return SqlValue(v); }

// ---- queries ----------------------------------------------------------------

Result<std::optional<JobRow>> LoadJob(SqlConnection& c, const std::string& job_id, bool lock) {
  std::string sql = fmt::format("SELECT {} FROM bso_job WHERE job_id = $1", kJobColumns);
  if (lock && c.dialect() == SqlDialect::kPostgres) sql += " FOR UPDATE";
  const std::vector<SqlValue> params = {job_id};
  BSO_TRY(rows, c.Query(sql, params));
  if (rows.empty()) return std::optional<JobRow>();
  BSO_TRY(job, ReadJob(rows.front()));
  return std::optional<JobRow>(std::move(job));
}

// Every trial of the job, or only its explorations.
Result<std::vector<TrialRecord>> LoadTrials(SqlConnection& c, const std::string& job_id,
                                            bool explorations_only = false) {
  const std::vector<SqlValue> params = {job_id};
  BSO_TRY(rows, c.Query(fmt::format("SELECT {} FROM bso_trial WHERE job_id = $1{} ORDER BY trial_number", kTrialColumns,
                                    explorations_only ? " AND type = 'Exploration'" : ""),
                        params));
  std::vector<TrialRecord> out;
  out.reserve(rows.size());
  for (const SqlRow& r : rows) {
    BSO_TRY(t, ReadTrial(r));
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::optional<TrialRecord>> LoadTrial(SqlConnection& c, const std::string& job_id, int trial_number) {
  const std::vector<SqlValue> params = {job_id, I(trial_number)};
  BSO_TRY(rows, c.Query(fmt::format("SELECT {} FROM bso_trial WHERE job_id = $1 AND trial_number = $2", kTrialColumns),
                        params));
  if (rows.empty()) return std::optional<TrialRecord>();
  BSO_TRY(t, ReadTrial(rows.front()));
  return std::optional<TrialRecord>(std::move(t));
}

Result<std::vector<ArmRecord>> LoadArms(SqlConnection& c, const std::string& job_id) {
  const std::vector<SqlValue> params = {job_id};
  BSO_TRY(rows, c.Query("SELECT batch_size, mean, precision_, num_observations, reward_mean, reward_m2 FROM bso_arm "
                        "WHERE job_id = $1 ORDER BY batch_size",
                        params));
  std::vector<ArmRecord> out;
  for (const SqlRow& r : rows) {
    ArmRecord a;
    BSO_TRY(bs, r.Int(0));
    a.batch_size = static_cast<int>(bs);
    BSO_TRY(mean, r.Double(1));
    a.mean = mean;
    BSO_TRY(precision, r.Double(2));
    a.precision = precision;
    BSO_TRY(n, r.Int(3));
    a.num_observations = static_cast<int>(n);
    BSO_TRY(reward_mean, r.Double(4));
    a.reward_mean = reward_mean;
    BSO_TRY(reward_m2, r.Double(5));
    a.reward_m2 = reward_m2;
    out.push_back(a);
  }
  return out;
}

// The job's policy options: its spec with its policy applied (ParseJobSpec
// has checked the policy's name).
optimizer::BatchSizeOptimizerOptions PolicyOptions(const JobSpec& s) {
  optimizer::BatchSizeOptimizerOptions o;
  o.num_pruning_rounds = s.num_pruning_rounds;
  o.bandit.prior_mean = s.mab_prior_mean;
  o.bandit.prior_precision = s.mab_prior_precision;
  o.bandit.num_explorations = s.mab_num_explorations;
  o.bandit.window_size = s.window_size;
  const optimizer::BatchSizePolicy policy =
      optimizer::ParseBatchSizePolicy(s.policy).value_or(optimizer::BatchSizePolicy::kZeus);
  return optimizer::ApplyBatchSizePolicy(policy, o);
}

optimizer::GaussianTsOptions BanditOptions(const JobSpec& s) { return PolicyOptions(s).bandit; }

ArmJob ArmJobOf(const JobRow& job) {
  return ArmJob{*job.spec.job_id, job.spec.eta_knob, job.spec.max_power, BanditOptions(job.spec)};
}

Status SaveJobState(SqlConnection& c, const JobRow& job) {
  const std::vector<SqlValue> params = {*job.spec.job_id,
                                        std::string(job.bandit_stage ? "MAB" : "Pruning"),
                                        Opt(job.min_cost),
                                        I(job.min_cost_batch_size),
                                        I(job.next_trial_number),
                                        job.rng_state};
  BSO_TRY(changed, c.Execute("UPDATE bso_job SET stage = $2, min_cost = $3, min_cost_batch_size = $4, "
                             "next_trial_number = $5, rng_state = $6 WHERE job_id = $1",
                             params));
  (void)changed;
  return OkStatus();
}

Result<TrialId> CreateTrial(SqlConnection& c, JobRow& job, int batch_size, TrialType type) {
  const int number = job.next_trial_number++;
  const std::vector<SqlValue> params = {*job.spec.job_id, I(number), I(batch_size), std::string(TrialTypeName(type)),
                                        I(job.now_us)};
  BSO_TRY(changed, c.Execute("INSERT INTO bso_trial (job_id, trial_number, batch_size, type, status, start_us) "
                             "VALUES ($1, $2, $3, $4, 'Dispatched', $5)",
                             params));
  (void)changed;
  BSO_CHECK(SaveJobState(c, job));
  return TrialId{*job.spec.job_id, batch_size, number, type};
}

double TrialCost(const JobRow& job, double energy, double time) {
  return optimizer::ZeusCost(energy, time, job.spec.eta_knob, job.spec.max_power);
}

// Builds the bandit over the survivors of pruning.
// Fails with kFailedPrecondition when an arm's fit is not finite, which
// only a job stored before reports and priors were bounded can cause.
Status BuildBandit(SqlConnection& c, JobRow& job, const std::vector<int>& survivors) {
  const ArmJob arm_job = ArmJobOf(job);
  for (int bs : survivors) {
    if (Status s = RefitArm(c, arm_job, bs, /*insert=*/true); !s) {
      return Fail(s.error().WithContext(fmt::format("job {} cannot start Thompson sampling", arm_job.job_id)));
    }
  }
  job.bandit_stage = true;
  return OkStatus();
}

Result<TrialId> ThompsonTrial(SqlConnection& c, JobRow& job) {
  BSO_TRY(arms, LoadArms(c, *job.spec.job_id));
  if (arms.empty()) return Fail(ErrorCode::kInternal, fmt::format("job {} has no bandit arms", *job.spec.job_id));
  const optimizer::GaussianTsOptions bandit = BanditOptions(job.spec);
  std::vector<optimizer::ArmPosterior> posteriors;
  if (bandit.variance_model == optimizer::VarianceModel::kPerArm) {
    for (const ArmRecord& a : arms) posteriors.push_back({a.batch_size, a.num_observations, a.mean, a.precision});
  } else {
    // The stored posteriors are per-arm fits; a pooled model refits every arm
    // from the stored moments (those of the rewards FitArm counts).
    std::vector<int> sizes;
    std::vector<optimizer::RewardMoments> moments;
    for (const ArmRecord& a : arms) {
      sizes.push_back(a.batch_size);
      moments.push_back({a.num_observations, a.reward_mean, a.reward_m2});
    }
    posteriors = optimizer::FitArmsPooled(sizes, moments, bandit);
  }
  BSO_TRY(state, ParseRngState(job.rng_state));
  NumpyRandom rng(state);
  const int bs = optimizer::ThompsonChoose(posteriors, bandit.num_explorations, rng, nullptr);
  job.rng_state = RngStateJson(rng.full_state());
  return CreateTrial(c, job, bs, TrialType::kMab);
}

// The pruning decision, replayed from the stored explorations (the explorer
// is a pure state machine; failed explorations are invisible to it). A
// dispatched exploration last heard of (dispatched or reported) before
// stale_before_us (when set) is marked failed first, at now_us.
Result<TrialId> PruningTrial(SqlConnection& c, JobRow& job, std::int64_t now_us,
                             std::optional<std::int64_t> stale_before_us) {
  BSO_TRY(trials, LoadTrials(c, *job.spec.job_id, /*explorations_only=*/true));
  if (stale_before_us) {
    for (TrialRecord& t : trials) {
      if (t.type != TrialType::kExploration || t.status != TrialStatus::kDispatched ||
          t.last_report_us.value_or(t.start_us) >= *stale_before_us) {
        continue;
      }
      const std::vector<SqlValue> params = {*job.spec.job_id, I(t.trial_number), I(now_us)};
      BSO_TRY(changed, c.Execute("UPDATE bso_trial SET status = 'Failed', end_us = $3 "
                                 "WHERE job_id = $1 AND trial_number = $2",
                                 params));
      (void)changed;
      t.status = TrialStatus::kFailed;
    }
  }
  const optimizer::BatchSizeOptimizerOptions policy = PolicyOptions(job.spec);
  BSO_TRY(explorer, optimizer::PruningExplorer::Create(job.spec.batch_sizes, job.spec.default_batch_size,
                                                       policy.num_pruning_rounds, policy.pruning_stop));
  for (const TrialRecord& t : trials) {
    if (t.type != TrialType::kExploration || t.status == TrialStatus::kFailed) continue;
    if (t.status == TrialStatus::kDispatched) {
      // An exploration is running: serve the best known batch size meanwhile.
      return CreateTrial(c, job, job.min_cost_batch_size, TrialType::kConcurrent);
    }
    if (Status s = explorer.Observe(t.batch_size, TrialCost(job, t.energy.value_or(0), t.time.value_or(0)),
                                    t.converged.value_or(false));
        !s) {
      return Fail(ErrorCode::kInternal, fmt::format("job {}: stored explorations do not follow the pruning order: {}",
                                                    *job.spec.job_id, s.error().message()));
    }
  }
  if (std::optional<int> next = explorer.Next()) return CreateTrial(c, job, *next, TrialType::kExploration);
  if (explorer.failed()) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("job {}: no batch size reached the target metric during pruning; register the job again "
                            "with a reachable target_metric or more max_epochs",
                            *job.spec.job_id));
  }
  BSO_CHECK(BuildBandit(c, job, explorer.survivors()));
  return ThompsonTrial(c, job);
}

std::string FormatNumber(double v) { return fmt::format("{}", v); }

}  // namespace

std::string_view TrialStatusName(TrialStatus status) {
  switch (status) {
    case TrialStatus::kDispatched: return "Dispatched";
    case TrialStatus::kSucceeded: return "Succeeded";
    case TrialStatus::kFailed: return "Failed";
  }
  return "Failed";
}

const WallClock& SystemWallClock() {
  static const SystemWallClockImpl clock;
  return clock;
}

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return 200;
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kPermissionDenied: return 403;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kAlreadyExists:
    case ErrorCode::kFailedPrecondition: return 409;
    case ErrorCode::kAborted:
    case ErrorCode::kUnavailable: return 503;
    case ErrorCode::kTimeout: return 504;
    case ErrorCode::kNotSupported:
    case ErrorCode::kDeviceLost:
    case ErrorCode::kIoError:
    case ErrorCode::kInternal: return 500;
  }
  return 500;
}

// ---- BsoService -----------------------------------------------------------

Result<std::unique_ptr<BsoService>> BsoService::Open(const std::string& database_url, const ServiceOptions& service) {
  std::string scheme = database_url.substr(0, database_url.find("://"));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool sqlite = scheme.starts_with("sqlite");
  // Each pooled connection to an in-memory SQLite database would see a
  // different, empty database.
  if (sqlite && (database_url.ends_with("://") || database_url.ends_with(":memory:"))) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{}: the batch-size service needs a database file, e.g. sqlite:///zeus_bso.db",
                            database_url));
  }
  TransactionRunnerOptions options;
  options.group_commit = sqlite;
  // Checkpoints run on their own thread, not inside a commit that every
  // grouped request waits for.
  options.connection.sqlite_auto_checkpoint = !sqlite;
  BSO_TRY(connection, OpenSqlConnection(database_url, options.connection));
  BSO_CHECK(MigrateSchema(*connection));
  std::unique_ptr<WalCheckpointer> checkpointer;
  if (connection->dialect() == SqlDialect::kSqlite) {
    BSO_TRY(started, WalCheckpointer::Start(database_url, std::chrono::milliseconds(100)));
    checkpointer = std::move(started);
  }
  const SqlDialect dialect = connection->dialect();
  ServiceOptions checked = service;
  if (checked.wall_clock == nullptr) checked.wall_clock = &SystemWallClock();
  return std::unique_ptr<BsoService>(
      new BsoService(dialect, checked, std::make_unique<TransactionRunner>(database_url, options, std::move(connection)),
                     std::move(checkpointer)));
}

std::int64_t BsoService::NowUs() const { return MicrosSinceEpoch(options_.wall_clock->Now()); }

TransactionStats BsoService::stats() const { return runner_->stats(); }

std::uint64_t BsoService::retries() const { return runner_->stats().retries; }

template <class T, class Fn>
Result<T> BsoService::Transact(Fn&& fn) {
  std::optional<Result<T>> result;
  Status outcome = runner_->Run([&](SqlConnection& c) -> Status {
    result.emplace(fn(c));
    if (*result) return OkStatus();
    return Fail(result->error());
  });
  if (!outcome) return Fail(outcome.error());
  return std::move(*result);
}

Result<RegisterResult> BsoService::RegisterJob(JobSpec spec) {
  // A job without mab_seed gets a random one, kept only in its generator
  // state (the job's spec keeps mab_seed null).
  std::random_device entropy;
  const std::uint64_t seed = spec.mab_seed ? static_cast<std::uint64_t>(*spec.mab_seed)
                                           : (static_cast<std::uint64_t>(entropy()) << 31) ^ entropy();
  const std::string rng_state = RngStateJson(NumpyRandom(seed).full_state());
  const bool generate = !spec.job_id.has_value();
  for (int attempt = 0; attempt < 16; ++attempt) {
    if (generate) spec.job_id = fmt::format("{}-{:08x}", spec.job_id_prefix, entropy());
    Result<RegisterResult> result = Transact<RegisterResult>([&](SqlConnection& c) -> Result<RegisterResult> {
      BSO_TRY(existing, LoadJob(c, *spec.job_id, /*lock=*/false));
      if (existing) {
        if (generate) return Fail(ErrorCode::kAlreadyExists, "generated job id collided");
        if (existing->spec == spec) return RegisterResult{existing->spec, false};
        return Fail(ErrorCode::kAlreadyExists,
                    fmt::format("job {} exists with a different configuration; register under another job_id, or "
                                "DELETE /jobs?job_id={} first",
                                *spec.job_id, *spec.job_id));
      }
      const JobSpec& s = spec;
      const std::vector<SqlValue> params = {*s.job_id,
                                            s.job_id_prefix,
                                            I(s.default_batch_size),
                                            I(s.higher_is_better_metric ? 1 : 0),
                                            s.eta_knob,
                                            Opt(s.beta_knob),
                                            s.target_metric,
                                            I(s.max_epochs),
                                            I(s.num_pruning_rounds),
                                            I(s.window_size),
                                            s.max_power,
                                            I(s.number_of_gpus),
                                            s.gpu_model,
                                            s.mab_prior_mean,
                                            s.mab_prior_precision,
                                            I(s.mab_num_explorations),
                                            Opt(s.mab_seed),
                                            rng_state,
                                            std::string("Pruning"),
                                            SqlValue(std::monostate{}),
                                            I(s.default_batch_size),
                                            I(1),
                                            nlohmann::json(s.batch_sizes).dump(),
                                            s.policy,
                                            I(NowUs())};
      BSO_TRY(inserted, c.Execute(fmt::format("INSERT INTO bso_job ({}, created_us) VALUES ($1, $2, $3, $4, $5, $6, "
                                              "$7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, "
                                              "$21, $22, $23, $24, $25)",
                                              kJobColumns),
                                  params));
      (void)inserted;
      for (int bs : s.batch_sizes) {
        const std::vector<SqlValue> p = {*s.job_id, I(bs)};
        BSO_TRY(n, c.Execute("INSERT INTO bso_batch_size (job_id, batch_size) VALUES ($1, $2)", p));
        (void)n;
      }
      return RegisterResult{s, true};
    });
    if (result) return result;
    if (result.error().code() != ErrorCode::kAlreadyExists) return result;
    if (!generate) {
      // The id exists (perhaps a concurrent registration won the insert):
      // compare with what is stored.
      Result<RegisterResult> again = Transact<RegisterResult>([&](SqlConnection& c) -> Result<RegisterResult> {
        BSO_TRY(existing, LoadJob(c, *spec.job_id, false));
        if (existing && existing->spec == spec) return RegisterResult{existing->spec, false};
        return Fail(ErrorCode::kAlreadyExists,
                    fmt::format("job {} exists with a different configuration", *spec.job_id));
      });
      return again;
    }
  }
  return Fail(ErrorCode::kInternal, "could not generate an unused job id");
}

Result<TrialId> BsoService::NextBatchSize(const std::string& job_id) {
  return Transact<TrialId>([&](SqlConnection& c) -> Result<TrialId> {
    BSO_TRY(job, LoadJob(c, job_id, /*lock=*/true));
    if (!job) return Fail(ErrorCode::kInvalidArgument, fmt::format("unknown job_id '{}'; register it with POST /jobs", job_id));
    const std::int64_t now_us = NowUs();
    job->now_us = now_us;
    if (job->bandit_stage) return ThompsonTrial(c, *job);
    std::optional<std::int64_t> stale_before_us;
    if (options_.exploration_timeout.count() > 0) {
      stale_before_us = now_us - std::chrono::duration_cast<std::chrono::microseconds>(options_.exploration_timeout).count();
    }
    return PruningTrial(c, *job, now_us, stale_before_us);
  });
}

Result<ReportResponse> BsoService::Report(const TrainingResult& result) {
  return Transact<ReportResponse>([&](SqlConnection& c) -> Result<ReportResponse> {
    BSO_TRY(job, LoadJob(c, result.job_id, /*lock=*/true));
    if (!job) {
      return Fail(ErrorCode::kInvalidArgument, fmt::format("unknown job_id '{}'", result.job_id));
    }
    BSO_TRY(trial, LoadTrial(c, result.job_id, result.trial_number));
    if (!trial) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("job {} has no trial {}", result.job_id, result.trial_number));
    }
    if (trial->batch_size != result.batch_size) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("trial {} of job {} runs batch size {}, not {}", result.trial_number, result.job_id,
                              trial->batch_size, result.batch_size));
    }
    if (trial->status == TrialStatus::kFailed) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("trial {} of job {} was marked failed; get a new batch size", result.trial_number,
                              result.job_id));
    }
    if (trial->status == TrialStatus::kSucceeded) {
      return ReportResponse{true, trial->converged.value_or(false),
                            fmt::format("Result for this trial({}) is already reported.", result.trial_number)};
    }
    const JobSpec& s = job->spec;
    const double cost = TrialCost(*job, result.energy, result.time);
    // Before anything is written: a cost outside this range could make the
    // arm's statistics non-finite now or when the bandit is built.
    if (Status in_range = CheckTrialCost(cost); !in_range) {
      return Fail(in_range.error().WithContext(
          fmt::format("report of trial {} of job {} (time {} s, energy {} J, max_power {} W, eta_knob {}) not recorded",
                      result.trial_number, result.job_id, FormatNumber(result.time), FormatNumber(result.energy),
                      FormatNumber(s.max_power), FormatNumber(s.eta_knob))));
    }
    const double cost_ub = (s.beta_knob && job->min_cost) ? optimizer::CostUpperBound(*s.beta_knob, *job->min_cost)
                                                          : std::numeric_limits<double>::infinity();
    const bool within = optimizer::WithinCostBudget(cost, cost_ub);
    const bool reached = s.higher_is_better_metric ? result.metric >= s.target_metric : result.metric <= s.target_metric;
    if (within && result.current_epoch < s.max_epochs && !reached && !result.finished) {
      if (trial->type == TrialType::kExploration) {
        // The client is alive: the exploration timeout counts from here.
        const std::vector<SqlValue> params = {result.job_id, I(result.trial_number), I(NowUs())};
        BSO_TRY(touched, c.Execute("UPDATE bso_trial SET last_report_us = $3 WHERE job_id = $1 AND trial_number = $2",
                                   params));
        (void)touched;
      }
      return ReportResponse{false, false, "Stop condition not met, keep training"};
    }
    std::string message;
    if (reached && within) {
      message = "Train succeeded";
    } else if (!within) {
      message = fmt::format("Batch Size({}) exceeded the cost upper bound: current cost({}) > beta_knob({})*min_cost({})",
                            result.batch_size, FormatNumber(cost), FormatNumber(*s.beta_knob),
                            FormatNumber(*job->min_cost));
    } else if (result.current_epoch >= s.max_epochs) {
      message = fmt::format("Train failed to converge within max_epoch({})", s.max_epochs);
    } else {
      message = fmt::format("Training stopped by the client at epoch {} before reaching the target",
                            result.current_epoch);
    }
    const bool converged = reached && within;
    const std::vector<SqlValue> params = {result.job_id,  I(result.trial_number), I(NowUs()),
                                          result.time,    result.energy,          I(converged ? 1 : 0)};
    BSO_TRY(changed, c.Execute("UPDATE bso_trial SET status = 'Succeeded', end_us = $3, time = $4, energy = $5, "
                               "converged = $6 WHERE job_id = $1 AND trial_number = $2",
                               params));
    (void)changed;
    if (converged && (!job->min_cost || cost < *job->min_cost)) {
      job->min_cost = cost;
      job->min_cost_batch_size = result.batch_size;
      BSO_CHECK(SaveJobState(c, *job));
    }
    if (job->bandit_stage) {
      // Update the arm in this transaction (nothing when the batch size was
      // pruned); bounded cost whatever the history (arm_statistics.h).
      if (Status observed = ObserveArmReward(c, ArmJobOf(*job), result.batch_size, -cost); !observed) {
        // Rolls back: the trial stays dispatched and the arm as it was.
        return Fail(observed.error().WithContext(
            fmt::format("report of trial {} of job {} (time {} s, energy {} J) not recorded", result.trial_number,
                        result.job_id, FormatNumber(result.time), FormatNumber(result.energy))));
      }
    }
    return ReportResponse{true, converged, message};
  });
}

Status BsoService::EndTrial(const TrialId& trial) {
  return Transact<void>([&](SqlConnection& c) -> Status {
    BSO_TRY(job, LoadJob(c, trial.job_id, /*lock=*/true));
    BSO_TRY(stored, LoadTrial(c, trial.job_id, trial.trial_number));
    if (!job || !stored) {
      return Fail(ErrorCode::kNotFound, fmt::format("job {} has no trial {}", trial.job_id, trial.trial_number));
    }
    if (stored->status != TrialStatus::kDispatched) return OkStatus();
    const std::vector<SqlValue> params = {trial.job_id, I(trial.trial_number), I(NowUs())};
    BSO_TRY(changed, c.Execute("UPDATE bso_trial SET status = 'Failed', end_us = $3 "
                               "WHERE job_id = $1 AND trial_number = $2",
                               params));
    (void)changed;
    return OkStatus();
  });
}

Status BsoService::DeleteJob(const std::string& job_id) {
  return Transact<void>([&](SqlConnection& c) -> Status {
    const std::vector<SqlValue> params = {job_id};
    BSO_TRY(deleted, c.Execute("DELETE FROM bso_job WHERE job_id = $1", params));
    if (deleted == 0) return Fail(ErrorCode::kNotFound, "No job was deleted.");
    return OkStatus();
  });
}

Status BsoService::Health() {
  return Transact<void>([&](SqlConnection& c) -> Status {
    BSO_TRY(rows, c.Query("SELECT 1"));
    (void)rows;
    return OkStatus();
  });
}

Result<std::vector<TrialRecord>> BsoService::Trials(const std::string& job_id) {
  return Transact<std::vector<TrialRecord>>([&](SqlConnection& c) { return LoadTrials(c, job_id); });
}

Result<std::vector<ArmRecord>> BsoService::Arms(const std::string& job_id) {
  return Transact<std::vector<ArmRecord>>([&](SqlConnection& c) { return LoadArms(c, job_id); });
}

Result<JobState> BsoService::State(const std::string& job_id) {
  return Transact<JobState>([&](SqlConnection& c) -> Result<JobState> {
    BSO_TRY(job, LoadJob(c, job_id, false));
    if (!job) return Fail(ErrorCode::kNotFound, fmt::format("unknown job_id '{}'", job_id));
    return JobState{job->bandit_stage, job->min_cost, job->min_cost_batch_size, job->next_trial_number};
  });
}

}  // namespace zeus::bso
