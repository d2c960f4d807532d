// Copyright 2026 The Zeus C++ Authors.
//
// Tests of libzeus-amdsmi-emulator.so through its C API: initialisation
// (reference counting, flags, calls before init), the vendor contract both
// ways and a process that emulates an NVIDIA and an AMD machine at once,
// enumeration and handles, identity (KFD nodes, UUIDs, BDFs, ASIC info),
// the library version and status strings, scenario errors, the library's
// exports and the preset scenarios of data/emulator/. The fixture:
// amdsmi_emulator_test_fixture.h; readings, caps, energy and faults:
// amdsmi_emulator_power_test.cc.

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "amdsmi_emulator_test_fixture.h"
#include "device/amdsmi/amdsmi_abi.h"
#include "device/nvml/nvml_abi.h"
#include "emulator_control.h"

namespace zeus::emulator::test {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

// ---- Initialisation ------------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, InitIsReferenceCountedAndCallsNeedIt) {
  uint32_t count = 0;
  amdsmi_version_t version{};
  EXPECT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_NOT_INIT);
  EXPECT_EQ(amdsmi_get_lib_version(&version), AMDSMI_STATUS_NOT_INIT);
  EXPECT_EQ(amdsmi_get_power_info(nullptr, nullptr), AMDSMI_STATUS_NOT_INIT);
  EXPECT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_NOT_INIT);
  EXPECT_EQ(zeusEmulatorAdvanceTimeNs(1), ZEUS_EMULATOR_ERROR_UNINITIALIZED);

  UseScenario(AmdManual(AmdGpu()));
  Init();
  Init();
  EXPECT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_SUCCESS);  // one init still in force
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_NOT_INIT);
  EXPECT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_NOT_INIT);

  // The next init reads the variable and the file again.
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu()), "two.json");
  Init();
  EXPECT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_STREQ(zeusEmulatorLastError(), "");
}

TEST_F(AmdSmiEmulatorTest, WithoutTheGpuFlagThereAreNoGpus) {
  UseScenario(AmdManual(AmdGpu()));
  Init();
  const amdsmi_processor_handle gpu = Processor(0);
  ASSERT_NE(gpu, nullptr);
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);
  ASSERT_EQ(amdsmi_init(0), AMDSMI_STATUS_SUCCESS);
  uint32_t count = 9;
  EXPECT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 0u);
  processor_type_t type = 0;
  EXPECT_EQ(amdsmi_get_processor_type(gpu, &type), AMDSMI_STATUS_INVAL);  // the handle is not in this init
}

TEST_F(AmdSmiEmulatorTest, ConfigVariablesAndInitErrors) {
  EXPECT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_INIT_ERROR);
  EXPECT_STREQ(zeusEmulatorLastError(),
               "ZEUS_AMDSMI_EMULATOR_CONFIG and ZEUS_EMULATOR_CONFIG are not set; point one of them at a scenario "
               "JSON file");
  // ZEUS_EMULATOR_CONFIG serves when the AMD variable is not set.
  UseScenario(AmdManual(AmdGpu()), "shared.json", "ZEUS_EMULATOR_CONFIG");
  Init();
  EXPECT_EQ(Processors().size(), 1u);
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);

  const std::string path = UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", R"(, "kfd_nod_id": 3)")));
  EXPECT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_INIT_ERROR);
  EXPECT_EQ(std::string(zeusEmulatorLastError()), "scenario " + path + R"(: gpus[0]: unknown key "kfd_nod_id")");
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", R"(, "architecture": "hopper")")));
  EXPECT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_INIT_ERROR);
  EXPECT_THAT(zeusEmulatorLastError(), HasSubstr("gpus[0].architecture: is only for NVIDIA GPUs"));
  UseScenario(R"({"state_file": "@STATE@", "gpus": [{"name": "A100", "architecture": "ampere",
      "min_power_limit_w": 100, "max_power_limit_w": 400, "default_power_limit_w": 400,
      "energy_counter": true, "power_w": 100, "kfd_node_id": 1}]})");
  EXPECT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_INIT_ERROR);
  EXPECT_THAT(zeusEmulatorLastError(),
              HasSubstr(R"(gpus[0].kfd_node_id: is only for AMD GPUs, and this scenario's vendor is "nvidia")"));
}

