// Copyright 2026 The Zeus C++ Authors.

#include "device/nvml/nvml_error.h"

#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::device::nvml {
namespace {

using ::testing::HasSubstr;

// The expected translation of every code NVML defines. Written out again
// here, independently of the table, so that a change to either shows up.
const std::map<nvmlReturn_t, ErrorCode>& Expected() {
  static const std::map<nvmlReturn_t, ErrorCode> expected = {
      {NVML_ERROR_UNINITIALIZED, ErrorCode::kUnavailable},
      {NVML_ERROR_INVALID_ARGUMENT, ErrorCode::kInvalidArgument},
      {NVML_ERROR_NOT_SUPPORTED, ErrorCode::kNotSupported},
      {NVML_ERROR_NO_PERMISSION, ErrorCode::kPermissionDenied},
      {NVML_ERROR_ALREADY_INITIALIZED, ErrorCode::kInternal},
      {NVML_ERROR_NOT_FOUND, ErrorCode::kNotFound},
      {NVML_ERROR_INSUFFICIENT_SIZE, ErrorCode::kInternal},
      {NVML_ERROR_INSUFFICIENT_POWER, ErrorCode::kDeviceLost},
      {NVML_ERROR_DRIVER_NOT_LOADED, ErrorCode::kUnavailable},
      {NVML_ERROR_TIMEOUT, ErrorCode::kTimeout},
      {NVML_ERROR_IRQ_ISSUE, ErrorCode::kDeviceLost},
      {NVML_ERROR_LIBRARY_NOT_FOUND, ErrorCode::kUnavailable},
      {NVML_ERROR_FUNCTION_NOT_FOUND, ErrorCode::kNotSupported},
      {NVML_ERROR_CORRUPTED_INFOROM, ErrorCode::kDeviceLost},
      {NVML_ERROR_GPU_IS_LOST, ErrorCode::kDeviceLost},
      {NVML_ERROR_RESET_REQUIRED, ErrorCode::kDeviceLost},
      {NVML_ERROR_OPERATING_SYSTEM, ErrorCode::kInternal},
      {NVML_ERROR_LIB_RM_VERSION_MISMATCH, ErrorCode::kUnavailable},
      {NVML_ERROR_IN_USE, ErrorCode::kFailedPrecondition},
      {NVML_ERROR_MEMORY, ErrorCode::kInternal},
      {NVML_ERROR_NO_DATA, ErrorCode::kNotFound},
      {NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, ErrorCode::kNotSupported},
      {NVML_ERROR_INSUFFICIENT_RESOURCES, ErrorCode::kUnavailable},
      {NVML_ERROR_FREQ_NOT_SUPPORTED, ErrorCode::kInvalidArgument},
      {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, ErrorCode::kInternal},
      {NVML_ERROR_DEPRECATED, ErrorCode::kNotSupported},
      {NVML_ERROR_NOT_READY, ErrorCode::kUnavailable},
      {NVML_ERROR_GPU_NOT_FOUND, ErrorCode::kNotFound},
      {NVML_ERROR_INVALID_STATE, ErrorCode::kFailedPrecondition},
      {NVML_ERROR_UNKNOWN, ErrorCode::kInternal},
  };
  return expected;
}

TEST(NvmlErrorTest, TableCoversEveryCodeOnce) {
  std::set<nvmlReturn_t> seen;
  for (const NvmlErrorEntry& entry : NvmlErrorTable()) {
    EXPECT_TRUE(seen.insert(entry.code).second) << "duplicate " << entry.name;
    EXPECT_FALSE(entry.explanation.empty()) << entry.name;
  }
  EXPECT_EQ(seen.size(), Expected().size());
}

TEST(NvmlErrorTest, EveryCodeTranslates) {
  for (const auto& [code, expected] : Expected()) {
    Error e = NvmlError(code, "reading the power usage of GPU 0", NvmlOperation::kQuery);
    EXPECT_EQ(e.code(), expected) << code;
    EXPECT_EQ(e.native_code(), code);
    EXPECT_EQ(e.native_space(), NativeSpace::kNvml);
    EXPECT_THAT(e.message(), HasSubstr("reading the power usage of GPU 0: NVML ")) << code;
  }
}

TEST(NvmlErrorTest, PermissionOnSetterNamesTheWaysOut) {
  Error e = NvmlError(NVML_ERROR_NO_PERMISSION, "changing the power limit of GPU 0", NvmlOperation::kSetter);
  EXPECT_EQ(e.code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(e.message(), HasSubstr("changing the power limit of GPU 0 needs root or CAP_SYS_ADMIN"));
  EXPECT_THAT(e.message(), HasSubstr("run as root (sudo)"));
  // No daemon exists yet to recommend.
  EXPECT_THAT(e.message(), ::testing::Not(HasSubstr("zeusd")));
  EXPECT_THAT(e.message(), HasSubstr("--cap-add SYS_ADMIN"));
}

TEST(NvmlErrorTest, SpecificMessages) {
  EXPECT_THAT(NvmlError(NVML_ERROR_GPU_IS_LOST, "x", NvmlOperation::kQuery).message(), HasSubstr("fallen off the bus"));
  EXPECT_THAT(NvmlError(NVML_ERROR_NOT_SUPPORTED, "x", NvmlOperation::kQuery).message(),
              HasSubstr("does not support"));
  EXPECT_THAT(NvmlError(NVML_ERROR_UNINITIALIZED, "x", NvmlOperation::kQuery).message(),
              HasSubstr("not initialised"));
  EXPECT_THAT(NvmlError(NVML_ERROR_LIBRARY_NOT_FOUND, "x", NvmlOperation::kQuery).message(),
              HasSubstr("no NVIDIA driver found"));
}

TEST(NvmlErrorTest, UnknownCodeKeepsItsNumber) {
  Error e = NvmlError(12345, "x", NvmlOperation::kQuery);
  EXPECT_EQ(e.code(), ErrorCode::kInternal);
  EXPECT_EQ(e.native_code(), 12345);
  EXPECT_THAT(e.message(), HasSubstr("12345"));
}

}  // namespace
}  // namespace zeus::device::nvml
