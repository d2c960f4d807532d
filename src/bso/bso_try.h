// Copyright 2026 The Zeus C++ Authors.
//
// Error propagation inside the batch-size service's .cc files (private; never
// included by a header). In a function returning Result<T> or Status:
//   BSO_TRY(rows, c.Query(...));  // on error returns it; else `rows` is the value
//   BSO_CHECK(SaveJobState(c, job));  // on error returns it

#ifndef ZEUS_SRC_BSO_BSO_TRY_H_
#define ZEUS_SRC_BSO_BSO_TRY_H_

#include "zeus/base/error.h"

#define BSO_TRY(var, expr)                              \
  auto var##_result = (expr);                           \
  if (!var##_result) return Fail(var##_result.error()); \
  auto& var = *var##_result
#define BSO_CHECK(expr)                                                \
  do {                                                                 \
    if (auto status_ = (expr); !status_) return Fail(status_.error()); \
  } while (false)

#endif  // ZEUS_SRC_BSO_BSO_TRY_H_
