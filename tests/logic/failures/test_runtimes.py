"""The environment's failure classes: a runtime of the wrong version, an environment that is not
active, a server that does not return — and a test runner's own failure told from the compiler
it runs first. Messages are written from the tools' own sources
(`tests/fixtures/failures/runtimes.jsonl` names the version and file of each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.failures.fingerprint import analyze
from slmactor.logic.failures.runtimes import (
    environment_class,
    head_family,
    is_server_command,
    runtime_name,
)
from slmactor.logic.failures.verdict import command_heads

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "failures" / "runtimes.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in FIXTURE.read_text().splitlines()
                              if line.strip()]
FAMILY = {"Bash": "shell", "exec_command": "shell", "run_shell_command": "shell"}


def _fp(row: dict[str, Any]) -> Any:
    return analyze(row["tool"], row["error"], command=row["command"], family=FAMILY[row["tool"]])


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['class']}:{r['command']}" for r in ROWS])
def test_each_tool_s_own_words_land_in_their_class(row: dict[str, Any]) -> None:
    fp = _fp(row)
    assert fp.cls == row["class"], fp.explain
    if row["class"] in ("runtime_version", "env_not_activated") and row["runtime"]:
        assert fp.detail == row["runtime"]


def test_every_fixture_names_its_source() -> None:
    assert all(row["source"].strip() for row in ROWS)
    assert {row["class"] for row in ROWS} >= {"runtime_version", "env_not_activated",
                                             "server_no_return", "compile_error", "test_failure"}


def test_npm_pnpm_and_yarn_saying_wrong_node_are_one_fingerprint() -> None:
    node = [_fp(r) for r in ROWS if r["class"] == "runtime_version" and r["runtime"] == "node"
            and r["command"].split()[0] in ("npm", "pnpm", "yarn")]
    assert len(node) >= 5
    assert len({fp.id for fp in node}) == 1
    go = next(_fp(r) for r in ROWS if r["runtime"] == "go")
    assert go.id != node[0].id  # another runtime, another fact


def test_a_server_that_timed_out_is_not_a_build_that_timed_out() -> None:
    servers = {_fp(r).id for r in ROWS if r["class"] == "server_no_return"}
    slow = {_fp(r).id for r in ROWS if r["class"] == "timeout"}
    assert len(servers) == 1 and len(slow) == 1 and servers != slow


def test_a_server_sent_to_the_background_is_no_server_in_the_foreground() -> None:
    assert is_server_command("npm run dev", command_heads("npm run dev"))
    assert not is_server_command("npm run dev &", command_heads("npm run dev &"))
    assert not is_server_command("npm run build", command_heads("npm run build"))
    assert is_server_command("cd web && pnpm dev", command_heads("cd web && pnpm dev"))
    assert not is_server_command("docker compose up -d db", command_heads("docker compose up -d db"))
    assert is_server_command("docker compose up db", command_heads("docker compose up db"))


@pytest.mark.parametrize(("head", "family"), [
    ("npm test", "node"), ("pnpm", "node"), ("yarn", "node"), ("node", "node"), ("npx", "node"),
    ("node_modules/.bin/tsc", "node"), ("python3", "python"), ("python3.12", "python"),
    (".venv/bin/python", "python"), ("pip3", "python"), ("pytest", "python"), ("go test", "go"),
    ("bundle", "ruby"), ("cargo", "rust"), ("ls", ""), ("git status", "")])
def test_head_family(head: str, family: str) -> None:
    assert head_family(head) == family


def test_runtime_names_fold_managers_and_plugins() -> None:
    assert runtime_name("nodejs") == "node"
    assert runtime_name("golang") == "go"
    assert runtime_name("pyenv") == "python"
    assert runtime_name("bundle") == "ruby"


@settings(derandomize=True, max_examples=300)
@given(st.text(max_size=400))
def test_environment_class_is_total(text: str) -> None:
    found = environment_class(text.lower())
    assert found is None or (found[0] in ("runtime_version", "env_not_activated")
                             and isinstance(found[1], str))


@settings(derandomize=True, max_examples=100)
@given(st.sampled_from([r for r in ROWS if r["class"] in ("runtime_version",
                                                          "env_not_activated")]),
       st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_text_around_the_tool_s_words_does_not_move_the_class(row: dict[str, Any],
                                                              noise: str) -> None:
    """A line of other output before the tool's own words (a banner, a shell warning) does not
    change what the tool said."""
    body = row["error"].split("\n", 1)[1] if row["error"].startswith("Exit code") else row["error"]
    noisy = {**row, "error": f"{noise.replace(chr(10), ' ')}\n{body}"}
    assert _fp(noisy).cls == row["class"]
