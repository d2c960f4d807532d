// Copyright 2026 The Zeus C++ Authors.

#include "zeus/bso/client.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http/http.h"
#include "http/http_status.h"

namespace zeus::bso {

// The HTTP layer's types, used unqualified here.
using http::FindHeader;
using http::HttpClient;
using http::HttpClientOptions;
using http::HttpRequest;
using http::HttpResponse;
using http::HttpServer;
using http::HttpServerOptions;
namespace {

std::string PercentEncode(std::string_view in) {
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// The server's message: "message", FastAPI's "detail", or the raw body.
std::string ServerMessage(const HttpResponse& r) {
  const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    if (j.contains("detail")) {
      return j["detail"].is_string() ? j["detail"].get<std::string>()
                                     : j["detail"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
  return r.body.substr(0, 500);
}

class BsoClientImpl : public BsoClient {
 public:
  BsoClientImpl(std::unique_ptr<HttpClient> http, std::string url, const ClientOptions& options)
      : http_(std::move(http)), url_(std::move(url)), options_(options) {}

  Result<JobSpec> RegisterJob(const JobSpec& spec) override {
    Parsed<JobSpec> valid = ValidateJobSpec(spec);
    if (!valid) return Fail(ErrorCode::kInvalidArgument, "invalid job spec: " + valid.error().Summary());
    Result<HttpResponse> r = Call("POST", "/jobs", ToJson(*valid), spec.job_id.has_value());
    if (!r) {
      // This endpoint's 409 means that the job id is taken.
      if (r.error().native_space() == NativeSpace::kHttp && r.error().native_code() == 409) {
        return Fail(Error(ErrorCode::kAlreadyExists, r.error().message(), NativeSpace::kHttp, 409));
      }
      return Fail(r.error());
    }
    Parsed<JobSpec> job = ParseJobSpec(r->body);
    if (!job) return Fail(BadAnswer("POST /jobs", job.error().Summary()));
    return *job;
  }

  Result<TrialId> GetBatchSize(std::string_view job_id) override {
    Result<HttpResponse> r = Call("GET", "/jobs/batch_size?job_id=" + PercentEncode(job_id), "", false);
    if (!r) return Fail(r.error());
    Parsed<TrialId> trial = ParseTrialId(r->body);
    if (!trial) return Fail(BadAnswer("GET /jobs/batch_size", trial.error().Summary()));
    return *trial;
  }

  Result<ReportResponse> Report(const TrainingResult& result) override {
    Result<HttpResponse> r = Call("POST", "/report", ToJson(result), true);
    if (!r) return Fail(r.error());
    Parsed<ReportResponse> response = ParseReportResponse(r->body);
    if (!response) return Fail(BadAnswer("POST /report", response.error().Summary()));
    return *response;
  }

  Status EndTrial(const TrialId& trial) override {
    TrialId plain = trial;
    plain.type.reset();
    Result<HttpResponse> r = Call("PATCH", "/trials", ToJson(plain), true);
    if (!r) return Fail(r.error());
    return OkStatus();
  }

  Status DeleteJob(std::string_view job_id) override {
    Result<HttpResponse> r = Call("DELETE", "/jobs?job_id=" + PercentEncode(job_id), "", true);
    if (!r) return Fail(r.error());
    return OkStatus();
  }

  Status Health() override {
    Result<HttpResponse> r = Call("GET", "/healthz", "", true);
    if (!r) return Fail(r.error());
    return OkStatus();
  }

  const std::string& server_url() const override { return url_; }

 private:
  Error BadAnswer(std::string_view what, const std::string& why) const {
    return Error(ErrorCode::kIoError, fmt::format("{}: unexpected answer from {}: {}", what, url_, why));
  }

  // Sends with retries (see the header); a non-2xx answer becomes an error.
  Result<HttpResponse> Call(std::string_view method, const std::string& target, const std::string& body,
                            bool idempotent) {
    const std::string what = fmt::format("{} {}", method, target.substr(0, target.find('?')));
    std::chrono::milliseconds backoff = options_.initial_backoff;
    std::optional<Error> last;
    for (int attempt = 1; attempt <= std::max(1, options_.max_attempts); ++attempt) {
      if (attempt > 1) {
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, options_.max_backoff);
      }
      Result<HttpResponse> r = http_->Send(method, target, body);
      if (!r) {
        last = r.error().WithContext(what);
        const bool retry = r.error().code() == ErrorCode::kUnavailable ||
                           (idempotent && (r.error().code() == ErrorCode::kTimeout ||
                                           r.error().code() == ErrorCode::kIoError));
        if (retry) continue;
        return Fail(*last);
      }
      if (r->status >= 200 && r->status < 300) return r;
      last = Error(http::ErrorCodeForHttpStatus(r->status), fmt::format("{}: {} (HTTP {})", what, ServerMessage(*r), r->status),
                   NativeSpace::kHttp, r->status);
      // 503 and 504: the server committed nothing (busy, a database
      // unavailable, a conflict or a statement timed out); try again.
      if (r->status == 503 || r->status == 504) continue;
      return Fail(*last);
    }
    return Fail(last->WithContext(fmt::format("gave up after {} attempts", options_.max_attempts)));
  }

  std::unique_ptr<HttpClient> http_;
  std::string url_;
  ClientOptions options_;
};

}  // namespace

Result<std::unique_ptr<BsoClient>> BsoClient::Create(std::string_view server_url, const ClientOptions& options) {
  HttpClientOptions http;
  http.connect_timeout = options.connect_timeout;
  http.request_timeout = options.request_timeout;
  Result<std::unique_ptr<HttpClient>> client = HttpClient::Create(server_url, http);
  if (!client) return Fail(client.error());
  std::string url(server_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return std::unique_ptr<BsoClient>(new BsoClientImpl(std::move(*client), std::move(url), options));
}

}  // namespace zeus::bso
