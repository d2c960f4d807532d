// Copyright 2026 The Zeus C++ Authors.
//
// The device settings taken from the environment: each setting's order
// (the caller's option, then the variable, then the default), how an empty
// variable counts, and the rule for an NVML library that was named.

#include "zeus/device/environment.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace zeus::device {
namespace {

using zeus::testing::ScopedEnv;

TEST(NvmlLibraryChoiceTest, UnsetVariableIsTheSystemLibraryNotNamed) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", std::nullopt);
  const NvmlLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "libnvidia-ml.so.1");
  EXPECT_EQ(choice.origin, "");
  EXPECT_FALSE(choice.named_explicitly);
}

TEST(NvmlLibraryChoiceTest, EmptyVariableCountsAsUnset) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "");
  const NvmlLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "libnvidia-ml.so.1");
  EXPECT_FALSE(choice.named_explicitly);
}

TEST(NvmlLibraryChoiceTest, TheVariableNamesTheLibrary) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/opt/x/libzeus-nvml-emulator.so");
  const NvmlLibraryChoice choice = ChooseNvmlLibrary();
  EXPECT_EQ(choice.path, "/opt/x/libzeus-nvml-emulator.so");
  EXPECT_EQ(choice.origin, "ZEUS_NVML_LIBRARY");
  EXPECT_TRUE(choice.named_explicitly);
}

TEST(NvmlLibraryChoiceTest, TheConfiguredLibraryWinsOverTheVariable) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/from/the/environment.so");
  const NvmlLibraryChoice choice = ChooseNvmlLibrary("/configured.so");
  EXPECT_EQ(choice.path, "/configured.so");
  EXPECT_EQ(choice.origin, "the configured NVML library");
  EXPECT_TRUE(choice.named_explicitly);
}

TEST(NvmlLibraryChoiceTest, AnEmptyConfiguredLibraryFallsBackToTheVariable) {
  ScopedEnv env("ZEUS_NVML_LIBRARY", "/from/the/environment.so");
  EXPECT_EQ(ChooseNvmlLibrary("").path, "/from/the/environment.so");
  EXPECT_EQ(ChooseNvmlLibrary(std::nullopt).path, "/from/the/environment.so");
}

TEST(MayContinueWithoutGpusTest, OnlyAMissingSystemDriver) {
  const Error no_driver(ErrorCode::kUnavailable, "no NVIDIA driver found");
  const Error broken(ErrorCode::kInternal, "lacks nvmlInit_v2");
  const NvmlLibraryChoice system{"libnvidia-ml.so.1", "", false};
  const NvmlLibraryChoice named{"/x.so", "ZEUS_NVML_LIBRARY", true};
  EXPECT_TRUE(MayContinueWithoutGpus(no_driver, system));
  EXPECT_FALSE(MayContinueWithoutGpus(broken, system));
  // A library that was named must load, whatever the failure.
  EXPECT_FALSE(MayContinueWithoutGpus(no_driver, named));
  EXPECT_FALSE(MayContinueWithoutGpus(Error(ErrorCode::kNotFound, "cannot load"), named));
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
  ClearDeviceEnvironment();
  EXPECT_EQ(std::getenv("ZEUS_NVML_LIBRARY"), nullptr);
  EXPECT_EQ(std::getenv("ZEUS_POWERCAP_ROOT"), nullptr);
  EXPECT_EQ(std::getenv("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_EQ(std::getenv("ZEUS_SOC_ROOT"), nullptr);
  EXPECT_NE(std::getenv("ZEUS_EMULATOR_CONFIG"), nullptr);  // the emulator's, not a device setting
  EXPECT_FALSE(ChooseNvmlLibrary().named_explicitly);
}

}  // namespace
}  // namespace zeus::device
