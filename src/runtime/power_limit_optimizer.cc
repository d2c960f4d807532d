// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/power_limit_optimizer.h"

#include <cmath>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "runtime/exit_restore.h"
#include "zeus/runtime/power_limit_profile.h"

namespace zeus::runtime {
namespace {

std::string Watts(std::uint32_t mw) { return fmt::format("{:g} W", mw / 1000.0); }

// The reason first (one sentence: what a short state shows), then the cause,
// then the ways out, each said once: when the device's error already says how
// to get the permission (NVML's does), only the daemon is added.
Error PermissionError(const Error& cause, std::string_view setter) {
  const bool cause_advises = cause.message().find("CAP_SYS_ADMIN") != std::string::npos;
  return Error(ErrorCode::kPermissionDenied,
               fmt::format("no permission to change GPU power limits through {}. {}. {}", setter, cause.message(),
                           cause_advises ? "Or run zeusd (as root) and set ZEUSD_SOCK_PATH to its socket"
                                         : "To optimize power limits, run as root (sudo), or grant CAP_SYS_ADMIN "
                                           "(e.g. docker run --cap-add SYS_ADMIN), or run zeusd (as root) and set "
                                           "ZEUSD_SOCK_PATH to its socket"));
}

Status ValidateOptions(const PowerLimitOptimizerOptions& o) {
  if (o.wait_steps < 0 || o.warmup_steps < 0 || o.profile_steps < 1) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("power-limit optimizer: wait steps and warmup steps must be >= 0 and profile steps >= 1 "
                            "(got {}, {}, {})",
                            o.wait_steps, o.warmup_steps, o.profile_steps));
  }
  if (!(std::isfinite(o.power_limit_stride_w) && o.power_limit_stride_w >= 0.001)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("power-limit optimizer: the power-limit stride must be > 0 W, got {}",
                            o.power_limit_stride_w));
  }
  if (Status s = ValidateSelector(o.selector); !s) return Fail(s.error().WithContext("power-limit optimizer"));
  return OkStatus();
}

}  // namespace

std::string_view PowerLimitOptimizerStateName(PowerLimitOptimizerState state) {
  switch (state) {
    case PowerLimitOptimizerState::kReady: return "ready";
    case PowerLimitOptimizerState::kWarmup: return "warmup";
    case PowerLimitOptimizerState::kProfiling: return "profiling";
    case PowerLimitOptimizerState::kDone: return "done";
    case PowerLimitOptimizerState::kDisabled: return "disabled";
  }
  return "unknown";
}

// The limits in force and the originals, shared between the training thread
// and the exit paths (signal watcher, terminate, exit).
struct PowerLimitOptimizer::Shared final : internal::ExitRestorable {
  Shared(const device::GpuSet& gpus_in, std::vector<std::size_t> indices_in, std::vector<std::uint32_t> original_in,
         PowerLimitSetter* setter_in, std::unique_ptr<PowerLimitSetter> owned_in,
         std::function<void(LogLevel, std::string_view, bool)> log_in)
      : gpus(gpus_in), indices(std::move(indices_in)), original(std::move(original_in)), applied(original),
        owned_setter(std::move(owned_in)), setter(setter_in), log(std::move(log_in)) {
    if (setter == nullptr) {
      if (!owned_setter) owned_setter = std::make_unique<NvmlPowerLimitSetter>();
      setter = owned_setter.get();
    }
  }

