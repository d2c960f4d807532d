// Copyright 2026 The Zeus C++ Authors.
//
// Builds a fake /proc tree of real files in a directory, for tests of
// per-process identity and energy: <root>/<pid>/{stat,status,comm,cgroup},
// written as procfs writes them (proc(5)). Point
// device::ProcessIdentityOptions::proc_root (or ZEUS_PROC_ROOT) at root().
//
// Cgroup files of the layouts the project recognises, as real systems write
// them, are constants below (see src/device/process/cgroup_path_test.cc for
// more layouts and their sources).

#ifndef ZEUS_TESTING_PROC_TREE_H_
#define ZEUS_TESTING_PROC_TREE_H_

#include <cstdint>
#include <string>

namespace zeus::testing {

// Slurm job 4242, step 0, task 0, cgroup v2.
inline constexpr char kSlurmJob4242Cgroup[] = "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n";
// Slurm job 77, batch step, cgroup v2.
inline constexpr char kSlurmJob77Cgroup[] = "0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0\n";
// A Kubernetes pod (systemd driver, containerd), burstable QoS.
inline constexpr char kPodUid[] = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
inline constexpr char kContainerId[] = "4d6f1c2b3a59687766554433221100ffeeddccbbaa99887766554433221100ab";
inline constexpr char kK8sContainerdCgroup[] =
    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/"
    "cri-containerd-4d6f1c2b3a59687766554433221100ffeeddccbbaa99887766554433221100ab.scope\n";
// A systemd service outside any workload manager.
inline constexpr char kJupyterCgroup[] = "0::/system.slice/jupyter.service\n";

struct FakeProcess {
  std::uint32_t pid = 0;
  std::string comm = "python3";
  std::uint32_t uid = 0;
  std::uint32_t parent_pid = 1;
  std::uint64_t start_time_ticks = 1000;
  std::string cgroup = kJupyterCgroup;
};

class ProcTree {
 public:
  explicit ProcTree(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // Writes (or rewrites) <root>/<pid>/{stat,status,comm,cgroup}.
  void Add(const FakeProcess& process) const;
  // Removes <root>/<pid>: the process has exited.
  void Remove(std::uint32_t pid) const;

 private:
  std::string root_;
};

}  // namespace zeus::testing

#endif  // ZEUS_TESTING_PROC_TREE_H_
