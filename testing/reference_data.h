// Tests that read the project's reference data (../shared: the NSDI '23
// traces, the original simulator's outputs, numpy's random streams).
//
// The data is outside the tree. Where it is missing, such a test skips with
// the path it looked for, except in CI (the environment variable CI is
// "true" or "1"), where a missing file is a failure: CI has the data, so an
// absent file there means a wrong path, and a suite that skips everything
// would otherwise pass without testing anything.
#ifndef ZEUS_TESTING_REFERENCE_DATA_H_
#define ZEUS_TESTING_REFERENCE_DATA_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace zeus::testing {

// True when `path` names a readable file.
inline bool ReferenceDataPresent(const std::string& path) { return std::ifstream(path).good(); }

// True when running in CI, where missing reference data fails the test.
inline bool ReferenceDataRequired() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  const std::string_view value(ci);
  return value == "true" || value == "1";
}

}  // namespace zeus::testing

// In a test body or SetUp(): returns from it, skipping the test (outside CI)
// or failing it (in CI), when the reference file `path` cannot be read.
#define ZEUS_REQUIRE_REFERENCE_DATA(path)                                                                 \
  do {                                                                                                  \
    const std::string zeus_reference_path_ = (path);                                                    \
    if (!::zeus::testing::ReferenceDataPresent(zeus_reference_path_)) {                                 \
      if (::zeus::testing::ReferenceDataRequired()) {                                                   \
        GTEST_FAIL() << "reference data missing in CI: cannot read " << zeus_reference_path_            \
                     << " (the tests expect the shared data beside the checkout, at ../shared)";        \
      }                                                                                                 \
      GTEST_SKIP() << "reference data not found: cannot read " << zeus_reference_path_                  \
                   << " (put the shared data beside the checkout, at ../shared, to run this test)";     \
    }                                                                                                   \
  } while (0)

#endif  // ZEUS_TESTING_REFERENCE_DATA_H_
