// Copyright 2026 The Zeus C++ Authors.

#include "zeus/bso/models.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "zeus/bso/job_spec_fields.h"
#include "zeus/optimizer/policy.h"

namespace zeus::bso {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxIdLength = 300;
constexpr std::size_t kMaxBatchSizes = 1000;

// What a report may carry (README, "zeus bso-server"): far beyond any real
// run (1e12 s is 31,700 years; 1e18 J is 280 TWh), and small enough that a
// cost and its arm's statistics stay finite (bso/arm_statistics.h).
constexpr double kMaxReportTimeS = 1e12;
constexpr double kMaxReportEnergyJ = 1e18;
// What a job may set, for the same reason: a job's GPUs draw at most 1 TW,
// and its prior is within the range of rewards (-cost) and their precisions.
constexpr double kMaxJobMaxPowerW = 1e12;
constexpr double kMaxPriorMagnitude = 1e30;

// Reads fields of one JSON object, collecting every problem.
class Reader {
 public:
  Reader(const json& object, std::vector<FieldError>& errors) : object_(object), errors_(errors) {}

  void Error(std::string_view field, std::string msg) {
    errors_.push_back({{"body", std::string(field)}, std::move(msg)});
  }

  const json* Find(std::string_view field, bool required) {
    const auto it = object_.find(field);
    if (it == object_.end() || (it->is_null() && required)) {
      if (required) Error(field, "field required");
      return nullptr;
    }
    return &*it;
  }

  template <class Int>
  std::optional<Int> Integer(std::string_view field, bool required) {
    const json* v = Find(field, required);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (v->is_number_integer()) {
      const auto wide = v->is_number_unsigned() ? static_cast<long double>(v->get<std::uint64_t>())
                                                : static_cast<long double>(v->get<std::int64_t>());
      if (wide < static_cast<long double>(std::numeric_limits<Int>::min()) ||
          wide > static_cast<long double>(std::numeric_limits<Int>::max())) {
        Error(field, "integer out of range");
        return std::nullopt;
      }
      return static_cast<Int>(v->get<std::int64_t>());
    }
    if (v->is_number_float()) {
      const double d = v->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(std::numeric_limits<Int>::min()) &&
          d <= static_cast<double>(std::numeric_limits<Int>::max())) {
        return static_cast<Int>(d);
      }
    }
    Error(field, "value is not a valid integer");
    return std::nullopt;
  }

  std::optional<double> Number(std::string_view field, bool required) {
    const json* v = Find(field, required);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_number()) {
      Error(field, "value is not a valid float");
      return std::nullopt;
    }
    return v->get<double>();
  }

  std::optional<bool> Bool(std::string_view field, bool required) {
    const json* v = Find(field, required);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_boolean()) {
      Error(field, "value could not be parsed to a boolean");
      return std::nullopt;
    }
    return v->get<bool>();
  }

  std::optional<std::string> String(std::string_view field, bool required) {
    const json* v = Find(field, required);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_string()) {
      Error(field, "str type expected");
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  // A list of integers that fit in int.
  std::optional<std::vector<int>> IntegerList(std::string_view field, bool required) {
    const json* v = Find(field, required);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_array()) {
      Error(field, "value is not a valid list");
      return std::nullopt;
    }
    std::vector<int> out;
    for (const json& item : *v) {
      if (!item.is_number_integer() || item.get<std::int64_t>() < std::numeric_limits<int>::min() ||
          item.get<std::int64_t>() > std::numeric_limits<int>::max()) {
        Error(field, "every batch size must be an integer");
        return std::nullopt;
      }
      out.push_back(item.get<int>());
    }
    return out;
  }

  // True when the field is present and explicitly null.
  bool IsNull(std::string_view field) const {
    const auto it = object_.find(field);
    return it != object_.end() && it->is_null();
  }

 private:
  const json& object_;
  std::vector<FieldError>& errors_;
};

Parsed<json> ParseObject(std::string_view text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return tl::unexpected(ValidationError{{{{"body"}, "request body is not valid JSON"}}});
  }
  if (!parsed.is_object()) {
    return tl::unexpected(ValidationError{{{{"body"}, "request body must be a JSON object"}}});
  }
  return parsed;
}

