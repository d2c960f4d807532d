// Copyright 2026 The Zeus C++ Authors.

#include "zeus/base/version.h"

#ifndef ZEUS_VERSION
#error "ZEUS_VERSION is defined by src/CMakeLists.txt from the top-level VERSION file"
#endif

namespace zeus {

std::string_view Version() { return ZEUS_VERSION; }

}  // namespace zeus
