// Copyright 2026 The Zeus C++ Authors.

#include "testing/rapl_tree.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace zeus::testing {
namespace {

void WriteFile(const std::string& path, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << contents << "\n";
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
}

}  // namespace

std::string RaplTree::ZoneDir(unsigned int package, bool dram) const {
  std::string dir = fmt::format("{}/intel-rapl:{}", root_, package);
  if (dram) dir += fmt::format("/intel-rapl:{}:1", package);
  return dir;
}

std::string RaplTree::EnergyPath(unsigned int package, bool dram) const { return ZoneDir(package, dram) + "/energy_uj"; }

void RaplTree::AddPackage(unsigned int package, bool dram, std::uint64_t range_uj) {
  const std::string dir = ZoneDir(package, false);
  WriteFile(dir + "/name", fmt::format("package-{}", package));
  WriteFile(dir + "/max_energy_range_uj", std::to_string(range_uj));
  WriteFile(dir + "/energy_uj", "0");
  const std::string core = fmt::format("{}/intel-rapl:{}:0", dir, package);
  WriteFile(core + "/name", "core");
  WriteFile(core + "/max_energy_range_uj", std::to_string(range_uj));
  WriteFile(core + "/energy_uj", "0");
  if (dram) {
    const std::string dram_dir = ZoneDir(package, true);
    WriteFile(dram_dir + "/name", "dram");
    WriteFile(dram_dir + "/max_energy_range_uj", std::to_string(range_uj));
    WriteFile(dram_dir + "/energy_uj", "0");
  }
}

void RaplTree::SetEnergy(unsigned int package, bool dram, std::uint64_t energy_uj) {
  WriteFile(EnergyPath(package, dram), std::to_string(energy_uj));
}

}  // namespace zeus::testing
