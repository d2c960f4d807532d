// Copyright 2026 The Zeus C++ Authors.

#include "caller_privileges.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace zeus::emulator {

bool CallerMayChangeGpuSettings() {
  if (::geteuid() == 0) return true;
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;  // this thread
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  constexpr unsigned kWord = CAP_SYS_ADMIN / 32;
  constexpr unsigned kBit = CAP_SYS_ADMIN % 32;
  return (data[kWord].effective & (1u << kBit)) != 0;
}

}  // namespace zeus::emulator
