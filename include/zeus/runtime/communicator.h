// Copyright 2026 The Zeus C++ Authors.
//
// zeus::runtime::Communicator: the collectives an in-training-loop optimizer
// needs to make every rank of a data-parallel job take the same decision.
// The power-limit optimizer reduces its measurements through it (energy:
// sum over ranks; time: max over ranks) and checks that all ranks agree on
// the GPU constraints.
//
// Implementations: SingleProcessCommunicator (here; world size 1) and
// MpiCommunicator (zeus/runtime/mpi_communicator.h, target zeus::runtime_mpi,
// built when MPI is found).
//
// Contract for every implementation:
//   * AllReduce is collective: every rank calls it the same number of times,
//     in the same order, with spans of the same length and the same op.
//     A rank that skips a call deadlocks the others (as in MPI).
//   * On success every rank holds the same reduced values.
//   * Failures are values (kUnavailable, kInternal with the library's text).
//
// Thread-safety: one thread at a time per Communicator (as MPI communicators).

#ifndef ZEUS_RUNTIME_COMMUNICATOR_H_
#define ZEUS_RUNTIME_COMMUNICATOR_H_

#include <cstdint>
#include <span>

#include "zeus/base/error.h"

namespace zeus::runtime {

enum class ReduceOp : std::uint8_t { kSum, kMax, kMin };

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's rank in [0, world_size()).
  virtual int rank() const = 0;
  // The number of ranks (processes) in the job; >= 1.
  virtual int world_size() const = 0;
  // Replaces values[i] on every rank by op over all ranks' values[i].
  virtual Status AllReduce(std::span<double> values, ReduceOp op) = 0;
};

// One process, world size 1: AllReduce leaves the values as they are.
class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  Status AllReduce(std::span<double> values, ReduceOp op) override;
};

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_COMMUNICATOR_H_
