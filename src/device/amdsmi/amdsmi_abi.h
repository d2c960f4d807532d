// Copyright 2026 The Zeus C++ Authors.
//
// Our own declarations of the part of AMD SMI's C ABI that the project uses
// (libamd_smi.so, ROCm 6.3 and later). No amdsmi.h exists on build machines
// (Debian 12 ships none); the facts (enumerator values, struct layouts,
// signatures) were checked against AMD SMI's public header and reference
// documentation for library version 24.7 (ROCm 6.3.0); sizes and offsets were
// compared with that header by compiling both.
//
// Both the loader (src/device/amdsmi) and the emulator's AMD SMI face
// (emulator/) include this file, and both take the list of functions from
// amdsmi_api.def, so the two cannot drift apart.
//
// Units, as AMD SMI gives them: power caps in µW, socket power in W, energy
// as an accumulator times a resolution in µJ, temperatures in °C (amdsmi_get_temp_metric:
// the header documents millidegrees, but library 24.7 returns whole degrees),
// clocks in Hz.

#ifndef ZEUS_DEVICE_AMDSMI_AMDSMI_ABI_H_
#define ZEUS_DEVICE_AMDSMI_AMDSMI_ABI_H_

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* amdsmi_processor_handle;
typedef void* amdsmi_socket_handle;
typedef unsigned int amdsmi_status_t;  // a C enum: 32 bits on every ABI we run on
typedef unsigned int processor_type_t;
typedef unsigned int amdsmi_temperature_type_t;
typedef unsigned int amdsmi_temperature_metric_t;
typedef unsigned int amdsmi_clk_type_t;
typedef unsigned int amdsmi_dev_perf_level_t;

// amdsmi_status_t values.
enum {
  AMDSMI_STATUS_SUCCESS = 0,
  AMDSMI_STATUS_INVAL = 1,
  AMDSMI_STATUS_NOT_SUPPORTED = 2,
  AMDSMI_STATUS_NOT_YET_IMPLEMENTED = 3,
  AMDSMI_STATUS_FAIL_LOAD_MODULE = 4,
  AMDSMI_STATUS_FAIL_LOAD_SYMBOL = 5,
  AMDSMI_STATUS_DRM_ERROR = 6,
  AMDSMI_STATUS_API_FAILED = 7,
  AMDSMI_STATUS_TIMEOUT = 8,
  AMDSMI_STATUS_RETRY = 9,
  AMDSMI_STATUS_NO_PERM = 10,
  AMDSMI_STATUS_INTERRUPT = 11,
  AMDSMI_STATUS_IO = 12,
  AMDSMI_STATUS_ADDRESS_FAULT = 13,
  AMDSMI_STATUS_FILE_ERROR = 14,
  AMDSMI_STATUS_OUT_OF_RESOURCES = 15,
  AMDSMI_STATUS_INTERNAL_EXCEPTION = 16,
  AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS = 17,
  AMDSMI_STATUS_INIT_ERROR = 18,
  AMDSMI_STATUS_REFCOUNT_OVERFLOW = 19,
  AMDSMI_STATUS_BUSY = 30,
  AMDSMI_STATUS_NOT_FOUND = 31,
  AMDSMI_STATUS_NOT_INIT = 32,
  AMDSMI_STATUS_NO_SLOT = 33,
  AMDSMI_STATUS_DRIVER_NOT_LOADED = 34,
  AMDSMI_STATUS_NO_DATA = 40,
  AMDSMI_STATUS_INSUFFICIENT_SIZE = 41,
  AMDSMI_STATUS_UNEXPECTED_SIZE = 42,
  AMDSMI_STATUS_UNEXPECTED_DATA = 43,
  AMDSMI_STATUS_NON_AMD_CPU = 44,
  AMDSMI_STATUS_NO_ENERGY_DRV = 45,
  AMDSMI_STATUS_NO_MSR_DRV = 46,
  AMDSMI_STATUS_NO_HSMP_DRV = 47,
  AMDSMI_STATUS_NO_HSMP_SUP = 48,
  AMDSMI_STATUS_NO_HSMP_MSG_SUP = 49,
  AMDSMI_STATUS_HSMP_TIMEOUT = 50,
  AMDSMI_STATUS_NO_DRV = 51,
  AMDSMI_STATUS_FILE_NOT_FOUND = 52,
  AMDSMI_STATUS_ARG_PTR_NULL = 53,
  AMDSMI_STATUS_AMDGPU_RESTART_ERR = 54,
  AMDSMI_STATUS_SETTING_UNAVAILABLE = 55,
  AMDSMI_STATUS_MAP_ERROR = 0xFFFFFFFEu,
  AMDSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFFu,
};

