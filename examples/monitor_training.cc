// Copyright 2026 The Zeus C++ Authors.
//
// Measuring a training loop with zeus::monitor::Monitor, as a user's program
// would: one window around the whole run and one per epoch. The "training
// step" here only sleeps; put your framework's step there, and pass a sync
// hook (e.g. a CUDA device synchronise) so queued GPU work is counted.
//
//   export ZEUS_NVML_LIBRARY=build/lib/libzeus-nvml-emulator.so
//   export ZEUS_EMULATOR_CONFIG=examples/four-gpus.json
//   build/bin/zeus_example_monitor_training --epochs 3 --steps 20 --step-ms 10

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "zeus/device/discovery.h"
#include "zeus/monitor/monitor.h"

namespace {

void Print(const zeus::monitor::Measurement& m) {
  std::printf("%-10s %8.3f s %10.2f J", m.name.c_str(), m.time_s, m.total_energy_j);
  for (const auto& g : m.gpus) {
    if (g.error) {
      std::printf("  GPU%zu: error (%s)", g.index, g.error->message().c_str());
    } else {
      std::printf("  GPU%zu: %.2f J%s", g.index, g.energy_j, g.uncertain ? "?" : "");
    }
  }
  for (const auto& c : m.cpus) {
    if (!c.error) std::printf("  CPU%zu: %.2f J", c.index, c.package_energy_j + c.dram_energy_j.value_or(0.0));
  }
  std::printf("\n");
}

int Flag(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (name == argv[i]) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int epochs = Flag(argc, argv, "--epochs", 3);
  const int steps = Flag(argc, argv, "--steps", 20);
  const int step_ms = Flag(argc, argv, "--step-ms", 10);

  // 1. Open the devices once, at the start of the program.
  auto gpus = zeus::device::OpenGpus();
  if (!gpus) {
    std::fprintf(stderr, "no GPUs measured: %s\n", gpus.error().message().c_str());
    gpus = std::make_unique<zeus::device::GpuSet>("", std::vector<std::unique_ptr<zeus::device::Gpu>>{});
  }
  auto cpus = zeus::device::OpenCpus();

  // 2. One Monitor for the whole process.
  zeus::monitor::MonitorOptions options;
  options.sync = [] { /* e.g. cudaDeviceSynchronize() or torch::cuda::synchronize() */ };
  auto monitor = zeus::monitor::Monitor::Create(gpus->get(), cpus ? cpus->get() : nullptr, options);
  if (!monitor) {
    std::fprintf(stderr, "error: %s\n", monitor.error().message().c_str());
    return 1;
  }

  // 3. Windows around the run and each epoch; they nest freely.
  (void)(*monitor)->BeginWindow("training");
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const std::string name = "epoch_" + std::to_string(epoch);
    if (auto s = (*monitor)->BeginWindow(name); !s) {
      std::fprintf(stderr, "error: %s\n", s.error().message().c_str());
      return 1;
    }
    for (int step = 0; step < steps; ++step) std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
    auto m = (*monitor)->EndWindow(name);
    if (!m) {
      std::fprintf(stderr, "error: %s\n", m.error().message().c_str());
      return 1;
    }
    Print(*m);
  }
  auto total = (*monitor)->EndWindow("training");
  if (!total) return 1;
  Print(*total);
  return 0;
}