  // Sets GPU k to targets[k] where it differs from what we know is in force.
  // Returns the first failure (with the GPU named). Does nothing once restored.
  std::optional<Error> Set(std::span<const std::uint32_t> targets, bool force = false) {
    std::lock_guard lock(mu);
    if (restored) return std::nullopt;
    std::optional<Error> first;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (!force && applied[k] == targets[k]) continue;
      Status s = setter->SetPowerLimitMw(gpus.gpu(indices[k]), targets[k]);
      if (s) {
        applied[k] = targets[k];
      } else if (!first) {
        first = s.error().WithContext(fmt::format("GPU {} at {}", indices[k], Watts(targets[k])));
      }
    }
    return first;
  }

  Status Restore() {
    std::lock_guard lock(mu);
    restored = true;
    std::vector<std::string> failures;
    std::optional<ErrorCode> code;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      if (applied[k] == original[k]) continue;
      Status s = setter->SetPowerLimitMw(gpus.gpu(indices[k]), original[k]);
      if (s) {
        applied[k] = original[k];
      } else {
        failures.push_back(fmt::format("GPU {} (to {}): {}", indices[k], Watts(original[k]), s.error().message()));
        if (!code) code = s.error().code();
      }
    }
    if (failures.empty()) return OkStatus();
    return Fail(*code, fmt::format("could not restore the original power limit of {}", fmt::join(failures, "; ")));
  }

  void RestoreForExit(std::string_view why) noexcept override {
    try {
      Status s = Restore();
      if (!s) {
        log(LogLevel::kWarning, fmt::format("{}: {}", why, s.error().message()), false);
      } else {
        log(LogLevel::kInfo, fmt::format("{}: original power limits restored", why), false);
      }
    } catch (...) {
    }
  }

  const device::GpuSet& gpus;
  const std::vector<std::size_t> indices;
  const std::vector<std::uint32_t> original;
  std::mutex mu;
  std::vector<std::uint32_t> applied;  // guarded by mu: what we know is in force
  bool restored = false;               // guarded by mu
  std::unique_ptr<PowerLimitSetter> owned_setter;
  PowerLimitSetter* setter;
  std::function<void(LogLevel, std::string_view, bool)> log;
};

PowerLimitOptimizer::PowerLimitOptimizer(const device::GpuSet& gpus, monitor::Monitor& monitor,
                                         PowerLimitOptimizerOptions options)
    : gpus_(gpus), monitor_(monitor), options_(std::move(options)) {
  comm_ = options_.communicator != nullptr ? options_.communicator : &single_;
}

Result<std::unique_ptr<PowerLimitOptimizer>> PowerLimitOptimizer::Create(const device::GpuSet& gpus,
                                                                         monitor::Monitor& monitor,
                                                                         PowerLimitOptimizerOptions options) {
  if (Status s = ValidateOptions(options); !s) return Fail(s.error());
  std::unique_ptr<PowerLimitOptimizer> self(new PowerLimitOptimizer(gpus, monitor, std::move(options)));
  PowerLimitOptimizer& p = *self;
  p.SetUpLog();
  SetupErrors errors;
  errors.local = p.ReadGpus();
  if (!errors.local) p.PlanPowerLimits();
  p.OpenSetter(errors);
  Result<std::optional<Error>> disable = p.AgreeAcrossRanks(errors);
  if (!disable) return Fail(disable.error());
  if (p.options_.restore_on_exit) internal::RegisterForExit(p.shared_.get());
  if (*disable) {
    p.Disable(std::move(**disable));
    return self;
  }
  Result<bool> loaded = p.UseSavedProfile();
  if (!loaded) return Fail(loaded.error());
  if (*loaded) return self;
  p.state_ = PowerLimitOptimizerState::kReady;
  p.steps_left_ = p.options_.wait_steps + 1;
  p.Log(LogLevel::kInfo,
        fmt::format("will profile {} power limits from {} to {}, {} steps each after {} warmup steps; selector {}",
                    p.power_limits_mw_.size(), Watts(p.power_limits_mw_.front()), Watts(p.power_limits_mw_.back()),
                    p.options_.profile_steps, p.options_.warmup_steps, p.options_.selector.Describe()));
  return self;
}

std::function<void(LogLevel, std::string_view, bool)> PowerLimitOptimizer::ExitEmit() const {
  if (!options_.exit_log) return emit_;
  std::string prefix = comm_->world_size() > 1 ? fmt::format("rank {}: ", comm_->rank()) : std::string();
  return [log = options_.exit_log, prefix](LogLevel, std::string_view line, bool) {
    log(prefix.empty() ? std::string(line) : prefix + std::string(line));
  };
}

