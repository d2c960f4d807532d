// Copyright 2026 The Zeus C++ Authors.

#include "zeus/optimizer/cost.h"

#include <fmt/format.h>

namespace zeus::optimizer {

Status ValidateEta(double eta) {
  if (!(eta >= 0.0 && eta <= 1.0)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("eta must be between 0 and 1 (it weighs energy against time), got {}", eta));
  }
  return OkStatus();
}

}  // namespace zeus::optimizer
