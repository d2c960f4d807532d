// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/privileges.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <string>

namespace zeus::device {
namespace {
constexpr int kCapSysAdminBit = 21;
}  // namespace

Privileges CurrentPrivileges(const std::string& proc_status_path) {
  Privileges privileges;
  privileges.is_root = ::geteuid() == 0;
  std::ifstream status(proc_status_path);
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("CapEff:")) continue;
    std::string_view hex = std::string_view(line).substr(7);
    while (!hex.empty() && (hex.front() == ' ' || hex.front() == '\t')) hex.remove_prefix(1);
    unsigned long long mask = 0;
    auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    privileges.has_cap_sys_admin = ec == std::errc() && ((mask >> kCapSysAdminBit) & 1ULL) != 0;
    break;
  }
  return privileges;
}

}  // namespace zeus::device
