// Copyright 2026 The Zeus C++ Authors.
//
// Our own declarations of the part of NVML's C ABI that the project uses.
// No nvml.h exists on build machines; the facts (enumerator values, struct
// layouts, signatures) were checked against the machine-generated description
// in Debian's librust-nvml-wrapper-sys-dev and NVML's documentation.
//
// Both the loader (src/device/nvml) and the emulator (emulator/) include this
// file, and both take the list of functions from nvml_api.def, so the two
// cannot drift apart.

#ifndef ZEUS_DEVICE_NVML_NVML_ABI_H_
#define ZEUS_DEVICE_NVML_NVML_ABI_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef int nvmlReturn_t;
typedef unsigned int nvmlEnableState_t;
typedef unsigned int nvmlDeviceArchitecture_t;
typedef unsigned int nvmlTemperatureSensors_t;
typedef unsigned int nvmlClockType_t;
typedef unsigned int nvmlValueType_t;

// nvmlReturn_t values.
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
};

// nvmlEnableState_t.
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };

// nvmlDeviceArchitecture_t.
enum {
  NVML_DEVICE_ARCH_KEPLER = 2,
  NVML_DEVICE_ARCH_MAXWELL = 3,
  NVML_DEVICE_ARCH_PASCAL = 4,
  NVML_DEVICE_ARCH_VOLTA = 5,
  NVML_DEVICE_ARCH_TURING = 6,
  NVML_DEVICE_ARCH_AMPERE = 7,
  NVML_DEVICE_ARCH_ADA = 8,
  NVML_DEVICE_ARCH_HOPPER = 9,
  NVML_DEVICE_ARCH_BLACKWELL = 10,
};
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffu

// nvmlTemperatureSensors_t.
enum { NVML_TEMPERATURE_GPU = 0 };

// nvmlClockType_t.
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };

// nvmlValueType_t.
enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
};

// Field ids for nvmlDeviceGetFieldValues (power domains; values in mW).
enum { NVML_FI_DEV_POWER_AVERAGE = 185, NVML_FI_DEV_POWER_INSTANT = 186 };
// Scope ids for the power fields.
enum { NVML_POWER_SCOPE_GPU = 0, NVML_POWER_SCOPE_MODULE = 1, NVML_POWER_SCOPE_MEMORY = 2 };

// Buffer sizes that callers must provide.
enum {
  NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96,
  NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16,
  NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80,
  NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80,
};

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

// nvmlDeviceGetComputeRunningProcesses_v3's entries (nvmlProcessInfo_t, the
// same layout as nvmlProcessInfo_v2_t). usedGpuMemory is in bytes, or
// NVML_VALUE_NOT_AVAILABLE when the driver cannot tell (WDDM, some MIG and
// container setups); the instance ids matter only in MIG mode.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

// "Not available" in unsigned long long fields such as usedGpuMemory.
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

// nvmlDeviceGetProcessUtilization's samples: one per process that had a
// non-zero utilization in a sample period, timeStamp in microseconds (CPU
// time on a real driver), utilizations in percent.
typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

// Declarations of every function in nvml_api.def, with C linkage.
#define ZEUS_NVML_FN(kind, ret, name, params) ret name params;
#include "device/nvml/nvml_api.def"
#undef ZEUS_NVML_FN

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // ZEUS_DEVICE_NVML_NVML_ABI_H_