// ---- The vendor contract and a machine with both ------------------------------------------

// NVML, reached in the NVML face by dlopen, as a process that uses both APIs would.
// RTLD_NODELETE keeps the face's process-lifetime globals reachable after dlclose,
// so LeakSanitizer does not count them.
struct NvmlFace {
  void* library = ::dlopen(ZEUS_NVML_EMULATOR_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  template <class Fn>
  Fn Get(const char* name) const {
    return reinterpret_cast<Fn>(::dlsym(library, name));
  }
  ~NvmlFace() {
    if (library == nullptr) return;
    auto shutdown = Get<nvmlReturn_t (*)()>("nvmlShutdown");
    while (shutdown() == NVML_SUCCESS) {
    }
    ::dlclose(library);
  }
};

const char* const kNvidiaScenario = R"({"clock": "manual", "state_file": "@STATE@", "gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "architecture": "hopper", "min_power_limit_w": 200,
     "max_power_limit_w": 700, "default_power_limit_w": 700, "energy_counter": true, "power_w": 400}]})";

TEST_F(AmdSmiEmulatorTest, EachFaceRefusesTheOtherVendorsScenario) {
  const std::string nvidia = UseScenario(kNvidiaScenario, "nvidia.json");
  EXPECT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_DRIVER_NOT_LOADED);
  EXPECT_EQ(std::string(zeusEmulatorLastError()),
            "scenario " + nvidia +
                ": this scenario's GPUs are NVIDIA (vendor nvidia); load libzeus-nvml-emulator.so");
  EXPECT_EQ(amdsmi_get_socket_handles(nullptr, nullptr), AMDSMI_STATUS_NOT_INIT);

  NvmlFace nvml;
  ASSERT_NE(nvml.library, nullptr) << ::dlerror();
  const std::string amd = UseScenario(AmdManual(AmdGpu()), "amd.json", "ZEUS_EMULATOR_CONFIG");
  EXPECT_EQ(nvml.Get<nvmlReturn_t (*)()>("nvmlInit_v2")(), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_EQ(std::string(nvml.Get<const char* (*)()>("zeusEmulatorLastError")()),
            "scenario " + amd + ": this scenario's GPUs are AMD (vendor amd); load libzeus-amdsmi-emulator.so");
}

TEST_F(AmdSmiEmulatorTest, OneProcessEmulatesAnNvidiaAndAnAmdMachine) {
  NvmlFace nvml;
  ASSERT_NE(nvml.library, nullptr) << ::dlerror();
  UseScenario(kNvidiaScenario, "nvidia.json", "ZEUS_EMULATOR_CONFIG");
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu()), "amd.json");
  ASSERT_EQ(nvml.Get<nvmlReturn_t (*)()>("nvmlInit_v2")(), NVML_SUCCESS)
      << nvml.Get<const char* (*)()>("zeusEmulatorLastError")();
  Init();
  unsigned int nvidia_gpus = 0;
  ASSERT_EQ(nvml.Get<nvmlReturn_t (*)(unsigned int*)>("nvmlDeviceGetCount_v2")(&nvidia_gpus), NVML_SUCCESS);
  EXPECT_EQ(nvidia_gpus, 1u);
  EXPECT_EQ(Processors().size(), 2u);
  // Each face has its own state and clock controls.
  Advance(5 * kS);
  unsigned long long amd_now = 0;
  unsigned long long nvidia_now = 0;
  ASSERT_EQ(zeusEmulatorNowNs(&amd_now), ZEUS_EMULATOR_OK);
  ASSERT_EQ(nvml.Get<int (*)(unsigned long long*)>("zeusEmulatorNowNs")(&nvidia_now), ZEUS_EMULATOR_OK);
  EXPECT_EQ(amd_now, 5 * kS);
  EXPECT_EQ(nvidia_now, 0u);
  EXPECT_STRNE(zeusEmulatorStatePath(), nvml.Get<const char* (*)()>("zeusEmulatorStatePath")());
}

