// Copyright 2026 The Zeus C++ Authors.
//
// Maps HTTP requests onto BsoService: the original Zeus REST API
// (../shared/docs/zeus-reference.md 3.1) plus GET /healthz.
//
//   request body or query fails validation -> 422 {"detail": [...], "message"}
//   service error                          -> the status of http::kBsoErrorStatuses
//                                             (src/http/http_status.h) {"message"}
//   unknown path 404, known path with another method 405 with an Allow header
//
// No HEAD has side effects: HEAD is answered as GET (without the body) only
// on GET /healthz; on GET /jobs/batch_size, which creates a trial, it gets
// 405 with `Allow: GET`, as the original (FastAPI) server answers HEAD on a
// GET-only route.
//
// Never throws.

#ifndef ZEUS_SRC_BSO_ROUTER_H_
#define ZEUS_SRC_BSO_ROUTER_H_

#include <optional>
#include <string>
#include <string_view>

#include "http/http.h"
#include "bso/service.h"

namespace zeus::bso {

// The HTTP layer's types, used unqualified here.
using http::FindHeader;
using http::HttpClient;
using http::HttpClientOptions;
using http::HttpRequest;
using http::HttpResponse;
using http::HttpServer;
using http::HttpServerOptions;

HttpResponse HandleBsoRequest(BsoService& service, const HttpRequest& request);

// The value of `name` in the target's query string, percent-decoded
// ('+' is a space); nullopt when absent. When `name` occurs more than once
// the last occurrence wins, as in the original (Starlette's QueryParams).
std::optional<std::string> QueryParam(std::string_view target, std::string_view name);

}  // namespace zeus::bso

#endif  // ZEUS_SRC_BSO_ROUTER_H_
