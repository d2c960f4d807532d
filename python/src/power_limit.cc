// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.power_limit: zeus::runtime::PowerLimitOptimizer for
// zeus.optimizer.power_limit (python/zeus/optimizer/power_limit.py).
//
//   Optimizer(monitor, wait_steps, warmup_steps, profile_steps, pl_step_w, profile_path,
//             selector, all_reduce, rank, world_size, sync, observer_mode=False)
//   Optimizer.what_if(steps_per_epoch, epochs, eta, max_slowdown) -> JSON text
//             (zeus::runtime::PowerLimitWhatIfJson; baseline: the original limit)
//
// `selector` is ("energy" | "time" | "zeus_cost" | "max_slowdown", value) for
// the built-in selectors, or ("custom", callable(measurements, total_gpus) ->
// limit W, name) for a user's OptimumSelector subclass; `measurements` is a
// list of (power_limit_w, energy_j, time_s). `all_reduce` (None: one process)
// is zeus.utils.framework.all_reduce: callable(list[float], "sum" | "max") ->
// list[float]. `sync` (None: no sync) is called before the step whose
// on_step_begin opens or closes a profiling window (ZeusMonitor's framework
// sync, as Zeus's begin_window/end_window(sync_execution=True) do).
//
// The GIL: hooks that may change limits, open or close windows or talk to
// other ranks run with the GIL released (ReleaseGil); the selector and the
// all-reduce are Python and take it back. A hook in Done or Disabled returns before
// releasing anything (the per-step cost outside profiling).
//
// Python exceptions: an exception raised by the selector or the all-reduce
// becomes a native error, which disables the optimizer (the original limits
// are put back, as for any other failure); the exception itself is then
// raised again from the hook (or the constructor) that called it, so a bug in
// user code is not silent.
//
// Logging: the optimizer logs through the process's log seam (component
// "power-limit-optimizer"; python/src/log.h): records of a call from Python
// reach the `zeus.power_limit_optimizer` logger (and the Disabled advice
// `warnings`) when the call returns, on the caller's thread. The exit paths
// (the restore on SIGTERM and SIGINT, std::terminate, std::exit) write their
// one line to stderr themselves (options.exit_log): the process ends right
// after, before the seam's delivery thread could hand it to Python, as the
// seam itself does once the interpreter is finalising.

#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/optimizer/cost.h"
#include "zeus/runtime/communicator.h"
#include "zeus/runtime/power_limit_optimizer.h"
#include "zeus/runtime/power_limit_what_if.h"

namespace zeus::python {
namespace {

using runtime::PowerLimitOptimizer;
using runtime::PowerLimitOptimizerState;
using MeasurementTuple = std::tuple<double, double, double>;

// What Python code called by the optimizer raised, kept to raise it again
// after the native call returns. Touched only with the GIL held.
struct PendingException {
  std::optional<py::error_already_set> error;

