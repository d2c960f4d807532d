"""How loud the package is, measured as a user sees it: user scripts in fresh interpreters on emulated GPUs, their
stderr counted.

Issue 22 measured, before the native log seam: 69 short-window warnings in one documented example (the window's
length was in the text, so Python's "once per place" filter never recognised a repeat) and 300 stderr lines from
``EnergyHistogram`` in 100 epochs (written by native code straight to stderr, beyond ``-W ignore`` and
``logging``). Now every line goes through ``warnings`` or the ``zeus`` logger:

* default filters show a repeated warning once per place;
* ``-W ignore`` silences every warning;
* ``logging.getLogger("zeus").setLevel(logging.ERROR)`` silences the log lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from conftest import a40
from zeus.metric import metrics_available

# Zeus's documented per-step measurement (docs "Measuring energy"), with steps far shorter than the energy
# counter's update period: every window reads 0 J and is warned about.
SHORT_WINDOWS = """
    import time

    from zeus.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    for step in range(69):
        monitor.begin_window("step", sync_execution=False)
        time.sleep(0.0001 * (step + 1))  # the step's work, a little longer each time
        monitor.end_window("step", sync_execution=False)
    print("done")
"""

# Zeus's EnergyHistogram over 100 epochs whose energies are below every smallest bucket (GPU, CPU package, DRAM),
# pushing to a gateway that accepts everything (a local HTTP server in the script).
HISTOGRAM_EPOCHS = """
    import http.server
    import threading

    from zeus.metric import EnergyHistogram

    class Gateway(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.end_headers()
        do_POST = do_PUT
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"

    histogram = EnergyHistogram(cpu_indices=[0], gpu_indices=[0], pushgateway_url=url, job="noise")
    for epoch in range(100):
        histogram.begin_window("epoch", sync_execution=False)
        histogram.end_window("epoch", sync_execution=False)
    print("done")
"""

# Pushes to a gateway that refuses connections: each window's failed push is a log line (zeus.metric).
UNREACHABLE_GATEWAY = """
    import socket
    import time

    from zeus.metric import EnergyHistogram

    refusing = socket.socket()
    refusing.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    url = f"http://127.0.0.1:{refusing.getsockname()[1]}"
    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=url, job="noise",
                                gpu_bucket_range=[0.0, 1.0])
    for failed, window in enumerate(("a", "b", "c"), start=1):
        histogram.begin_window(window, sync_execution=False)
        histogram.end_window(window, sync_execution=False)
        while histogram._native.pushes_failed < failed:  # one push per window (pushes in flight coalesce)
            time.sleep(0.01)
    del histogram  # waits for its pushes
    print("done")
"""

QUIET_LOGGING = "import logging\nlogging.getLogger('zeus').setLevel(logging.ERROR)\n"


def write_rapl(root: Path) -> None:
    """A powercap tree with one package and its DRAM subzone (counters that never move)."""
    zone = root / "intel-rapl:0"
    (zone / "intel-rapl:0:0").mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "energy_uj").write_text("5000000\n")
    (zone / "intel-rapl:0:0" / "name").write_text("dram\n")
    (zone / "intel-rapl:0:0" / "max_energy_range_uj").write_text("65712999613\n")
    (zone / "intel-rapl:0:0" / "energy_uj").write_text("1000000\n")


def run_user_script(source: str, tmp_path: Path, subprocess_env: dict[str, str], *options: str,
                    prelude: str = "") -> str:
    """Runs ``source`` as a user's script (default warning filters unless ``options`` say otherwise); returns
    its stderr."""
    env = {**os.environ, "PYTHONPATH": subprocess_env["PYTHONPATH"]}
    env.pop("PYTHONWARNINGS", None)
    script = tmp_path / "user_script.py"
    script.write_text(prelude + textwrap.dedent(source))
    done = subprocess.run([sys.executable, *options, str(script)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done", done.stdout
    return done.stderr


def lines(stderr: str, needle: Optional[str] = None) -> list[str]:
    """stderr's lines that are not a warning's source line (Python prints the line that warned under it)."""
    out = [line for line in stderr.splitlines() if line.strip() and not line.startswith("  ")]
    return [line for line in out if needle is None or needle in line]


def test_a_repeated_short_window_warning_shows_once(emulator, subprocess_env, tmp_path: Path) -> None:
    emulator([a40(power_w=200, counter_update_period_ms=1000)])
    err = run_user_script(SHORT_WINDOWS, tmp_path, subprocess_env)
    warned = lines(err, "UserWarning")
    assert len(warned) == 1, err  # 69 before: the window's length was in the text
    assert "approx_instant_energy" in warned[0] and "'step'" in warned[0]
    assert lines(run_user_script(SHORT_WINDOWS, tmp_path, subprocess_env, "-W", "ignore")) == []


@pytest.mark.skipif(not metrics_available(), reason="this build has no push helpers (exporter component)")
def test_energy_histogram_bucket_warnings_show_once_per_kind(emulator, subprocess_env, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    emulator([a40(power_w=200, counter_update_period_ms=0)], clock="manual")
    write_rapl(tmp_path / "powercap")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path / "powercap"))
    err = run_user_script(HISTOGRAM_EPOCHS, tmp_path, subprocess_env)
    # 300 lines before (GPU, CPU and DRAM, each epoch, straight to stderr): now one warning per kind.
    warned = lines(err)
    assert len(warned) == 3, err
    for kind, bound in (("GPU", "50 J"), ("CPU", "10 J"), ("DRAM", "5 J")):
        assert len([w for w in warned if f"UserWarning: {kind} energy" in w and bound in w]) == 1, err
    assert lines(run_user_script(HISTOGRAM_EPOCHS, tmp_path, subprocess_env, "-W", "ignore")) == []


@pytest.mark.skipif(not metrics_available(), reason="this build has no push helpers (exporter component)")
def test_failed_pushes_are_log_lines_the_zeus_logger_silences(emulator, subprocess_env, tmp_path: Path) -> None:
    emulator([a40(power_w=200, counter_update_period_ms=0)], clock="manual")
    err = run_user_script(UNREACHABLE_GATEWAY, tmp_path, subprocess_env)
    assert len(lines(err, "pushing window")) == 3, err  # once per window (Python's last-resort handler)
    quiet = run_user_script(UNREACHABLE_GATEWAY, tmp_path, subprocess_env, prelude=QUIET_LOGGING)
    assert lines(quiet) == [], quiet
