// Copyright 2026 The Zeus C++ Authors.
//
// Who a process is: the Slurm job and step, the Kubernetes pod and container,
// or else the systemd unit it runs in (from /proc/PID/cgroup), its user and
// its command name, and its start time (to tell a reused PID). This is what
// per-process GPU energy is labelled with; NVML gives only the PID.
//
// /proc is read under a configurable root (ProcessIdentityOptions::proc_root),
// as RAPL's sysfs is, so tests build fake trees of real files.
//
// Which layouts are recognised (each is a fixture in
// src/device/process/cgroup_path_test.cc, with its source):
//   * Slurm, cgroup v1: <CgroupPrepend, default /slurm>/uid_<uid>/job_<id>/
//     step_<step>/task_<n> in each controller's hierarchy.
//   * Slurm, cgroup v2: <slice>/[<node>_]slurmstepd.scope/job_<id>/step_<step>/
//     {user/task_<n>, slurm}; since Slurm 26.05 the job's folder is named by
//     its SLUID ("s" and 13 base-32 characters) unless CgroupJobIdPaths=yes.
//   * Kubernetes, systemd driver: kubepods.slice/[kubepods-<qos>.slice/]
//     kubepods[-<qos>]-pod<uid, '-' written '_'>.slice/<runtime>-<id>.scope,
//     runtime prefixes cri-containerd (containerd), crio (CRI-O), docker
//     (cri-dockerd); the guaranteed class has no QoS slice.
//   * Kubernetes, cgroupfs driver: /kubepods[/<qos>]/pod<uid>/<id> (containerd,
//     cri-dockerd) or .../crio-<id> (CRI-O).
//   * Docker: /docker/<id> (cgroupfs driver), /system.slice/docker-<id>.scope
//     (systemd driver).
//   * Anything else: the innermost systemd unit, a ".service" or a ".scope"
//     ("jupyter.service", a login's "session-3.scope").
// A path seen from another cgroup namespace (the reader in a container, e.g. an
// exporter pod with hostPID) climbs with "/.." components (cgroup_namespaces(7))
// and may lack the top folders: a systemd pod slice and a container scope are
// recognised by their own names, a cgroupfs "pod<uid>" under kubepods, its QoS
// folder, or where the path climbed to reach it.
//
// Thread-safety: free functions over values; IdentifyProcess only reads files
// and may be called from several threads at once.

#ifndef ZEUS_DEVICE_PROCESS_IDENTITY_H_
#define ZEUS_DEVICE_PROCESS_IDENTITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zeus/base/error.h"

namespace zeus::device {

// What a process's cgroup says about the workload it belongs to. Every field
// is absent when the path does not carry it. The Slurm and Kubernetes/
// container fields come from one hierarchy, the first in ParseCgroupPath's
// order that carries any of them;
// `systemd_unit` is set only when none of them is found (a Slurm step's or a
// container's own scope is not reported as a unit).
struct CgroupIdentity {
  // Slurm: the numeric job ID ("123"), or, where the job's cgroup is named by
  // its SLUID (Slurm 26.05+ on cgroup v2), `slurm_job_sluid` ("sEKNKTV3WPV500")
  // instead. The step is "0", "1", "batch", "extern", "interactive", or a
  // heterogeneous component such as "0+1"; absent for a process in the job's
  // cgroup outside any step.
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_job_sluid;
  std::optional<std::string> slurm_step;
  // Kubernetes: the pod's UID as the API server shows it
  // ("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0": the systemd driver's '_' turned
  // back into '-'; a static pod's UID is a 32-digit hash without dashes).
  std::optional<std::string> k8s_pod_uid;
  // The container's ID (64 lowercase hex digits, as `crictl ps`/`docker ps
  // --no-trunc` show it), inside or outside Kubernetes.
  std::optional<std::string> container_id;
  // "containerd", "cri-o" or "docker" when the cgroup's name says so (the
  // systemd driver's scope prefixes, CRI-O's "crio-", Docker's "/docker/");
  // absent for a bare ID under a pod (the cgroupfs driver with containerd or
  // cri-dockerd names no runtime).
  std::optional<std::string> container_runtime;
  // The innermost systemd unit: "jupyter.service", "session-3.scope".
  std::optional<std::string> systemd_unit;
  // The cgroup path the fields were read from (the unified hierarchy's under
  // cgroup v2; under v1, the chosen hierarchy's), " (deleted)" removed; "/"
  // for the root cgroup, empty where the kernel wrote only " (deleted)".
  std::string cgroup_path;

