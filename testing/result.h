// Unwrapping a zeus::Result in test helpers that return values.
//
// A helper that returns a value cannot ASSERT_*, and EXPECT_TRUE(result)
// followed by *result dereferences a failed result. Unwrap instead throws
// when the result holds an error: GoogleTest reports the exception (with the
// error's message and the caller's location) as a failure of the running
// test and goes on with the next test.
#ifndef ZEUS_TESTING_RESULT_H_
#define ZEUS_TESTING_RESULT_H_

#include <source_location>
#include <stdexcept>
#include <string>
#include <utility>

#include "zeus/base/error.h"

namespace zeus::testing {

// The value of `result`; throws std::runtime_error naming the error and the
// caller's file and line when it holds an error.
template <typename T>
T Unwrap(Result<T> result, std::source_location where = std::source_location::current()) {
  if (!result) {
    throw std::runtime_error(std::string(where.file_name()) + ":" + std::to_string(where.line()) +
                             ": unexpected error: " + result.error().message());
  }
  return std::move(*result);
}

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_RESULT_H_
