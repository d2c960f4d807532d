"""Train a small convolutional network while Zeus finds the GPU power limit that minimizes the cost of training.

Written as a Zeus user writes it (zeus.monitor.ZeusMonitor + zeus.optimizer.power_limit): the optimizer profiles
the power limits from the highest down during the first epoch, keeps the one with the least Zeus cost
(ZeusCost(eta_knob=0.5): energy and time weighed equally) for the rest of training, and the script says what that
limit saves per step against the GPU's default (maximum) limit, both measured in this run. On a real GPU:

    python3 examples/python/power_limit_training.py

On the NVML emulator (no GPU; Debian's CPU PyTorch), an A40 with the power curve Zeus's authors measured for a
ShuffleNetV2 job (examples/power-limit-demo.json):

    export ZEUS_NVML_LIBRARY=build/lib/libzeus-nvml-emulator.so ZEUS_EMULATOR_CONFIG=examples/power-limit-demo.json
    PYTHONPATH=build/python /usr/bin/python3 examples/python/power_limit_training.py

With the emulator, each step also waits for the emulated GPU's iteration time at the limit in force (the
scenario's workload curve), which stands for the GPU work a CPU-only PyTorch cannot do.
"""

from __future__ import annotations

import ctypes
import json
import os
import time

import torch
from torch import nn

from zeus.monitor import ZeusMonitor
from zeus.optimizer.power_limit import GlobalPowerLimitOptimizer, ZeusCost

EPOCHS = 3
STEPS_PER_EPOCH = 120


class EmulatedGpuWork:
    """Only with the emulator: sleeps the emulated GPU's iteration time (scaled by the scenario's time_scale)."""

    def __init__(self) -> None:
        self.lib = None
        library = os.environ.get("ZEUS_NVML_LIBRARY", "")
        if library:
            lib = ctypes.CDLL(library)
            if hasattr(lib, "zeusEmulatorIterationTimeS"):
                self.lib = lib
                config = os.environ.get("ZEUS_EMULATOR_CONFIG", "")
                text = "\n".join(line for line in open(config) if not line.lstrip().startswith("//"))
                self.time_scale = json.loads(text).get("time_scale", 1.0)

    def __call__(self, gpu_index: int, step_started: float) -> None:
        """The step lasts the iteration time: what the CPU already spent counts toward it."""
        if self.lib is None:
            return
        seconds = ctypes.c_double()
        if self.lib.zeusEmulatorIterationTimeS(gpu_index, ctypes.byref(seconds)) == 0:
            time.sleep(max(0.0, seconds.value / self.time_scale - (time.monotonic() - step_started)))


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    images = torch.randn(16, 3, 16, 16, device=device)
    labels = torch.randint(0, 10, (16,), device=device)
    gpu_work = EmulatedGpuWork()

    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(
        monitor, optimum_selector=ZeusCost(eta_knob=0.5), warmup_steps=2, profile_steps=8, pl_step=25)

    plo.on_train_begin()
    for epoch in range(1, EPOCHS + 1):
        plo.on_epoch_begin()
        monitor.begin_window("epoch")
        for _ in range(STEPS_PER_EPOCH):
            step_started = time.monotonic()
            plo.on_step_begin()
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            gpu_work(0, step_started)
            plo.on_step_end()
        measurement = monitor.end_window("epoch")
        plo.on_epoch_end()
        print(f"epoch {epoch}: {measurement.total_energy:.1f} J in {measurement.time:.1f} s, "
              f"loss {loss.item():.3f}, optimizer state {plo.state}")
    plo.on_train_end()  # puts back the power limit the GPU had before training

    print("profile (limit W: energy J, time s per window):")
    for m in plo.measurements:
        print(f"  {m.power_limit:>4} W: {m.energy:8.1f} J {m.time:6.2f} s")
    # Profiling starts at the GPU's maximum limit, its default: the optimizer's choice against it, both
    # measured over the same number of steps in this run.
    profile = {m.power_limit: m for m in plo.measurements}
    default_w = max(profile)
    chosen_w = plo.state.optimal_power_limit // 1000
    default, chosen = profile[default_w], profile[chosen_w]
    print(f"chosen power limit: {chosen_w} W")
    print(f"at {chosen_w} W instead of the default {default_w} W, a step takes "
          f"{1 - chosen.energy / default.energy:.1%} less energy and {chosen.time / default.time - 1:.1%} more time")


if __name__ == "__main__":
    main()
