// Copyright 2026 The Zeus C++ Authors.

#include "zeus/carbon/intensity.h"

#include <chrono>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/http.h"
#include "http/http_test_util.h"
#include "testing/ports.h"
#include "testing/result.h"
#include "testing/temp_dir.h"

namespace zeus::carbon {
namespace {

using ::testing::HasSubstr;

constexpr char kSmallTable[] = R"({
  "format": "zeus-carbon-intensity/1", "source": "test", "unit": "gCO2eq/kWh", "year": "2024",
  "zones": {
    "FRA": {"name": "France", "alpha2": "FR", "alpha3": "FRA", "year": 2024, "intensity": 44.18},
    "FIN": {"name": "Finland", "alpha2": "FI", "alpha3": "FIN", "year": 2024, "intensity": 70.5},
    "DEU": {"name": "Germany", "alpha2": "DE", "alpha3": "DEU", "year": 2024, "intensity": 363.0},
    "World": {"name": "World", "year": 2024, "intensity": 472.94}
  }})";

TEST(CarbonIntensityTest, EmissionsAreEnergyInKwhTimesIntensity) {
  EXPECT_DOUBLE_EQ(EmissionsGrams(3.6e6, 100.0), 100.0);
  EXPECT_DOUBLE_EQ(EmissionsGrams(1800.0, 472.94), 1800.0 / 3.6e6 * 472.94);
  EXPECT_DOUBLE_EQ(EmissionsGrams(0.0, 500.0), 0.0);
}

TEST(CarbonIntensityTest, LooksUpByAnyCodeOrNameIgnoringCase) {
  const IntensityTable table = testing::Unwrap(ParseIntensityTable(kSmallTable, "test"));
  ASSERT_EQ(table.zones.size(), 4u);
  for (const char* query : {"FR", "fr", "FRA", "fra", "France", "FRANCE"}) {
    const Zone zone = testing::Unwrap(LookupZone(table, query));
    EXPECT_EQ(zone.code, "FRA") << query;
    EXPECT_DOUBLE_EQ(zone.intensity_g_per_kwh, 44.18);
    EXPECT_EQ(zone.year, 2024);
  }
  EXPECT_DOUBLE_EQ(testing::Unwrap(LookupZone(table, "world")).intensity_g_per_kwh, 472.94);
}

TEST(CarbonIntensityTest, AnUnknownZoneListsCloseMatches) {
  const IntensityTable table = testing::Unwrap(ParseIntensityTable(kSmallTable, "test"));
  Result<Zone> zone = LookupZone(table, "FRX");
  ASSERT_FALSE(zone);
  EXPECT_EQ(zone.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(zone.error().message(), HasSubstr("carbon zone 'FRX' is not in the carbon-intensity table; close "
                                                "matches: FR/FRA (France)"));
  EXPECT_THAT(zone.error().message(), ::testing::Not(HasSubstr("Germany")));
  Result<Zone> far = LookupZone(table, "Atlantis");
  ASSERT_FALSE(far);
  EXPECT_THAT(far.error().message(), HasSubstr("4 zones"));
  Result<Zone> empty = LookupZone(table, "");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), ErrorCode::kInvalidArgument);
}

