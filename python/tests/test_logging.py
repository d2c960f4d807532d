"""Native log records reach Python's logging and warnings (python/src/log.cc, zeus/_logging.py)."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

from zeus import _native


def test_a_user_warning_inside_a_native_call_is_raised_by_that_call():
    with pytest.warns(UserWarning, match="window too short") as record:
        _native.log.emit_in_call("monitor", "window too short", user_warning=True)
    assert len(record) == 1
    # Attributed to the caller's line, not to the package.
    assert record[0].filename == __file__


def test_catch_warnings_silences_a_native_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        _native.log.emit_in_call("monitor", "ignored advice", user_warning=True)
    assert caught == []


def test_log_lines_go_to_the_component_logger(caplog):
    caplog.set_level(logging.INFO, logger="zeus")
    _native.log.emit_in_call("power-limit-optimizer", "profiling 250 W")
    _native.log.emit(20, "bso-client", "registered job j-1")
    names = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("zeus.power_limit_optimizer", logging.WARNING, "profiling 250 W") in names
    assert ("zeus.bso_client", logging.INFO, "registered job j-1") in names


def test_the_zeus_logger_level_silences_native_lines(caplog):
    caplog.set_level(logging.ERROR, logger="zeus")
    _native.log.emit_in_call("monitor", "quiet please")
    assert [r for r in caplog.records if r.getMessage() == "quiet please"] == []


def test_records_of_background_threads_are_delivered(caplog):
    caplog.set_level(logging.INFO, logger="zeus")
    _native.log.emit_from_thread("exporter", "push failed: connection refused")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(r.getMessage() == "push failed: connection refused" for r in caplog.records):
            break
        time.sleep(0.01)
    assert any(r.name == "zeus.exporter" for r in caplog.records)


def test_once_keys_log_a_record_once():
    _native.log.reset_once_keys()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            _native.log.emit(30, "optimizer", "no permission: advice", True, True, "advice-key")
    assert len(caught) == 1


def test_a_repeated_warning_shows_once_under_default_filters(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(
        textwrap.dedent(
            """
            from zeus import _native
            for _ in range(50):
                _native.log.emit_in_call("monitor", "same advice", user_warning=True)
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True)
    assert out.stderr.count("UserWarning: same advice") == 1, out.stderr
    quiet = subprocess.run(
        [sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "same advice" not in quiet.stderr
