// Copyright 2026 The Zeus C++ Authors.
//
// What the current process may change on this machine.

#ifndef ZEUS_DEVICE_PRIVILEGES_H_
#define ZEUS_DEVICE_PRIVILEGES_H_

#include <string>
#include <string_view>

namespace zeus::device {

struct Privileges {
  bool is_root = false;             // effective uid 0
  bool has_cap_sys_admin = false;   // CAP_SYS_ADMIN in the effective set
  // Power limits, persistence mode and locked clocks need one of the two.
  bool can_change_gpu_settings() const { return is_root || has_cap_sys_admin; }
};

// The privileges of a process whose effective uid is `effective_uid` and
// whose /proc/<pid>/status reads `proc_status_text`: CAP_SYS_ADMIN is bit 21
// of the hexadecimal mask on the first "CapEff:" line. A missing line, or a
// mask that is not 1 to 16 hex digits (surrounding blanks allowed), means no
// capabilities. Pure; the seam CurrentPrivileges is tested through.
Privileges PrivilegesFrom(unsigned effective_uid, std::string_view proc_status_text);

// PrivilegesFrom(geteuid(), the text of `proc_status_path`). An unreadable
// file means no capabilities.
Privileges CurrentPrivileges(const std::string& proc_status_path = "/proc/self/status");

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_PRIVILEGES_H_
