// Copyright 2026 The Zeus C++ Authors.

#include "bso/job_store.h"

#include <array>
#include <charconv>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "bso/bso_try.h"
#include "zeus/bso/job_spec_fields.h"

namespace zeus::bso {
namespace {

using optimizer::NumpyRandomState;

// ---- the generator state ----------------------------------------------------

std::string Hex128(std::uint64_t high, std::uint64_t low) { return fmt::format("0x{:016x}{:016x}", high, low); }

bool ParseHex128(const std::string& text, std::uint64_t& high, std::uint64_t& low) {
  if (text.size() != 34 || !text.starts_with("0x")) return false;
  auto parse = [](std::string_view digits, std::uint64_t& out) {
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, 16);
    return ec == std::errc() && ptr == digits.data() + digits.size();
  };
  return parse(std::string_view(text).substr(2, 16), high) && parse(std::string_view(text).substr(18, 16), low);
}

// ---- JobSpec's columns: one per field of job_spec_fields.h, under its name --

// Booleans are 0/1, batch sizes a JSON list (schema.h).
SqlValue ToSql(const std::string& v) { return v; }
SqlValue ToSql(int v) { return SqlInt(v); }
SqlValue ToSql(std::int64_t v) { return SqlInt(v); }
SqlValue ToSql(double v) { return v; }
SqlValue ToSql(bool v) { return SqlInt(v ? 1 : 0); }
SqlValue ToSql(const std::vector<int>& v) { return nlohmann::json(v).dump(); }
template <class T>
SqlValue ToSql(const std::optional<T>& v) {
  return v ? ToSql(*v) : SqlValue(std::monostate{});
}

Status FromSql(const SqlRow& row, std::size_t column, std::string_view, std::string& out) {
  BSO_TRY(v, row.Text(column));
  out = std::move(v);
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view, int& out) {
  BSO_TRY(v, row.Int(column));
  out = static_cast<int>(v);
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view, double& out) {
  BSO_TRY(v, row.Double(column));
  out = v;
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view, bool& out) {
  BSO_TRY(v, row.Int(column));
  out = v != 0;
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view name, std::vector<int>& out) {
  BSO_TRY(text, row.Text(column));
  const nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
  if (!list.is_array()) return Fail(ErrorCode::kInternal, fmt::format("corrupt {}", name));
  out.clear();
  for (const nlohmann::json& item : list) {
    if (!item.is_number_integer()) return Fail(ErrorCode::kInternal, fmt::format("corrupt {}", name));
    out.push_back(item.get<int>());
  }
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view name, std::optional<std::string>& out) {
  if (row.IsNull(column)) {
    out.reset();
    return OkStatus();
  }
  return FromSql(row, column, name, out.emplace());
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view, std::optional<double>& out) {
  BSO_TRY(v, row.OptionalDouble(column));
  out = v;
  return OkStatus();
}
Status FromSql(const SqlRow& row, std::size_t column, std::string_view, std::optional<std::int64_t>& out) {
  BSO_TRY(v, row.OptionalInt(column));
  out = v;
  return OkStatus();
}

// The job's state, after the spec's columns.
constexpr std::array<std::string_view, 5> kJobStateColumns = {"rng_state", "stage", "min_cost", "min_cost_batch_size",
                                                              "next_trial_number"};

// The spec's columns then kJobStateColumns: what LoadJob selects and
// InsertJob writes (before created_us).
const std::string& JobColumns() {
  static const std::string columns = [] {
    std::vector<std::string_view> names;
    ForEachJobSpecField([&](const auto& field) { names.push_back(field.name); });
    names.insert(names.end(), kJobStateColumns.begin(), kJobStateColumns.end());
    return fmt::format("{}", fmt::join(names, ", "));
  }();
  return columns;
}

Result<JobRow> ReadJob(const SqlRow& row) {
  JobRow j;
  std::size_t column = 0;
  Status read = OkStatus();
  ForEachJobSpecField([&](const auto& field) {
    if (read) read = FromSql(row, column, field.name, j.spec.*field.member);
    ++column;
  });
  if (!read) {
    return Fail(j.spec.job_id ? read.error().WithContext(fmt::format("job {}", *j.spec.job_id)) : read.error());
  }
  BSO_TRY(rng, row.Text(column));
  j.rng_state = rng;
  BSO_TRY(stage, row.Text(column + 1));
  j.state.bandit_stage = stage == "MAB";
  BSO_TRY(min_cost, row.OptionalDouble(column + 2));
  j.state.min_cost = min_cost;
  BSO_TRY(min_bs, row.Int(column + 3));
  j.state.min_cost_batch_size = static_cast<int>(min_bs);
  BSO_TRY(next, row.Int(column + 4));
  j.state.next_trial_number = static_cast<int>(next);
  return j;
}

// ---- trials -------------------------------------------------------------------

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

Status ExecuteOne(SqlConnection& c, std::string_view sql, const std::vector<SqlValue>& params) {
  BSO_TRY(changed, c.Execute(sql, params));
  (void)changed;
  return OkStatus();
}

}  // namespace

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

