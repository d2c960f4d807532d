// Copyright 2026 The Zeus C++ Authors.

#include "device/amdsmi/amdsmi_error.h"

#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::device::amdsmi {
namespace {

using ::testing::HasSubstr;

// The expected translation of every status AMD SMI 24.7 defines, written out
// again independently of the table, so that a change to either shows up.
const std::map<amdsmi_status_t, ErrorCode>& Expected() {
  using EC = ErrorCode;
  static const std::map<amdsmi_status_t, ErrorCode> expected = {
      {AMDSMI_STATUS_INVAL, EC::kInvalidArgument},
      {AMDSMI_STATUS_NOT_SUPPORTED, EC::kNotSupported},
      {AMDSMI_STATUS_NOT_YET_IMPLEMENTED, EC::kNotSupported},
      {AMDSMI_STATUS_FAIL_LOAD_MODULE, EC::kUnavailable},
      {AMDSMI_STATUS_FAIL_LOAD_SYMBOL, EC::kUnavailable},
      {AMDSMI_STATUS_DRM_ERROR, EC::kUnavailable},
      {AMDSMI_STATUS_API_FAILED, EC::kInternal},
      {AMDSMI_STATUS_TIMEOUT, EC::kTimeout},
      {AMDSMI_STATUS_RETRY, EC::kUnavailable},
      {AMDSMI_STATUS_NO_PERM, EC::kPermissionDenied},
      {AMDSMI_STATUS_INTERRUPT, EC::kUnavailable},
      {AMDSMI_STATUS_IO, EC::kDeviceLost},
      {AMDSMI_STATUS_ADDRESS_FAULT, EC::kInternal},
      {AMDSMI_STATUS_FILE_ERROR, EC::kUnavailable},
      {AMDSMI_STATUS_OUT_OF_RESOURCES, EC::kInternal},
      {AMDSMI_STATUS_INTERNAL_EXCEPTION, EC::kInternal},
      {AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS, EC::kInvalidArgument},
      {AMDSMI_STATUS_INIT_ERROR, EC::kUnavailable},
      {AMDSMI_STATUS_REFCOUNT_OVERFLOW, EC::kInternal},
      {AMDSMI_STATUS_BUSY, EC::kUnavailable},
      {AMDSMI_STATUS_NOT_FOUND, EC::kNotFound},
      {AMDSMI_STATUS_NOT_INIT, EC::kUnavailable},
      {AMDSMI_STATUS_NO_SLOT, EC::kUnavailable},
      {AMDSMI_STATUS_DRIVER_NOT_LOADED, EC::kUnavailable},
      {AMDSMI_STATUS_NO_DATA, EC::kNotFound},
      {AMDSMI_STATUS_INSUFFICIENT_SIZE, EC::kInternal},
      {AMDSMI_STATUS_UNEXPECTED_SIZE, EC::kInternal},
      {AMDSMI_STATUS_UNEXPECTED_DATA, EC::kInternal},
      {AMDSMI_STATUS_NON_AMD_CPU, EC::kNotSupported},
      {AMDSMI_STATUS_NO_ENERGY_DRV, EC::kUnavailable},
      {AMDSMI_STATUS_NO_MSR_DRV, EC::kUnavailable},
      {AMDSMI_STATUS_NO_HSMP_DRV, EC::kUnavailable},
      {AMDSMI_STATUS_NO_HSMP_SUP, EC::kNotSupported},
      {AMDSMI_STATUS_NO_HSMP_MSG_SUP, EC::kNotSupported},
      {AMDSMI_STATUS_HSMP_TIMEOUT, EC::kTimeout},
      {AMDSMI_STATUS_NO_DRV, EC::kUnavailable},
      {AMDSMI_STATUS_FILE_NOT_FOUND, EC::kNotFound},
      {AMDSMI_STATUS_ARG_PTR_NULL, EC::kInternal},
      {AMDSMI_STATUS_AMDGPU_RESTART_ERR, EC::kDeviceLost},
      {AMDSMI_STATUS_SETTING_UNAVAILABLE, EC::kNotSupported},
      {AMDSMI_STATUS_MAP_ERROR, EC::kInternal},
      {AMDSMI_STATUS_UNKNOWN_ERROR, EC::kInternal},
  };
  return expected;
}

TEST(AmdSmiErrorTest, TableCoversEveryStatusOnce) {
  std::set<amdsmi_status_t> seen;
  for (const AmdSmiErrorEntry& entry : AmdSmiErrorTable()) {
    EXPECT_TRUE(seen.insert(entry.code).second) << "duplicate " << entry.name;
    EXPECT_FALSE(entry.explanation.empty()) << entry.name;
    EXPECT_NE(entry.code, AMDSMI_STATUS_SUCCESS);
  }
  EXPECT_EQ(seen.size(), Expected().size());
}

TEST(AmdSmiErrorTest, EveryStatusTranslates) {
  for (const auto& [code, expected] : Expected()) {
    Error e = AmdSmiError(code, "reading the power of GPU 0", AmdSmiOperation::kQuery);
    EXPECT_EQ(e.code(), expected) << code;
    EXPECT_EQ(e.native_code(), static_cast<int>(code));
    EXPECT_EQ(e.native_space(), NativeSpace::kAmdSmi);
    EXPECT_THAT(e.message(), HasSubstr("reading the power of GPU 0: AMD SMI ")) << code;
  }
}

TEST(AmdSmiErrorTest, PermissionOnSetterNamesTheWaysOut) {
  Error e = AmdSmiError(AMDSMI_STATUS_NO_PERM, "changing the power cap of GPU 0", AmdSmiOperation::kSetter);
  EXPECT_EQ(e.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(e.message(), HasSubstr("changing the power cap of GPU 0 needs root"));
  EXPECT_THAT(e.message(), HasSubstr("zeusd serve --gpu-backend amdsmi"));
  Error query = AmdSmiError(AMDSMI_STATUS_NO_PERM, "reading x", AmdSmiOperation::kQuery);
  EXPECT_THAT(query.message(), HasSubstr("AMD SMI NO_PERM"));
}

TEST(AmdSmiErrorTest, UnknownStatusKeepsItsNumber) {
  Error e = AmdSmiError(12345, "x", AmdSmiOperation::kQuery);
  EXPECT_EQ(e.code(), ErrorCode::kInternal);
  EXPECT_EQ(e.native_code(), 12345);
  EXPECT_THAT(e.message(), HasSubstr("12345"));
}

}  // namespace
}  // namespace zeus::device::amdsmi
