// Copyright 2026 The Zeus C++ Authors.
//
// What the current process may change on this machine.

#ifndef ZEUS_DEVICE_PRIVILEGES_H_
#define ZEUS_DEVICE_PRIVILEGES_H_

#include <string>

namespace zeus::device {

struct Privileges {
  bool is_root = false;             // effective uid 0
  bool has_cap_sys_admin = false;   // CAP_SYS_ADMIN in the effective set
  // Power limits, persistence mode and locked clocks need one of the two.
  bool can_change_gpu_settings() const { return is_root || has_cap_sys_admin; }
};

// Reads the effective uid and the CapEff line of `proc_status_path`
// (/proc/self/status by default). An unreadable file means no capabilities.
Privileges CurrentPrivileges(const std::string& proc_status_path = "/proc/self/status");

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_PRIVILEGES_H_