Result<std::optional<JobRow>> LoadJob(SqlConnection& c, const std::string& job_id, bool lock) {
  std::string sql = fmt::format("SELECT {} FROM bso_job WHERE job_id = $1", JobColumns());
  if (lock && c.dialect() == SqlDialect::kPostgres) sql += " FOR UPDATE";
  const std::vector<SqlValue> params = {job_id};
  BSO_TRY(rows, c.Query(sql, params));
  if (rows.empty()) return std::optional<JobRow>();
  BSO_TRY(job, ReadJob(rows.front()));
  return std::optional<JobRow>(std::move(job));
}

Status InsertJob(SqlConnection& c, const JobSpec& spec, const std::string& rng_state, std::int64_t created_us) {
  std::vector<SqlValue> params;
  ForEachJobSpecField([&](const auto& field) { params.push_back(ToSql(spec.*field.member)); });
  params.insert(params.end(), {rng_state, std::string("Pruning"), SqlValue(std::monostate{}),
                               SqlInt(spec.default_batch_size), SqlInt(1), SqlInt(created_us)});
  std::vector<std::string> placeholders;
  for (std::size_t i = 1; i <= params.size(); ++i) placeholders.push_back(fmt::format("${}", i));
  BSO_CHECK(ExecuteOne(c,
                       fmt::format("INSERT INTO bso_job ({}, created_us) VALUES ({})", JobColumns(),
                                   fmt::join(placeholders, ", ")),
                       params));
  for (int bs : spec.batch_sizes) {
    BSO_CHECK(ExecuteOne(c, "INSERT INTO bso_batch_size (job_id, batch_size) VALUES ($1, $2)", {*spec.job_id, SqlInt(bs)}));
  }
  return OkStatus();
}

Status SaveJobState(SqlConnection& c, const JobRow& job) {
  const JobState& s = job.state;
  return ExecuteOne(c,
                    "UPDATE bso_job SET stage = $2, min_cost = $3, min_cost_batch_size = $4, next_trial_number = $5, "
                    "rng_state = $6 WHERE job_id = $1",
                    {*job.spec.job_id, std::string(s.bandit_stage ? "MAB" : "Pruning"), ToSql(s.min_cost),
                     SqlInt(s.min_cost_batch_size), SqlInt(s.next_trial_number), job.rng_state});
}

Result<std::int64_t> DeleteJobRow(SqlConnection& c, const std::string& job_id) {
  const std::vector<SqlValue> params = {job_id};
  return c.Execute("DELETE FROM bso_job WHERE job_id = $1", params);
}

Result<std::vector<TrialRecord>> LoadTrials(SqlConnection& c, const std::string& job_id, bool explorations_only) {
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
  const std::vector<SqlValue> params = {job_id, SqlInt(trial_number)};
  BSO_TRY(rows, c.Query(fmt::format("SELECT {} FROM bso_trial WHERE job_id = $1 AND trial_number = $2", kTrialColumns),
                        params));
  if (rows.empty()) return std::optional<TrialRecord>();
  BSO_TRY(t, ReadTrial(rows.front()));
  return std::optional<TrialRecord>(std::move(t));
}

Result<TrialId> CreateTrial(SqlConnection& c, JobRow& job, int batch_size, TrialType type) {
  const int number = job.state.next_trial_number++;
  BSO_CHECK(ExecuteOne(c,
                       "INSERT INTO bso_trial (job_id, trial_number, batch_size, type, status, start_us) "
                       "VALUES ($1, $2, $3, $4, 'Dispatched', $5)",
                       {*job.spec.job_id, SqlInt(number), SqlInt(batch_size), std::string(TrialTypeName(type)), SqlInt(job.now_us)}));
  BSO_CHECK(SaveJobState(c, job));
  return TrialId{*job.spec.job_id, batch_size, number, type};
}

Status MarkTrialFailed(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t end_us) {
  return ExecuteOne(c, "UPDATE bso_trial SET status = 'Failed', end_us = $3 WHERE job_id = $1 AND trial_number = $2",
                    {job_id, SqlInt(trial_number), SqlInt(end_us)});
}

Status TouchTrial(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t now_us) {
  return ExecuteOne(c, "UPDATE bso_trial SET last_report_us = $3 WHERE job_id = $1 AND trial_number = $2",
                    {job_id, SqlInt(trial_number), SqlInt(now_us)});
}

Status RecordTrialResult(SqlConnection& c, const std::string& job_id, int trial_number, std::int64_t end_us,
                         double time, double energy, bool converged) {
  return ExecuteOne(c,
                    "UPDATE bso_trial SET status = 'Succeeded', end_us = $3, time = $4, energy = $5, converged = $6 "
                    "WHERE job_id = $1 AND trial_number = $2",
                    {job_id, SqlInt(trial_number), SqlInt(end_us), time, energy, SqlInt(converged ? 1 : 0)});
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

}  // namespace zeus::bso