  // Keeps the exception being handled (the first one wins); returns
  // "Type: message" (the traceback stays with the exception, which is
  // raised again, so the log does not repeat it).
  std::string Keep(py::error_already_set& e) {
    std::string what;
    try {
      what = py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>();
    } catch (const std::exception&) {
      what = e.what();
    }
    if (!error) error.emplace(std::move(e));
    return what;
  }
  void RaiseIfAny() {
    if (!error) return;
    py::error_already_set e = std::move(*error);
    error.reset();
    throw e;
  }
};

// torch.distributed through zeus.utils.framework.all_reduce (a Python
// callable), called with the GIL taken back.
class PythonCommunicator final : public runtime::Communicator {
 public:
  PythonCommunicator(py::object all_reduce, int rank, int world_size, PendingException& pending)
      : all_reduce_(std::move(all_reduce)), rank_(rank), world_size_(world_size), pending_(pending) {}
  ~PythonCommunicator() override {
    py::gil_scoped_acquire gil;
    all_reduce_ = py::object();
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

  Status AllReduce(std::span<double> values, runtime::ReduceOp op) override {
    py::gil_scoped_acquire gil;
    // all_reduce knows "sum" and "max"; min is max of the negated values.
    const double sign = op == runtime::ReduceOp::kMin ? -1.0 : 1.0;
    try {
      py::list in;
      for (double v : values) in.append(sign * v);
      py::list out = all_reduce_(in, op == runtime::ReduceOp::kSum ? "sum" : "max");
      if (out.size() != values.size()) {
        return Fail(ErrorCode::kInternal, fmt::format("all_reduce returned {} values for {}; expected the same count",
                                                      out.size(), values.size()));
      }
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = sign * out[i].cast<double>();
      return OkStatus();
    } catch (py::error_already_set& e) {
      return Fail(ErrorCode::kUnavailable, fmt::format("torch.distributed all_reduce raised {}", pending_.Keep(e)));
    } catch (const py::cast_error& e) {
      return Fail(ErrorCode::kInternal, fmt::format("all_reduce returned something that is not numbers: {}",
                                                    e.what()));
    }
  }

 private:
  py::object all_reduce_;
  int rank_;
  int world_size_;
  PendingException& pending_;
};

// A built-in selector from its spec: (kind, eta or factor).
runtime::OptimumSelector BuiltinSelector(const py::tuple& spec) {
  const auto kind = spec[0].cast<std::string>();
  if (kind == "energy") return runtime::OptimumSelector::Energy();
  if (kind == "time") return runtime::OptimumSelector::Time();
  if (kind == "zeus_cost") return runtime::OptimumSelector::ZeusCost(spec[1].cast<double>());
  if (kind == "max_slowdown") return runtime::OptimumSelector::MaxSlowdown(spec[1].cast<double>());
  throw py::value_error("unknown selector kind '" + kind + "'");
}

// A user's OptimumSelector subclass: select(measurements) through a Python
// callable(list[(W, J, s)], total_gpus) -> W.
runtime::CustomOptimumSelector PythonSelector(std::shared_ptr<py::object> select, PendingException& pending) {
  return [select = std::move(select), &pending](std::span<const optimizer::PowerLimitMeasurement> measurements,
                                               int total_gpus) -> Result<double> {
    py::gil_scoped_acquire gil;
    try {
      py::list in;
      for (const auto& m : measurements) in.append(py::make_tuple(m.power_limit_w, m.energy_j, m.time_s));
      return (*select)(in, total_gpus).cast<double>();
    } catch (py::error_already_set& e) {
      return Fail(ErrorCode::kInternal, fmt::format("the optimum selector raised {}", pending.Keep(e)));
    } catch (const py::cast_error&) {
      return Fail(ErrorCode::kInvalidArgument, "the optimum selector's select() must return a power limit in W "
                                               "(a number)");
    }
  };
}

class NativePowerLimitOptimizer {
 public:
  NativePowerLimitOptimizer(std::shared_ptr<NativeMonitor> monitor, int wait_steps, int warmup_steps,
                            int profile_steps, double pl_step_w, std::optional<std::string> profile_path,
                            const py::tuple& selector, py::object all_reduce, int rank, int world_size,
                            py::object sync, bool observer_mode)
      : monitor_(std::move(monitor)), sync_(std::move(sync)), warmup_steps_(warmup_steps),
        profile_steps_(profile_steps) {
    if (!monitor_ || !monitor_->monitor) throw py::value_error("the monitor has no native Monitor");
    CheckNotForked(*monitor_, "ZeusMonitor");
    runtime::PowerLimitOptimizerOptions options;
    options.wait_steps = wait_steps;
    options.warmup_steps = warmup_steps;
    options.profile_steps = profile_steps;
    options.power_limit_stride_w = pl_step_w;
    options.observer_mode = observer_mode;
    options.profile_path = std::move(profile_path);
    options.selector = Selector(selector);
    options.exit_log = [](std::string_view line) {
      const std::string text = "zeus: power-limit-optimizer: " + std::string(line) + "\n";
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    };
    if (!all_reduce.is_none()) {
      communicator_ = std::make_unique<PythonCommunicator>(std::move(all_reduce), rank, world_size, pending_);
      options.communicator = communicator_.get();
    }
    Result<std::unique_ptr<PowerLimitOptimizer>> created = Fail(ErrorCode::kInternal, "not created");
    Call([&] { created = PowerLimitOptimizer::Create(*monitor_->gpus, *monitor_->monitor, std::move(options)); });
    optimizer_ = Unwrap(std::move(created), ErrorDomain::kGpu);
    pending_.RaiseIfAny();
  }

