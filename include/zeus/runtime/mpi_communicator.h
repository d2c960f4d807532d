// Copyright 2026 The Zeus C++ Authors.
//
// A Communicator over MPI (tested with OpenMPI). Part of the separate target
// zeus::runtime_mpi, built only where CMake finds MPI; programs that do not
// use MPI never link it.
//
//   MPI_Init(&argc, &argv);
//   auto comm = zeus::runtime::MpiCommunicator::Create(MPI_COMM_WORLD).value();
//   options.communicator = comm.get();
//   ... train ...
//   comm.reset();          // before MPI_Finalize
//   MPI_Finalize();
//
// The communicator works on a duplicate of the given MPI communicator, so its
// collectives never match the program's own, and that duplicate returns MPI
// errors (MPI_ERRORS_RETURN) which become kInternal errors carrying MPI's
// message instead of aborting the job.
//
// Thread-safety: as MPI's; use one thread at a time.

#ifndef ZEUS_RUNTIME_MPI_COMMUNICATOR_H_
#define ZEUS_RUNTIME_MPI_COMMUNICATOR_H_

#include <mpi.h>

#include <memory>

#include "zeus/runtime/communicator.h"

namespace zeus::runtime {

class MpiCommunicator final : public Communicator {
 public:
  // REQUIRES: MPI is initialised and stays so until this object is destroyed.
  // Errors: kFailedPrecondition if MPI is not initialised (or already
  // finalised); kInternal if duplicating `comm` fails.
  static Result<std::unique_ptr<MpiCommunicator>> Create(MPI_Comm comm = MPI_COMM_WORLD);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  Status AllReduce(std::span<double> values, ReduceOp op) override;

 private:
  MpiCommunicator(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {}
  MPI_Comm comm_;
  int rank_;
  int size_;
};

}  // namespace zeus::runtime

#endif  // ZEUS_RUNTIME_MPI_COMMUNICATOR_H_
