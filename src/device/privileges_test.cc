// Copyright 2026 The Zeus C++ Authors.
//
// The privilege probe on hand-made inputs: an effective uid and the text of
// a /proc/<pid>/status file. Masks are written out bit by bit in comments;
// CAP_SYS_ADMIN is capability 21 (linux/capability.h).

#include "zeus/device/privileges.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace zeus::device {
namespace {

// The lines of a real /proc/self/status around CapEff, for a process with
// the given effective mask.
std::string StatusFile(std::string_view cap_eff) {
  return "Name:\tzeus\nUmask:\t0022\nState:\tR (running)\nUid:\t1000\t1000\t1000\t1000\n"
         "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t" +
         std::string(cap_eff) + "\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\nNoNewPrivs:\t0\n";
}

TEST(PrivilegesTest, EffectiveUidZeroIsRootAndMayChangeGpuSettings) {
  const Privileges root = PrivilegesFrom(0, StatusFile("0000000000000000"));
  EXPECT_TRUE(root.is_root);
  EXPECT_FALSE(root.has_cap_sys_admin);
  EXPECT_TRUE(root.can_change_gpu_settings());
}

TEST(PrivilegesTest, AnOrdinaryUserWithoutCapabilitiesMayNot) {
  const Privileges user = PrivilegesFrom(1000, StatusFile("0000000000000000"));
  EXPECT_FALSE(user.is_root);
  EXPECT_FALSE(user.has_cap_sys_admin);
  EXPECT_FALSE(user.can_change_gpu_settings());
}

TEST(PrivilegesTest, CapSysAdminAloneIsEnough) {
  // 0x200000 = 1 << 21: CAP_SYS_ADMIN and nothing else.
  const Privileges admin = PrivilegesFrom(1000, StatusFile("0000000000200000"));
  EXPECT_FALSE(admin.is_root);
  EXPECT_TRUE(admin.has_cap_sys_admin);
  EXPECT_TRUE(admin.can_change_gpu_settings());
}

TEST(PrivilegesTest, OnlyBit21Counts) {
  // 0x1fffff = bits 0-20 (CAP_CHOWN .. CAP_SYS_PTRACE): every capability below it.
  EXPECT_FALSE(PrivilegesFrom(1000, StatusFile("00000000001fffff")).has_cap_sys_admin);
  // 0x1ffffdfffff = bits 0-40 but 21: everything but it.
  EXPECT_FALSE(PrivilegesFrom(1000, StatusFile("000001ffffdfffff")).has_cap_sys_admin);
  // 0x1ffffffffff = bits 0-40: a root shell's full set.
  EXPECT_TRUE(PrivilegesFrom(1000, StatusFile("000001ffffffffff")).has_cap_sys_admin);
}

TEST(PrivilegesTest, OnlyTheEffectiveSetCounts) {
  // Permitted and bounding sets hold bit 21, the effective set does not.
  const std::string text =
      "CapInh:\t0000000000200000\nCapPrm:\t0000000000200000\nCapEff:\t0000000000000000\n"
      "CapBnd:\t000001ffffffffff\n";
  EXPECT_FALSE(PrivilegesFrom(1000, text).has_cap_sys_admin);
}

TEST(PrivilegesTest, AMissingOrMalformedMaskMeansNoCapabilities) {
  EXPECT_FALSE(PrivilegesFrom(1000, "").has_cap_sys_admin);
  EXPECT_FALSE(PrivilegesFrom(1000, "Name:\tzeus\nUid:\t1000\t1000\t1000\t1000\n").has_cap_sys_admin);
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEff:\n").has_cap_sys_admin);
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEff:\tzz\n").has_cap_sys_admin);
  // A valid prefix followed by garbage is not a mask.
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEff:\t0000000000200000zz\n").has_cap_sys_admin);
  // More than 64 bits.
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEff:\t10000000000200000\n").has_cap_sys_admin);
  // "CapEffective" is not the CapEff line.
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEffective:\t0000000000200000\n").has_cap_sys_admin);
}

TEST(PrivilegesTest, BlanksAroundTheMaskAndALastLineWithoutNewlineAreRead) {
  EXPECT_TRUE(PrivilegesFrom(1000, "CapEff:   0000000000200000  \r\n").has_cap_sys_admin);
  EXPECT_TRUE(PrivilegesFrom(1000, "Name:\tzeus\nCapEff:\t0000000000200000").has_cap_sys_admin);
}

TEST(PrivilegesTest, TheFirstCapEffLineWins) {
  EXPECT_FALSE(PrivilegesFrom(1000, "CapEff:\t0000000000000000\nCapEff:\t0000000000200000\n").has_cap_sys_admin);
}

TEST(PrivilegesTest, CurrentPrivilegesReadsTheGivenStatusFile) {
  zeus::testing::TempDir tmp;
  EXPECT_TRUE(CurrentPrivileges(tmp.Write("with", StatusFile("0000000000200000"))).has_cap_sys_admin);
  EXPECT_FALSE(CurrentPrivileges(tmp.Write("without", StatusFile("00000000001fffff"))).has_cap_sys_admin);
  EXPECT_FALSE(CurrentPrivileges(tmp.File("absent")).has_cap_sys_admin);
}

}  // namespace
}  // namespace zeus::device
