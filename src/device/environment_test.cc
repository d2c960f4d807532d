// Copyright 2026 The Zeus C++ Authors.
//
// The device settings taken from the environment: each setting's order
// (the caller's option, then the variable, then the default), how an empty
// variable counts, and the rule for an NVML library that was named.

#include "zeus/device/environment.h"

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace zeus::device {
namespace {

using ::testing::HasSubstr;

using zeus::testing::ScopedEnv;

TEST(GpuLibraryChoiceTest, UnsetVariableIsTheSystemLibraryNotNamed) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", std::nullopt);
  const GpuLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "libnvidia-ml.so.1");
  EXPECT_EQ(choice.origin, "");
  EXPECT_FALSE(choice.named_explicitly);
}

TEST(GpuLibraryChoiceTest, EmptyVariableCountsAsUnset) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "");
  const GpuLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "libnvidia-ml.so.1");
  EXPECT_FALSE(choice.named_explicitly);
}

TEST(GpuLibraryChoiceTest, TheVariableNamesTheLibrary) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/opt/x/libzeus-nvml-emulator.so");
  const GpuLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "/opt/x/libzeus-nvml-emulator.so");
  EXPECT_EQ(choice.origin, "ZEUS_NVML_LIBRARY");
  EXPECT_TRUE(choice.named_explicitly);
}

TEST(GpuLibraryChoiceTest, TheConfiguredLibraryWinsOverTheVariable) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/from/the/environment.so");
  const GpuLibraryChoice choice = ChooseNvmlLibrary("/configured.so");
  EXPECT_EQ(choice.path, "/configured.so");
  EXPECT_EQ(choice.origin, "the configured NVML library");
  EXPECT_TRUE(choice.named_explicitly);
}

TEST(GpuLibraryChoiceTest, AnEmptyConfiguredLibraryFallsBackToTheVariable) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/from/the/environment.so");
  EXPECT_EQ(ChooseNvmlLibrary("").path, "/from/the/environment.so");
  EXPECT_EQ(ChooseNvmlLibrary(std::nullopt).path, "/from/the/environment.so");
}

TEST(MayContinueWithoutGpusTest, OnlyAMissingSystemDriver) {
  const Error no_driver(ErrorCode::kUnavailable, "no NVIDIA driver found");
  const Error broken(ErrorCode::kInternal, "lacks nvmlInit_v2");
  const GpuLibraryChoice system{"libnvidia-ml.so.1", "", false};
  const GpuLibraryChoice named{"/x.so", "ZEUS_NVML_LIBRARY", true};
  EXPECT_TRUE(MayContinueWithoutGpus(no_driver, system));
  EXPECT_FALSE(MayContinueWithoutGpus(broken, system));
  // A library that was named must load, whatever the failure.
  EXPECT_FALSE(MayContinueWithoutGpus(no_driver, named));
  EXPECT_FALSE(MayContinueWithoutGpus(Error(ErrorCode::kNotFound, "cannot load"), named));
}

TEST(MayContinueWithoutGpusTest, ANamedAmdLibraryOrVendorMustLoad) {
  const Error no_driver(ErrorCode::kUnavailable, "no NVIDIA driver found; and no AMD GPU driver found");
  const GpuLibraryChoice system{"libnvidia-ml.so.1", "", false};
  {
    ScopedEnv amd("ZEUS_AMDSMI_LIBRARY", "/x/libzeus-amdsmi-emulator.so");
    EXPECT_FALSE(MayContinueWithoutGpus(no_driver, system));
  }
  {
    ScopedEnv vendor("ZEUS_GPU_VENDOR", "amd");
    EXPECT_FALSE(MayContinueWithoutGpus(no_driver, system));
  }
  ScopedEnv vendor("ZEUS_GPU_VENDOR", "auto");
  EXPECT_TRUE(MayContinueWithoutGpus(no_driver, system));
}

