// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's answers (private to src/zeusd): JSON bodies, and errors as zeusd
// writes them, {"error": "<message>"} or, for failures of several devices,
// {"errors": {"<id>": "<message>"}} with the worst status among them. An
// error's status is zeusd's table of the HTTP layer (http::kZeusdErrorStatuses
// in src/http/http_status.h), or the status the error carries (a GPU past
// its deadline: 503).

#ifndef ZEUS_SRC_ZEUSD_ANSWERS_H_
#define ZEUS_SRC_ZEUSD_ANSWERS_H_

#include <cstddef>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "http/http.h"
#include "zeus/base/error.h"

namespace zeus::zeusd {

http::HttpResponse JsonAnswer(int status, const nlohmann::json& body);

// 200 with an empty body and no content type (a write's success).
http::HttpResponse EmptyOk();

// {"error": message} with `status`.
http::HttpResponse ErrorAnswer(int status, std::string_view message);
// {"error": error's message} with the error's status.
http::HttpResponse ErrorAnswer(const Error& error);

// The status zeusd answers for `error`.
int ZeusdStatusFor(const Error& error);

// {"errors": {"<id>": "<message>"}} with the worst (highest) status among the
// errors, at least 400. REQUIRES: `errors` is not empty.
http::HttpResponse DeviceErrors(const std::map<std::size_t, Error>& errors);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_ANSWERS_H_