void PowerLimitOptimizer::SetUpLog() {
  std::string prefix = comm_->world_size() > 1 ? fmt::format("rank {}: ", comm_->rank()) : std::string();
  if (options_.log) {
    emit_ = [log = options_.log, prefix](LogLevel, std::string_view line, bool) {
      log(prefix.empty() ? std::string(line) : prefix + std::string(line));
    };
    return;
  }
  emit_ = [prefix](LogLevel level, std::string_view line, bool user_warning) {
    const std::string message = prefix + std::string(line);
    zeus::Log({.level = level, .component = "power-limit-optimizer", .message = message,
               .user_warning = user_warning});
  };
}

std::optional<Error> PowerLimitOptimizer::ReadGpus() {
  gpu_indices_ = monitor_.gpu_indices();
  if (gpu_indices_.empty()) return Error(ErrorCode::kInvalidArgument, "the Monitor measures no GPU");
  for (std::size_t i : gpu_indices_) {
    device::Gpu& gpu = gpus_.gpu(i);
    auto name = gpu.Name();
    auto constraints = gpu.PowerLimitConstraintsMw();
    auto limit = gpu.PowerLimitMw();
    if (!name || !constraints || !limit) {
      const Error& e = !name ? name.error() : !constraints ? constraints.error() : limit.error();
      return e.WithContext(fmt::format("reading GPU {}", i));
    }
    if (original_mw_.empty()) {
      gpu_model_ = *name;
      constraints_mw_ = *constraints;
    } else if (*name != gpu_model_ || constraints->min_mw != constraints_mw_.min_mw ||
               constraints->max_mw != constraints_mw_.max_mw) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("all GPUs must be the same model with the same power-limit constraints; GPU {} "
                               "is {} ({}-{}), GPU {} is {} ({}-{})",
                               gpu_indices_[0], gpu_model_, Watts(constraints_mw_.min_mw),
                               Watts(constraints_mw_.max_mw), i, *name, Watts(constraints->min_mw),
                               Watts(constraints->max_mw)));
    }
    original_mw_.push_back(*limit);
  }
  return std::nullopt;
}

void PowerLimitOptimizer::PlanPowerLimits() {
  const auto stride_mw = static_cast<std::uint32_t>(std::llround(options_.power_limit_stride_w * 1000.0));
  for (std::int64_t mw = constraints_mw_.max_mw; mw >= constraints_mw_.min_mw; mw -= stride_mw) {
    power_limits_mw_.push_back(static_cast<std::uint32_t>(mw));
  }
  if (power_limits_mw_.back() != constraints_mw_.min_mw) power_limits_mw_.push_back(constraints_mw_.min_mw);
}

void PowerLimitOptimizer::OpenSetter(SetupErrors& errors) {
  std::unique_ptr<PowerLimitSetter> default_setter;
  if (!errors.local && options_.setter == nullptr) {
    auto made = MakeDefaultPowerLimitSetter(gpus_, gpu_indices_);
    if (made) {
      default_setter = std::move(*made);
    } else {
      errors.local = made.error();
    }
  }
  const bool usable = !errors.local;
  shared_ = std::make_unique<Shared>(gpus_, usable ? gpu_indices_ : std::vector<std::size_t>{},
                                     usable ? original_mw_ : std::vector<std::uint32_t>{}, options_.setter,
                                     std::move(default_setter), ExitEmit());
  if (usable) errors.probe = shared_->Set(original_mw_, /*force=*/true);
}

