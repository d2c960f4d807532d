"""A small convolutional network trained with real PyTorch (CPU) on synthetic data, measured by
ZeusMonitor windows per step and per epoch on an emulated A40.

The GPU's workload draws 236 W at its 300 W default limit (conftest.A40_WORKLOAD), so every window's
exact energy is 236 W x its time on the emulator's clock. Two variants:

* manual clock: each step lets 0.43 s of emulated time pass (the curve's iteration time at 300 W),
  so every figure is known in advance;
* wall clock at 10x: steps take however long PyTorch takes; the figures must still agree with the
  window times, which come from the same (emulated) clock.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from conftest import A40_WORKLOAD  # noqa: E402
from test_monitor_helpers import A40_POWER_AT_300_W, EmulatorControl, a40_busy  # noqa: E402
from test_monitor_helpers import close_devices_after_test  # noqa: E402, F401 (an autouse fixture)
from zeus.monitor import ZeusMonitor  # noqa: E402

ITERATION_TIME_S = A40_WORKLOAD["iteration_time_s"][-1]  # 0.42 s at 300 W
EPOCHS = 3
STEPS = 100


def _model_and_data():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 4),
    )
    images = torch.randn(STEPS, 16, 1, 16, 16)
    labels = torch.randint(0, 4, (STEPS, 16))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    return model, images, labels, optimizer


def _train_step(model, optimizer, x, y) -> float:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


@pytest.mark.filterwarnings("ignore:zeus. PyTorch has no CUDA")
def test_per_step_and_per_epoch_windows_manual_clock(emulator) -> None:
    emulator([a40_busy()], clock="manual")
    clock = EmulatorControl()
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    model, images, labels, optimizer = _model_and_data()
    losses = []
    for epoch in range(EPOCHS):
        monitor.begin_window(f"epoch_{epoch}")
        step_energy = 0.0
        for step in range(STEPS):
            monitor.begin_window("step")
            losses.append(_train_step(model, optimizer, images[step], labels[step]))
            clock.advance(ITERATION_TIME_S)
            m = monitor.end_window("step")
            assert m.time == pytest.approx(ITERATION_TIME_S, abs=1e-9)
            # 236 W x 0.42 s = 99.12 J; the counter has 1 mJ resolution.
            assert m.gpu_energy[0] == pytest.approx(99.12, abs=0.002)
            step_energy += m.gpu_energy[0]
        e = monitor.end_window(f"epoch_{epoch}")
        assert e.time == pytest.approx(STEPS * ITERATION_TIME_S, abs=1e-6)
        assert e.total_energy == pytest.approx(99.12 * STEPS, rel=0.01)
        assert e.total_energy == pytest.approx(step_energy, rel=0.01)
    assert losses[-1] < losses[0]  # it did train


@pytest.mark.filterwarnings("ignore:zeus. PyTorch has no CUDA")
def test_per_epoch_energy_matches_time_on_the_emulated_wall_clock(emulator) -> None:
    emulator([a40_busy()], time_scale=10)
    clock = EmulatorControl()
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    model, images, labels, optimizer = _model_and_data()
    for epoch in range(2):
        before = clock.now()
        monitor.begin_window(f"epoch_{epoch}")
        steps = []
        for step in range(STEPS):
            monitor.begin_window("step")
            _train_step(model, optimizer, images[step], labels[step])
            steps.append(monitor.end_window("step"))
        e = monitor.end_window(f"epoch_{epoch}")
        after = clock.now()
        assert 0 < e.time <= after - before
        assert e.gpu_energy[0] == pytest.approx(A40_POWER_AT_300_W * e.time, rel=0.01)
        assert sum(s.time for s in steps) <= e.time
        assert sum(s.gpu_energy[0] for s in steps) <= e.gpu_energy[0] + 0.002
