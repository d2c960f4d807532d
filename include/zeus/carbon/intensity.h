// Copyright 2026 The Zeus C++ Authors.
//
// Carbon intensity of electricity, for `zeus monitor --carbon`, `zeus
// exporter --carbon` and the Python package (zeus.monitor.carbon): the
// offline table shipped with zeus (Ember's yearly averages per country and
// region, data/carbon/intensity.json, see data/carbon/README.md), looked up
// by zone code, and Electricity Maps' latest intensity over the network.
//
// Units: intensity in gCO2eq/kWh, energy in J, emissions in gCO2eq.

#ifndef ZEUS_CARBON_INTENSITY_H_
#define ZEUS_CARBON_INTENSITY_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::carbon {

inline constexpr double kJoulesPerKwh = 3.6e6;

// gCO2eq emitted by `energy_j` of electricity at `intensity_g_per_kwh`.
inline double EmissionsGrams(double energy_j, double intensity_g_per_kwh) {
  return energy_j / kJoulesPerKwh * intensity_g_per_kwh;
}

// One row of the table: a country (ISO 3166 codes) or a region ("EU", "World").
struct Zone {
  std::string code;    // the table's key: alpha-3 for countries ("FRA"), else the region's name ("World")
  std::string name;    // "France"
  std::string alpha2;  // "FR", or empty
  std::string alpha3;  // "FRA", or empty
  int year = 0;        // the year the figure is for
  double intensity_g_per_kwh = 0;
};

struct IntensityTable {
  std::string path;            // where it was read from ("" when from text)
  std::string source;          // e.g. "Ember, yearly electricity data ..."
  std::string source_version;  // e.g. "co2.js commit ..."
  std::string licence;         // licence and attribution, to show with the figures
  std::string unit;            // "gCO2eq/kWh"
  std::string year;            // e.g. "2022-2024"
  std::vector<Zone> zones;     // in the file's order
};

// Parses the table (format "zeus-carbon-intensity/1", see
// data/carbon/README.md). kInvalidArgument naming `name` and the problem
// (not JSON, a missing field, a negative intensity, a unit other than
// gCO2eq/kWh).
Result<IntensityTable> ParseIntensityTable(std::string_view json_text, std::string_view name);

// Reads and parses the file at `path`. kNotFound / kIoError naming the path.
Result<IntensityTable> LoadIntensityTable(const std::string& path);

// Where the shipped table is, first found: $ZEUS_CARBON_DATA (which must
// exist); <exe dir>/../share/zeus/carbon/intensity.json (an installed zeus);
// the install prefix's share/zeus/carbon/intensity.json; the source tree's
// data/carbon/intensity.json (a build tree). kNotFound listing the places.
Result<std::string> FindIntensityData();

// The zone `query` names, ignoring case: its code, alpha-2, alpha-3 or name
// ("fr", "FRA", "France", "world"). kNotFound naming the query and listing
// close matches (codes and names within a small edit distance, or starting
// with the query), or kInvalidArgument for an empty query.
Result<Zone> LookupZone(const IntensityTable& table, std::string_view query);

// Electricity Maps' v3 API (https://api.electricitymap.org): the latest
// carbon intensity of a zone or a location.
struct ElectricityMapsQuery {
  std::string base_url = "https://api.electricitymap.org";
  std::string zone;                // e.g. "FR" or "US-CAL-CISO"; or:
  std::optional<double> latitude;  // with longitude, when zone is empty
  std::optional<double> longitude;
  std::string token;               // sent as the `auth-token` header when not empty
  bool estimate = false;           // disableEstimations=<not estimate>, as Zeus writes it (True/False)
  std::string emission_factor_type = "direct";  // or "lifecycle"
  std::chrono::milliseconds timeout{10000};     // per step, see http::FetchOptions
};

// The URL FetchLatestIntensity asks (base_url + /v3/carbon-intensity/latest?...).
std::string LatestIntensityUrl(const ElectricityMapsQuery& query);

// GET /v3/carbon-intensity/latest and its `carbonIntensity` (gCO2eq/kWh).
// kInvalidArgument for a bad query; the fetch's errors (kUnavailable,
// kTimeout, ...) naming the URL; an answer other than 200 -> the status's
// ErrorCode with the status and the body's message; kNotFound when the answer
// has no numeric carbonIntensity.
Result<double> FetchLatestIntensity(const ElectricityMapsQuery& query);

}  // namespace zeus::carbon

#endif  // ZEUS_CARBON_INTENSITY_H_