  ~NativePowerLimitOptimizer() {
    // In a forked child (the monitor says so) the limits are the parent's:
    // leave them, and the native objects, alone.
    if (monitor_->forked.load()) {
      (void)optimizer_.release();
      (void)communicator_.release();
      return;
    }
    // The optimizer restores (NVML only) and goes before the communicator and
    // selector it calls. Python objects are released with the GIL (held by
    // pybind11's deallocation).
    optimizer_.reset();
    communicator_.reset();
  }

  // Done and Disabled return before anything else: the per-step cost.
  void OnStepBegin() {
    const PowerLimitOptimizerState s = optimizer_->state();
    if (s == PowerLimitOptimizerState::kDone || s == PowerLimitOptimizerState::kDisabled) return;
    CheckNotForked(*monitor_, "GlobalPowerLimitOptimizer");
    if (!sync_.is_none() && OpensOrClosesAWindow()) sync_();
    Call([this] { optimizer_->OnStepBegin(); });
  }
  void OnEpochEnd() {
    const PowerLimitOptimizerState s = optimizer_->state();
    if (s != PowerLimitOptimizerState::kWarmup && s != PowerLimitOptimizerState::kProfiling) return;
    CheckNotForked(*monitor_, "GlobalPowerLimitOptimizer");
    Call([this] { optimizer_->OnEpochEnd(); });
  }
  void OnTrainEnd() {
    CheckNotForked(*monitor_, "GlobalPowerLimitOptimizer");
    Status status = OkStatus();
    Call([&] { status = optimizer_->OnTrainEnd(); });
    Unwrap(std::move(status), ErrorDomain::kGpu);
  }
  void Restore() {
    CheckNotForked(*monitor_, "GlobalPowerLimitOptimizer");
    Status status = OkStatus();
    Call([&] { status = optimizer_->RestoreOriginalLimits(); });
    Unwrap(std::move(status), ErrorDomain::kGpu);
  }

  // (state name, limit mW (the next/current one, or the optimum), steps left, disabled reason or None).
  py::tuple State() const {
    const PowerLimitOptimizerState s = optimizer_->state();
    std::uint32_t limit_mw = optimizer_->current_power_limit_mw();
    if (s == PowerLimitOptimizerState::kDone) limit_mw = optimizer_->optimal_power_limit_mw().value_or(0);
    py::object reason = py::none();
    if (const auto& r = optimizer_->disabled_reason()) reason = py::str(r->message());
    return py::make_tuple(std::string(runtime::PowerLimitOptimizerStateName(s)), limit_mw, optimizer_->steps_left(),
                          reason);
  }
  std::vector<MeasurementTuple> Measurements() const {
    std::vector<MeasurementTuple> out;
    for (const auto& m : optimizer_->measurements()) out.emplace_back(m.power_limit_w, m.energy_j, m.time_s);
    return out;
  }
  std::vector<std::uint32_t> PowerLimits() const { return optimizer_->power_limits_mw(); }
  std::vector<std::uint32_t> OriginalPowerLimits() const { return optimizer_->original_power_limits_mw(); }
  int TotalGpus() const { return optimizer_->total_gpus(); }
  bool ProfileLoaded() const { return optimizer_->profile_loaded(); }
  bool Restored() const { return optimizer_->restored(); }

  // The observer report over this optimizer's measurements (pure arithmetic: no GIL release needed).
  std::string WhatIf(std::int64_t steps_per_epoch, std::int64_t epochs, double eta, double max_slowdown) const {
    runtime::PowerLimitWhatIfOptions options;
    options.profile_steps = profile_steps_;
    options.steps_per_epoch = steps_per_epoch;
    options.epochs = epochs;
    options.total_gpus = optimizer_->total_gpus();
    options.eta = eta;
    options.max_slowdown = max_slowdown;
    const auto& originals = optimizer_->original_power_limits_mw();
    if (!originals.empty() &&
        std::all_of(originals.begin(), originals.end(), [&](auto mw) { return mw == originals.front(); })) {
      options.baseline_power_limit_w = originals.front() / 1000.0;
    }
    return runtime::PowerLimitWhatIfJson(
        Unwrap(runtime::ComputePowerLimitWhatIf(optimizer_->measurements(), options)));
  }

 private:
  runtime::OptimumSelector Selector(const py::tuple& spec) {
    if (spec[0].cast<std::string>() == "custom") {
      // Released with the GIL held: the lambda may be destroyed on any path.
      auto select = std::shared_ptr<py::object>(new py::object(spec[1]), [](py::object* o) {
        py::gil_scoped_acquire gil;
        delete o;
      });
      return runtime::OptimumSelector::Custom(PythonSelector(std::move(select), pending_),
                                              spec[2].cast<std::string>());
    }
    return BuiltinSelector(spec);
  }