Result<std::optional<Error>> PowerLimitOptimizer::AgreeAcrossRanks(const SetupErrors& errors) {
  const double min_w = constraints_mw_.min_mw;
  const double max_w = constraints_mw_.max_mw;
  double maxes[] = {errors.local ? 1.0 : 0.0, errors.probe ? 1.0 : 0.0, min_w, -min_w, max_w, -max_w};
  double sums[] = {static_cast<double>(original_mw_.size())};
  if (Status s = comm_->AllReduce(maxes, ReduceOp::kMax); !s) return Fail(s.error());
  if (Status s = comm_->AllReduce(sums, ReduceOp::kSum); !s) return Fail(s.error());
  if (errors.local) return Fail(errors.local->WithContext("power-limit optimizer"));
  if (maxes[0] > 0) {
    return Fail(ErrorCode::kFailedPrecondition,
                "power-limit optimizer: another rank could not read its GPUs (see its error)");
  }
  if (maxes[2] != -maxes[3] || maxes[4] != -maxes[5]) {
    return Fail(ErrorCode::kInvalidArgument,
                "power-limit optimizer: the ranks' GPUs have different power-limit constraints; all ranks must "
                "use the same GPU model");
  }
  total_gpus_ = static_cast<int>(sums[0]);
  if (maxes[1] == 0) return std::optional<Error>();
  if (!errors.probe) {
    return std::optional<Error>(
        Error(ErrorCode::kPermissionDenied, "another rank may not change its GPUs' power limits (see its log)"));
  }
  if (errors.probe->code() == ErrorCode::kPermissionDenied) {
    return std::optional<Error>(PermissionError(*errors.probe, shared_->setter->name()));
  }
  return std::optional<Error>(*errors.probe);
}

Result<bool> PowerLimitOptimizer::UseSavedProfile() {
  if (!options_.profile_path) return false;
  const std::string& path = *options_.profile_path;
  std::optional<PowerLimitProfileFile> profile;
  std::optional<Error> profile_error;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (exists) {
    auto loaded = LoadPowerLimitProfile(path);
    if (!loaded) {
      profile_error = loaded.error();
    } else {
      PowerLimitProfileExpectation expected{gpu_model_, constraints_mw_, total_gpus_, power_limits_mw_};
      if (Status s = CheckPowerLimitProfile(*loaded, expected, path); !s) {
        profile_error = s.error();
      } else {
        profile = std::move(*loaded);
      }
    }
  }
  double maxes[] = {profile_error ? 1.0 : 0.0, exists ? 1.0 : 0.0, exists ? -1.0 : 0.0};
  if (Status s = comm_->AllReduce(maxes, ReduceOp::kMax); !s) return Fail(s.error());
  if (profile_error) return Fail(*profile_error);
  if (maxes[0] > 0) return Fail(ErrorCode::kFailedPrecondition, "another rank rejected the power-limit profile");
  if (maxes[1] != -maxes[2]) {
    return Fail(ErrorCode::kFailedPrecondition,
                fmt::format("the power-limit profile {} exists for some ranks but not for others; put it on a "
                            "file system every rank sees",
                            path));
  }
  if (!profile) return false;
  profile_loaded_ = true;
  measurements_ = profile->measurements;
  Log(LogLevel::kInfo, fmt::format("using the profile {} ({} power limits); no profiling", path, measurements_.size()));
  Finish();
  return true;
}

PowerLimitOptimizer::~PowerLimitOptimizer() {
  if (!shared_) return;
  internal::UnregisterForExit(shared_.get());
  if (window_open_) (void)monitor_.EndWindow(WindowName(), /*cancel=*/true);
  if (Status s = shared_->Restore(); !s) Log(LogLevel::kWarning, s.error().message());
}

bool PowerLimitOptimizer::restored() const {
  std::lock_guard lock(shared_->mu);
  return shared_->restored;
}

void PowerLimitOptimizer::Log(LogLevel level, std::string_view message, bool user_warning) const {
  emit_(level, message, user_warning);
}

std::string PowerLimitOptimizer::WindowName() const {
  return fmt::format("__PowerLimitOptimizer_{}mW", power_limits_mw_[limit_index_]);
}

