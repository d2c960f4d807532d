// Copyright 2026 The Zeus C++ Authors.
//
// zeus::zeusd::ZeusdClient: a client of zeusd, the privileged daemon that
// changes GPU limits and reads RAPL for unprivileged processes (the API of
// zeus-reference 3.4). Configured like Zeus's client from the environment:
// ZEUSD_SOCK_PATH (a Unix socket; takes precedence), else ZEUSD_HOST_PORT
// ("host:port", TCP), and ZEUSD_TOKEN (a JWT, when the daemon requires one).
//
// Errors (all Result/Status); an error answer's status is read with the
// HTTP layer's one table (src/http/http_status.h), its native code is the
// status and its message holds the daemon's body:
//   kUnavailable       - the daemon cannot be reached, or its /discover fails
//                        (the message names the endpoint and what to check),
//                        or a GPU did not answer within the daemon's deadline
//                        (503);
//   kPermissionDenied  - a token is needed but missing or was rejected (401,
//                        native HTTP code 401), the token lacks the scope or
//                        the driver refused (403);
//   kNotFound          - the API group is not enabled on the daemon (404);
//   kInvalidArgument   - the daemon rejected the request (400: bad input, a
//                        GPU or CPU id it does not have, the driver's
//                        invalid-argument or not-supported);
//   kFailedPrecondition - Require: what the daemon cannot do for this client;
//   kInternal/kIoError - anything else (500: another driver error or a failed
//                        override command; an answer that does not parse).
// Thread-safety: a ZeusdClient may be used from several threads at once (one
// connection per request).

#ifndef ZEUS_ZEUSD_CLIENT_CLIENT_H_
#define ZEUS_ZEUSD_CLIENT_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::zeusd {

struct ZeusdConfig {
  std::string socket_path;  // non-empty: Unix socket
  std::string host_port;    // else "host:port" (taken verbatim; port 4938 when absent)
  std::string token;        // "" when none
  std::chrono::milliseconds timeout{10000};  // connect + one request

  // ZEUSD_SOCK_PATH first, then ZEUSD_HOST_PORT; ZEUSD_TOKEN. Null when
  // neither address variable is set (or both are empty).
  static std::optional<ZeusdConfig> FromEnv();
  // The socket path or host:port, for messages.
  std::string endpoint() const;
};

struct ZeusdGpuInfo {
  int id = 0;
  std::string name;
  std::string pci_address;  // "dddd:bb:dd.0"
  bool cumulative_energy_available = false;
};

struct ZeusdCpuInfo {
  int id = 0;
  bool dram_available = false;
};

// What /discover and /auth/whoami said, and what we may therefore do.
struct ZeusdCapabilities {
  std::vector<ZeusdGpuInfo> gpus;
  std::vector<ZeusdCpuInfo> cpus;
  std::vector<std::string> enabled_api_groups;  // "gpu-control", "gpu-read", "cpu-read"
  bool auth_required = false;
  // Set when auth_required and a token was accepted by /auth/whoami.
  std::vector<std::string> scopes;
  std::string subject;
  std::optional<std::int64_t> expires_unix_s;
  // Set when auth_required and there is no usable token (why, in words).
  std::optional<Error> auth_error;

  bool GroupEnabled(std::string_view group) const;
  // Group enabled and (no auth, or the token has the scope).
  bool Can(std::string_view group) const;
  bool can_control_gpu() const { return Can("gpu-control"); }
  bool can_read_gpu() const { return Can("gpu-read"); }
  bool can_read_cpu() const { return Can("cpu-read"); }
};

struct ZeusdCpuEnergy {
  std::optional<std::uint64_t> cpu_energy_uj;
  std::optional<std::uint64_t> dram_energy_uj;
};

// GET /gpu/get_power: GPU id -> mW at the daemon's time.
struct ZeusdGpuPower {
  std::int64_t timestamp_ms = 0;  // the daemon's wall clock, ms since the epoch
  std::map<int, std::uint32_t> power_mw;
};

struct ZeusdCpuPowerMw {
  std::uint32_t cpu_mw = 0;
  std::optional<std::uint32_t> dram_mw;  // null: the package has no DRAM counter
};

