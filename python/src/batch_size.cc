// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.batch_size: zeus::BatchSizeOptimizer (the training-loop client
// of `zeus bso-server`) and the job-spec validation, for
// zeus.optimizer.batch_size. The Python layer adds only what is Python's:
// JobSpec as a dataclass, Zeus's exceptions for rank and convergence, and the
// torch.distributed broadcast.
//
// Every call that can reach the service runs with the GIL released and under
// the optimizer's own mutex, so the object may be used from several Python
// threads (calls on one optimizer are serialised).

#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/native_monitor.h"
#include "zeus/bso/job_spec_fields.h"
#include "zeus/bso/models.h"
#include "zeus/runtime/batch_size_optimizer.h"

namespace zeus::python {
namespace {

// The Python type of a field's member (the annotation common.py gives it).
template <class T>
struct PythonType;
template <>
struct PythonType<std::string> {
  static std::string Name() { return "str"; }
};
template <>
struct PythonType<int> {
  static std::string Name() { return "int"; }
};
template <>
struct PythonType<std::int64_t> {
  static std::string Name() { return "int"; }
};
template <>
struct PythonType<double> {
  static std::string Name() { return "float"; }
};
template <>
struct PythonType<bool> {
  static std::string Name() { return "bool"; }
};
template <>
struct PythonType<std::vector<int>> {
  static std::string Name() { return "list[int]"; }
};
template <class T>
struct PythonType<std::optional<T>> {
  static std::string Name() { return "Optional[" + PythonType<T>::Name() + "]"; }
};

template <class Field>
using MemberType = std::remove_cvref_t<decltype(std::declval<bso::JobSpec&>().*(std::declval<Field>().member))>;

// The user's fields of a JobSpec (bso::JobSpecPart::kJob), read from any
// Python object that has them as attributes (zeus.optimizer.batch_size's
// JobSpec dataclass); an extension field the object lacks (Zeus's own
// JobSpec has no "policy") keeps its default, as the service reads an absent
// one. The GPU configuration comes from the monitor's GPUs.
bso::JobSpec JobSpecFromPython(const py::handle& job) {
  bso::JobSpec spec;
  bso::ForEachJobSpecField([&](const auto& field) {
    const std::string name(field.name);
    if (field.part != bso::JobSpecPart::kJob || (field.extension && !py::hasattr(job, name.c_str()))) return;
    spec.*field.member = job.attr(name.c_str()).template cast<MemberType<decltype(field)>>();
  });
  return spec;
}

py::dict JobSpecToDict(const bso::JobSpec& spec) {
  py::dict d;
  bso::ForEachJobSpecField(
      [&](const auto& field) { d[py::str(std::string(field.name))] = py::cast(spec.*field.member); });
  return d;
}

// bso::kJobSpecFields for common.py: one dict per field, in order, with its
// name, Python type, default (JobSpec{}'s), whether a request must carry it,
// its part ("job" or "gpu"), whether it is an extension, and its doc.
py::list JobSpecFields() {
  py::list out;
  const bso::JobSpec defaults;
  bso::ForEachJobSpecField([&](const auto& field) {
    py::dict d;
    d["name"] = std::string(field.name);
    d["type"] = PythonType<MemberType<decltype(field)>>::Name();
    d["default"] = py::cast(defaults.*field.member);
    d["required"] = field.required;
    d["part"] = field.part == bso::JobSpecPart::kJob ? "job" : "gpu";
    d["extension"] = field.extension;
    d["doc"] = std::string(field.doc);
    out.append(std::move(d));
  });
  return out;
}

// The service's rules for the JobSpec fields (bso::ValidateJobSpec), without
// the GPU configuration, which the optimizer fills in later. Returns the
// problems, "field: what is wrong", and the batch sizes sorted as the
// service keeps them.
std::pair<std::vector<std::string>, std::vector<int>> ValidateJob(const py::handle& job) {
  bso::JobSpec spec = JobSpecFromPython(job);
  spec.max_power = 1.0;
  spec.number_of_gpus = 1;
  spec.gpu_model = "-";
  bso::Parsed<bso::JobSpec> checked = bso::ValidateJobSpec(std::move(spec));
  if (checked) return {{}, checked->batch_sizes};
  std::vector<std::string> problems;
  for (const bso::FieldError& e : checked.error().errors) {
    problems.push_back((e.loc.empty() ? std::string() : e.loc.back() + ": ") + e.msg);
  }
  return {problems, {}};
}

using Decision = std::tuple<bool, bool, std::string>;  // stop_train, converged, message

// One zeus::BatchSizeOptimizer and the monitor state it measures with (kept
// alive as long as the optimizer).
class PyBatchSizeOptimizer {
 public:
  PyBatchSizeOptimizer(std::shared_ptr<NativeMonitor> monitor, const std::string& server_url,
                       const py::handle& job, int rank)
      : monitor_(std::move(monitor)) {
    if (!monitor_ || !monitor_->monitor) {
      ThrowError(Error(ErrorCode::kInvalidArgument, "the batch-size optimizer needs a ZeusMonitor"),
                 ErrorDomain::kBatchSize);
    }
    bso::JobSpec spec = JobSpecFromPython(job);
    Result<std::unique_ptr<runtime::BatchSizeOptimizer>> created = [&] {
      ReleaseGil release;
      return runtime::BatchSizeOptimizer::Create(*monitor_->gpus, *monitor_->monitor, server_url, std::move(spec),
                                                 rank);
    }();
    optimizer_ = Unwrap(std::move(created), ErrorDomain::kBatchSize);
  }

