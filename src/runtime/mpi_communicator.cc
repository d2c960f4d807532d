// Copyright 2026 The Zeus C++ Authors.

#include "zeus/runtime/mpi_communicator.h"

#include <string>

#include <fmt/format.h>

namespace zeus::runtime {
namespace {

Error MpiError(int rc, std::string_view what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  return Error(ErrorCode::kInternal, fmt::format("{}: MPI error {}: {}", what, rc, std::string(text, length)));
}

}  // namespace

Result<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create(MPI_Comm comm) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return Fail(ErrorCode::kFailedPrecondition,
                "MPI is not initialised (call MPI_Init before creating an MpiCommunicator, and keep it until "
                "the communicator is destroyed)");
  }
  MPI_Comm dup = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(comm, &dup); rc != MPI_SUCCESS) return Fail(MpiError(rc, "duplicating the communicator"));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(dup, &rank);
  MPI_Comm_size(dup, &size);
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(dup, rank, size));
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Status MpiCommunicator::AllReduce(std::span<double> values, ReduceOp op) {
  if (values.empty()) return OkStatus();
  MPI_Op mpi_op = MPI_SUM;
  if (op == ReduceOp::kMax) mpi_op = MPI_MAX;
  if (op == ReduceOp::kMin) mpi_op = MPI_MIN;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, mpi_op, comm_);
  if (rc != MPI_SUCCESS) return Fail(MpiError(rc, "all-reduce across ranks"));
  return OkStatus();
}

}  // namespace zeus::runtime