void PowerLimitOptimizer::StepSlow() {
  if (finished_) return;
  switch (state_) {
    case PowerLimitOptimizerState::kReady:
      if (--steps_left_ > 0) return;
      EnterWarmup(power_limits_mw_[limit_index_]);
      return;
    case PowerLimitOptimizerState::kWarmup:
      if (--steps_left_ > 0) return;
      BeginProfiling();
      return;
    case PowerLimitOptimizerState::kProfiling:
      if (--steps_left_ > 0) return;
      EndProfiling();
      return;
    case PowerLimitOptimizerState::kDone:
    case PowerLimitOptimizerState::kDisabled:
      return;
  }
}

void PowerLimitOptimizer::ApplyLimit(std::uint32_t limit_mw) {
  if (local_failure_) return;  // this rank stopped changing limits; the others learn at the next boundary
  const std::vector<std::uint32_t> targets(gpu_indices_.size(), limit_mw);
  std::optional<Error> error = shared_->Set(targets);
  if (!error) return;
  if (error->code() == ErrorCode::kInvalidArgument) {
    local_rejection_ = std::move(error);
  } else if (error->code() == ErrorCode::kPermissionDenied) {
    local_failure_ = PermissionError(*error, shared_->setter->name());
  } else {
    local_failure_ = std::move(error);
  }
}

void PowerLimitOptimizer::ApplyOriginal() {
  if (std::optional<Error> error = shared_->Set(original_mw_); error && !local_failure_) local_failure_ = error;
}

void PowerLimitOptimizer::EnterWarmup(std::uint32_t limit_mw) {
  local_rejection_.reset();
  ApplyLimit(limit_mw);
  if (options_.warmup_steps == 0) {
    BeginProfiling();
    return;
  }
  state_ = PowerLimitOptimizerState::kWarmup;
  steps_left_ = options_.warmup_steps;
}

void PowerLimitOptimizer::BeginProfiling() {
  state_ = PowerLimitOptimizerState::kProfiling;
  steps_left_ = options_.profile_steps;
  if (Status s = monitor_.BeginWindow(WindowName()); !s) {
    if (!local_failure_) local_failure_ = s.error();
    return;
  }
  window_open_ = true;
}

void PowerLimitOptimizer::EndProfiling() {
  const std::uint32_t limit_mw = power_limits_mw_[limit_index_];
  double energy_j = 0.0;
  double time_s = 0.0;
  if (window_open_) {
    window_open_ = false;
    auto m = monitor_.EndWindow(WindowName());
    if (!m) {
      if (!local_failure_) local_failure_ = m.error();
    } else {
      time_s = m->time_s;
      for (const auto& g : m->gpus) {
        if (g.error && !local_failure_) {
          local_failure_ = g.error->WithContext(fmt::format("measuring GPU {} at {}", g.index, Watts(limit_mw)));
        }
        energy_j += g.energy_j;
      }
    }
  }
  // Every rank takes the same decision from the same reduced values.
  double sums[] = {energy_j, local_failure_ ? 1.0 : 0.0, local_rejection_ ? 1.0 : 0.0};
  double maxes[] = {time_s};
  Status s = comm_->AllReduce(sums, ReduceOp::kSum);
  if (s) s = comm_->AllReduce(maxes, ReduceOp::kMax);
  if (!s) {
    Disable(s.error());
    return;
  }
  if (sums[1] > 0) {
    Disable(local_failure_ ? *local_failure_
                           : Error(ErrorCode::kUnavailable, "another rank failed to change or measure its GPUs (see "
                                                            "its log)"));
    return;
  }
  if (sums[2] > 0) {
    Log(LogLevel::kWarning,
        fmt::format("the driver rejected the power limit {} ({}); skipping it", Watts(limit_mw),
                    local_rejection_ ? local_rejection_->message() : "on another rank"));
    local_rejection_.reset();
  } else {
    measurements_.push_back({limit_mw / 1000.0, sums[0], maxes[0]});
    Log(LogLevel::kInfo, fmt::format("{}: {:.3f} J in {:.6f} s", Watts(limit_mw), sums[0], maxes[0]));
  }
  if (++limit_index_ < power_limits_mw_.size()) {
    EnterWarmup(power_limits_mw_[limit_index_]);
    return;
  }
  --limit_index_;
  Finish();
}