  // The destructor may mark an unfinished trial failed on the server (HTTP):
  // without the GIL, unless the interpreter is shutting down.
  ~PyBatchSizeOptimizer() {
    if (PyGILState_Check() && !_Py_IsFinalizing()) {
      ReleaseGil release;
      Reset();
    } else {
      Reset();
    }
  }
  PyBatchSizeOptimizer(const PyBatchSizeOptimizer&) = delete;
  PyBatchSizeOptimizer& operator=(const PyBatchSizeOptimizer&) = delete;

  int GetBatchSize() {
    return Unwrap(Locked([](runtime::BatchSizeOptimizer& o) { return o.GetBatchSize(); }), ErrorDomain::kBatchSize);
  }

  void AdoptTrial(const std::string& job_id, int batch_size, int trial_number) {
    Unwrap(Locked([&](runtime::BatchSizeOptimizer& o) {
             return o.AdoptTrial(bso::TrialId{job_id, batch_size, trial_number, std::nullopt});
           }),
           ErrorDomain::kBatchSize);
  }

  void OnTrainBegin() {
    Unwrap(Locked([](runtime::BatchSizeOptimizer& o) { return o.OnTrainBegin(); }), ErrorDomain::kBatchSize);
  }

  void OnEpochEnd() {
    Unwrap(Locked([](runtime::BatchSizeOptimizer& o) { return o.OnEpochEnd(); }), ErrorDomain::kBatchSize);
  }

  Decision OnEvaluate(double metric) {
    return ToTuple(Unwrap(Locked([&](runtime::BatchSizeOptimizer& o) { return o.OnEvaluate(metric); }),
                          ErrorDomain::kBatchSize));
  }

  Decision Finish(double metric) {
    return ToTuple(
        Unwrap(Locked([&](runtime::BatchSizeOptimizer& o) { return o.Finish(metric); }), ErrorDomain::kBatchSize));
  }

  // Read-only state, copied out under the lock.
  struct State {
    bso::JobSpec job;
    std::optional<int> batch_size;
    int trial_number = 0;
    int epoch = 0;
    bool finished = false;
    double time_s = 0;
    double energy_j = 0;
  };
  State Snapshot() {
    ReleaseGil release;
    std::lock_guard lock(mutex_);
    const runtime::BatchSizeOptimizer& o = *optimizer_;
    return State{o.job(), o.batch_size(), o.trial_number(), o.current_epoch(), o.training_finished(), o.time_s(),
                 o.energy_j()};
  }

 private:
  // Runs f on the optimizer without the GIL, under the lock.
  template <class F>
  std::invoke_result_t<F, runtime::BatchSizeOptimizer&> Locked(F&& f) {
    ReleaseGil release;
    std::lock_guard lock(mutex_);
    return f(*optimizer_);
  }

  static Decision ToTuple(const runtime::EpochDecision& d) { return {d.stop_train, d.converged, d.message}; }

  void Reset() {
    std::lock_guard lock(mutex_);
    optimizer_.reset();  // before the monitor it measures with
  }

  std::shared_ptr<NativeMonitor> monitor_;
  std::mutex mutex_;
  std::unique_ptr<runtime::BatchSizeOptimizer> optimizer_;
};

}  // namespace

void RegisterBatchSize(py::module_& m) {
  py::module_ bs = m.def_submodule("batch_size", "zeus::BatchSizeOptimizer, for zeus.optimizer.batch_size.");
  bs.def("job_spec_fields", &JobSpecFields,
         "JobSpec's fields, in order (bso::kJobSpecFields): dicts of name, type, default, required, part ('job' "
         "or 'gpu'), extension, doc.");
  bs.def("validate_job", &ValidateJob, py::arg("job"),
         "The service's rules for a JobSpec's fields: (problems as 'field: message', sorted batch sizes).");

  py::class_<PyBatchSizeOptimizer>(bs, "BatchSizeOptimizer")
      .def(py::init<std::shared_ptr<NativeMonitor>, const std::string&, const py::handle&, int>(), py::arg("monitor"),
           py::arg("server_url"), py::arg("job"), py::arg("rank") = 0,
           "Registers the job (rank 0) with the service at server_url; the GPU configuration comes from the "
           "monitor's GPUs.")
      .def("get_batch_size", &PyBatchSizeOptimizer::GetBatchSize)
      .def("adopt_trial", &PyBatchSizeOptimizer::AdoptTrial, py::arg("job_id"), py::arg("batch_size"),
           py::arg("trial_number"))
      .def("on_train_begin", &PyBatchSizeOptimizer::OnTrainBegin)
      .def("on_epoch_end", &PyBatchSizeOptimizer::OnEpochEnd)
      .def("on_evaluate", &PyBatchSizeOptimizer::OnEvaluate, py::arg("metric"),
           "Reports; returns (stop_train, converged, message).")
      .def("finish", &PyBatchSizeOptimizer::Finish, py::arg("metric"))
      .def_property_readonly("job", [](PyBatchSizeOptimizer& self) { return JobSpecToDict(self.Snapshot().job); })
      .def_property_readonly("batch_size", [](PyBatchSizeOptimizer& self) { return self.Snapshot().batch_size; })
      .def_property_readonly("trial_number", [](PyBatchSizeOptimizer& self) { return self.Snapshot().trial_number; })
      .def_property_readonly("current_epoch", [](PyBatchSizeOptimizer& self) { return self.Snapshot().epoch; })
      .def_property_readonly("training_finished",
                             [](PyBatchSizeOptimizer& self) { return self.Snapshot().finished; })
      .def_property_readonly("time_s", [](PyBatchSizeOptimizer& self) { return self.Snapshot().time_s; })
      .def_property_readonly("energy_j", [](PyBatchSizeOptimizer& self) { return self.Snapshot().energy_j; });
}

}  // namespace zeus::python
