// Copyright 2026 The Zeus C++ Authors.
//
// ParseCgroupPath: the workload a /proc/PID/cgroup file names. The layouts and
// their sources are listed in include/zeus/device/process_identity.h and with
// the fixtures in process_identity_test.cc.

#include "zeus/device/process_identity.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace zeus::device {
namespace {

using Parts = std::vector<std::string_view>;

// A path's components; whether it started outside the reader's cgroup
// namespace (with ".." components: cgroup_namespaces(7)).
struct SplitPath {
  Parts parts;
  bool outside_namespace = false;
};

// One line of the file.
struct CgroupLine {
  bool unified = false;  // hierarchy 0 with no controllers: cgroup v2
  std::string_view controllers;
  std::string_view path;
};

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A full container ID: runc, containerd, CRI-O and Docker all use 64 hex digits.
bool IsContainerId(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), IsLowerHex);
}

// Slurm's SLUID as printed by print_sluid: 's' and 13 characters of Crockford's
// base 32 (digits and capitals without I, L, O, U).
bool IsSluid(std::string_view text) {
  constexpr std::string_view kAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  return text.size() == 14 && text[0] == 's' &&
         std::all_of(text.begin() + 1, text.end(), [&](char c) { return kAlphabet.find(c) != std::string_view::npos; });
}

// The path's components; "" (doubled or trailing '/'), "." and ".." (a path
// shown from another cgroup namespace starts with "/..") are skipped.
SplitPath Components(std::string_view path) {
  SplitPath split;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (part == "..") split.outside_namespace = true;
    if (!part.empty() && part != "." && part != "..") split.parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return split;
}

// "<prefix><value>" -> value, if `text` starts with prefix and value is not empty.
std::optional<std::string_view> After(std::string_view text, std::string_view prefix) {
  if (text.size() <= prefix.size() || !text.starts_with(prefix)) return std::nullopt;
  return text.substr(prefix.size());
}

void SetSlurmJob(std::string_view job_part, const Parts& parts, std::size_t step_index, CgroupIdentity& out) {
  if (auto id = After(job_part, "job_"); id && IsDigits(*id)) {
    out.slurm_job_id = std::string(*id);
  } else {
    out.slurm_job_sluid = std::string(job_part);
  }
  if (step_index < parts.size()) {
    if (auto step = After(parts[step_index], "step_")) out.slurm_step = std::string(*step);
  }
}

// Slurm v2: [<node>_]slurmstepd.scope/{job_<id>|<sluid>}/step_<step>;
// v1: uid_<uid>/job_<id>/step_<step> under the configurable CgroupPrepend.
bool FindSlurm(const Parts& parts, CgroupIdentity& out) {
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string_view part = parts[i];
    const std::string_view next = parts[i + 1];
    const bool v2_scope = part == "slurmstepd.scope" || part.ends_with("_slurmstepd.scope");
    if (v2_scope) {
      const auto id = After(next, "job_");
      if ((id && IsDigits(*id)) || IsSluid(next)) {
        SetSlurmJob(next, parts, i + 2, out);
        return true;
      }
    }
    const auto uid = After(part, "uid_");
    const auto id = After(next, "job_");
    if (uid && IsDigits(*uid) && id && IsDigits(*id)) {
      SetSlurmJob(next, parts, i + 2, out);
      return true;
    }
  }
  return false;
}

// A container's own cgroup: "<prefix>-<id>.scope" (runc's systemd driver:
// ScopePrefix "-" Name ".scope"), CRI-O's cgroupfs "crio-<id>", or, where
// `bare_allowed`, a bare ID, run by `bare_runtime` (nullopt: not known).
bool SetContainer(std::string_view part, bool bare_allowed, std::optional<std::string_view> bare_runtime,
                  CgroupIdentity& out) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kPrefixes = {{
      {"cri-containerd-", "containerd"},
      {"crio-", "cri-o"},
      {"docker-", "docker"},
  }};
  std::string_view name = part;
  if (name.ends_with(".scope")) name.remove_suffix(6);
  for (const auto& [prefix, runtime] : kPrefixes) {
    if (auto id = After(name, prefix); id && IsContainerId(*id)) {
      out.container_id = std::string(*id);
      out.container_runtime = std::string(runtime);
      return true;
    }
  }
  if (bare_allowed && IsContainerId(part)) {
    out.container_id = std::string(part);
    if (bare_runtime) out.container_runtime = std::string(*bare_runtime);
    return true;
  }
  return false;
}

