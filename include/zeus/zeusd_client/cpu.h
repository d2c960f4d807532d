// Copyright 2026 The Zeus C++ Authors.
//
// CPU packages read through zeusd, for processes that cannot read RAPL
// themselves (energy_uj is root-only since Linux 5.10), and the choice
// between them and local RAPL.
//
// Where the CPUs come from (OpenCpusLocalOrZeusd):
//   - ZEUSD_SOCK_PATH and ZEUSD_HOST_PORT unset: local RAPL, exactly
//     device::OpenCpus(options).
//   - set, and local RAPL is usable (at least one package, and every
//     package's counter reads): local RAPL. Zeus reads through the daemon
//     whenever one is configured; we read locally where sysfs is readable
//     (issue 12: "RAPL is read through it where sysfs is not readable"): a
//     local read costs no HTTP round trip per package (W14), and the result
//     is the same counters.
//   - set, and local RAPL is not usable (the root cannot be listed, it holds
//     no package, or a package's energy_uj is denied or missing): the daemon's
//     CPUs. A daemon that cannot be reached, a token missing or rejected or
//     without the cpu-read scope, and a daemon without the cpu-read group are
//     errors that name the endpoint and the fix, never an empty set (W13b);
//     only with CpuDemand::kIfServed is a daemon without the cpu-read group
//     an empty set (with a note).
//
// ZeusdCpu keeps the Cpu contract: TotalEnergy() is the energy since the Cpu
// was opened. The daemon's answer (GET /cpu/get_cumulative_energy) is its own
// wrap-corrected count since the daemon opened the package (its wrap guard
// reads the counter on time, so the caller may read as rarely as it likes:
// max_safe_read_interval() is unbounded, late_reads stays 0 and
// wrap_uncertain false). A count lower than the previous one (the daemon
// restarted) is a counter reset: an error once, counted in counter_resets,
// and later reads count on from the new value. A reset the daemon itself
// saw (its answer's error says "the counter was reset", the text of
// device/rapl's reset error) is counted the same way. A daemon restarted
// between two reads whose new count is already above the previous one cannot
// be told apart from a quiet period: that window is low.
//
// Errors of TotalEnergy() are the client's (client.h's table), with the
// package named: kUnavailable (daemon gone), kPermissionDenied (token), ...;
// a count missing from the answer is kIoError.
// Thread-safety: TotalEnergy may be called from several threads (reads of one
// package are serialised, so their answers fold in order).

#ifndef ZEUS_ZEUSD_CLIENT_CPU_H_
#define ZEUS_ZEUSD_CLIENT_CPU_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "zeus/base/error.h"
#include "zeus/device/cpu.h"
#include "zeus/device/discovery.h"
#include "zeus/zeusd_client/client.h"

namespace zeus::zeusd {

// One package of the daemon, by the daemon's CPU id.
class ZeusdCpu final : public device::Cpu {
 public:
  // Reads the package once to take the origin; fails when that read does.
  static Result<std::unique_ptr<ZeusdCpu>> Open(std::shared_ptr<ZeusdClient> client, int cpu_id, bool has_dram);

  // "package-<id>".
  const std::string& name() const override { return name_; }
  bool has_dram() const override { return has_dram_; }
  std::chrono::nanoseconds max_safe_read_interval() const override { return std::chrono::nanoseconds::max(); }
  Result<device::CpuEnergy> TotalEnergy() override;

  int cpu_id() const { return cpu_id_; }

 private:
  // A daemon count folded into energy since open.
  struct Count {
    std::uint64_t last_uj = 0;
    std::uint64_t total_uj = 0;
    // Folds `now_uj`; false (after restarting from it) when it went back.
    bool Fold(std::uint64_t now_uj);
  };
  ZeusdCpu(std::shared_ptr<ZeusdClient> client, int cpu_id, bool has_dram);
  // One request: (package µJ, DRAM µJ when has_dram).
  Result<std::pair<std::uint64_t, std::optional<std::uint64_t>>> Fetch();

  std::shared_ptr<ZeusdClient> client_;
  const int cpu_id_;
  const bool has_dram_;
  const std::string name_;
  std::mutex mu_;
  Count package_;                       // guarded by mu_
  Count dram_;                          // guarded by mu_
  std::uint64_t counter_resets_ = 0;    // guarded by mu_
};

// A CpuSet of every CPU the daemon serves, in id order. Fails (the client's
// Require error, with the fix) when the daemon cannot serve CPU reads to
// this client, or when the first read fails.
Result<std::unique_ptr<device::CpuSet>> OpenZeusdCpus(std::shared_ptr<ZeusdClient> client);

enum class CpuDemand {
  kRequired,  // the caller asked for CPUs: a daemon without cpu-read is an error
  kIfServed,  // CPUs when there are any (ZeusMonitor's default): a daemon
              // without the cpu-read group is no CPUs, with a note
};

struct OpenedCpus {
  std::unique_ptr<device::CpuSet> cpus;
  // Set when the CPUs are read through zeusd: its endpoint.
  std::optional<std::string> zeusd_endpoint;
  // Why local RAPL was not used, or why there are no CPUs, for people.
  std::optional<std::string> note;
};

// Local RAPL or the daemon's CPUs, as the file comment says. The daemon is
// configured from the environment (ZeusdConfig::FromEnv).
Result<OpenedCpus> OpenCpusLocalOrZeusd(const device::CpuOptions& options = {},
                                        CpuDemand demand = CpuDemand::kRequired);
// The same with the configuration given (std::nullopt: local only).
Result<OpenedCpus> OpenCpusLocalOrZeusd(const device::CpuOptions& options, const std::optional<ZeusdConfig>& config,
                                        CpuDemand demand);

}  // namespace zeus::zeusd

#endif  // ZEUS_ZEUSD_CLIENT_CPU_H_
