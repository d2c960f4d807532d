// Copyright 2026 The Zeus C++ Authors.
//
// zeus._native.http: one GET with headers and a timeout over zeus_http's
// FetchUrl (http and https), for the providers of zeus.monitor.carbon and
// zeus.monitor.price; and zeus._native.carbon: the offline intensity table of
// zeus::carbon (one lookup for the CLI, the exporter and Python).

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "http/http_fetch.h"
#include "python/src/bindings.h"
#include "zeus/carbon/intensity.h"

namespace zeus::python {
namespace {

py::dict ZoneDict(const carbon::Zone& zone, const carbon::IntensityTable& table) {
  py::dict d;
  d["code"] = zone.code;
  d["name"] = zone.name;
  d["alpha2"] = zone.alpha2;
  d["alpha3"] = zone.alpha3;
  d["year"] = zone.year;
  d["intensity"] = zone.intensity_g_per_kwh;
  d["source"] = table.source;
  d["licence"] = table.licence;
  d["path"] = table.path;
  return d;
}

}  // namespace

void RegisterHttpFetch(py::module_& m) {
  py::module_ http = m.def_submodule("http", "One HTTP(S) GET with a bounded time (zeus_http's FetchUrl).");
  http.def(
      "fetch",
      [](const std::string& url, const std::vector<std::pair<std::string, std::string>>& headers, double timeout_s) {
        if (!(timeout_s > 0) || !std::isfinite(timeout_s)) {
          throw py::value_error("timeout_s must be a positive number of seconds (got " + std::to_string(timeout_s) +
                                ")");
        }
        http::FetchOptions options;
        options.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(timeout_s * 1000)));
        options.headers = headers;
        Result<http::HttpResponse> response;
        {
          py::gil_scoped_release release;
          response = http::FetchUrl(url, options);
        }
        if (!response) ThrowError(response.error());
        return std::make_pair(response->status, py::bytes(response->body));
      },
      py::arg("url"), py::arg("headers"), py::arg("timeout_s"),
      "GET url once; returns (status, body bytes) whatever the status. Raises a zeus.exception error naming the "
      "URL (secrets in the query shown as ***): ZeusUnavailableError (unreachable), ZeusTimeoutError (no answer "
      "within about twice timeout_s), ZeusIOError (broken answer, TLS), ZeusInvalidArgumentError (bad URL).");
  http.def("supports_https", &http::HttpFetchSupportsHttps);
  http.def("redact_url", [](const std::string& url) { return http::RedactUrl(url); });

  py::module_ c = m.def_submodule("carbon", "The offline carbon-intensity table (zeus::carbon).");
  c.def("find_data", [] { return Unwrap(carbon::FindIntensityData()); },
        "The path of the shipped table ($ZEUS_CARBON_DATA first).");
  c.def(
      "lookup",
      [](const std::string& path, const std::string& zone) {
        carbon::IntensityTable table;
        {
          py::gil_scoped_release release;
          Result<carbon::IntensityTable> loaded = carbon::LoadIntensityTable(path);
          py::gil_scoped_acquire acquire;
          table = Unwrap(std::move(loaded));
        }
        return ZoneDict(Unwrap(carbon::LookupZone(table, zone)), table);
      },
      py::arg("path"), py::arg("zone"),
      "The zone (code, alpha-2, alpha-3 or name, any case) of the table at path, as a dict; ZeusNotFoundError "
      "listing close matches.");
  c.def("emissions_grams", &carbon::EmissionsGrams, py::arg("energy_j"), py::arg("intensity_g_per_kwh"));
}

}  // namespace zeus::python
