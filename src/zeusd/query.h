// Copyright 2026 The Zeus C++ Authors.
//
// zeusd's request targets: the path and its query fields, as zeusd reads them
// (zeus-reference 3.4). Every field of a route is named; a field the route
// does not know, a field given twice, a boolean other than "true"/"false", a
// number that does not parse, and an id list that is empty, has an empty
// element or names a device that does not exist are errors (HTTP 400).
//
// All errors are kInvalidArgument with a message for the client.

#ifndef ZEUS_SRC_ZEUSD_QUERY_H_
#define ZEUS_SRC_ZEUSD_QUERY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::zeusd {

// "/gpu/get_power?gpu_ids=0,1" -> path "/gpu/get_power", fields
// [("gpu_ids", "0,1")]. Names and values are percent-decoded ('+' is a
// space); a malformed escape (%zz, % at the end) is an error.
struct Target {
  std::string path;
  std::vector<std::pair<std::string, std::string>> fields;
};
Result<Target> ParseTarget(std::string_view target);

// The fields of one request, taken by name. Finish() fails on any field not
// taken (an unknown field), naming it and the fields the route expects.
class QueryFields {
 public:
  // `expected`: the route's field names, in the order its error lists them.
  QueryFields(const Target& target, std::vector<std::string_view> expected);

  // The raw value, or nullopt when absent. A field given twice is an error.
  Result<std::optional<std::string>> Get(std::string_view name);
  // A required field: absent is "missing field `name`".
  Result<std::string> Require(std::string_view name);
  // "true" or "false", nothing else.
  Result<std::optional<bool>> GetBool(std::string_view name);
  Result<bool> RequireBool(std::string_view name);
  // A decimal number in [0, max].
  Result<std::uint64_t> RequireUnsigned(std::string_view name, std::uint64_t max);
  // Unknown fields.
  Status Finish() const;

 private:
  const Target& target_;
  std::vector<std::string_view> expected_;
  std::vector<bool> taken_;
};

// A comma-separated id list: elements trimmed of blanks, each a decimal
// number below `device_count`; the result sorted without duplicates. An empty
// list or element is an error, and so is an id past the end: "GPU 5 not
// found" with `kind` "GPU".
Result<std::vector<std::size_t>> ParseIdList(std::string_view name, std::string_view value, std::size_t device_count,
                                             std::string_view kind);

// The optional id list `name`: every device when absent.
Result<std::vector<std::size_t>> OptionalIdList(QueryFields& fields, std::string_view name,
                                                std::size_t device_count, std::string_view kind);

}  // namespace zeus::zeusd

#endif  // ZEUS_SRC_ZEUSD_QUERY_H_
