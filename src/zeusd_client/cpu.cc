// Copyright 2026 The Zeus C++ Authors.

#include "zeus/zeusd_client/cpu.h"

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "zeus/device/environment.h"

namespace zeus::zeusd {
namespace {

// The text of device/rapl's reset error, passed on by the daemon.
constexpr std::string_view kDaemonResetText = "the counter was reset";

// Why local RAPL cannot serve this process, or nullopt when it can.
std::optional<std::string> LocalProblem(const Result<std::unique_ptr<device::CpuSet>>& local,
                                        const std::string& root) {
  if (!local) return local.error().message();
  if ((*local)->empty()) return fmt::format("no RAPL package under {}", root);
  for (std::size_t i = 0; i < (*local)->size(); ++i) {
    auto energy = (*local)->cpu(i).TotalEnergy();
    if (!energy && (energy.error().code() == ErrorCode::kPermissionDenied ||
                    energy.error().code() == ErrorCode::kNotFound)) {
      return energy.error().message();
    }
  }
  return std::nullopt;
}

}  // namespace

bool ZeusdCpu::Count::Fold(std::uint64_t now_uj) {
  const bool forward = now_uj >= last_uj;
  if (forward) total_uj += now_uj - last_uj;
  last_uj = now_uj;
  return forward;
}

ZeusdCpu::ZeusdCpu(std::shared_ptr<ZeusdClient> client, int cpu_id, bool has_dram)
    : client_(std::move(client)), cpu_id_(cpu_id), has_dram_(has_dram), name_(fmt::format("package-{}", cpu_id)) {}

Result<std::unique_ptr<ZeusdCpu>> ZeusdCpu::Open(std::shared_ptr<ZeusdClient> client, int cpu_id, bool has_dram) {
  std::unique_ptr<ZeusdCpu> cpu(new ZeusdCpu(std::move(client), cpu_id, has_dram));
  auto first = cpu->Fetch();
  if (!first) return Fail(first.error());
  cpu->package_.last_uj = first->first;
  if (first->second) cpu->dram_.last_uj = *first->second;
  return cpu;
}

Result<std::pair<std::uint64_t, std::optional<std::uint64_t>>> ZeusdCpu::Fetch() {
  const std::string what =
      fmt::format("{} (CPU {} of zeusd at {})", name_, cpu_id_, client_->config().endpoint());
  auto answer = client_->GetCpuEnergy({cpu_id_}, /*cpu=*/true, /*dram=*/has_dram_);
  if (!answer) return Fail(answer.error().WithContext(what));
  auto it = answer->find(cpu_id_);
  if (it == answer->end() || !it->second.cpu_energy_uj) {
    return Fail(ErrorCode::kIoError, fmt::format("{}: the daemon's answer has no package energy", what));
  }
  if (has_dram_ && !it->second.dram_energy_uj) {
    return Fail(ErrorCode::kIoError,
                fmt::format("{}: the daemon listed DRAM for this package but its answer has no DRAM energy", what));
  }
  return std::make_pair(*it->second.cpu_energy_uj, has_dram_ ? it->second.dram_energy_uj : std::nullopt);
}

Result<device::CpuEnergy> ZeusdCpu::TotalEnergy() {
  std::lock_guard lock(mu_);
  auto now = Fetch();
  if (!now) {
    if (now.error().message().find(kDaemonResetText) != std::string::npos) ++counter_resets_;
    return Fail(now.error());
  }
  const std::uint64_t package_before = package_.last_uj;
  const std::uint64_t dram_before = dram_.last_uj;
  const bool package_forward = package_.Fold(now->first);
  const bool dram_forward = !has_dram_ || dram_.Fold(*now->second);
  if (!package_forward || !dram_forward) {
    counter_resets_ += (package_forward ? 0 : 1) + (dram_forward ? 0 : 1);
    const bool package = !package_forward;
    return Fail(ErrorCode::kIoError,
                fmt::format("{} (CPU {} of zeusd at {}): the daemon's {} count went back from {} to {} µJ (the daemon "
                            "restarted?); the energy across the restart is unknown, and later readings count on from "
                            "the new value",
                            name_, cpu_id_, client_->config().endpoint(), package ? "package" : "DRAM",
                            package ? package_before : dram_before, package ? now->first : *now->second));
  }
  device::CpuEnergy energy;
  energy.package_mj = static_cast<double>(package_.total_uj) / 1000.0;
  if (has_dram_) energy.dram_mj = static_cast<double>(dram_.total_uj) / 1000.0;
  energy.counter_resets = counter_resets_;
  return energy;
}

Result<std::unique_ptr<device::CpuSet>> OpenZeusdCpus(std::shared_ptr<ZeusdClient> client) {
  if (Status can = client->Require(false, false, /*read_cpu=*/true); !can) {
    return Fail(can.error().WithContext(
        "reading CPU energy through zeusd (make the token carry the cpu-read scope: zeusd token issue --scope "
        "cpu-read, and set ZEUSD_TOKEN to it)"));
  }
  std::vector<std::unique_ptr<device::Cpu>> cpus;
  for (const ZeusdCpuInfo& info : client->capabilities().cpus) {
    auto cpu = ZeusdCpu::Open(client, info.id, info.dram_available);
    if (!cpu) return Fail(cpu.error());
    cpus.push_back(std::move(*cpu));
  }
  return std::make_unique<device::CpuSet>(std::move(cpus));
}

Result<OpenedCpus> OpenCpusLocalOrZeusd(const device::CpuOptions& options, CpuDemand demand) {
  return OpenCpusLocalOrZeusd(options, ZeusdConfig::FromEnv(), demand);
}

Result<OpenedCpus> OpenCpusLocalOrZeusd(const device::CpuOptions& options, const std::optional<ZeusdConfig>& config,
                                        CpuDemand demand) {
  auto local = device::OpenCpus(options);
  OpenedCpus out;
  if (!config) {
    if (!local) return Fail(local.error());
    out.cpus = std::move(*local);
    return out;
  }
  const std::string root = device::ChoosePowercapRoot(options.powercap_root);
  const std::optional<std::string> problem = LocalProblem(local, root);
  if (!problem) {
    out.cpus = std::move(*local);
    return out;
  }
  if (local) local->reset();  // stops the local wrap guard
  // The local error's first clause: its advice is for reading locally.
  const std::string local_why = problem->substr(0, problem->find("; "));
  const std::string context = fmt::format(
      "CPU energy: local RAPL is not usable ({}), so it is read through zeusd (ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT)",
      local_why);
  auto connected = ZeusdClient::Connect(*config);
  if (!connected) return Fail(connected.error().WithContext(context));
  std::shared_ptr<ZeusdClient> client = std::move(*connected);
  if (!client->capabilities().GroupEnabled("cpu-read")) {
    const std::string why = fmt::format(
        "zeusd at {} does not serve CPU energy: its API group 'cpu-read' is not enabled", config->endpoint());
    if (demand == CpuDemand::kIfServed) {
      out.cpus = std::make_unique<device::CpuSet>(std::vector<std::unique_ptr<device::Cpu>>{});
      out.note = fmt::format("{}, and local RAPL is not usable ({}): CPU energy is not measured", why, local_why);
      return out;
    }
    return Fail(Error(ErrorCode::kFailedPrecondition,
                      fmt::format("{}: {}; start it with `zeusd serve --enable ...,cpu-read`", context, why)));
  }
  auto cpus = OpenZeusdCpus(client);
  if (!cpus) return Fail(cpus.error().WithContext(context));
  out.cpus = std::move(*cpus);
  out.zeusd_endpoint = config->endpoint();
  out.note = fmt::format("CPU energy is read through zeusd at {} (local RAPL: {})", config->endpoint(), local_why);
  return out;
}

}  // namespace zeus::zeusd
