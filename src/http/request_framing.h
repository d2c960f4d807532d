// Copyright 2026 The Zeus C++ Authors.
//
// Request framing rules that the HTTP parser (Boost.Beast) does not enforce on
// its own (RFC 9112, section 6). Beast frames a request body as chunked only
// when "chunked" is the last transfer coding, and otherwise reads no body at
// all: a request with `Transfer-Encoding: xchunked` or `chunked, identity`
// would have its body run as the next request (request smuggling). The
// server therefore checks the Transfer-Encoding header of every request once
// its head is read, before it reads a body, and answers the verdict below and
// closes the connection when it is not kAccept.

#ifndef ZEUS_SRC_HTTP_REQUEST_FRAMING_H_
#define ZEUS_SRC_HTTP_REQUEST_FRAMING_H_

#include <string>
#include <string_view>
#include <vector>

namespace zeus::http::internal {

struct FramingVerdict {
  enum Kind {
    kAccept,          // no Transfer-Encoding, or exactly "chunked" on HTTP/1.1
    kBadRequest,      // 400 and close: the body's length cannot be known
    kNotImplemented,  // 501 and close: a coding this server does not decode
  };
  Kind kind = kAccept;
  std::string reason;  // empty for kAccept; otherwise names the problem
};

// `values`: every Transfer-Encoding field value of the request, in order
// (several fields are one comma-separated list). `http_version`: 10 or 11.
// Rules: no field is accepted. On HTTP/1.0, any Transfer-Encoding is a 400
// (RFC 9112 6.1: faulty framing). The codings (case-insensitive, optional
// whitespace and empty list elements ignored, parameters after ';' kept as
// part of the check) must end with "chunked", else 400; "chunked" may appear
// only once, else 400; anything before it (gzip, identity, ...) is a 501.
// So the only accepted Transfer-Encoding is "chunked", which Beast frames.
FramingVerdict CheckRequestTransferEncoding(const std::vector<std::string_view>& values, unsigned http_version);

}  // namespace zeus::http::internal

#endif  // ZEUS_SRC_HTTP_REQUEST_FRAMING_H_
