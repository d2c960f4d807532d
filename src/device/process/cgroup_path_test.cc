// Copyright 2026 The Zeus C++ Authors.
//
// ParseCgroupPath on /proc/PID/cgroup files written as the kernel writes them
// for processes placed by Slurm, Kubernetes, Docker and systemd.
//
// Where the layouts come from:
//   * The file: one "hierarchy-ID:controller-list:cgroup-path" line per
//     hierarchy, "0::$PATH" for cgroup v2 (cgroups(7); the kernel's
//     Documentation/admin-guide/cgroup-v2.rst, "Organizing Processes"); a
//     path outside the reader's cgroup namespace shows "../" per ancestor
//     level (cgroup_namespaces(7)); " (deleted)" follows a removed v2 cgroup
//     of a zombie (proc_cgroup_show, kernel/cgroup/cgroup.c).
//   * Slurm cgroup/v1: "<CgroupPrepend>/uid_<uid>/job_<id>/step_<step>/task_<n>",
//     CgroupPrepend default "/slurm" (cgroup.conf(5); Slurm's
//     src/plugins/cgroup/v1/xcgroup.c xcgroup_create_hierarchy, cgroup_v1.c
//     task_<n>); tasks stay in slurmd.service on name=systemd.
//   * Slurm cgroup/v2: "<CgroupSlice, default system.slice>/slurmstepd.scope/
//     job_<id>/step_<step>/{user/task_<n>,user/task_special,slurm}", with
//     "<node>_slurmstepd.scope" under multiple-slurmd (Slurm's cgroup_v2.html
//     and src/plugins/cgroup/v2/cgroup_v2.c, the hierarchy comment and
//     _set_int_cg_ns); the step name is log_build_step_id_str's: a number,
//     "batch", "extern", "interactive", "<n>+<component>" for a
//     heterogeneous step (src/common/log.c). Since Slurm 26.05 the job folder
//     is the SLUID, e.g. "sEKNKTV3WPV500", unless CgroupJobIdPaths=yes
//     (cgroup.conf(5), 26.05; src/common/sluid.c print_sluid).
//   * Kubernetes: the kubelet's cgroup names {"kubepods", "<qos>", "pod<uid>"}
//     (guaranteed pods have no QoS level), converted by the systemd driver to
//     "/kubepods.slice/kubepods-burstable.slice/
//     kubepods-burstable-pod1234_abcd....slice" ('-' escaped as '_') and by
//     the cgroupfs driver to "/kubepods/burstable/pod1234-abcd..."
//     (kubernetes pkg/kubelet/cm/cgroup_manager_linux.go, ToSystemd/
//     ToCgroupfs; "Configuring a cgroup driver", kubernetes.io). The
//     container's own cgroup is the runtime's: runc's systemd driver names
//     "<ScopePrefix>-<id>.scope" (runc libcontainer/cgroups/systemd,
//     getUnitName) with the prefixes "cri-containerd" (containerd's CRI
//     plugin), "crio" (CRI-O) and "docker" (Docker, cri-dockerd); CRI-O's
//     cgroupfs manager names "<parent>/crio-<id>" (cri-o
//     internal/config/cgmgr/cgroupfs.go ContainerCgroupPath); containerd and
//     Docker's cgroupfs drivers name "<parent>/<id>".
//   * Docker: "/docker/<id>" with native.cgroupdriver=cgroupfs,
//     "/system.slice/docker-<id>.scope" with systemd (dockerd(8) --exec-opt
//     native.cgroupdriver; cgroupsPath "system.slice:docker:<id>").
//   * systemd: services under system.slice, a login's session-<n>.scope under
//     user-<uid>.slice, user services under user@<uid>.service
//     (systemd.special(7), systemd-logind; RHEL "Viewing cgroups of
//     processes": "0::/system.slice/example.service").

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/result.h"
#include "zeus/device/process_identity.h"

