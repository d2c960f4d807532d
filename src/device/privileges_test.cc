// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/privileges.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace zeus::device {
namespace {

TEST(PrivilegesTest, ReadsCapSysAdminFromCapEff) {
  zeus::testing::TempDir tmp;
  // Bit 21 set.
  auto with = CurrentPrivileges(tmp.Write("with", "Name:\tx\nCapEff:\t0000000000200000\n"));
  EXPECT_TRUE(with.has_cap_sys_admin);
  auto without = CurrentPrivileges(tmp.Write("without", "CapEff:\t00000000001fffff\n"));
  EXPECT_FALSE(without.has_cap_sys_admin);
  auto garbage = CurrentPrivileges(tmp.Write("garbage", "CapEff:\tzz\n"));
  EXPECT_FALSE(garbage.has_cap_sys_admin);
  auto missing = CurrentPrivileges(tmp.File("absent"));
  EXPECT_FALSE(missing.has_cap_sys_admin);
  EXPECT_EQ(missing.is_root, ::geteuid() == 0);
  EXPECT_EQ(missing.can_change_gpu_settings(), ::geteuid() == 0);
}

}  // namespace
}  // namespace zeus::device