  // Whether the next OnStepBegin opens or closes a profiling window.
  bool OpensOrClosesAWindow() const {
    if (optimizer_->steps_left() != 1) return false;
    switch (optimizer_->state()) {
      case PowerLimitOptimizerState::kWarmup:
      case PowerLimitOptimizerState::kProfiling: return true;
      case PowerLimitOptimizerState::kReady: return warmup_steps_ == 0;
      default: return false;
    }
  }

  // Runs `f` without the GIL (its log records are delivered when the GIL is
  // back), then raises what Python code raised meanwhile.
  template <class F>
  void Call(F&& f) {
    {
      ReleaseGil release;
      f();
    }
    pending_.RaiseIfAny();
  }

  std::shared_ptr<NativeMonitor> monitor_;  // keeps the devices and the Monitor alive
  py::object sync_;
  int warmup_steps_;
  int profile_steps_;
  PendingException pending_;
  std::unique_ptr<PythonCommunicator> communicator_;
  std::unique_ptr<PowerLimitOptimizer> optimizer_;  // last: destroyed first
};

}  // namespace

void RegisterPowerLimit(py::module_& m) {
  py::module_ pl = m.def_submodule("power_limit", "zeus::runtime::PowerLimitOptimizer (use zeus.optimizer.power_limit)");

  pl.def(
      "zeus_cost",
      [](double energy_j, double time_s, double eta, double max_power_w) {
        Unwrap(optimizer::ValidateEta(eta));
        return optimizer::ZeusCost(energy_j, time_s, eta, max_power_w);
      },
      py::arg("energy"), py::arg("time"), py::arg("eta_knob"), py::arg("max_power"),
      "eta*energy + (1-eta)*max_power*time (zeus::optimizer::ZeusCost); eta outside [0, 1] is a ValueError.");

  pl.def(
      "select",
      [](const py::tuple& selector, const std::vector<MeasurementTuple>& measurements, int total_gpus) {
        std::vector<optimizer::PowerLimitMeasurement> in;
        for (const auto& [w, j, t] : measurements) in.push_back({w, j, t});
        return Unwrap(runtime::SelectPowerLimitW(BuiltinSelector(selector), in, total_gpus));
      },
      py::arg("selector"), py::arg("measurements"), py::arg("total_gpus"),
      "The built-in selector's choice (W) from (power_limit_w, energy_j, time_s) measurements.");

  py::class_<NativePowerLimitOptimizer>(pl, "Optimizer")
      .def(py::init<std::shared_ptr<NativeMonitor>, int, int, int, double, std::optional<std::string>,
                    const py::tuple&, py::object, int, int, py::object, bool>(),
           py::arg("monitor"), py::arg("wait_steps"), py::arg("warmup_steps"), py::arg("profile_steps"),
           py::arg("pl_step_w"), py::arg("profile_path"), py::arg("selector"), py::arg("all_reduce"),
           py::arg("rank"), py::arg("world_size"), py::arg("sync"),
           py::arg("observer_mode") = false)
      .def("on_step_begin", &NativePowerLimitOptimizer::OnStepBegin)
      .def("on_epoch_end", &NativePowerLimitOptimizer::OnEpochEnd)
      .def("on_train_end", &NativePowerLimitOptimizer::OnTrainEnd)
      .def("restore", &NativePowerLimitOptimizer::Restore)
      .def("state", &NativePowerLimitOptimizer::State)
      .def("measurements", &NativePowerLimitOptimizer::Measurements)
      .def("power_limits_mw", &NativePowerLimitOptimizer::PowerLimits)
      .def("original_power_limits_mw", &NativePowerLimitOptimizer::OriginalPowerLimits)
      .def("total_gpus", &NativePowerLimitOptimizer::TotalGpus)
      .def("profile_loaded", &NativePowerLimitOptimizer::ProfileLoaded)
      .def("restored", &NativePowerLimitOptimizer::Restored)
      .def("what_if", &NativePowerLimitOptimizer::WhatIf, py::arg("steps_per_epoch"), py::arg("epochs"),
           py::arg("eta"), py::arg("max_slowdown"));
}

}  // namespace zeus::python
