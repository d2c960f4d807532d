// Copyright 2026 The Zeus C++ Authors.
//
// libFuzzer target for the batch-size service's request handling: JSON
// parsing and validation, routing, and the service's transactions on SQLite.
// The first input byte picks the route; the rest is the body (or the job id).
// Any answer of 500 or more, a crash, a leak or undefined behaviour is a
// finding.

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>

#include "bso/router.h"
#include "bso/service.h"

namespace {

char g_path[] = "/tmp/zeus-bso-fuzz-XXXXXX";

void RemoveDatabase() {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((std::string(g_path) + suffix).c_str());
}

zeus::bso::BsoService& Service() {
  static std::unique_ptr<zeus::bso::BsoService> service = [] {
    const int fd = mkstemp(g_path);
    if (fd >= 0) close(fd);
    std::atexit(RemoveDatabase);
    auto s = zeus::bso::BsoService::Open(std::string("sqlite:///") + g_path);
    if (!s) {
      std::fprintf(stderr, "cannot open the service: %s\n", s.error().message().c_str());
      std::abort();
    }
    // A job for reports and trials to refer to.
    zeus::bso::HandleBsoRequest(**s, {"POST", "/jobs",
                                      R"({"job_id": "f-1", "job_id_prefix": "f", "batch_sizes": [8, 16, 32],
                                          "default_batch_size": 16, "max_power": 300, "number_of_gpus": 1,
                                          "gpu_model": "A40", "mab_seed": 1})",
                                      "application/json"});
    return std::move(*s);
  }();
  return *service;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  zeus::bso::HttpRequest request;
  switch (data[0] % 7) {
    case 0: request = {"POST", "/jobs", rest, "application/json"}; break;
    case 1: request = {"POST", "/report", rest, "application/json"}; break;
    case 2: request = {"PATCH", "/trials", rest, "application/json"}; break;
    case 3: request = {"GET", "/jobs/batch_size?job_id=" + rest, "", ""}; break;
    case 4: request = {"GET", "/jobs/batch_size?job_id=f-1", "", ""}; break;
    case 5: request = {"DELETE", "/jobs?job_id=" + rest, "", ""}; break;
    default: request = {"GET", rest, "", ""}; break;
  }
  const zeus::bso::HttpResponse response = zeus::bso::HandleBsoRequest(Service(), request);
  if (response.status >= 500) {
    std::fprintf(stderr, "%s %s -> %d %s\n", request.method.c_str(), request.target.c_str(), response.status,
                 response.body.c_str());
    std::abort();
  }
  return 0;
}