// A pod UID as it appears in a cgroup name, '-' written '_' by the systemd
// driver: a UUID (8-4-4-4-12 hex digits) or a static pod's 32-digit hash.
// Returned in the API's dashed form.
std::optional<std::string> PodUid(std::string_view text) {
  std::string uid(text);
  std::replace(uid.begin(), uid.end(), '_', '-');
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  if (uid.size() == 32 && std::all_of(uid.begin(), uid.end(), hex)) return uid;
  if (uid.size() != 36) return std::nullopt;
  for (std::size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !hex(uid[i])) return std::nullopt;
  }
  return uid;
}

// Kubernetes: kubepods.slice/[kubepods-<qos>.slice/]kubepods[-<qos>]-pod<uid>.slice/<container>
// (systemd driver) or kubepods/[<qos>/]pod<uid>/<container> (cgroupfs driver).
// The systemd pod slice's name says what it is on its own; a cgroupfs
// "pod<uid>" counts under kubepods or its QoS folder, or where the path
// climbed out of the reader's cgroup namespace to reach it.
bool FindKubernetes(const Parts& parts, bool outside_namespace, CgroupIdentity& out) {
  for (std::size_t j = 0; j < parts.size(); ++j) {
    std::optional<std::string> uid;
    std::string_view name = parts[j];
    const bool systemd = name.starts_with("kubepods-") && name.ends_with(".slice");
    if (systemd) {
      name.remove_suffix(6);
      const std::size_t pod = name.rfind("-pod");
      if (pod != std::string_view::npos) uid = PodUid(name.substr(pod + 4));
    } else if (auto rest = After(name, "pod")) {
      const std::string_view parent = j >= 1 ? parts[j - 1] : std::string_view();
      const bool qos = parent == "burstable" || parent == "besteffort";
      const bool placed = parent == "kubepods" || (qos && (j >= 2 ? parts[j - 2] == "kubepods" : outside_namespace)) ||
                          (j == 0 && outside_namespace);
      if (placed) uid = PodUid(*rest);
    }
    if (!uid) continue;
    out.k8s_pod_uid = std::move(*uid);
    if (j + 1 < parts.size()) SetContainer(parts[j + 1], /*bare_allowed=*/!systemd, std::nullopt, out);
    return true;
  }
  return false;
}

// Docker outside Kubernetes: /docker/<id> (cgroupfs driver), or a container
// scope anywhere (docker-<id>.scope under system.slice: the systemd driver).
bool FindContainer(const Parts& parts, CgroupIdentity& out) {
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "docker" && i + 1 < parts.size() &&
        SetContainer(parts[i + 1], /*bare_allowed=*/true, "docker", out)) {
      return true;
    }
    if (SetContainer(parts[i], /*bare_allowed=*/false, std::nullopt, out)) return true;
  }
  return false;
}

bool HasWorkload(const CgroupIdentity& id) {
  return id.slurm_job_id || id.slurm_job_sluid || id.k8s_pod_uid || id.container_id;
}

// What one hierarchy's path says.
CgroupIdentity IdentifyPath(std::string_view path) {
  CgroupIdentity id;
  id.cgroup_path = std::string(path);
  const SplitPath split = Components(path);
  const Parts& parts = split.parts;
  FindSlurm(parts, id);
  if (!FindKubernetes(parts, split.outside_namespace, id)) FindContainer(parts, id);
  if (!HasWorkload(id)) {
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if ((it->size() > 8 && it->ends_with(".service")) || (it->size() > 6 && it->ends_with(".scope"))) {
        id.systemd_unit = std::string(*it);
        break;
      }
    }
  }
  return id;
}

