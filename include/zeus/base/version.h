// Copyright 2026 The Zeus C++ Authors.
//
// The project's version: one number for the libraries, the CLIs, the CMake
// package, the Debian packages and the Python wheel, read from the top-level
// VERSION file at configure time.

#ifndef ZEUS_BASE_VERSION_H_
#define ZEUS_BASE_VERSION_H_

#include <string_view>

namespace zeus {

// "MAJOR.MINOR.PATCH", e.g. "0.2.0". The same for every library of one build.
std::string_view Version();

}  // namespace zeus

#endif  // ZEUS_BASE_VERSION_H_
