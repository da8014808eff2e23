"""``codemode doctor`` prints the kernel layers a worker reported (issue #11)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from codemode.cli import main
from codemode.sandbox.executors.confine import LAYERS

if TYPE_CHECKING:
    import pytest


def test_doctor_lists_every_layer_active(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--strict"]) == 0
    out = capsys.readouterr().out
    for layer in LAYERS:
        assert f"{layer} " in out
    assert "MISSING" not in out
    assert "all kernel layers active" in out


def test_doctor_strict_fails_on_a_missing_layer(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", "syscalls")
    assert main(["doctor", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "syscalls      MISSING" in out
    assert "missing: syscalls" in out
    assert main(["doctor"]) == 0  # without --strict it reports and succeeds


def test_doctor_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "auto"
    assert all(report[layer]["active"] for layer in LAYERS)


def test_doctor_leaves_the_hosts_log_levels_as_they_were() -> None:
    sandbox_log = logging.getLogger("codemode.sandbox")
    before = sandbox_log.level
    assert main(["doctor"]) == 0
    assert sandbox_log.level == before  # an embedding host's INFO records still reach it


def test_doctor_names_what_each_layer_holds(capsys: pytest.CaptureFixture[str]) -> None:
    """The details say what a layer applied, so a machine where part of it could not be
    (an ``oom_score_adj`` that cannot be written) shows it."""
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "MEMLOCK 0, RTPRIO 0, NICE 0, SIGPENDING 64" in report["rlimits"]["detail"]
    assert "oom_score_adj 1000" in report["rlimits"]["detail"]
    assert "own IPC namespace" in report["network"]["detail"]
    assert "open for writing, huge pages" in report["syscalls"]["detail"]