TEST(GpuVendorTest, AutoByDefaultThenTheVariableThenConfigured) {
  {
    ScopedEnv env("ZEUS_GPU_VENDOR", std::nullopt);
    EXPECT_FALSE(ChooseGpuVendor()->has_value());
  }
  {
    ScopedEnv env("ZEUS_GPU_VENDOR", "AMD");
    EXPECT_EQ(**ChooseGpuVendor(), GpuVendor::kAmd);
    EXPECT_EQ(**ChooseGpuVendor(GpuVendor::kNvidia), GpuVendor::kNvidia);
  }
  {
    ScopedEnv env("ZEUS_GPU_VENDOR", "nvidia");
    EXPECT_EQ(**ChooseGpuVendor(), GpuVendor::kNvidia);
  }
  {
    ScopedEnv env("ZEUS_GPU_VENDOR", "auto");
    EXPECT_FALSE(ChooseGpuVendor()->has_value());
  }
  ScopedEnv env("ZEUS_GPU_VENDOR", "intel");
  auto bad = ChooseGpuVendor();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), HasSubstr("ZEUS_GPU_VENDOR='intel'"));
  EXPECT_THAT(bad.error().message(), HasSubstr("nvidia, amd, or auto"));
}

TEST(AmdSmiLibraryChoiceTest, SystemThenVariableThenConfigured) {
  {
    ScopedEnv env("ZEUS_AMDSMI_LIBRARY", std::nullopt);
    EXPECT_EQ(ChooseAmdSmiLibrary().path, "libamd_smi.so");
    EXPECT_FALSE(ChooseAmdSmiLibrary().named_explicitly);
  }
  ScopedEnv env("ZEUS_AMDSMI_LIBRARY", "/from/env.so");
  EXPECT_EQ(ChooseAmdSmiLibrary().path, "/from/env.so");
  EXPECT_EQ(ChooseAmdSmiLibrary().origin, "ZEUS_AMDSMI_LIBRARY");
  EXPECT_EQ(ChooseAmdSmiLibrary("/configured.so").path, "/configured.so");
  EXPECT_TRUE(ChooseAmdSmiLibrary("/configured.so").named_explicitly);
}

TEST(AmdVisibleDevicesChoiceTest, HipBeforeCudaAndRocrBeside) {
  ScopedEnv rocr("ROCR_VISIBLE_DEVICES", "1,0");
  ScopedEnv cuda("CUDA_VISIBLE_DEVICES", "0");
  {
    ScopedEnv hip("HIP_VISIBLE_DEVICES", "1");
    const AmdVisibleDevices chosen = ChooseAmdVisibleDevices();
    EXPECT_EQ(chosen.rocr, "1,0");
    EXPECT_EQ(chosen.hip, "1");
    EXPECT_EQ(chosen.hip_origin, "HIP_VISIBLE_DEVICES");
    EXPECT_EQ(ChooseAmdVisibleDevices("0,1").hip, "0,1");
  }
  ScopedEnv hip("HIP_VISIBLE_DEVICES", std::nullopt);
  const AmdVisibleDevices chosen = ChooseAmdVisibleDevices();
  EXPECT_EQ(chosen.hip, "0");
  EXPECT_EQ(chosen.hip_origin, "CUDA_VISIBLE_DEVICES");
}

TEST(PowercapRootTest, DefaultThenVariableThenConfigured) {
  {
    ScopedEnv env("ZEUS_POWERCAP_ROOT", std::nullopt);
    EXPECT_EQ(ChoosePowercapRoot(), "/sys/class/powercap");
  }
  {
    ScopedEnv env("ZEUS_POWERCAP_ROOT", "");
    EXPECT_EQ(ChoosePowercapRoot(), "/sys/class/powercap");
  }
  ScopedEnv env("ZEUS_POWERCAP_ROOT", "/tmp/fake-powercap");
  EXPECT_EQ(ChoosePowercapRoot(), "/tmp/fake-powercap");
  EXPECT_EQ(ChoosePowercapRoot("/configured"), "/configured");
  // A configured root is taken as given, even empty.
  EXPECT_EQ(ChoosePowercapRoot(""), "");
}

