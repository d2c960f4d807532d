// Copyright 2026 The Zeus C++ Authors.

#include "device/visible_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace zeus::device {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<std::string> kUuids = {
    "GPU-aaaa1111-0000-0000-0000-000000000000",
    "GPU-bbbb2222-0000-0000-0000-000000000000",
    "GPU-bbbb3333-0000-0000-0000-000000000000",
    "GPU-cccc4444-0000-0000-0000-000000000000",
};

TEST(VisibleDevicesTest, UnsetMeansAll) {
  EXPECT_THAT(*ResolveVisibleDevices(std::nullopt, kUuids), ElementsAre(0, 1, 2, 3));
}

TEST(VisibleDevicesTest, EmptyMeansNone) {
  EXPECT_THAT(*ResolveVisibleDevices("", kUuids), IsEmpty());
  EXPECT_THAT(*ResolveVisibleDevices("  ", kUuids), IsEmpty());
}

// The usual way to hide every GPU, as in CUDA: no device, not an error.
TEST(VisibleDevicesTest, MinusOneMeansNone) {
  for (const char* spec : {"-1", " -1 ", "-2"}) {
    auto r = ResolveVisibleDevices(spec, kUuids);
    ASSERT_TRUE(r) << spec << ": " << r.error().message();
    EXPECT_THAT(*r, IsEmpty()) << spec;
  }
}

// A trailing negative index ends the list, as in CUDA.
TEST(VisibleDevicesTest, TrailingMinusOneEndsTheList) {
  EXPECT_THAT(*ResolveVisibleDevices("2,0,-1", kUuids), ElementsAre(2, 0));
  EXPECT_THAT(*ResolveVisibleDevices("GPU-cccc,-1", kUuids), ElementsAre(3));
}

TEST(VisibleDevicesTest, IndicesInGivenOrder) {
  EXPECT_THAT(*ResolveVisibleDevices("2,0", kUuids), ElementsAre(2, 0));
  EXPECT_THAT(*ResolveVisibleDevices(" 3 , 1 ", kUuids), ElementsAre(3, 1));
}

TEST(VisibleDevicesTest, UuidsAndUniquePrefixes) {
  EXPECT_THAT(*ResolveVisibleDevices("GPU-cccc4444-0000-0000-0000-000000000000,GPU-aaaa", kUuids),
              ElementsAre(3, 0));
  EXPECT_THAT(*ResolveVisibleDevices("1,GPU-bbbb3", kUuids), ElementsAre(1, 2));
}

TEST(VisibleDevicesTest, MigIsNotSupported) {
  auto r = ResolveVisibleDevices("MIG-4f8e1c2a-1111-2222-3333-444455556666", kUuids);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kNotSupported);
  EXPECT_THAT(r.error().message(), HasSubstr("MIG instance"));
}

TEST(VisibleDevicesTest, BadEntriesNameTheEntry) {
  struct Case {
    const char* spec;
    const char* fragment;
  };
  for (const Case& c : {Case{"7", "\"7\" is out of range: this machine has 4 GPUs"},
                        Case{"0,0", "\"0\" repeats a GPU"},
                        Case{"GPU-bbbb", "\"GPU-bbbb\" matches more than one GPU"},
                        Case{"GPU-ffff", "\"GPU-ffff\" matches no GPU"},
                        Case{"zero", "\"zero\" is neither an index nor a UUID"},
                        Case{"-1,0", "\"-1\" hides every entry after it"},
                        Case{"0,1,-1,2", "\"-1\" hides every entry after it"},
                        Case{"-", "\"-\" is neither an index nor a UUID"},
                        Case{"-x", "\"-x\" is neither an index nor a UUID"},
                        Case{"0,,1", "\"\" is empty"}}) {
    auto r = ResolveVisibleDevices(c.spec, kUuids);
    ASSERT_FALSE(r) << c.spec;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << c.spec;
    EXPECT_THAT(r.error().message(), HasSubstr(c.fragment)) << c.spec;
    EXPECT_THAT(r.error().message(), HasSubstr(std::string("CUDA_VISIBLE_DEVICES=") + c.spec));
  }
}

// ROCm's two levels: ROCR selects from every GPU, then HIP selects by
// position among what ROCR left.
TEST(AmdVisibleDevicesTest, RocrThenHipByPosition) {
  const std::vector<std::string> uuids = {"aaaa-0", "bbbb-1", "cccc-2", "dddd-3"};
  EXPECT_THAT(*ResolveAmdVisibleDevices(std::nullopt, std::nullopt, "HIP_VISIBLE_DEVICES", uuids),
              ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*ResolveAmdVisibleDevices("3,1,2", std::nullopt, "HIP_VISIBLE_DEVICES", uuids), ElementsAre(3, 1, 2));
  // HIP's 0 and 2 are ROCR's first and third: GPUs 3 and 2.
  EXPECT_THAT(*ResolveAmdVisibleDevices("3,1,2", "0,2", "HIP_VISIBLE_DEVICES", uuids), ElementsAre(3, 2));
  EXPECT_THAT(*ResolveAmdVisibleDevices(std::nullopt, "2", "CUDA_VISIBLE_DEVICES", uuids), ElementsAre(2));
  // UUIDs: "GPU-" and a prefix of the AMD SMI UUID, at either level.
  EXPECT_THAT(*ResolveAmdVisibleDevices("GPU-dddd,GPU-bbbb", "GPU-bb", "HIP_VISIBLE_DEVICES", uuids),
              ElementsAre(1));
  EXPECT_THAT(*ResolveAmdVisibleDevices("", std::nullopt, "HIP_VISIBLE_DEVICES", uuids), IsEmpty());
}

TEST(AmdVisibleDevicesTest, ErrorsNameTheLevel) {
  const std::vector<std::string> uuids = {"aaaa-0", "bbbb-1"};
  auto rocr = ResolveAmdVisibleDevices("5", std::nullopt, "HIP_VISIBLE_DEVICES", uuids);
  ASSERT_FALSE(rocr);
  EXPECT_THAT(rocr.error().message(), HasSubstr("ROCR_VISIBLE_DEVICES=5"));
  // HIP indexes what ROCR left: one GPU, so 1 is out of range.
  auto hip = ResolveAmdVisibleDevices("1", "1", "HIP_VISIBLE_DEVICES", uuids);
  ASSERT_FALSE(hip);
  EXPECT_EQ(hip.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(hip.error().message(), HasSubstr("HIP_VISIBLE_DEVICES=1"));
  EXPECT_THAT(hip.error().message(), HasSubstr("this machine has 1 GPU"));
}

}  // namespace
}  // namespace zeus::device