void CheckJobSpec(JobSpec& spec, std::vector<FieldError>& errors) {
  auto error = [&](std::string_view field, std::string msg) {
    errors.push_back({{"body", std::string(field)}, std::move(msg)});
  };
  if (spec.job_id_prefix.empty()) error("job_id_prefix", "must not be empty");
  if (spec.job_id_prefix.size() > kMaxIdLength) error("job_id_prefix", fmt::format("longer than {} characters", kMaxIdLength));
  if (spec.job_id) {
    if (spec.job_id->size() > kMaxIdLength) error("job_id", fmt::format("longer than {} characters", kMaxIdLength));
    if (!spec.job_id->starts_with(spec.job_id_prefix)) {
      error("job_id", fmt::format("job_id '{}' must start with job_id_prefix '{}'", *spec.job_id, spec.job_id_prefix));
    }
  }
  std::sort(spec.batch_sizes.begin(), spec.batch_sizes.end());
  if (spec.batch_sizes.empty()) {
    error("batch_sizes", "must not be empty");
  } else if (spec.batch_sizes.size() > kMaxBatchSizes) {
    error("batch_sizes", fmt::format("at most {} batch sizes", kMaxBatchSizes));
  } else if (spec.batch_sizes.front() <= 0) {
    error("batch_sizes", "batch sizes must be positive");
  } else if (std::adjacent_find(spec.batch_sizes.begin(), spec.batch_sizes.end()) != spec.batch_sizes.end()) {
    error("batch_sizes", "batch sizes must be distinct");
  }
  if (spec.default_batch_size <= 0) {
    error("default_batch_size", "ensure this value is greater than 0");
  } else if (!std::binary_search(spec.batch_sizes.begin(), spec.batch_sizes.end(), spec.default_batch_size)) {
    error("default_batch_size", fmt::format("default_batch_size {} is not in batch_sizes", spec.default_batch_size));
  }
  if (!(spec.eta_knob >= 0.0 && spec.eta_knob <= 1.0)) error("eta_knob", "eta_knob must be in [0, 1]");
  if (spec.beta_knob && !(*spec.beta_knob > 0.0 && std::isfinite(*spec.beta_knob))) {
    error("beta_knob", "beta_knob must be positive (or null to disable early stopping)");
  }
  if (!std::isfinite(spec.target_metric)) error("target_metric", "must be finite");
  if (spec.max_epochs <= 0) error("max_epochs", "max_epochs must be positive");
  if (spec.num_pruning_rounds < 1) error("num_pruning_rounds", "num_pruning_rounds must be at least 1");
  if (spec.window_size < 0) error("window_size", "window_size must be >= 0 (0 keeps every observation)");
  if (!(std::abs(spec.mab_prior_mean) <= kMaxPriorMagnitude)) {  // NaN fails too
    error("mab_prior_mean", fmt::format("mab_prior_mean must be finite, between {:g} and {:g} (got {})",
                                        -kMaxPriorMagnitude, kMaxPriorMagnitude, spec.mab_prior_mean));
  }
  if (!(spec.mab_prior_precision >= 0.0 && spec.mab_prior_precision <= kMaxPriorMagnitude)) {
    error("mab_prior_precision", fmt::format("mab_prior_precision must be >= 0 and at most {:g} (got {})",
                                             kMaxPriorMagnitude, spec.mab_prior_precision));
  }
  if (spec.mab_num_explorations < 0) error("mab_num_explorations", "mab_num_explorations must be >= 0");
  if (spec.mab_seed && *spec.mab_seed < 0) error("mab_seed", "mab_seed must be >= 0");
  if (!(spec.max_power > 0.0 && spec.max_power <= kMaxJobMaxPowerW)) {
    error("max_power", fmt::format("max_power must be positive and at most {:g} W, the summed power limit of the "
                                   "job's GPUs (got {})",
                                   kMaxJobMaxPowerW, spec.max_power));
  }
  if (spec.number_of_gpus <= 0) error("number_of_gpus", "number_of_gpus must be positive");
  if (Result<optimizer::BatchSizePolicy> p = optimizer::ParseBatchSizePolicy(spec.policy); !p) {
    error("policy", p.error().message());
  }
  if (spec.gpu_model.empty()) error("gpu_model", "gpu_model must not be empty");
  if (spec.gpu_model.size() > kMaxIdLength) error("gpu_model", fmt::format("longer than {} characters", kMaxIdLength));
}

