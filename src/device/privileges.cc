// Copyright 2026 The Zeus C++ Authors.

#include "zeus/device/privileges.h"

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace zeus::device {
namespace {

constexpr int kCapSysAdminBit = 21;

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

Privileges PrivilegesFrom(unsigned effective_uid, std::string_view proc_status_text) {
  Privileges privileges;
  privileges.is_root = effective_uid == 0;
  constexpr std::string_view kCapEff = "CapEff:";
  while (!proc_status_text.empty()) {
    const std::size_t eol = proc_status_text.find('\n');
    const std::string_view line = proc_status_text.substr(0, eol);
    proc_status_text = eol == std::string_view::npos ? std::string_view() : proc_status_text.substr(eol + 1);
    if (!line.starts_with(kCapEff)) continue;
    const std::string_view hex = TrimBlanks(line.substr(kCapEff.size()));
    std::uint64_t mask = 0;
    const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    const bool whole_mask = ec == std::errc() && end == hex.data() + hex.size() && hex.size() <= 16;
    privileges.has_cap_sys_admin = whole_mask && ((mask >> kCapSysAdminBit) & 1U) != 0;
    break;
  }
  return privileges;
}

Privileges CurrentPrivileges(const std::string& proc_status_path) {
  std::ifstream file(proc_status_path);
  std::ostringstream text;
  if (file) text << file.rdbuf();
  return PrivilegesFrom(::geteuid(), text.str());
}

}  // namespace zeus::device
