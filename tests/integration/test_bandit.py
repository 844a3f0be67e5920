"""The bandit and calibration through the real daemon, client and CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    CalibrationGet,
    CalibrationReport,
    PolicyChoose,
    PolicyForget,
    PolicyUpdate,
    PolicyWhy,
    Status,
)
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

ARMS = ["search_replace", "unified_diff", "whole_file"]
MODEL = "qwen2.5-coder:7b-instruct-q4_K_M"
PERFECT = {"applied": True, "gate_passed": True, "gate_ran": True}


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def _update(client: Any, arm: str, outcome: dict[str, Any], **kw: Any) -> Any:
    return client.ask(PolicyUpdate(decision="edit_format", arm=arm, model=MODEL, language="Golang",
                                   outcome=outcome, **kw))


def test_warm_up_then_learning_through_the_daemon(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        modes = []
        for _ in range(6):
            choice = client.ask(PolicyChoose(decision="edit_format", arms=ARMS, model=MODEL,
                                             language="go"))
            modes.append(choice["mode"])
            assert choice["reason"].startswith("warm-up: ")
            assert [row["name"] for row in choice["table"]] == ARMS
            reply = _update(client, choice["arm"], PERFECT)
            assert reply["reward"] == pytest.approx(0.925)
        assert modes == ["warm-up"] * 6
        assert reply["key"] == "edit_format|qwen2.5-coder|go" and reply["key_pulls"] == 6
        nxt = client.ask(PolicyChoose(decision="edit_format", arms=ARMS, model=MODEL,
                                      language="go"))
        assert nxt["mode"] in {"thompson", "exploring"} and nxt["key_pulls"] == 6
        why = client.ask(PolicyWhy(decision="edit_format", model="qwen2.5-coder", language="go"))
        assert why["found"] and why["observations"] == 6
        assert why["text"].splitlines()[0] == (
            "edit_format (model qwen2.5-coder, language go) — 6 observations")


def test_deterministic_and_seeded_choices_are_reproducible(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        det = client.ask(PolicyChoose(decision="edit_format", arms=ARMS, deterministic=True))
        assert det["arm"] == "search_replace" and det["mode"] == "deterministic"
        assert det["reason"] == "deterministic mode: highest posterior mean 80% over 0 pulls"
        for arm in ARMS:  # past warm-up, so sampling and ε are in play
            for _ in range(2):
                _update(client, arm, PERFECT)
        seeded = [client.ask(PolicyChoose(decision="edit_format", arms=ARMS, model=MODEL,
                                          language="go", seed=99)) for _ in range(3)]
        assert len({json.dumps(s, sort_keys=True) for s in seeded}) == 1


def test_bad_requests_are_refused(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as err:
            client.ask(PolicyChoose(decision="  ", arms=ARMS))
        assert err.value.code == ErrorCode.BAD_FIELD
        with pytest.raises(RequestFailed) as err:
            client.ask(PolicyUpdate(decision="edit_format", arm=""))
        assert err.value.code == ErrorCode.BAD_FIELD
        with pytest.raises(RequestFailed) as err:
            client.ask(PolicyWhy(decision="edit_format", scope="team"))
        assert err.value.code == ErrorCode.BAD_FIELD
        with pytest.raises(RequestFailed) as err:
            client.ask(CalibrationReport(profile={"endpoint": "http://x"}))
        assert err.value.code == ErrorCode.BAD_FIELD
        # still answering after the errors
        assert client.ask(PolicyChoose(decision="x", arms=["only"]))["reason"] == "only one option"


def test_policy_persists_across_restart_in_both_scopes() -> None:
    first = spawn_daemon()
    try:
        with first.client() as client:
            _update(client, "whole_file", PERFECT)
            _update(client, "unified_diff", {"applied": False, "failed": True}, scope="project")
        assert first.stop() == 0
        user_doc = json.loads((first.home / "evolve" / "policy.json").read_text())
        assert user_doc["keys"]["edit_format|qwen2.5-coder|go"]["arms"]["whole_file"]["pulls"] == 1
        project_doc = first.project / ".slmcode" / "evolve" / "policy.json"
        assert json.loads(project_doc.read_text())["keys"]
        assert (first.project / ".slmcode" / ".gitignore").exists()  # learned policy not committed
        second = spawn_daemon(home=first.home, project=first.project)
        try:
            with second.client() as client:
                why = client.ask(PolicyWhy(decision="edit_format", model=MODEL, language="go"))
                assert why["observations"] == 1
                proj = client.ask(PolicyWhy(decision="edit_format", model=MODEL, language="go",
                                            scope="project"))
                assert proj["arms"][0]["name"] == "unified_diff"
                assert proj["arms"][0]["reward_total"] == pytest.approx(0.10)
                forgot = client.ask(PolicyForget(project=str(second.project)))
                assert forgot == {"ok": True, "scopes": ["user", "project"], "keys": 2}
                assert not client.ask(PolicyWhy(decision="edit_format"))["found"]
            assert second.stop() == 0
            assert not (first.home / "evolve" / "policy.json").exists()
            assert not project_doc.exists()
        finally:
            stop_quietly(second)
    finally:
        stop_quietly(first)


def test_corrupt_policy_is_set_aside_and_priors_apply() -> None:
    first = spawn_daemon()
    home, project = first.home, first.project
    assert first.stop() == 0
    (home / "evolve").mkdir(parents=True, exist_ok=True)
    (home / "evolve" / "policy.json").write_text('{"version": 1, "keys": {"trunc')
    daemon = spawn_daemon(home=home, project=project)
    try:
        with daemon.client() as client:
            choice = client.ask(PolicyChoose(decision="edit_format", arms=ARMS, deterministic=True))
            assert choice["arm"] == "search_replace"
            status = client.ask(Status())
        assert (home / "evolve" / "policy.json.corrupt").exists()
        assert "policy.json unreadable; starting from priors" in json.dumps(status)
    finally:
        stop_quietly(daemon)
        stop_quietly(first)


def test_calibration_report_get_and_cli(daemon: DaemonProcess) -> None:
    profile = {"model": "qwen3-coder:30b", "endpoint": "http://127.0.0.1:8080/v1",
               "efficiency": {"1": 1.0, "2": 0.95, "4": 0.62, "8": 0.31}, "p50_ms": 400,
               "p95_ms": 560, "decode_tps": 32.0, "context_window": 32768}
    with daemon.client() as client:
        reply = client.ask(CalibrationReport(profile=profile, roles={"worker": 800, "planner": 300},
                                             observed={"worker": 5}, task_timeout_ms=30_000))
        assert reply["knee"] == 4 and reply["stored"]
        assert reply["profile"]["endpoint"] == "http://127.0.0.1:8080"
        assert set(reply["seeds"]["role_latency_ms"]) == {"planner"}  # worker has observations
        assert reply["seeds"]["decode_tps"] == 32.0
        got = client.ask(CalibrationGet(model="qwen3-coder:30b", endpoint="http://127.0.0.1:8080",
                                        context_window=65536))
        assert got["found"] and got["stale"] == "context window changed" and got["knee"] == 4
        missing = client.ask(CalibrationGet(model="other"))
        assert missing == {"found": False, "stale": "never measured", "profile": None, "seeds": {}}
        # Calibration seeds no bandit posterior (H-S-13).
        assert not client.ask(PolicyWhy(decision="role_model", model="qwen3-coder"))["found"]
    shown = _cli(daemon, "--json", "calibrate", "show")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["count"] == 1 and data["profiles"][0]["knee"] == 4
    text = _cli(daemon, "calibrate", "show")
    assert text.returncode == 0 and "qwen3-coder:30b @ http://127.0.0.1:8080 — knee 4" in text.stdout
    one = _cli(daemon, "--json", "calibrate", "show", "--model", "qwen3-coder:30b")
    assert json.loads(one.stdout)["profiles"][0]["endpoint"] == "http://127.0.0.1:8080"
    none = _cli(daemon, "calibrate", "show", "--model", "nothing-here")
    assert none.returncode == 0 and none.stdout.startswith("no calibration profiles yet")
    usage = _cli(daemon, "calibrate", "show", "--endpoint", "http://x")
    assert usage.returncode == 2 and "--endpoint needs --model" in usage.stderr


def test_evolve_why_cli(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        _update(client, "search_replace", PERFECT)
    text = _cli(daemon, "evolve", "why", "edit_format", "--model", MODEL, "--language", "golang")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines() == [
        "edit_format (model qwen2.5-coder, language go) — 1 observations",
        "→ search_replace       81% ±11%  (1 pulls, α=8.9 β=2.1)",
        "mode: Thompson sampling, ε=0.20",
    ]
    other = _cli(daemon, "evolve", "why", "edit_format", "--model", "llama3.1")
    assert other.returncode == 0
    assert other.stdout.splitlines()[1] == (
        "no evidence for this model yet — the harness uses the shipped default")
    assert "— other models (recorded, not used here) —" in other.stdout
    shipped = _cli(daemon, "evolve", "why", "think_passes")
    assert shipped.stdout.strip() == "think_passes: no evidence yet — using the shipped defaults."
    unknown = _cli(daemon, "evolve", "why", "nosuchdecision")
    assert unknown.returncode == 2 and "unknown decision" in unknown.stderr
    as_json = _cli(daemon, "--json", "evolve", "why", "edit_format", "--model", MODEL)
    assert json.loads(as_json.stdout)["others"][0]["key"] == "edit_format|qwen2.5-coder|go"


def test_calibration_seeds_latency_memory_only_for_roles_never_observed(daemon: DaemonProcess) -> None:
    from slmactor.protocol.messages import LatencyObserve

    profile = {"model": "llama3.1:8b", "endpoint": "http://127.0.0.1:11434",
               "efficiency": {"1": 1.0, "2": 0.9}, "p50_ms": 300, "p95_ms": 450, "decode_tps": 40.0}
    with daemon.client() as client:
        # The daemon's own latency memory already has real calls for the reviewer role.
        for ms in (900.0, 1100.0, 1000.0):
            client.ask(LatencyObserve(role="reviewer", model="llama3.1:8b", ms=ms))
        reply = client.ask(CalibrationReport(profile=profile, roles={"worker": 800, "reviewer": 400}))
        assert set(reply["seeds"]["role_latency_ms"]) == {"worker", "reviewer"}  # the harness said nothing
        assert reply["seeded_roles"] == ["worker"]  # the reviewer's real observations win
        # A seed is stored once: a second report changes nothing, and a real call is kept.
        again = client.ask(CalibrationReport(profile=profile, roles={"worker": 800}))
        assert again["seeded_roles"] == []
        observed = client.ask(LatencyObserve(role="worker", model="llama3.1:8b", ms=5000.0))
        assert observed["recorded"] and observed["samples"] == 4  # 3 seed samples + the real one
