"""Episodic memory through the real daemon, client and CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from slmactor.client import RequestFailed
from slmactor.protocol import ErrorCode
from slmactor.protocol.messages import (
    EpisodeAppend,
    EpisodeForget,
    EpisodeGet,
    EpisodePrune,
    EpisodeRecent,
    MemoryRecall,
)
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly

DAY = 86_400


def _cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=60,
    )


def _episode(query: str, files: list[str], success: bool = True, **kw: Any) -> dict[str, Any]:
    return {"query": query, "files_changed": files, "success": success, **kw}


def test_append_recall_get_recent_through_the_daemon(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        first = client.ask(EpisodeAppend(episode=_episode(
            "fix flaky network test in the http client", ["tests/test_http.py", "src/http.py"],
            failures=[{"message": "ConnectionResetError", "resolution": "retry with backoff",
                       "resolved_by": "rule:retry_backoff", "attempts": 2}])))
        assert first["added"] and first["id"].startswith("ep_")
        client.ask(EpisodeAppend(episode=_episode("document the cache layer", ["docs/cache.md"])))
        client.ask(EpisodeAppend(episode=_episode("rename parser module", ["src/parser.py"],
                                                  success=False)))
        again = client.ask(EpisodeAppend(episode=first["episode"]))
        assert not again["added"] and again["id"] == first["id"]

        result = client.ask(MemoryRecall(query="network test flaky again",
                                         files=["src/http.py"], explain=True))
        assert [h["id"] for h in result["hits"]] == [first["id"]]
        hit = result["hits"][0]
        assert hit["episode"]["failures"][0]["resolved_by"] == "rule:retry_backoff"
        why = hit["explanation"]
        assert why["coverage"] >= 0.34 and why["mode"] == "default"
        assert {t["term"] for t in why["terms"]} >= {"network", "flaky", "path:src/http.py"}
        assert sum(why["fields"].values()) == pytest.approx(why["bm25"])

        got = client.ask(EpisodeGet(episode_id=first["id"]))
        assert got["query"] == "fix flaky network test in the http client"
        recent = client.ask(EpisodeRecent(n=2))
        assert recent["total"] == 3 and len(recent["episodes"]) == 2
        ids = client.ask(EpisodeRecent(n=2, ids_only=True))
        assert ids == {"ids": [e["id"] for e in recent["episodes"]], "total": 3}

        with pytest.raises(RequestFailed) as missing:
            client.ask(EpisodeGet(episode_id="ep_nope"))
        assert missing.value.code == ErrorCode.NOT_FOUND
        with pytest.raises(RequestFailed) as bad_since:
            client.ask(MemoryRecall(query="x", since="yesterday"))
        assert bad_since.value.code == ErrorCode.BAD_FIELD
    log = daemon.project / ".slmcode" / "memory" / "episodes.jsonl"
    assert len(log.read_text().splitlines()) == 3


def test_episodes_survive_a_restart_and_prune_and_forget(tmp_path: Any) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    first = spawn_daemon(home=home, project=project)
    try:
        with first.client() as client:
            for i in range(6):
                client.ask(EpisodeAppend(episode=_episode(
                    f"task {i} about the tokenizer", [f"src/mod{i}.py"],
                    at=f"2026-0{1 + i}-01T00:00:00Z")))
        assert first.stop() == 0
    finally:
        stop_quietly(first)
    index = json.loads((project / ".slmcode" / "memory" / "episodes.index.json").read_text())
    assert len(index["entries"]) == 6  # flushed at shutdown
    second = spawn_daemon(home=home, project=project)
    try:
        with second.client() as client:
            assert client.ask(EpisodeRecent(n=0))["total"] == 6
            hits = client.ask(MemoryRecall(query="tokenizer", n=0, min_coverage=-1))["hits"]
            assert len(hits) >= 1
            pruned = client.ask(EpisodePrune(cap=2, max_age_days=-1))
            assert pruned == {"episodes_removed": 4, "episodes": 2}
            log = project / ".slmcode" / "memory" / "episodes.jsonl"
            assert len(log.read_text().splitlines()) == 2
            assert client.ask(EpisodeForget())["episodes_removed"] == 2
            assert not log.exists()
            assert client.ask(EpisodeRecent(n=0))["total"] == 0
    finally:
        stop_quietly(second)


def test_cli_episodes_and_recall(daemon: DaemonProcess) -> None:
    empty = _cli(daemon, "memory", "episodes")
    assert empty.returncode == 0 and "no episodes remembered yet" in empty.stdout
    with daemon.client() as client:
        client.ask(EpisodeAppend(episode=_episode("speed up the JSON parser", ["src/json.py"])))
    listed = _cli(daemon, "memory", "episodes", "5")
    assert listed.returncode == 0 and "✓" in listed.stdout and "speed up the JSON parser" in listed.stdout
    assert _cli(daemon, "memory", "episodes", "0").returncode == 2
    recalled = _cli(daemon, "memory", "recall", "json parser slow", "--files", "src/json.py",
                    "--explain")
    assert recalled.returncode == 0, recalled.stderr
    assert "speed up the JSON parser" in recalled.stdout and "coverage" in recalled.stdout
    as_json = _cli(daemon, "--json", "memory", "recall", "parser")
    data = json.loads(as_json.stdout)
    assert data["hits"][0]["entry"]["query"] == "speed up the JSON parser"
    nothing = _cli(daemon, "memory", "recall", "kubernetes helm chart")
    assert nothing.returncode == 0 and "nothing recalled" in nothing.stdout


def test_a_long_query_ranks_off_the_loop_with_the_same_answer(daemon: DaemonProcess) -> None:
    # A query past LONG_QUERY characters is ranked in a worker thread (so it cannot hold the
    # loop, and every other ask, for its whole ranking); the hits are those the loop would give.
    from slmactor.actors.recall import LONG_QUERY

    with daemon.client() as client:
        wanted = client.ask(EpisodeAppend(episode=_episode(
            "fix flaky network test in the http client", ["src/http.py"])))
        client.ask(EpisodeAppend(episode=_episode("document the cache layer", ["docs/cache.md"])))
        words = "network test flaky again "
        long_text = words * (LONG_QUERY // len(words) + 1)
        assert len(long_text) > LONG_QUERY
        short = client.ask(MemoryRecall(query=words * 3, files=["src/http.py"]))
        long = client.ask(MemoryRecall(query=long_text, files=["src/http.py"]))
        assert [h["id"] for h in long["hits"]] == [h["id"] for h in short["hits"]] == [wanted["id"]]
        assert client.status()["pid"] == daemon.pid