// amdsmi_init flags.
enum { AMDSMI_INIT_AMD_GPUS = 1u << 1 };

// processor_type_t values.
enum { AMDSMI_PROCESSOR_TYPE_UNKNOWN = 0, AMDSMI_PROCESSOR_TYPE_AMD_GPU = 1 };

// amdsmi_temperature_type_t and amdsmi_temperature_metric_t values.
enum { AMDSMI_TEMPERATURE_TYPE_EDGE = 0, AMDSMI_TEMPERATURE_TYPE_HOTSPOT = 1 };
enum { AMDSMI_TEMP_CURRENT = 0 };

// amdsmi_clk_type_t values.
enum { AMDSMI_CLK_TYPE_GFX = 0, AMDSMI_CLK_TYPE_MEM = 4 };

// amdsmi_dev_perf_level_t values.
enum { AMDSMI_DEV_PERF_LEVEL_AUTO = 0 };

// A struct field that holds this (all ones for its width) is "N/A": the
// device does not report it (AMD SMI's convention; its Python interface
// prints "N/A").
#define AMDSMI_NOT_AVAILABLE_U32 0xFFFFFFFFu

enum {
  AMDSMI_MAX_STRING_LENGTH = 64,
  AMDSMI_NORMAL_STRING_LENGTH = 32,
  AMDSMI_256_LENGTH = 256,
  AMDSMI_GPU_UUID_SIZE = 38,
  AMDSMI_MAX_NUM_FREQUENCIES = 33,
};

typedef struct {
  uint32_t year;   // last two digits: 24 for ROCm 6.3
  uint32_t major;  // 7 for ROCm 6.3
  uint32_t minor;
  uint32_t release;
  const char* build;
} amdsmi_version_t;

// PCI address: function 3 bits, device 5, bus 8, domain 48 (low to high).
typedef union {
  uint64_t as_uint;
} amdsmi_bdf_t;

typedef struct {
  char market_name[AMDSMI_256_LENGTH];  // "AMD Instinct MI300X"
  uint32_t vendor_id;
  char vendor_name[AMDSMI_MAX_STRING_LENGTH];
  uint32_t subvendor_id;
  uint64_t device_id;
  uint32_t rev_id;
  char asic_serial[AMDSMI_NORMAL_STRING_LENGTH];
  uint32_t oam_id;
  uint32_t num_of_compute_units;
  uint64_t target_graphics_version;  // e.g. 942 for gfx942 (MI300X)
  uint32_t reserved[15];
} amdsmi_asic_info_t;

typedef struct {
  uint64_t kfd_id;
  uint32_t node_id;  // the KFD topology node: HIP orders GPUs by it
  uint32_t current_partition_id;
  uint32_t reserved[12];
} amdsmi_kfd_info_t;

typedef struct {
  uint32_t current_socket_power;  // W; N/A on GPUs that report only an average
  uint32_t average_socket_power;  // W; N/A on GPUs that report only the current power
  uint32_t gfx_voltage;           // mV
  uint32_t soc_voltage;           // mV
  uint32_t mem_voltage;           // mV
  uint32_t power_limit;           // W
  uint32_t reserved[11];
} amdsmi_power_info_t;

typedef struct {
  uint64_t power_cap;          // µW
  uint64_t default_power_cap;  // µW
  uint64_t dpm_cap;            // MHz
  uint64_t min_power_cap;      // µW
  uint64_t max_power_cap;      // µW
  uint64_t reserved[3];
} amdsmi_power_cap_info_t;

typedef struct {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[AMDSMI_MAX_NUM_FREQUENCIES];  // Hz
} amdsmi_frequencies_t;

#ifdef __cplusplus
}  // extern "C"

static_assert(sizeof(amdsmi_version_t) == 24, "amdsmi_version_t layout");
static_assert(sizeof(amdsmi_bdf_t) == 8, "amdsmi_bdf_t layout");
static_assert(sizeof(amdsmi_asic_info_t) == 456, "amdsmi_asic_info_t layout");
static_assert(sizeof(amdsmi_kfd_info_t) == 64, "amdsmi_kfd_info_t layout");
static_assert(sizeof(amdsmi_power_info_t) == 68, "amdsmi_power_info_t layout");
static_assert(sizeof(amdsmi_power_cap_info_t) == 64, "amdsmi_power_cap_info_t layout");
static_assert(sizeof(amdsmi_frequencies_t) == 280, "amdsmi_frequencies_t layout");
#endif

#endif  // ZEUS_DEVICE_AMDSMI_AMDSMI_ABI_H_