void PowerLimitOptimizer::Finish() {
  if (measurements_.empty()) {
    Disable(Error(ErrorCode::kInvalidArgument, "the driver rejected every power limit"));
    return;
  }
  auto chosen_w = SelectPowerLimitW(options_.selector, measurements_, total_gpus_);
  if (!chosen_w) {
    Disable(chosen_w.error());
    return;
  }
  const auto chosen_mw = static_cast<std::uint32_t>(std::llround(*chosen_w * 1000.0));
  optimal_mw_ = chosen_mw;
  if (options_.observer_mode) {
    ApplyOriginal();
  } else {
    ApplyLimit(chosen_mw);
  }
  if (local_failure_ || local_rejection_) {
    Disable(local_failure_ ? *local_failure_ : *local_rejection_);
    return;
  }
  state_ = PowerLimitOptimizerState::kDone;
  if (options_.observer_mode) {
    Log(LogLevel::kInfo,
        fmt::format("observer mode: the optimal power limit would be {} (selector {}); the original limits stay",
                    Watts(chosen_mw), options_.selector.Describe()));
  } else {
    Log(LogLevel::kInfo,
        fmt::format("optimal power limit {} (selector {})", Watts(chosen_mw), options_.selector.Describe()));
  }
  if (options_.profile_path && !profile_loaded_ && comm_->rank() == 0) {
    PowerLimitProfileFile file{measurements_, gpu_model_, constraints_mw_, total_gpus_};
    if (Status s = SavePowerLimitProfile(*options_.profile_path, file); !s) {
      Log(LogLevel::kWarning, fmt::format("could not save the profile: {}", s.error().message()));
    } else {
      Log(LogLevel::kInfo, fmt::format("profile saved to {}", *options_.profile_path));
    }
  }
}

void PowerLimitOptimizer::Disable(Error reason) {
  if (window_open_) {
    window_open_ = false;
    (void)monitor_.EndWindow(WindowName(), /*cancel=*/true);
  }
  state_ = PowerLimitOptimizerState::kDisabled;
  // The reason and its advice, once (a user warning in Python); the state
  // keeps the reason, not a second copy of the text in the log.
  Log(LogLevel::kWarning,
      fmt::format("the power-limit optimizer is disabled: {}; training continues at the original power limits, "
                  "unoptimized",
                  reason.message()),
      /*user_warning=*/true);
  disabled_reason_ = std::move(reason);
  if (Status s = shared_->Restore(); !s) Log(LogLevel::kWarning, s.error().message());
}

void PowerLimitOptimizer::OnEpochEnd() {
  if (finished_) return;
  if (state_ != PowerLimitOptimizerState::kWarmup && state_ != PowerLimitOptimizerState::kProfiling) return;
  if (window_open_) {
    window_open_ = false;
    (void)monitor_.EndWindow(WindowName(), /*cancel=*/true);
  }
  Log(LogLevel::kInfo, fmt::format("the epoch ended while profiling {}; it is profiled again from the next step",
                                   Watts(power_limits_mw_[limit_index_])));
  ApplyOriginal();
  state_ = PowerLimitOptimizerState::kReady;
  steps_left_ = 1;
}

Status PowerLimitOptimizer::OnTrainEnd() {
  finished_ = true;
  if (window_open_) {
    window_open_ = false;
    (void)monitor_.EndWindow(WindowName(), /*cancel=*/true);
  }
  return RestoreOriginalLimits();
}

Status PowerLimitOptimizer::RestoreOriginalLimits() { return shared_->Restore(); }

}  // namespace zeus::runtime
