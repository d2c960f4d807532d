// Copyright 2026 The Zeus C++ Authors.
//
// Small string helpers shared by the layers above (private to the project:
// src/base). One of each: a parser that needs one of these uses it from here
// instead of keeping its own copy.
//
// Untrusted text (process names, cgroup paths, user names, a driver's GPU
// names: bytes that the system or another user chose) is made valid UTF-8
// once, where it enters (ValidUtf8), so that JSON, Prometheus labels and
// Python always get valid UTF-8; text bound for a terminal has its control
// characters escaped (EscapeControlCharacters) where it is printed.

#ifndef ZEUS_SRC_BASE_STRINGS_H_
#define ZEUS_SRC_BASE_STRINGS_H_

#include <string>
#include <string_view>

namespace zeus::base {

// `text` without its leading and trailing spaces and horizontal tabs (HTTP's
// optional whitespace; the blanks around list elements such as
// CUDA_VISIBLE_DEVICES="0, 1"). Other characters, '\r' and '\n' included,
// are kept. The result views `text`'s characters.
std::string_view Trim(std::string_view text);

// Whether `bytes` is well-formed UTF-8 (RFC 3629 / Unicode's Table 3-7: no
// overlong forms, no surrogates U+D800-U+DFFF, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view bytes);

// `bytes` as valid UTF-8: every well-formed character is kept as it is (NUL
// and other control characters included); each ill-formed sequence becomes
// U+FFFD, one per maximal subpart (Unicode's "substitution of maximal
// subparts", as Python's and ICU's decoders do): a character cut short (the
// kernel's 15-byte comm can end inside one) is one U+FFFD, a lone
// continuation byte or a byte never valid in UTF-8 (C0, C1, F5-FF) is one
// each, an overlong form or a surrogate one per byte.
// Cost: one pass; the result is `bytes` unchanged when it is valid.
std::string ValidUtf8(std::string_view bytes);

// `utf8` (valid UTF-8, e.g. ValidUtf8's result) with every control character
// written as printable text, for a terminal: C0 (U+0000-U+001F) and DEL as
// "\xNN" (ESC is "\x1b"), C1 (U+0080-U+009F) as "\u00NN"; tabs and newlines
// too, so that a line stays one line. Other characters are kept. Text
// without control characters is returned unchanged.
std::string EscapeControlCharacters(std::string_view utf8);

}  // namespace zeus::base

#endif  // ZEUS_SRC_BASE_STRINGS_H_