  bool operator==(const CgroupIdentity&) const = default;
};

// Parses the whole text of a /proc/PID/cgroup file: one line per hierarchy,
// "<hierarchy ID>:<controllers>:<path>" (cgroups(7)); cgroup v2 has one line
// "0::<path>", v1 one per mounted hierarchy ("4:memory:/slurm/...",
// "1:name=systemd:/..."), hybrid both. Under v1 the workload fields come from
// the first hierarchy, in the order devices, memory, cpu/cpuacct, the unified
// one, name=systemd, then the rest, whose path carries a Slurm job, a pod or a
// container (Slurm leaves its tasks in slurmd.service on name=systemd); the
// unit comes from the unified hierarchy, else name=systemd, else the same
// order. A path that ends in " (deleted)" (a zombie whose cgroup was removed)
// is read without it.
// Pure: reads nothing, logs nothing.
// Errors: kInvalidArgument for text that is not such a file (empty, a line
// without two ':', a hierarchy ID that is not a number, a path that does not
// start with '/'); the message quotes the line.
Result<CgroupIdentity> ParseCgroupPath(std::string_view cgroup_file_content);

struct ProcessIdentityOptions {
  // Where procfs is mounted. Tests point it at a fake tree:
  // <proc_root>/<pid>/{cgroup,comm,status,stat}.
  std::string proc_root = "/proc";
};

// Who process `pid` is. A part whose file could not be read is absent and its
// error is in `problems`; the rest is still filled in.
struct ProcessIdentity {
  std::uint32_t pid = 0;
  // The command name (the kernel's comm: at most 15 bytes, may hold spaces
  // and parentheses), from <pid>/comm, else from <pid>/stat.
  std::optional<std::string> comm;
  // The real user ID (the first of "Uid:" in <pid>/status), as seen from the
  // reader's user namespace.
  std::optional<std::uint32_t> uid;
  // The user's name (getpwuid_r), or the uid in decimal when it has none.
  std::optional<std::string> user;
  // The process's start time, field 22 of <pid>/stat (clock ticks after
  // boot). Opaque: compare it with an earlier identity of the same PID; if it
  // differs, the PID was reused by another process.
  std::optional<std::uint64_t> start_time_ticks;
  // The parent's PID, field 4 of <pid>/stat (0 for the namespace's init's
  // parent).
  std::optional<std::uint32_t> parent_pid;
  // From <pid>/cgroup.
  std::optional<CgroupIdentity> cgroup;
  // Why a part is absent: one error per unreadable file whose part could not
  // be had elsewhere (comm falls back to stat), naming the file and the
  // errno's translation (kPermissionDenied: another user's process under a
  // security module or a /proc mounted with hidepid=1; kIoError otherwise).
  // A file that is not a regular file (a FIFO, a device, a directory: a bind
  // mount in a container can put anything under a proc root) is kIoError
  // saying what it is; it is never waited on.
  std::vector<Error> problems;
};

// Reads <proc_root>/<pid>/{stat,status,comm,cgroup}. Each file is read as
// base::ReadRegularFileAt reads (O_NONBLOCK, only a regular file, at most
// 1 MiB), so no call waits on another process. Its text is made valid UTF-8
// (base::ValidUtf8: a process sets its own comm to any bytes, and the
// kernel's 15-byte cut can split a character), so comm, user and the cgroup's
// fields are valid UTF-8. The files are opened
// relative to the process's /proc directory, opened once: if the process
// exits and its PID is reused meanwhile, the reads fail rather than describe
// the new process.
// Errors:
//   * kNotFound naming the PID: no such process (it has exited, or it is in
//     another PID namespace), or it exited while being read.
//   * kInvalidArgument naming the file: a file whose text is not what procfs
//     writes (is proc_root procfs?).
//   * Unreadable files (EACCES, another error) are not errors of the whole:
//     see ProcessIdentity::problems. Only when none of the four files could be
//     read is the first file's (stat's) error returned.
// Cost: four small reads and, per call, one password-database lookup
// (getpwuid_r: NSS, possibly LDAP or sssd). A caller that samples often should
// identify a PID when it first appears and keep the identity while the PID
// stays (re-identifying tells a reused PID by its start_time_ticks).
Result<ProcessIdentity> IdentifyProcess(std::uint32_t pid, const ProcessIdentityOptions& options = {});

// The few fields of <proc_root>/<pid>/stat: one small read, for a caller that
// re-checks a PID often (has it been reused? who is its parent?).
struct ProcessStat {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint32_t parent_pid = 0;
  std::uint64_t start_time_ticks = 0;
};
// Errors: kNotFound naming the PID when the process is gone (as
// IdentifyProcess); kInvalidArgument naming the file for text that is not
// procfs's; kPermissionDenied/kIoError from the read (kIoError for a stat that
// is not a regular file, never waited on). comm is valid UTF-8.
Result<ProcessStat> ReadProcessStat(std::uint32_t pid, const ProcessIdentityOptions& options = {});

}  // namespace zeus::device

#endif  // ZEUS_DEVICE_PROCESS_IDENTITY_H_