template <class T>
json FieldJson(const T& value) {
  return json(value);
}
template <class T>
json FieldJson(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json SpecToJson(const JobSpec& s) {
  json j;
  ForEachJobSpecField([&](const auto& field) { j[std::string(field.name)] = FieldJson(s.*field.member); });
  return j;
}

// A field's value read as type T: nullopt when absent or null (an error
// recorded when it is required) or of the wrong type (an error recorded).
template <class T>
std::optional<T> Get(Reader& r, std::string_view name, bool required);
template <>
std::optional<std::string> Get(Reader& r, std::string_view name, bool required) {
  return r.String(name, required);
}
template <>
std::optional<int> Get(Reader& r, std::string_view name, bool required) {
  return r.Integer<int>(name, required);
}
template <>
std::optional<std::int64_t> Get(Reader& r, std::string_view name, bool required) {
  return r.Integer<std::int64_t>(name, required);
}
template <>
std::optional<double> Get(Reader& r, std::string_view name, bool required) {
  return r.Number(name, required);
}
template <>
std::optional<bool> Get(Reader& r, std::string_view name, bool required) {
  return r.Bool(name, required);
}
template <>
std::optional<std::vector<int>> Get(Reader& r, std::string_view name, bool required) {
  return r.IntegerList(name, required);
}

// Absent or null: the default stays.
template <class T>
void ReadField(Reader& r, const JobSpecField<T>& field, JobSpec& spec) {
  if (std::optional<T> v = Get<T>(r, field.name, field.required)) spec.*field.member = std::move(*v);
}
// Null: nullopt; absent: the default stays.
template <class T>
void ReadField(Reader& r, const JobSpecField<std::optional<T>>& field, JobSpec& spec) {
  if (r.IsNull(field.name)) {
    (spec.*field.member).reset();
  } else if (std::optional<T> v = Get<T>(r, field.name, false)) {
    spec.*field.member = std::move(*v);
  }
}

template <class T>
Parsed<T> Finish(T value, std::vector<FieldError> errors) {
  if (!errors.empty()) return tl::unexpected(ValidationError{std::move(errors)});
  return value;
}

}  // namespace

std::string_view TrialTypeName(TrialType type) {
  switch (type) {
    case TrialType::kExploration: return "Exploration";
    case TrialType::kConcurrent: return "Concurrent";
    case TrialType::kMab: return "MAB";
  }
  return "MAB";
}

std::string ValidationError::Summary() const {
  std::string out;
  for (const FieldError& e : errors) {
    if (!out.empty()) out += "; ";
    if (e.loc.size() > 1) out += e.loc.back() + ": ";
    out += e.msg;
  }
  return out;
}

Parsed<JobSpec> ParseJobSpec(std::string_view text) {
  Parsed<json> object = ParseObject(text);
  if (!object) return tl::unexpected(object.error());
  std::vector<FieldError> errors;
  Reader r(*object, errors);
  JobSpec s;
  ForEachJobSpecField([&](const auto& field) { ReadField(r, field, s); });
  if (errors.empty()) CheckJobSpec(s, errors);
  return Finish(std::move(s), std::move(errors));
}

Parsed<JobSpec> ValidateJobSpec(JobSpec spec) {
  std::vector<FieldError> errors;
  CheckJobSpec(spec, errors);
  return Finish(std::move(spec), std::move(errors));
}

