// Copyright 2026 The Zeus C++ Authors.

#include "zeus/carbon/intensity.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http/http_fetch.h"
#include "http/http_status.h"

#ifndef ZEUS_CARBON_DATA_INSTALLED
#define ZEUS_CARBON_DATA_INSTALLED ""
#endif
#ifndef ZEUS_CARBON_DATA_SOURCE
#define ZEUS_CARBON_DATA_SOURCE ""
#endif

namespace zeus::carbon {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kFormat = "zeus-carbon-intensity/1";
constexpr std::string_view kUnit = "gCO2eq/kWh";

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string StringField(const json& object, const char* field) {
  const auto it = object.find(field);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string ExeDirectory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

Result<IntensityTable> ParseIntensityTable(std::string_view json_text, std::string_view name) {
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view problem) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("carbon-intensity table {}: {}; regenerate it with scripts/update-carbon-data", name,
                            problem));
  };
  if (doc.is_discarded() || !doc.is_object()) return bad("not a JSON object");
  if (StringField(doc, "format") != kFormat) return bad(fmt::format("its \"format\" is not \"{}\"", kFormat));
  IntensityTable table;
  table.source = StringField(doc, "source");
  table.source_version = StringField(doc, "source_version");
  table.licence = StringField(doc, "licence");
  table.unit = StringField(doc, "unit");
  table.year = StringField(doc, "year");
  if (table.unit != kUnit) return bad(fmt::format("its unit is '{}', expected '{}'", table.unit, kUnit));
  const auto zones = doc.find("zones");
  if (zones == doc.end() || !zones->is_object() || zones->empty()) return bad("it has no \"zones\" object");
  for (const auto& [code, entry] : zones->items()) {
    if (!entry.is_object()) return bad(fmt::format("zone '{}' is not an object", code));
    const auto intensity = entry.find("intensity");
    if (intensity == entry.end() || !intensity->is_number() || !std::isfinite(intensity->get<double>()) ||
        intensity->get<double>() < 0) {
      return bad(fmt::format("zone '{}' has no non-negative \"intensity\"", code));
    }
    const auto year = entry.find("year");
    Zone zone;
    zone.code = code;
    zone.name = StringField(entry, "name");
    zone.alpha2 = StringField(entry, "alpha2");
    zone.alpha3 = StringField(entry, "alpha3");
    zone.year = year != entry.end() && year->is_number_integer() ? year->get<int>() : 0;
    zone.intensity_g_per_kwh = intensity->get<double>();
    table.zones.push_back(std::move(zone));
  }
  return table;
}

