// Copyright 2026 The Zeus C++ Authors.
//
// The ErrorCode <-> HTTP status pair: each protocol's table in full, the
// client's reading of every status, and the two against each other in both
// directions.

#include "http/http_status.h"

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zeus::http {
namespace {

std::vector<ErrorCode> AllCodes() {
  std::vector<ErrorCode> codes;
  for (std::size_t i = 0; i < kErrorCodeCount; ++i) codes.push_back(static_cast<ErrorCode>(i));
  return codes;
}

// One protocol: its table, what it documents for every code, and what a
// client reads back for every code (the code itself unless it shares its
// status with another).
struct Protocol {
  const ErrorStatusTable* table;
  std::map<ErrorCode, int> documented;
  std::map<ErrorCode, ErrorCode> read_back;
};

void PrintTo(const Protocol& protocol, std::ostream* os) { *os << protocol.table->protocol; }

std::string ProtocolName(const ::testing::TestParamInfo<Protocol>& info) {
  return info.param.table == &kBsoErrorStatuses ? "Bso" : "Zeusd";
}

Protocol Bso() {
  using EC = ErrorCode;
  return Protocol{&kBsoErrorStatuses,
                  {
                      {EC::kOk, 200},
                      {EC::kInvalidArgument, 400},
                      {EC::kNotFound, 404},
                      {EC::kNotSupported, 500},
                      {EC::kPermissionDenied, 403},
                      {EC::kUnavailable, 503},
                      {EC::kDeviceLost, 500},
                      {EC::kTimeout, 504},
                      {EC::kIoError, 500},
                      {EC::kFailedPrecondition, 409},
                      {EC::kAlreadyExists, 409},
                      {EC::kAborted, 503},
                      {EC::kInternal, 500},
                  },
                  {
                      {EC::kAlreadyExists, EC::kFailedPrecondition},
                      {EC::kAborted, EC::kUnavailable},
                      {EC::kNotSupported, EC::kInternal},
                      {EC::kDeviceLost, EC::kInternal},
                      {EC::kIoError, EC::kInternal},
                  }};
}

// zeus-reference 3.4: 400 bad input, out-of-range ids and the driver's
// invalid-argument and not-supported; 403 the driver's no-permission; 500
// every other driver error, task failure and failed override command.
Protocol Zeusd() {
  using EC = ErrorCode;
  return Protocol{&kZeusdErrorStatuses,
                  {
                      {EC::kOk, 200},
                      {EC::kInvalidArgument, 400},
                      {EC::kNotFound, 500},
                      {EC::kNotSupported, 400},
                      {EC::kPermissionDenied, 403},
                      {EC::kUnavailable, 500},
                      {EC::kDeviceLost, 500},
                      {EC::kTimeout, 500},
                      {EC::kIoError, 500},
                      {EC::kFailedPrecondition, 500},
                      {EC::kAlreadyExists, 500},
                      {EC::kAborted, 500},
                      {EC::kInternal, 500},
                  },
                  {
                      {EC::kNotSupported, EC::kInvalidArgument},
                      {EC::kNotFound, EC::kInternal},
                      {EC::kUnavailable, EC::kInternal},
                      {EC::kDeviceLost, EC::kInternal},
                      {EC::kTimeout, EC::kInternal},
                      {EC::kIoError, EC::kInternal},
                      {EC::kFailedPrecondition, EC::kInternal},
                      {EC::kAlreadyExists, EC::kInternal},
                      {EC::kAborted, EC::kInternal},
                  }};
}

class ErrorStatusTableTest : public ::testing::TestWithParam<Protocol> {};

TEST_P(ErrorStatusTableTest, AnswersEveryCodeWithTheDocumentedStatus) {
  const Protocol& p = GetParam();
  ASSERT_EQ(p.documented.size(), kErrorCodeCount);
  for (ErrorCode code : AllCodes()) {
    EXPECT_EQ(HttpStatusFor(*p.table, code), p.documented.at(code)) << ErrorCodeName(code);
  }
}

// Code -> status -> code: every code reads back as itself, or as the code
// listed for it when it shares its status.
TEST_P(ErrorStatusTableTest, EveryCodeReadsBackAsItselfOrItsListedSibling) {
  const Protocol& p = GetParam();
  for (ErrorCode code : AllCodes()) {
    const int status = HttpStatusFor(*p.table, code);
    const auto listed = p.read_back.find(code);
    const ErrorCode expected = listed == p.read_back.end() ? code : listed->second;
    EXPECT_EQ(ErrorCodeForHttpStatus(status), expected) << ErrorCodeName(code) << " -> HTTP " << status;
    // The sibling is answered with the same status: reading back loses
    // which of the two it was, never the status.
    EXPECT_EQ(HttpStatusFor(*p.table, expected), status) << ErrorCodeName(code);
  }
}

// Status -> code -> status: each status the protocol answers reads back as a
// code that the protocol answers with that same status.
TEST_P(ErrorStatusTableTest, EveryStatusTheProtocolAnswersRoundTrips) {
  const Protocol& p = GetParam();
  std::set<int> answered;
  for (ErrorCode code : AllCodes()) answered.insert(HttpStatusFor(*p.table, code));
  for (int status = 100; status <= 599; ++status) {
    if (answered.count(status) == 0) continue;
    EXPECT_EQ(HttpStatusFor(*p.table, ErrorCodeForHttpStatus(status)), status) << "HTTP " << status;
  }
}

TEST_P(ErrorStatusTableTest, AnErrorThatCarriesAnHttpStatusIsAnsweredWithIt) {
  const ErrorStatusTable& table = *GetParam().table;
  EXPECT_EQ(HttpStatusForError(table, Error(ErrorCode::kTimeout, "GPU 1 did not answer", NativeSpace::kHttp, 503)),
            503);
  EXPECT_EQ(HttpStatusForError(table, Error(ErrorCode::kInternal, "relayed", NativeSpace::kHttp, 502)), 502);
  // Other spaces, and codes that are no error status, answer the table's.
  for (ErrorCode code : AllCodes()) {
    const int status = HttpStatusFor(table, code);
    EXPECT_EQ(HttpStatusForError(table, Error(code, "plain")), status) << ErrorCodeName(code);
    EXPECT_EQ(HttpStatusForError(table, Error(code, "errno", NativeSpace::kErrno, 503)), status) << ErrorCodeName(code);
    EXPECT_EQ(HttpStatusForError(table, Error(code, "odd", NativeSpace::kHttp, 200)), status) << ErrorCodeName(code);
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, ErrorStatusTableTest, ::testing::Values(Bso(), Zeusd()), ProtocolName);

// Every status from 100 to 599: the named ones, then each class's default.
TEST(ErrorCodeForHttpStatusTest, EveryStatus) {
  const std::map<int, ErrorCode> named = {
      {401, ErrorCode::kPermissionDenied}, {403, ErrorCode::kPermissionDenied}, {404, ErrorCode::kNotFound},
      {409, ErrorCode::kFailedPrecondition}, {503, ErrorCode::kUnavailable}, {504, ErrorCode::kTimeout},
  };
  for (int status = 100; status <= 599; ++status) {
    ErrorCode expected = ErrorCode::kInternal;  // 1xx, 3xx, 5xx
    if (const auto it = named.find(status); it != named.end()) {
      expected = it->second;
    } else if (status / 100 == 2) {
      expected = ErrorCode::kOk;
    } else if (status / 100 == 4) {
      expected = ErrorCode::kInvalidArgument;
    }
    EXPECT_EQ(ErrorCodeForHttpStatus(status), expected) << "HTTP " << status;
  }
  EXPECT_EQ(ErrorCodeForHttpStatus(0), ErrorCode::kInternal);
  EXPECT_EQ(ErrorCodeForHttpStatus(-1), ErrorCode::kInternal);
  EXPECT_EQ(ErrorCodeForHttpStatus(999), ErrorCode::kInternal);
}

// The statuses both protocols' clients meet most, by name.
TEST(ErrorCodeForHttpStatusTest, CommonAnswers) {
  EXPECT_EQ(ErrorCodeForHttpStatus(200), ErrorCode::kOk);
  EXPECT_EQ(ErrorCodeForHttpStatus(201), ErrorCode::kOk);
  EXPECT_EQ(ErrorCodeForHttpStatus(400), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(405), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(413), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(422), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorCodeForHttpStatus(500), ErrorCode::kInternal);
  EXPECT_EQ(ErrorCodeForHttpStatus(502), ErrorCode::kInternal);
}

}  // namespace
}  // namespace zeus::http
