// Copyright 2026 The Zeus C++ Authors.
//
// Builds a fake Linux powercap tree of real files in a directory, for RAPL
// tests: packages intel-rapl:<N> with name, energy_uj and
// max_energy_range_uj, optional DRAM (and core) subzones.

#ifndef ZEUS_TESTING_RAPL_TREE_H_
#define ZEUS_TESTING_RAPL_TREE_H_

#include <cstdint>
#include <string>

namespace zeus::testing {

class RaplTree {
 public:
  explicit RaplTree(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // Adds intel-rapl:<package>, named "package-<package>", and a core subzone
  // intel-rapl:<package>:0. With dram, adds intel-rapl:<package>:1 "dram".
  void AddPackage(unsigned int package, bool dram, std::uint64_t range_uj = 262143328850ULL);
  // Writes a raw counter value. `dram` selects the DRAM subzone.
  void SetEnergy(unsigned int package, bool dram, std::uint64_t energy_uj);
  // The path of a zone's energy_uj.
  std::string EnergyPath(unsigned int package, bool dram) const;

 private:
  std::string ZoneDir(unsigned int package, bool dram) const;
  std::string root_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_RAPL_TREE_H_