TEST(SocRootTest, DefaultThenVariableThenConfigured) {
  {
    ScopedEnv env("ZEUS_SOC_ROOT", std::nullopt);
    EXPECT_EQ(ChooseSocRoot(), "/");
  }
  {
    ScopedEnv env("ZEUS_SOC_ROOT", "");
    EXPECT_EQ(ChooseSocRoot(), "/");
  }
  ScopedEnv env("ZEUS_SOC_ROOT", "/tmp/fake-jetson");
  EXPECT_EQ(ChooseSocRoot(), "/tmp/fake-jetson");
  EXPECT_EQ(ChooseSocRoot("/configured"), "/configured");
  // An empty configured root is no choice (unlike the powercap root): "" is not a root.
  EXPECT_EQ(ChooseSocRoot(""), "/tmp/fake-jetson");
}

TEST(ProcRootTest, DefaultThenVariableThenConfigured) {
  {
    ScopedEnv env("ZEUS_PROC_ROOT", std::nullopt);
    EXPECT_EQ(ChooseProcRoot(), "/proc");
  }
  {
    ScopedEnv env("ZEUS_PROC_ROOT", "");
    EXPECT_EQ(ChooseProcRoot(), "/proc");
  }
  ScopedEnv env("ZEUS_PROC_ROOT", "/tmp/fake-proc");
  EXPECT_EQ(ChooseProcRoot(), "/tmp/fake-proc");
  EXPECT_EQ(ChooseProcRoot("/configured"), "/configured");
  EXPECT_EQ(ChooseProcRoot(""), "/tmp/fake-proc");
}

TEST(CudaVisibleDevicesTest, UnsetIsEveryGpuAndEmptyIsKept) {
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", std::nullopt);
    EXPECT_EQ(ChooseCudaVisibleDevices(), std::nullopt);
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "");
    EXPECT_EQ(ChooseCudaVisibleDevices(), std::optional<std::string>(""));
  }
  ScopedEnv env("CUDA_VISIBLE_DEVICES", "1,0");
  EXPECT_EQ(ChooseCudaVisibleDevices(), std::optional<std::string>("1,0"));
  EXPECT_EQ(ChooseCudaVisibleDevices("-1"), std::optional<std::string>("-1"));
}

TEST(ClearDeviceEnvironmentTest, UnsetsEveryDeviceVariable) {
  ScopedEnv library("ZEUS_NVML_LIBRARY", "/x.so");
  ScopedEnv root("ZEUS_POWERCAP_ROOT", "/y");
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", "0");
  ScopedEnv soc("ZEUS_SOC_ROOT", "/w");
  ScopedEnv other("ZEUS_EMULATOR_CONFIG", "/z.json");
  ScopedEnv amd("ZEUS_AMDSMI_LIBRARY", "/a.so");
  ScopedEnv vendor("ZEUS_GPU_VENDOR", "amd");
  ScopedEnv hip("HIP_VISIBLE_DEVICES", "1");
  ScopedEnv rocr("ROCR_VISIBLE_DEVICES", "1");
  ClearDeviceEnvironment();
  for (const char* name : {"ZEUS_AMDSMI_LIBRARY", "ZEUS_GPU_VENDOR", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    EXPECT_EQ(std::getenv(name), nullptr) << name;
  }
  EXPECT_EQ(std::getenv("ZEUS_NVML_LIBRARY"), nullptr);
  EXPECT_EQ(std::getenv("ZEUS_POWERCAP_ROOT"), nullptr);
  EXPECT_EQ(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_EQ(std::getenv("ZEUS_SOC_ROOT"), nullptr);
  EXPECT_NE(std::getenv("ZEUS_EMULATOR_CONFIG"), nullptr);  // the emulator's, not a device setting
  EXPECT_FALSE(ChooseNvmlLibrary().named_explicitly);
}

}  // namespace
}  // namespace zeus::device
