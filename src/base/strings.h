// Copyright 2026 The Zeus C++ Authors.
//
// Small string helpers shared by the layers above (private to the project:
// src/base). One of each: a parser that needs one of these uses it from here
// instead of keeping its own copy.

#ifndef ZEUS_SRC_BASE_STRINGS_H_
#define ZEUS_SRC_BASE_STRINGS_H_

#include <string_view>

namespace zeus::base {

// `text` without its leading and trailing spaces and horizontal tabs (HTTP's
// optional whitespace; the blanks around list elements such as
// CUDA_VISIBLE_DEVICES="0, 1"). Other characters, '\r' and '\n' included,
// are kept. The result views `text`'s characters.
std::string_view Trim(std::string_view text);

}  // namespace zeus::base

#endif  // ZEUS_SRC_BASE_STRINGS_H_