// ---- Enumeration and identity ------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, SocketsProcessorsAndTheCountProtocol) {
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu() + "," + AmdGpu()));
  Init();
  uint32_t count = 0;
  EXPECT_EQ(amdsmi_get_socket_handles(nullptr, nullptr), AMDSMI_STATUS_INVAL);
  ASSERT_EQ(amdsmi_get_socket_handles(&count, nullptr), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 3u);
  std::array<amdsmi_socket_handle, 3> sockets{};
  count = 2;  // too short: as AMD SMI, what fits is written and the count says how many
  ASSERT_EQ(amdsmi_get_socket_handles(&count, sockets.data()), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(sockets[2], nullptr);
  count = 8;
  ASSERT_EQ(amdsmi_get_socket_handles(&count, sockets.data()), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(std::set<amdsmi_socket_handle>(sockets.begin(), sockets.end()).size(), 3u);

  // One GPU per socket.
  std::vector<amdsmi_processor_handle> processors;
  for (amdsmi_socket_handle socket : sockets) {
    uint32_t n = 0;
    ASSERT_EQ(amdsmi_get_processor_handles(socket, &n, nullptr), AMDSMI_STATUS_SUCCESS);
    EXPECT_EQ(n, 1u);
    amdsmi_processor_handle handle = nullptr;
    ASSERT_EQ(amdsmi_get_processor_handles(socket, &n, &handle), AMDSMI_STATUS_SUCCESS);
    processors.push_back(handle);
    processor_type_t type = 0;
    ASSERT_EQ(amdsmi_get_processor_type(handle, &type), AMDSMI_STATUS_SUCCESS);
    EXPECT_EQ(type, static_cast<processor_type_t>(AMDSMI_PROCESSOR_TYPE_AMD_GPU));
  }
  EXPECT_EQ(std::set<amdsmi_processor_handle>(processors.begin(), processors.end()).size(), 3u);
  EXPECT_EQ(Processors(), processors);  // stable
  uint32_t n = 0;
  EXPECT_EQ(amdsmi_get_processor_handles(sockets[0], nullptr, nullptr), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_get_processor_handles(processors[0], &n, nullptr), AMDSMI_STATUS_INVAL);  // not a socket

  // Handles the emulator did not give out are rejected without being read.
  int not_a_handle = 0;
  processor_type_t type = 0;
  EXPECT_EQ(amdsmi_get_processor_type(&not_a_handle, &type), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_get_processor_type(nullptr, &type), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_get_processor_type(sockets[0], &type), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_get_processor_type(processors[0], nullptr), AMDSMI_STATUS_INVAL);
}

TEST_F(AmdSmiEmulatorTest, KfdNodeIdsDefaultToIndexPlusOneAndMayReorderGpus) {
  UseScenario(AmdManual(AmdGpu() + "," + AmdGpu()));
  Init();
  amdsmi_kfd_info_t info{};
  ASSERT_EQ(amdsmi_get_gpu_kfd_info(Processor(0), &info), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(info.node_id, 1u);
  EXPECT_EQ(info.current_partition_id, 0u);
  const uint64_t first_kfd_id = info.kfd_id;
  ASSERT_EQ(amdsmi_get_gpu_kfd_info(Processor(1), &info), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(info.node_id, 2u);
  EXPECT_NE(info.kfd_id, first_kfd_id);
  EXPECT_EQ(amdsmi_get_gpu_kfd_info(Processor(1), nullptr), AMDSMI_STATUS_INVAL);
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);

  // HIP orders GPUs by node id: here the second AMD SMI GPU is HIP's first.
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", R"(, "kfd_node_id": 9)") + "," +
                        AmdGpu(R"("power_w": 300)", R"(, "kfd_node_id": 4)")),
              "reordered.json");
  Init();
  ASSERT_EQ(amdsmi_get_gpu_kfd_info(Processor(0), &info), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(info.node_id, 9u);
  ASSERT_EQ(amdsmi_get_gpu_kfd_info(Processor(1), &info), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(info.node_id, 4u);
}

TEST_F(AmdSmiEmulatorTest, UuidBdfAndAsicInfo) {
  UseScenario(AmdManual(AmdGpu(R"("power_w": 300)", R"(, "pci_bus_id": "0001:C1:1F.5")") + "," +
                        AmdGpu(R"("power_w": 300)",
                               R"(, "uuid": "a-very-long-uuid-0123456789-0123456789-0123456789")")));
  Init();
  std::array<char, 96> uuid{};
  unsigned int length = AMDSMI_GPU_UUID_SIZE;
  ASSERT_EQ(amdsmi_get_gpu_device_uuid(Processor(0), &length, uuid.data()), AMDSMI_STATUS_SUCCESS);
  EXPECT_THAT(uuid.data(), MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
  EXPECT_EQ(length, 36u);  // out: the UUID's length
  length = AMDSMI_GPU_UUID_SIZE - 1;
  EXPECT_EQ(amdsmi_get_gpu_device_uuid(Processor(0), &length, uuid.data()), AMDSMI_STATUS_INVAL);
  EXPECT_EQ(amdsmi_get_gpu_device_uuid(Processor(0), nullptr, uuid.data()), AMDSMI_STATUS_INVAL);
  length = AMDSMI_GPU_UUID_SIZE;  // enough for AMD SMI, not for this scenario's long UUID
  EXPECT_EQ(amdsmi_get_gpu_device_uuid(Processor(1), &length, uuid.data()), AMDSMI_STATUS_INSUFFICIENT_SIZE);
  EXPECT_EQ(length, std::strlen("a-very-long-uuid-0123456789-0123456789-0123456789") + 1);
  ASSERT_EQ(amdsmi_get_gpu_device_uuid(Processor(1), &length, uuid.data()), AMDSMI_STATUS_SUCCESS);
  EXPECT_STREQ(uuid.data(), "a-very-long-uuid-0123456789-0123456789-0123456789");

  amdsmi_bdf_t bdf{};
  ASSERT_EQ(amdsmi_get_gpu_device_bdf(Processor(0), &bdf), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(bdf.as_uint & 0x7u, 5u);                // function
  EXPECT_EQ((bdf.as_uint >> 3) & 0x1Fu, 0x1Fu);     // device
  EXPECT_EQ((bdf.as_uint >> 8) & 0xFFu, 0xC1u);     // bus
  EXPECT_EQ(bdf.as_uint >> 16, 1u);                 // domain
  ASSERT_EQ(amdsmi_get_gpu_device_bdf(Processor(1), &bdf), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(bdf.as_uint, 2u << 8);  // default: bus index + 1
  EXPECT_EQ(amdsmi_get_gpu_device_bdf(Processor(1), nullptr), AMDSMI_STATUS_INVAL);

  amdsmi_asic_info_t asic{};
  ASSERT_EQ(amdsmi_get_gpu_asic_info(Processor(0), &asic), AMDSMI_STATUS_SUCCESS);
  EXPECT_STREQ(asic.market_name, "AMD Instinct MI300X");
  EXPECT_EQ(asic.vendor_id, 0x1002u);
  EXPECT_STREQ(asic.vendor_name, "Advanced Micro Devices Inc.");
  EXPECT_EQ(asic.device_id, UINT64_MAX);  // N/A
  EXPECT_EQ(asic.num_of_compute_units, AMDSMI_NOT_AVAILABLE_U32);
  EXPECT_EQ(std::strlen(asic.asic_serial), 16u);
  EXPECT_EQ(amdsmi_get_gpu_asic_info(Processor(0), nullptr), AMDSMI_STATUS_INVAL);
}

// ---- Version and status strings -------------------------------------------------------------

TEST_F(AmdSmiEmulatorTest, LibraryVersionIsTheScenariosOr24_7) {
  UseScenario(AmdManual(AmdGpu()));
  Init();
  amdsmi_version_t version{};
  ASSERT_EQ(amdsmi_get_lib_version(&version), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(version.year, 24u);
  EXPECT_EQ(version.major, 7u);
  EXPECT_EQ(version.minor, 0u);
  EXPECT_EQ(version.release, 0u);
  EXPECT_STREQ(version.build, "zeus-emulator");
  EXPECT_EQ(amdsmi_get_lib_version(nullptr), AMDSMI_STATUS_INVAL);
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);

  UseScenario(AmdManual(AmdGpu(), R"("amdsmi_version": "24.6.0", )"), "old.json");
  Init();
  ASSERT_EQ(amdsmi_get_lib_version(&version), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(version.year, 24u);
  EXPECT_EQ(version.major, 6u);
  EXPECT_EQ(version.minor, 0u);
}

TEST_F(AmdSmiEmulatorTest, StatusStringsCoverEveryCodeBeforeInit) {
  const std::vector<amdsmi_status_t> codes = {
      AMDSMI_STATUS_SUCCESS,           AMDSMI_STATUS_INVAL,
      AMDSMI_STATUS_NOT_SUPPORTED,     AMDSMI_STATUS_NOT_YET_IMPLEMENTED,
      AMDSMI_STATUS_FAIL_LOAD_MODULE,  AMDSMI_STATUS_FAIL_LOAD_SYMBOL,
      AMDSMI_STATUS_DRM_ERROR,         AMDSMI_STATUS_API_FAILED,
      AMDSMI_STATUS_TIMEOUT,           AMDSMI_STATUS_RETRY,
      AMDSMI_STATUS_NO_PERM,           AMDSMI_STATUS_INTERRUPT,
      AMDSMI_STATUS_IO,                AMDSMI_STATUS_ADDRESS_FAULT,
      AMDSMI_STATUS_FILE_ERROR,        AMDSMI_STATUS_OUT_OF_RESOURCES,
      AMDSMI_STATUS_INTERNAL_EXCEPTION, AMDSMI_STATUS_INPUT_OUT_OF_BOUNDS,
      AMDSMI_STATUS_INIT_ERROR,        AMDSMI_STATUS_REFCOUNT_OVERFLOW,
      AMDSMI_STATUS_BUSY,              AMDSMI_STATUS_NOT_FOUND,
      AMDSMI_STATUS_NOT_INIT,          AMDSMI_STATUS_NO_SLOT,
      AMDSMI_STATUS_DRIVER_NOT_LOADED, AMDSMI_STATUS_NO_DATA,
      AMDSMI_STATUS_INSUFFICIENT_SIZE, AMDSMI_STATUS_UNEXPECTED_SIZE,
      AMDSMI_STATUS_UNEXPECTED_DATA,   AMDSMI_STATUS_NON_AMD_CPU,
      AMDSMI_STATUS_NO_ENERGY_DRV,     AMDSMI_STATUS_NO_MSR_DRV,
      AMDSMI_STATUS_NO_HSMP_DRV,       AMDSMI_STATUS_NO_HSMP_SUP,
      AMDSMI_STATUS_NO_HSMP_MSG_SUP,   AMDSMI_STATUS_HSMP_TIMEOUT,
      AMDSMI_STATUS_NO_DRV,            AMDSMI_STATUS_FILE_NOT_FOUND,
      AMDSMI_STATUS_ARG_PTR_NULL,      AMDSMI_STATUS_AMDGPU_RESTART_ERR,
      AMDSMI_STATUS_SETTING_UNAVAILABLE, AMDSMI_STATUS_MAP_ERROR,
      AMDSMI_STATUS_UNKNOWN_ERROR,
  };
  std::set<std::string> texts;
  for (amdsmi_status_t code : codes) {
    const char* text = nullptr;
    ASSERT_EQ(amdsmi_status_code_to_string(code, &text), AMDSMI_STATUS_SUCCESS) << code;
    ASSERT_NE(text, nullptr);
    texts.insert(text);
  }
  EXPECT_EQ(texts.size(), codes.size()) << "texts are distinct";
  const char* text = nullptr;
  ASSERT_EQ(amdsmi_status_code_to_string(AMDSMI_STATUS_NO_PERM, &text), AMDSMI_STATUS_SUCCESS);
  EXPECT_THAT(text, StartsWith("NO_PERM: "));
  EXPECT_EQ(amdsmi_status_code_to_string(4242, &text), AMDSMI_STATUS_UNKNOWN_ERROR);
  EXPECT_STREQ(text, "unknown AMD SMI status code");
  EXPECT_EQ(amdsmi_status_code_to_string(AMDSMI_STATUS_INVAL, nullptr), AMDSMI_STATUS_INVAL);
}

// ---- The library's exports and the presets ---------------------------------------------------

TEST(AmdSmiEmulatorExportsTest, ExportsEveryApiFunctionAndTheControlsAndHidesInternals) {
  void* library = ::dlopen(ZEUS_AMDSMI_EMULATOR_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << ::dlerror();
  const std::vector<const char*> names = {
#define ZEUS_AMDSMI_FN(kind, name, params) #name,
#include "device/amdsmi/amdsmi_api.def"
#undef ZEUS_AMDSMI_FN
      "zeusEmulatorLastError",       "zeusEmulatorCallCount",     "zeusEmulatorAdvanceTimeNs",
      "zeusEmulatorStatePath",       "zeusEmulatorNowNs",         "zeusEmulatorIterationTimeS",
      "zeusEmulatorHungCalls",       "zeusEmulatorReleaseHungCalls", "zeusEmulatorSetIdle",
      "zeusEmulatorAttachProcess",   "zeusEmulatorSetProcessUtilization", "zeusEmulatorDetachProcess"};
  for (const char* name : names) EXPECT_NE(::dlsym(library, name), nullptr) << name;
  EXPECT_EQ(::dlsym(library, "nvmlInit_v2"), nullptr);
  EXPECT_EQ(::dlsym(library, "_ZN4zeus8emulator7Fnv1a64ESt17basic_string_viewIcSt11char_traitsIcEE"), nullptr);
  ::dlclose(library);
}

// Every scenario in data/emulator/ loads, with its state in the test's directory.
TEST_F(AmdSmiEmulatorTest, EveryPresetLoads) {
  KeepDefaultStateHere();
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ZEUS_EMULATOR_PRESETS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++presets;
    ::setenv("ZEUS_AMDSMI_EMULATOR_CONFIG", entry.path().c_str(), 1);
    ASSERT_EQ(amdsmi_init(AMDSMI_INIT_AMD_GPUS), AMDSMI_STATUS_SUCCESS) << zeusEmulatorLastError();
    EXPECT_EQ(Processors().size(), 8u) << entry.path();
    ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);
  }
  EXPECT_GE(presets, 2);
}

TEST_F(AmdSmiEmulatorTest, Mi300xAndMi250Presets) {
  const std::string dir = ZEUS_EMULATOR_PRESETS_DIR;
  KeepDefaultStateHere();
  ::setenv("ZEUS_AMDSMI_EMULATOR_CONFIG", (dir + "/mi300x.json").c_str(), 1);
  Init();
  amdsmi_power_cap_info_t cap{};
  ASSERT_EQ(amdsmi_get_power_cap_info(Processor(7), 0, &cap), AMDSMI_STATUS_SUCCESS);
  EXPECT_EQ(cap.max_power_cap, 750'000'000u);  // 750 W TBP
  EXPECT_EQ(cap.default_power_cap, 750'000'000u);
  amdsmi_asic_info_t asic{};
  ASSERT_EQ(amdsmi_get_gpu_asic_info(Processor(0), &asic), AMDSMI_STATUS_SUCCESS);
  EXPECT_STREQ(asic.market_name, "AMD Instinct MI300X");
  const amdsmi_power_info_t mi300x = PowerInfo(Processor(0));
  EXPECT_GT(mi300x.current_socket_power, 0u);
  EXPECT_EQ(mi300x.average_socket_power, AMDSMI_NOT_AVAILABLE_U32);  // MI300X: current power only
  ASSERT_EQ(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);

  ::setenv("ZEUS_AMDSMI_EMULATOR_CONFIG", (dir + "/mi250.json").c_str(), 1);
  Init();
  const std::vector<amdsmi_processor_handle> dies = Processors();
  ASSERT_EQ(dies.size(), 8u);  // 4 boards x 2 GCDs
  for (std::size_t i = 0; i < dies.size(); ++i) {
    const amdsmi_power_info_t power = PowerInfo(dies[i]);
    if (i % 2 == 0) {  // the board's power, averaged only
      EXPECT_EQ(power.current_socket_power, AMDSMI_NOT_AVAILABLE_U32) << i;
      EXPECT_GT(power.average_socket_power, 0u) << i;
    } else {  // the secondary die reports none
      EXPECT_EQ(power.current_socket_power, 0u) << i;
      EXPECT_EQ(power.average_socket_power, 0u) << i;
    }
    ASSERT_EQ(amdsmi_get_power_cap_info(dies[i], 0, &cap), AMDSMI_STATUS_SUCCESS);
    EXPECT_EQ(cap.max_power_cap, 500'000'000u);  // 500 W TBP per board
  }
}

}  // namespace
}  // namespace zeus::emulator::test