// GET /cpu/get_power: CPU package id -> its power and its DRAM's.
struct ZeusdCpuPower {
  std::int64_t timestamp_ms = 0;
  std::map<int, ZeusdCpuPowerMw> power_mw;
};

// GET /gpu/get_power_limit_constraints: the limits a GPU accepts.
struct ZeusdPowerLimitRange {
  std::uint32_t min_mw = 0;
  std::uint32_t max_mw = 0;
};

class ZeusdClient {
 public:
  // Connects: GET /discover, and /auth/whoami when the daemon requires
  // tokens. Fails (kUnavailable) when the daemon is unreachable or answers
  // /discover with anything but 200. Auth problems are kept in
  // capabilities().auth_error, not returned (as Zeus's client).
  static Result<std::unique_ptr<ZeusdClient>> Connect(ZeusdConfig config);
  virtual ~ZeusdClient() = default;

  virtual const ZeusdConfig& config() const = 0;
  virtual const ZeusdCapabilities& capabilities() const = 0;

  // Fails with capabilities().auth_error (kPermissionDenied) when there is
  // one, else with kFailedPrecondition naming every unmet requirement (group
  // not enabled, token lacks the scope, ids not on the daemon); OK otherwise.
  virtual Status Require(bool control_gpu, bool read_gpu, bool read_cpu, const std::vector<int>& gpu_ids = {},
                         const std::vector<int>& cpu_ids = {}) const = 0;

  // Every call of zeusd's API, typed. The writes (POST /gpu/<name>) return,
  // with block, once applied (else once queued). The reads (GET) take the
  // ids to read, empty for every device. A non-200 answer fails with the
  // error of its status (see the file comment), naming the operation; an
  // answer without the expected fields is kIoError.
  virtual Status SetPowerLimitMw(const std::vector<int>& gpu_ids, std::uint32_t limit_mw, bool block = true) = 0;
  virtual Status SetPersistenceMode(const std::vector<int>& gpu_ids, bool enabled, bool block = true) = 0;
  virtual Status SetGpuLockedClocks(const std::vector<int>& gpu_ids, std::uint32_t min_clock_mhz,
                                    std::uint32_t max_clock_mhz, bool block = true) = 0;
  virtual Status ResetGpuLockedClocks(const std::vector<int>& gpu_ids, bool block = true) = 0;
  virtual Status SetMemLockedClocks(const std::vector<int>& gpu_ids, std::uint32_t min_clock_mhz,
                                    std::uint32_t max_clock_mhz, bool block = true) = 0;
  virtual Status ResetMemLockedClocks(const std::vector<int>& gpu_ids, bool block = true) = 0;
  // Both the GPU and the memory clock.
  virtual Status ResetLockedClocks(const std::vector<int>& gpu_ids, bool block = true) = 0;
  virtual Result<std::map<int, std::uint32_t>> GetPowerLimitMw(const std::vector<int>& gpu_ids = {}) = 0;
  virtual Result<std::map<int, ZeusdPowerLimitRange>> GetPowerLimitRangeMw(const std::vector<int>& gpu_ids = {}) = 0;
  virtual Result<std::map<int, bool>> GetPersistenceMode(const std::vector<int>& gpu_ids = {}) = 0;
  virtual Result<std::map<int, std::uint64_t>> GetGpuEnergyMj(const std::vector<int>& gpu_ids = {}) = 0;
  virtual Result<ZeusdGpuPower> GetGpuPower(const std::vector<int>& gpu_ids = {}) = 0;
  virtual Result<std::map<int, ZeusdCpuEnergy>> GetCpuEnergy(const std::vector<int>& cpu_ids = {}, bool cpu = true,
                                                             bool dram = true) = 0;
  virtual Result<ZeusdCpuPower> GetCpuPower(const std::vector<int>& cpu_ids = {}) = 0;
  // GET /time: the daemon's wall clock in ms since the epoch.
  virtual Result<std::int64_t> TimeMs() = 0;

  // A raw request, for bindings and tools: (status, body). Query strings
  // are the caller's (already encoded).
  virtual Result<std::pair<int, std::string>> Request(std::string_view method, std::string_view target) = 0;
};

}  // namespace zeus::zeusd

#endif  // ZEUS_ZEUSD_CLIENT_CLIENT_H_
