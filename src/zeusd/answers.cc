// Copyright 2026 The Zeus C++ Authors.

#include "zeusd/answers.h"

#include <algorithm>
#include <string>

#include "http/http_status.h"

namespace zeus::zeusd {

using json = nlohmann::json;

http::HttpResponse JsonAnswer(int status, const json& body) {
  http::HttpResponse response;
  response.status = status;
  response.body = body.dump();
  return response;
}

http::HttpResponse EmptyOk() {
  http::HttpResponse response;
  response.status = 200;
  response.content_type.clear();
  return response;
}

http::HttpResponse ErrorAnswer(int status, std::string_view message) {
  return JsonAnswer(status, json{{"error", message}});
}

http::HttpResponse ErrorAnswer(const Error& error) { return ErrorAnswer(ZeusdStatusFor(error), error.message()); }

int ZeusdStatusFor(const Error& error) { return http::HttpStatusForError(http::kZeusdErrorStatuses, error); }

http::HttpResponse DeviceErrors(const std::map<std::size_t, Error>& errors) {
  json body = json::object();
  int status = 400;
  for (const auto& [id, error] : errors) {
    body[std::to_string(id)] = error.message();
    status = std::max(status, ZeusdStatusFor(error));
  }
  return JsonAnswer(status, json{{"errors", body}});
}

}  // namespace zeus::zeusd