Parsed<TrialId> ParseTrialId(std::string_view text) {
  Parsed<json> object = ParseObject(text);
  if (!object) return tl::unexpected(object.error());
  std::vector<FieldError> errors;
  Reader r(*object, errors);
  TrialId t;
  if (auto v = r.String("job_id", true)) t.job_id = *v;
  if (auto v = r.Integer<int>("batch_size", true)) t.batch_size = *v;
  if (auto v = r.Integer<int>("trial_number", true)) t.trial_number = *v;
  if (auto v = r.String("type", false)) {
    for (TrialType type : {TrialType::kExploration, TrialType::kConcurrent, TrialType::kMab}) {
      if (*v == TrialTypeName(type)) t.type = type;
    }
  }
  return Finish(std::move(t), std::move(errors));
}

Parsed<TrainingResult> ParseTrainingResult(std::string_view text) {
  Parsed<json> object = ParseObject(text);
  if (!object) return tl::unexpected(object.error());
  std::vector<FieldError> errors;
  Reader r(*object, errors);
  TrainingResult t;
  if (auto v = r.String("job_id", true)) t.job_id = *v;
  if (auto v = r.Integer<int>("batch_size", true)) t.batch_size = *v;
  if (auto v = r.Integer<int>("trial_number", true)) t.trial_number = *v;
  if (auto v = r.Number("time", true)) {
    t.time = *v;
    if (!(t.time >= 0 && t.time <= kMaxReportTimeS)) {  // NaN fails too
      r.Error("time", fmt::format("time must be finite and >= 0, at most {:g} seconds since training began (got {})",
                                  kMaxReportTimeS, t.time));
    }
  }
  if (auto v = r.Number("energy", true)) {
    t.energy = *v;
    if (!(t.energy >= 0 && t.energy <= kMaxReportEnergyJ)) {
      r.Error("energy", fmt::format("energy must be finite and >= 0, at most {:g} joules since training began (got {})",
                                    kMaxReportEnergyJ, t.energy));
    }
  }
  if (auto v = r.Number("metric", true)) {
    t.metric = *v;
    if (!std::isfinite(t.metric)) r.Error("metric", "metric must be finite");
  }
  if (auto v = r.Integer<int>("current_epoch", true)) {
    t.current_epoch = *v;
    if (t.current_epoch < 0) r.Error("current_epoch", "current_epoch must be >= 0");
  }
  if (auto v = r.Bool("finished", false)) t.finished = *v;
  return Finish(std::move(t), std::move(errors));
}

Parsed<ReportResponse> ParseReportResponse(std::string_view text) {
  Parsed<json> object = ParseObject(text);
  if (!object) return tl::unexpected(object.error());
  std::vector<FieldError> errors;
  Reader r(*object, errors);
  ReportResponse out;
  if (auto v = r.Bool("stop_train", true)) out.stop_train = *v;
  if (auto v = r.Bool("converged", true)) out.converged = *v;
  if (auto v = r.String("message", true)) out.message = *v;
  return Finish(std::move(out), std::move(errors));
}

std::string ToJson(const JobSpec& spec) { return SpecToJson(spec).dump(); }

std::string ToJson(const TrialId& t) {
  json j{{"job_id", t.job_id}, {"batch_size", t.batch_size}, {"trial_number", t.trial_number}};
  if (t.type) j["type"] = std::string(TrialTypeName(*t.type));
  return j.dump();
}

std::string ToJson(const TrainingResult& t) {
  json j{{"job_id", t.job_id}, {"batch_size", t.batch_size}, {"trial_number", t.trial_number},
         {"time", t.time},     {"energy", t.energy},         {"metric", t.metric},
         {"current_epoch", t.current_epoch}};
  if (t.finished) j["finished"] = true;
  return j.dump();
}

std::string ToJson(const ReportResponse& r) {
  return json{{"stop_train", r.stop_train}, {"converged", r.converged}, {"message", r.message}}.dump();
}

std::string ToJson(const ValidationError& error) {
  json detail = json::array();
  for (const FieldError& e : error.errors) {
    detail.push_back({{"loc", e.loc}, {"msg", e.msg}, {"type", "value_error"}});
  }
  return json{{"detail", detail}, {"message", error.Summary()}}.dump();
}

std::string MessageJson(std::string_view message) {
  return json{{"message", std::string(message)}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace zeus::bso