namespace zeus::device {

// Readable failures: every field by name.
void PrintTo(const CgroupIdentity& id, std::ostream* out) {
  auto field = [&](const char* name, const std::optional<std::string>& value) {
    *out << " " << name << "=" << (value ? "'" + *value + "'" : std::string("-"));
  };
  *out << "{path='" << id.cgroup_path << "'";
  field("job", id.slurm_job_id);
  field("sluid", id.slurm_job_sluid);
  field("step", id.slurm_step);
  field("pod", id.k8s_pod_uid);
  field("container", id.container_id);
  field("runtime", id.container_runtime);
  field("unit", id.systemd_unit);
  *out << "}";
}

namespace {

using ::testing::HasSubstr;
using zeus::testing::Unwrap;

constexpr std::string_view kContainer = "3b5c2e6f9a1d4c8b7e0f2a4d6c8e1b3f5a7c9e2d4b6f8a1c3e5d7b9f2a4c6e8d";
constexpr std::string_view kPodUid = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0";
constexpr std::string_view kPodUidSystemd = "0f1e2d3c_4b5a_4978_8796_a5b4c3d2e1f0";
static_assert(kContainer.size() == 64);

std::string S(std::string_view text) { return std::string(text); }

CgroupIdentity Parse(const std::string& file) { return Unwrap(ParseCgroupPath(file)); }

CgroupIdentity Slurm(std::string path, std::string job, std::optional<std::string> step) {
  CgroupIdentity id;
  id.cgroup_path = std::move(path);
  id.slurm_job_id = std::move(job);
  id.slurm_step = std::move(step);
  return id;
}

CgroupIdentity Pod(std::string path, std::optional<std::string> runtime) {
  CgroupIdentity id;
  id.cgroup_path = std::move(path);
  id.k8s_pod_uid = S(kPodUid);
  id.container_id = S(kContainer);
  id.container_runtime = std::move(runtime);
  return id;
}

CgroupIdentity Unit(std::string path, std::string unit) {
  CgroupIdentity id;
  id.cgroup_path = std::move(path);
  id.systemd_unit = std::move(unit);
  return id;
}

// --- Slurm ---

TEST(ParseCgroupPathTest, SlurmCgroupV1TaskIsReadFromTheDevicesHierarchy) {
  // A task of job 123 on a CentOS 7 node with proctrack/cgroup, task/cgroup
  // (ConstrainDevices, ConstrainRAMSpace) and jobacct_gather/cgroup.
  const std::string file =
      "11:hugetlb:/\n"
      "10:devices:/slurm/uid_1000/job_123/step_0/task_0\n"
      "9:perf_event:/\n"
      "8:blkio:/system.slice/slurmd.service\n"
      "7:pids:/system.slice/slurmd.service\n"
      "6:cpuset:/slurm/uid_1000/job_123/step_0\n"
      "5:freezer:/slurm/uid_1000/job_123/step_0\n"
      "4:memory:/slurm/uid_1000/job_123/step_0/task_0\n"
      "3:net_cls,net_prio:/\n"
      "2:cpu,cpuacct:/slurm/uid_1000/job_123/step_0/task_0\n"
      "1:name=systemd:/system.slice/slurmd.service\n";
  EXPECT_EQ(Parse(file), Slurm("/slurm/uid_1000/job_123/step_0/task_0", "123", "0"));
}

TEST(ParseCgroupPathTest, SlurmCgroupV1BatchAndExternSteps) {
  EXPECT_EQ(Parse("4:memory:/slurm/uid_1000/job_77/step_batch/task_0\n"
                  "1:name=systemd:/system.slice/slurmd.service\n"),
            Slurm("/slurm/uid_1000/job_77/step_batch/task_0", "77", "batch"));
  // pam_slurm_adopt puts an ssh session into the extern step.
  EXPECT_EQ(Parse("10:devices:/slurm/uid_1000/job_77/step_extern\n"
                  "4:memory:/slurm/uid_1000/job_77/step_extern/task_0\n"
                  "1:name=systemd:/user.slice/user-1000.slice/session-9.scope\n"),
            Slurm("/slurm/uid_1000/job_77/step_extern", "77", "extern"));
  // Multiple slurmd on one host: CgroupPrepend /slurm_%n.
  EXPECT_EQ(Parse("4:memory:/slurm_node7/uid_1000/job_78/step_1/task_3\n"),
            Slurm("/slurm_node7/uid_1000/job_78/step_1/task_3", "78", "1"));
}

TEST(ParseCgroupPathTest, SlurmCgroupV2Task) {
  EXPECT_EQ(Parse("0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0\n"),
            Slurm("/system.slice/slurmstepd.scope/job_123/step_0/user/task_0", "123", "0"));
}

TEST(ParseCgroupPathTest, SlurmCgroupV2NamedSteps) {
  struct Case {
    std::string path, job, step;
  };
  const Case cases[] = {
      {"/system.slice/slurmstepd.scope/job_124/step_batch/user/task_0", "124", "batch"},
      {"/system.slice/slurmstepd.scope/job_125/step_extern/user/task_special", "125", "extern"},
      {"/system.slice/slurmstepd.scope/job_126/step_interactive/user/task_0", "126", "interactive"},
      {"/system.slice/slurmstepd.scope/job_127/step_3/user/task_12", "127", "3"},
      {"/system.slice/slurmstepd.scope/job_128/step_0+1/user/task_0", "128", "0+1"},    // heterogeneous step
      {"/system.slice/slurmstepd.scope/job_129/step_0/slurm", "129", "0"},              // the step's slurmstepd
      {"/system.slice/node1_slurmstepd.scope/job_130/step_0/user/task_1", "130", "0"},  // multiple slurmd
      {"/slurm.slice/slurmstepd.scope/job_131/step_2/user/task_0", "131", "2"},         // CgroupSlice=slurm.slice
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Parse("0::" + c.path + "\n"), Slurm(c.path, c.job, c.step)) << c.path;
  }
}

TEST(ParseCgroupPathTest, SlurmCgroupV2JobNamedBySluid) {
  // Slurm 26.05's default (CgroupJobIdPaths=no): the job folder is the SLUID.
  CgroupIdentity want;
  want.cgroup_path = "/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/user/task_0";
  want.slurm_job_sluid = "sEKNKTV3WPV500";
  want.slurm_step = "0";
  EXPECT_EQ(Parse("0::" + want.cgroup_path + "\n"), want);
}

TEST(ParseCgroupPathTest, SlurmStepdsOwnCgroupIsNotAJob) {
  // slurmstepd waiting for its job, and slurmd itself.
  EXPECT_EQ(Parse("0::/system.slice/slurmstepd.scope/system\n"),
            Unit("/system.slice/slurmstepd.scope/system", "slurmstepd.scope"));
  EXPECT_EQ(Parse("0::/system.slice/slurmd.service\n"), Unit("/system.slice/slurmd.service", "slurmd.service"));
}

// --- Kubernetes, systemd driver ---

TEST(ParseCgroupPathTest, KubernetesSystemdDriverContainerdBurstable) {
  const std::string path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + S(kPodUidSystemd) +
                           ".slice/cri-containerd-" + S(kContainer) + ".scope";
  EXPECT_EQ(Parse("0::" + path + "\n"), Pod(path, "containerd"));
}

TEST(ParseCgroupPathTest, KubernetesSystemdDriverCrioGuaranteed) {
  // The guaranteed QoS class has no slice of its own.
  const std::string path =
      "/kubepods.slice/kubepods-pod" + S(kPodUidSystemd) + ".slice/crio-" + S(kContainer) + ".scope";
  EXPECT_EQ(Parse("0::" + path + "\n"), Pod(path, "cri-o"));
}

TEST(ParseCgroupPathTest, KubernetesSystemdDriverDockerBestEffortOnCgroupV1) {
  // cri-dockerd on a cgroup v1 node: every controller has the same path.
  const std::string path = "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                           S(kPodUidSystemd) + ".slice/docker-" + S(kContainer) + ".scope";
  const std::string file = "12:cpuset:" + path + "\n11:devices:" + path + "\n10:memory:" + path +
                           "\n9:hugetlb:/\n4:cpu,cpuacct:" + path + "\n3:pids:" + path + "\n1:name=systemd:" +
                           path + "\n0::/\n";
  EXPECT_EQ(Parse(file), Pod(path, "docker"));
}

TEST(ParseCgroupPathTest, KubernetesPodSandboxWithoutContainer) {
  // A process in the pod's slice itself: the pod, no container.
  CgroupIdentity want;
  want.cgroup_path = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + S(kPodUidSystemd) + ".slice";
  want.k8s_pod_uid = S(kPodUid);
  EXPECT_EQ(Parse("0::" + want.cgroup_path + "\n"), want);
}

TEST(ParseCgroupPathTest, KubernetesStaticPodUidIsAHash) {
  // A static (mirror) pod's UID is its manifest's 32-digit hash.
  const std::string hash = "5d1f2b3e4a6c7d8e9f0a1b2c3d4e5f6a";
  const std::string path =
      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + hash + ".slice/cri-containerd-" +
      S(kContainer) + ".scope";
  const CgroupIdentity id = Parse("0::" + path + "\n");
  EXPECT_EQ(id.k8s_pod_uid, hash);
  EXPECT_EQ(id.container_id, S(kContainer));
}

// --- Kubernetes, cgroupfs driver ---

TEST(ParseCgroupPathTest, KubernetesCgroupfsDriverContainerdBurstableOnCgroupV1) {
  // k3s on cgroup v1: the bare container ID names no runtime.
  const std::string path = "/kubepods/burstable/pod" + S(kPodUid) + "/" + S(kContainer);
  const std::string file = "12:freezer:" + path + "\n11:devices:" + path + "\n10:memory:" + path +
                           "\n4:cpu,cpuacct:" + path + "\n1:name=systemd:" + path + "\n";
  EXPECT_EQ(Parse(file), Pod(path, std::nullopt));
}

TEST(ParseCgroupPathTest, KubernetesCgroupfsDriverGuaranteedOnCgroupV2) {
  const std::string path = "/kubepods/pod" + S(kPodUid) + "/" + S(kContainer);
  EXPECT_EQ(Parse("0::" + path + "\n"), Pod(path, std::nullopt));
}

TEST(ParseCgroupPathTest, KubernetesCgroupfsDriverCrioBestEffort) {
  const std::string path = "/kubepods/besteffort/pod" + S(kPodUid) + "/crio-" + S(kContainer);
  EXPECT_EQ(Parse("0::" + path + "\n"), Pod(path, "cri-o"));
}

TEST(ParseCgroupPathTest, KubernetesSeenFromAnotherPodsCgroupNamespace) {
  // The exporter in a best-effort pod (its own cgroup namespace) reads a
  // burstable pod's process: three levels up to kubepods.slice, then down.
  const std::string path = "/../../../kubepods-burstable.slice/kubepods-burstable-pod" + S(kPodUidSystemd) +
                           ".slice/cri-containerd-" + S(kContainer) + ".scope";
  EXPECT_EQ(Parse("0::" + path + "\n"), Pod(path, "containerd"));
  // The same with the cgroupfs driver: ../ up to kubepods, then burstable/pod<uid>.
  const std::string cgroupfs = "/../../../burstable/pod" + S(kPodUid) + "/" + S(kContainer);
  EXPECT_EQ(Parse("0::" + cgroupfs + "\n"), Pod(cgroupfs, std::nullopt));
}

// --- Docker ---

TEST(ParseCgroupPathTest, DockerCgroupfsDriverOnCgroupV1) {
  const std::string path = "/docker/" + S(kContainer);
  const std::string file = "12:devices:" + path + "\n10:memory:" + path + "\n4:cpu,cpuacct:" + path +
                           "\n1:name=systemd:" + path + "\n";
  CgroupIdentity want;
  want.cgroup_path = path;
  want.container_id = S(kContainer);
  want.container_runtime = "docker";
  EXPECT_EQ(Parse(file), want);
}

TEST(ParseCgroupPathTest, DockerSystemdDriverOnCgroupV2) {
  CgroupIdentity want;
  want.cgroup_path = "/system.slice/docker-" + S(kContainer) + ".scope";
  want.container_id = S(kContainer);
  want.container_runtime = "docker";
  EXPECT_EQ(Parse("0::" + want.cgroup_path + "\n"), want);
}

// --- systemd ---

TEST(ParseCgroupPathTest, SystemServiceOnCgroupV2) {
  EXPECT_EQ(Parse("0::/system.slice/jupyter.service\n"), Unit("/system.slice/jupyter.service", "jupyter.service"));
}

TEST(ParseCgroupPathTest, SystemServiceOnCgroupV1ComesFromNameSystemd) {
  // Without CPUAccounting the cpu hierarchy holds only the slice.
  const std::string file =
      "11:devices:/system.slice/jupyter.service\n"
      "4:cpu,cpuacct:/system.slice\n"
      "3:memory:/system.slice/jupyter.service\n"
      "1:name=systemd:/system.slice/jupyter.service\n";
  EXPECT_EQ(Parse(file), Unit("/system.slice/jupyter.service", "jupyter.service"));
}

TEST(ParseCgroupPathTest, UserSessionScope) {
  EXPECT_EQ(Parse("0::/user.slice/user-1000.slice/session-3.scope\n"),
            Unit("/user.slice/user-1000.slice/session-3.scope", "session-3.scope"));
}

TEST(ParseCgroupPathTest, UserServiceUnderTheUserManagerIsTheInnermostUnit) {
  const std::string path = "/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter-lab.service";
  EXPECT_EQ(Parse("0::" + path + "\n"), Unit(path, "jupyter-lab.service"));
}

TEST(ParseCgroupPathTest, UserServiceOnCgroupV1ComesFromNameSystemd) {
  // On v1 the user manager gets no controllers delegated: the controller
  // hierarchies stop at user@1000.service, name=systemd has the unit.
  const std::string path = "/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter-lab.service";
  const std::string file =
      "11:devices:/user.slice\n"
      "4:memory:/user.slice/user-1000.slice/user@1000.service\n"
      "3:cpu,cpuacct:/user.slice\n"
      "2:pids:/user.slice/user-1000.slice/user@1000.service\n"
      "1:name=systemd:" + path + "\n";
  EXPECT_EQ(Parse(file), Unit(path, "jupyter-lab.service"));
}

TEST(ParseCgroupPathTest, RootCgroupHasNoIdentity) {
  CgroupIdentity want;
  want.cgroup_path = "/";
  EXPECT_EQ(Parse("0::/\n"), want);
  // cgroup v1, a kernel thread: "/" everywhere.
  EXPECT_EQ(Parse("4:memory:/\n1:name=systemd:/\n"), want);
}

// --- the file's rules ---

TEST(ParseCgroupPathTest, CgroupV1PrefersDevicesThenMemoryThenCpu) {
  // Synthetic (hierarchies never disagree like this): which one wins.
  const std::string devices = "11:devices:/slurm/uid_1000/job_1/step_0\n";
  const std::string memory = "10:memory:/slurm/uid_1000/job_2/step_0\n";
  const std::string cpu = "4:cpu,cpuacct:/slurm/uid_1000/job_3/step_0\n";
  const std::string other = "3:freezer:/slurm/uid_1000/job_4/step_0\n";
  EXPECT_EQ(Parse(other + cpu + memory + devices).slurm_job_id, "1");
  EXPECT_EQ(Parse(other + cpu + memory).slurm_job_id, "2");
  EXPECT_EQ(Parse(other + cpu).slurm_job_id, "3");
  EXPECT_EQ(Parse(other).slurm_job_id, "4");
  // A hierarchy at the root does not hide one that carries the job.
  EXPECT_EQ(Parse("11:devices:/\n" + other).slurm_job_id, "4");
}

TEST(ParseCgroupPathTest, DeletedCgroupOfAZombieIsReadWithoutTheSuffix) {
  EXPECT_EQ(Parse("0::/system.slice/slurmstepd.scope/job_9/step_0/user/task_0 (deleted)\n"),
            Slurm("/system.slice/slurmstepd.scope/job_9/step_0/user/task_0", "9", "0"));
  // A kernel that could not name the removed cgroup writes the suffix alone.
  EXPECT_EQ(Parse("0:: (deleted)\n"), CgroupIdentity{});
}

TEST(ParseCgroupPathTest, NamesThatOnlyResembleAWorkloadAreNotOne) {
  // No slurmstepd scope or uid_ folder above job_, a "pod" that is not a UID,
  // an ID too short to be a container's.
  EXPECT_EQ(Parse("0::/system.slice/job_5/step_0/batch.service\n"),
            Unit("/system.slice/job_5/step_0/batch.service", "batch.service"));
  EXPECT_EQ(Parse("0::/kubepods/burstable/podcast/worker.scope\n"),
            Unit("/kubepods/burstable/podcast/worker.scope", "worker.scope"));
  EXPECT_EQ(Parse("0::/system.slice/docker-3b5c2e6f9a1d.scope\n"),
            Unit("/system.slice/docker-3b5c2e6f9a1d.scope", "docker-3b5c2e6f9a1d.scope"));
  EXPECT_EQ(Parse("0::/system.slice/podman-restart.service\n"),
            Unit("/system.slice/podman-restart.service", "podman-restart.service"));
}

TEST(ParseCgroupPathTest, TextThatIsNotACgroupFileIsAnError) {
  for (const std::string bad : {"", "\n", "hello\n", "0:/system.slice\n", "x::/\n", "0::system.slice/a.service\n"}) {
    auto parsed = ParseCgroupPath(bad);
    ASSERT_FALSE(parsed) << "'" << bad << "'";
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument) << "'" << bad << "'";
  }
  auto parsed = ParseCgroupPath("0::/\nx::/\n");
  ASSERT_FALSE(parsed);
  EXPECT_THAT(parsed.error().message(), HasSubstr("'x::/'"));
  EXPECT_THAT(parsed.error().message(), HasSubstr("hierarchy ID"));
}

}  // namespace
}  // namespace zeus::device