TEST(CarbonIntensityTest, BadTablesAreRefusedWithTheReason) {
  struct Case {
    const char* text;
    const char* reason;
  };
  for (const Case& c : {Case{"[]", "not a JSON object"}, Case{"{}", "\"format\""},
                        Case{R"({"format":"zeus-carbon-intensity/1","unit":"kg/kWh","zones":{}})", "unit is 'kg/kWh'"},
                        Case{R"({"format":"zeus-carbon-intensity/1","unit":"gCO2eq/kWh","zones":{}})", "no \"zones\""},
                        Case{R"({"format":"zeus-carbon-intensity/1","unit":"gCO2eq/kWh","zones":{"X":{"intensity":-1}}})",
                             "zone 'X' has no non-negative"}}) {
    Result<IntensityTable> table = ParseIntensityTable(c.text, "t.json");
    ASSERT_FALSE(table) << c.text;
    EXPECT_EQ(table.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(table.error().message(), HasSubstr("carbon-intensity table t.json"));
    EXPECT_THAT(table.error().message(), HasSubstr(c.reason));
  }
  Result<IntensityTable> missing = LoadIntensityTable("/nonexistent/intensity.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("/nonexistent/intensity.json"));
}

TEST(CarbonIntensityTest, TheShippedTableHasCountriesAndRegions) {
  const IntensityTable table = testing::Unwrap(LoadIntensityTable(ZEUS_TEST_CARBON_DATA));
  EXPECT_GT(table.zones.size(), 200u);
  EXPECT_THAT(table.licence, HasSubstr("Ember"));
  const Zone fr = testing::Unwrap(LookupZone(table, "FR"));
  EXPECT_EQ(fr.alpha3, "FRA");
  EXPECT_GT(fr.intensity_g_per_kwh, 0);
  EXPECT_LT(fr.intensity_g_per_kwh, 200);  // nuclear and hydro: far below the world average
  const Zone world = testing::Unwrap(LookupZone(table, "World"));
  EXPECT_GT(world.intensity_g_per_kwh, 300);
  EXPECT_GE(world.year, 2022);
}

TEST(CarbonIntensityTest, FindIntensityDataHonoursTheEnvironment) {
  testing::TempDir dir;
  const std::string path = dir.Write("mine.json", kSmallTable);
  {
    testing::ScopedEnv env("ZEUS_CARBON_DATA", path);
    EXPECT_EQ(testing::Unwrap(FindIntensityData()), path);
  }
  {
    testing::ScopedEnv env("ZEUS_CARBON_DATA", dir.File("missing.json"));
    Result<std::string> found = FindIntensityData();
    ASSERT_FALSE(found);
    EXPECT_THAT(found.error().message(), HasSubstr("ZEUS_CARBON_DATA names " + dir.File("missing.json")));
  }
  testing::ScopedEnv unset("ZEUS_CARBON_DATA", std::nullopt);
  // The build tree (or the source tree) has the table.
  const std::string found = testing::Unwrap(FindIntensityData());
  EXPECT_TRUE(testing::Unwrap(LoadIntensityTable(found)).zones.size() > 200u) << found;
}

TEST(ElectricityMapsTest, TheUrlIsZeussWithTrueAndFalseAsPythonWritesThem) {
  ElectricityMapsQuery q;
  q.latitude = 37.5;
  q.longitude = -122.25;
  EXPECT_EQ(LatestIntensityUrl(q), "https://api.electricitymap.org/v3/carbon-intensity/latest?lat=37.5&lon=-122.25"
                                   "&disableEstimations=True&emissionFactorType=direct");
  q.zone = "US-CAL-CISO";
  q.estimate = true;
  q.emission_factor_type = "lifecycle";
  q.base_url = "http://127.0.0.1:9/";
  EXPECT_EQ(LatestIntensityUrl(q), "http://127.0.0.1:9/v3/carbon-intensity/latest?zone=US-CAL-CISO"
                                   "&disableEstimations=False&emissionFactorType=lifecycle");
}

// A local server answering as Electricity Maps' /v3/carbon-intensity/latest does:
// {"zone": "FR", "carbonIntensity": 44, "datetime": "...", "updatedAt": "...", "emissionFactorType": "lifecycle",
//  "isEstimated": false, "estimationMethod": null}
TEST(ElectricityMapsTest, FetchLatestAgainstALocalServer) {
  using namespace http::test_util;  // NOLINT(build/namespaces)
  Gate release;
  auto server = StartOrDie(TestOptions(), [&](const http::HttpRequest& request) {
    std::string token;
    for (const auto& [name, value] : request.headers) {
      if (name == "auth-token") token = value;
    }
    if (request.target.find("zone=HANG") != std::string::npos) release.Wait();
    if (token != "secret") return http::HttpResponse{401, R"({"message":"auth-token is invalid"})"};
    if (request.target.find("zone=FR&") != std::string::npos) {
      return http::HttpResponse{200, R"({"zone":"FR","carbonIntensity":44,"datetime":"2026-12-03T12:00:00.000Z",)"
                                     R"("updatedAt":"2026-12-03T11:50:00.000Z","emissionFactorType":"direct",)"
                                     R"("isEstimated":false,"estimationMethod":null})"};
    }
    if (request.target.find("zone=XX&") != std::string::npos) return http::HttpResponse{200, R"({"zone":"XX"})"};
    return http::HttpResponse{500, R"({"error":"internal"})"};
  });
  ASSERT_NE(server, nullptr);
  ElectricityMapsQuery q;
  q.base_url = fmt::format("http://127.0.0.1:{}", server->port());
  q.zone = "FR";
  q.token = "secret";
  EXPECT_DOUBLE_EQ(testing::Unwrap(FetchLatestIntensity(q)), 44.0);

  q.zone = "XX";
  Result<double> missing = FetchLatestIntensity(q);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("no numeric carbonIntensity"));

  q.zone = "DE";
  Result<double> failed = FetchLatestIntensity(q);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code(), ErrorCode::kInternal);
  EXPECT_THAT(failed.error().message(), HasSubstr("GET " + q.base_url + "/v3/carbon-intensity/latest?zone=DE"));
  EXPECT_THAT(failed.error().message(), HasSubstr("HTTP 500: internal"));

  q.zone = "FR";
  q.token = "wrong";
  Result<double> denied = FetchLatestIntensity(q);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(denied.error().message(), HasSubstr("HTTP 401: auth-token is invalid"));

  q.zone = "HANG";
  q.timeout = std::chrono::milliseconds(200);
  Result<double> hung = FetchLatestIntensity(q);
  release.Open();
  ASSERT_FALSE(hung);
  EXPECT_EQ(hung.error().code(), ErrorCode::kTimeout);

  q.zone = "F R";
  EXPECT_EQ(FetchLatestIntensity(q).error().code(), ErrorCode::kInvalidArgument);
  q.zone = "FR";
  q.emission_factor_type = "total";
  EXPECT_THAT(FetchLatestIntensity(q).error().message(), HasSubstr("emission_factor_type"));
}

TEST(ElectricityMapsTest, UnreachableIsUnavailable) {
  zeus::testing::RefusingPort refusing;
  ASSERT_NE(refusing.port(), 0);
  ElectricityMapsQuery q;
  q.base_url = fmt::format("http://127.0.0.1:{}", refusing.port());
  q.zone = "FR";
  Result<double> r = FetchLatestIntensity(q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(r.error().message(), HasSubstr(q.base_url + "/v3/carbon-intensity/latest"));
}

}  // namespace
}  // namespace zeus::carbon