bool HasController(std::string_view controllers, std::string_view name) {
  while (!controllers.empty()) {
    const std::size_t comma = controllers.find(',');
    if (controllers.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}

// Lower is preferred. For the workload: devices, memory, cpu, unified,
// name=systemd, the rest; for the unit: unified, name=systemd, then the same.
int WorkloadRank(const CgroupLine& line) {
  if (HasController(line.controllers, "devices")) return 0;
  if (HasController(line.controllers, "memory")) return 1;
  if (HasController(line.controllers, "cpu") || HasController(line.controllers, "cpuacct")) return 2;
  if (line.unified) return 3;
  if (HasController(line.controllers, "name=systemd")) return 4;
  return 5;
}

int UnitRank(const CgroupLine& line) {
  if (line.unified) return 0;
  if (HasController(line.controllers, "name=systemd")) return 1;
  return 2 + WorkloadRank(line);
}

std::string Quote(std::string_view line) {
  constexpr std::size_t kMax = 200;
  return line.size() <= kMax ? std::string(line) : fmt::format("{}...", line.substr(0, kMax));
}

Result<CgroupLine> ParseLine(std::string_view line) {
  const std::size_t first = line.find(':');
  const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
  if (second == std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("line '{}' is not '<hierarchy ID>:<controllers>:<path>'", Quote(line)));
  }
  const std::string_view hierarchy = line.substr(0, first);
  if (!IsDigits(hierarchy)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("line '{}': the hierarchy ID '{}' is not a number", Quote(line), hierarchy));
  }
  CgroupLine parsed;
  parsed.controllers = line.substr(first + 1, second - first - 1);
  parsed.unified = parsed.controllers.empty() && hierarchy.find_first_not_of('0') == std::string_view::npos;
  parsed.path = line.substr(second + 1);
  // The kernel appends " (deleted)" for a task whose v2 cgroup was removed
  // (proc_cgroup_show in kernel/cgroup/cgroup.c).
  constexpr std::string_view kDeleted = " (deleted)";
  if (parsed.path.ends_with(kDeleted)) parsed.path.remove_suffix(kDeleted.size());
  if (!parsed.path.empty() && parsed.path.front() != '/') {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("line '{}': the cgroup path '{}' does not start with '/'", Quote(line), parsed.path));
  }
  return parsed;
}

}  // namespace

Result<CgroupIdentity> ParseCgroupPath(std::string_view cgroup_file_content) {
  std::vector<CgroupLine> lines;
  std::string_view rest = cgroup_file_content;
  while (!rest.empty()) {
    const std::size_t newline = rest.find('\n');
    const std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    if (line.empty()) continue;
    auto parsed = ParseLine(line);
    if (!parsed) return Fail(parsed.error());
    lines.push_back(*parsed);
  }
  if (lines.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "no cgroup lines; expected '<hierarchy ID>:<controllers>:<path>' lines as the kernel writes them");
  }
  std::optional<CgroupIdentity> by_workload, by_unit, fallback;
  int workload_rank = 0, unit_rank = 0, fallback_rank = 0;
  for (const CgroupLine& line : lines) {
    CgroupIdentity id = IdentifyPath(line.path);
    if (HasWorkload(id) && (!by_workload || WorkloadRank(line) < workload_rank)) {
      workload_rank = WorkloadRank(line);
      by_workload = id;
    }
    if (id.systemd_unit && (!by_unit || UnitRank(line) < unit_rank)) {
      unit_rank = UnitRank(line);
      by_unit = id;
    }
    if (!fallback || UnitRank(line) < fallback_rank) {
      fallback_rank = UnitRank(line);
      fallback = std::move(id);
    }
  }
  if (by_workload) return *by_workload;
  if (by_unit) return *by_unit;
  return *fallback;
}

}  // namespace zeus::device
