// Copyright 2026 The Zeus C++ Authors.

#include "bso/router.h"

#include <exception>

#include <fmt/format.h>

#include "http/http_status.h"
#include "zeus/bso/models.h"

namespace zeus::bso {
namespace {

HttpResponse Json(int status, std::string body) { return HttpResponse{status, std::move(body), "application/json"}; }

HttpResponse ErrorResponse(const Error& error) {
  return Json(http::HttpStatusForError(http::kBsoErrorStatuses, error), MessageJson(error.message()));
}

HttpResponse Invalid(const ValidationError& error) { return Json(422, ToJson(error)); }

HttpResponse MissingQuery(std::string_view name) {
  return Invalid(ValidationError{{{{"query", std::string(name)}, "field required"}}});
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 && HexValue(in[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

// HEAD is answered (as GET, the HTTP layer dropping the body) only where GET
// has no side effects: /healthz. GET /jobs/batch_size creates a trial, so a
// HEAD there (a link checker, a proxy's probe) gets 405 with `Allow: GET`, as
// the original FastAPI server answers HEAD on its GET-only routes.
bool IsSafeGet(std::string_view method) { return method == "GET" || method == "HEAD"; }

HttpResponse MethodNotAllowed(std::string_view method, std::string_view path, std::string_view allow) {
  HttpResponse r = Json(405, MessageJson(fmt::format("Method Not Allowed: {} {}; allowed: {}", method, path, allow)));
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

HttpResponse Route(BsoService& service, const HttpRequest& request) {
  const std::string_view target = request.target;
  const std::string_view path = target.substr(0, target.find('?'));
  const std::string_view method = request.method;

  if (path == "/jobs") {
    if (method == "POST") {
      Parsed<JobSpec> spec = ParseJobSpec(request.body);
      if (!spec) return Invalid(spec.error());
      Result<RegisterResult> r = service.RegisterJob(std::move(*spec));
      if (!r) return ErrorResponse(r.error());
      return Json(r->created ? 201 : 200, ToJson(r->job));
    }
    if (method == "DELETE") {
      std::optional<std::string> job_id = QueryParam(target, "job_id");
      if (!job_id) return MissingQuery("job_id");
      if (Status s = service.DeleteJob(*job_id); !s) return ErrorResponse(s.error());
      return Json(200, "null");
    }
    return MethodNotAllowed(method, path, "POST, DELETE");
  }
  if (path == "/jobs/batch_size") {
    if (method == "GET") {
      std::optional<std::string> job_id = QueryParam(target, "job_id");
      if (!job_id) return MissingQuery("job_id");
      Result<TrialId> r = service.NextBatchSize(*job_id);
      if (!r) return ErrorResponse(r.error());
      return Json(200, ToJson(*r));
    }
    return MethodNotAllowed(method, path, "GET");
  }
  if (path == "/report") {
    if (method == "POST") {
      Parsed<TrainingResult> result = ParseTrainingResult(request.body);
      if (!result) return Invalid(result.error());
      Result<ReportResponse> r = service.Report(*result);
      if (!r) return ErrorResponse(r.error());
      return Json(200, ToJson(*r));
    }
    return MethodNotAllowed(method, path, "POST");
  }
  if (path == "/trials") {
    if (method == "PATCH") {
      Parsed<TrialId> trial = ParseTrialId(request.body);
      if (!trial) return Invalid(trial.error());
      if (Status s = service.EndTrial(*trial); !s) return ErrorResponse(s.error());
      return Json(200, "null");
    }
    return MethodNotAllowed(method, path, "PATCH");
  }
  if (path == "/healthz") {
    if (IsSafeGet(method)) {
      if (Status s = service.Health(); !s) {
        return Json(503, MessageJson(fmt::format("database unavailable: {}", s.error().message())));
      }
      return Json(200, R"({"status":"ok"})");
    }
    return MethodNotAllowed(method, path, "GET, HEAD");
  }
  return Json(404, MessageJson(fmt::format("Not Found: no route {}", path)));
}

}  // namespace

std::optional<std::string> QueryParam(std::string_view target, std::string_view name) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  std::optional<std::string> value;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (PercentDecode(pair.substr(0, eq)) == name) {
      // Not returned yet: a later occurrence wins, as in the original server.
      value = eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return value;
}

HttpResponse HandleBsoRequest(BsoService& service, const HttpRequest& request) {
  try {
    return Route(service, request);
  } catch (const std::exception& e) {
    return Json(500, MessageJson(fmt::format("internal error: {}", e.what())));
  }
}

}  // namespace zeus::bso