Result<IntensityTable> LoadIntensityTable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Fail(Error(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIoError,
                      fmt::format("cannot read the carbon-intensity table {}: {}", path, std::strerror(err)),
                      NativeSpace::kErrno, err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  Result<IntensityTable> table = ParseIntensityTable(text.str(), path);
  if (table) table->path = path;
  return table;
}

Result<std::string> FindIntensityData() {
  if (const char* env = std::getenv("ZEUS_CARBON_DATA"); env != nullptr && *env != '\0') {
    std::error_code ec;
    if (!fs::is_regular_file(env, ec)) {
      return Fail(ErrorCode::kNotFound,
                  fmt::format("ZEUS_CARBON_DATA names {}, which is not a file; point it at a carbon-intensity "
                              "table (data/carbon/intensity.json) or unset it",
                              env));
    }
    return std::string(env);
  }
  std::vector<std::string> candidates;
  if (const std::string exe_dir = ExeDirectory(); !exe_dir.empty()) {
    candidates.push_back((fs::path(exe_dir) / ".." / "share" / "zeus" / "carbon" / "intensity.json").string());
  }
  if (*ZEUS_CARBON_DATA_INSTALLED != '\0') candidates.emplace_back(ZEUS_CARBON_DATA_INSTALLED);
  if (*ZEUS_CARBON_DATA_SOURCE != '\0') candidates.emplace_back(ZEUS_CARBON_DATA_SOURCE);
  for (const std::string& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return fs::path(candidate).lexically_normal().string();
  }
  return Fail(ErrorCode::kNotFound,
              fmt::format("the carbon-intensity table is not installed (looked in {}); set ZEUS_CARBON_DATA to its "
                          "path (data/carbon/intensity.json in zeus's sources)",
                          fmt::join(candidates, ", ")));
}

Result<Zone> LookupZone(const IntensityTable& table, std::string_view query) {
  const std::string wanted = Upper(query);
  if (wanted.empty()) return Fail(ErrorCode::kInvalidArgument, "the carbon zone is empty; give a country code (FR, FRA) "
                                                               "or a region (World, EU)");
  for (const Zone& zone : table.zones) {
    if (Upper(zone.code) == wanted || Upper(zone.alpha2) == wanted || Upper(zone.alpha3) == wanted ||
        Upper(zone.name) == wanted) {
      return zone;
    }
  }
  std::vector<std::pair<std::size_t, std::string>> close;
  for (const Zone& zone : table.zones) {
    std::size_t best = std::string::npos;
    for (const std::string* word : {&zone.code, &zone.alpha2, &zone.alpha3, &zone.name}) {
      if (word->empty()) continue;
      const std::string upper = Upper(*word);
      std::size_t d = EditDistance(wanted, upper);
      if (wanted.size() >= 2 && upper.starts_with(wanted)) d = std::min<std::size_t>(d, 1);
      best = std::min(best, d);
    }
    const std::size_t limit = wanted.size() <= 3 ? 1 : 2;
    if (best <= limit) {
      close.emplace_back(best, zone.alpha2.empty() ? fmt::format("{} ({})", zone.code, zone.name)
                                                   : fmt::format("{}/{} ({})", zone.alpha2, zone.code, zone.name));
    }
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> names;
  for (std::size_t i = 0; i < close.size() && i < 8; ++i) names.push_back(close[i].second);
  const std::string where = table.path.empty() ? std::string("the carbon-intensity table") : table.path;
  return Fail(ErrorCode::kNotFound,
              names.empty()
                  ? fmt::format("carbon zone '{}' is not in {} ({} zones: ISO 3166 alpha-2 or alpha-3 country codes, "
                                "or regions such as World, EU)",
                                query, where, table.zones.size())
                  : fmt::format("carbon zone '{}' is not in {}; close matches: {}", query, where,
                                fmt::join(names, ", ")));
}

std::string LatestIntensityUrl(const ElectricityMapsQuery& query) {
  std::string base = query.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string where = !query.zone.empty()
                          ? fmt::format("zone={}", query.zone)
                          : fmt::format("lat={}&lon={}", query.latitude.value_or(0), query.longitude.value_or(0));
  return fmt::format("{}/v3/carbon-intensity/latest?{}&disableEstimations={}&emissionFactorType={}", base, where,
                     query.estimate ? "False" : "True", query.emission_factor_type);
}

Result<double> FetchLatestIntensity(const ElectricityMapsQuery& query) {
  if (query.zone.empty() && !(query.latitude && query.longitude)) {
    return Fail(ErrorCode::kInvalidArgument, "Electricity Maps: give a zone, or a latitude and a longitude");
  }
  for (char c : query.zone) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_') {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("Electricity Maps zone '{}' has a character other than letters, digits, '-' and '_'",
                              query.zone));
    }
  }
  if (query.emission_factor_type != "direct" && query.emission_factor_type != "lifecycle") {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("emission_factor_type must be 'direct' or 'lifecycle' (got '{}')",
                            query.emission_factor_type));
  }
  const std::string url = LatestIntensityUrl(query);
  http::FetchOptions options;
  options.timeout = query.timeout;
  if (!query.token.empty()) options.headers.emplace_back("auth-token", query.token);
  Result<http::HttpResponse> response = http::FetchUrl(url, options);
  if (!response) return Fail(response.error());
  const json body = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (response->status != 200) {
    std::string detail = response->body.substr(0, 200);
    if (!body.is_discarded() && body.is_object()) {
      for (const char* field : {"message", "error"}) {
        if (body.contains(field) && body[field].is_string()) detail = body[field].get<std::string>();
      }
    }
    return Fail(Error(http::ErrorCodeForHttpStatus(response->status),
                      fmt::format("GET {}: HTTP {}: {}", http::RedactUrl(url), response->status, detail),
                      NativeSpace::kHttp, response->status));
  }
  if (body.is_discarded() || !body.is_object() || !body.contains("carbonIntensity") ||
      !body["carbonIntensity"].is_number()) {
    return Fail(ErrorCode::kNotFound,
                fmt::format("GET {}: the answer has no numeric carbonIntensity", http::RedactUrl(url)));
  }
  return body["carbonIntensity"].get<double>();
}

}  // namespace zeus::carbon
