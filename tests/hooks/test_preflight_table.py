"""The hook's reading of the pre-flight table: the rows that speak of a call, nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.hooks.gate import first_word, matching, read_rows
from slmactor.logic.evolve.environment import PROVEN, Call, EnvBook
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.environment import EnvStore

NOW = 1_800_000_000.0


def _project_with_facts(tmp_path: Path) -> Path:
    store = EnvStore(tmp_path / ".slmcode" / "evolve", WarningLog(), key=b"k" * 32)
    for i in range(PROVEN):
        store.book.learn("runtime_version", Call("Bash", "pnpm install", session=f"s{i}"),
                         Call("Bash", "nvm use 20 && pnpm install", session=f"s{i}"), NOW)
    store.book.learn("server_no_return", Call("Bash", "npm start"),
                     Call("Bash", "npm start > s.log 2>&1 &"), NOW)
    store.save()
    return tmp_path


def test_the_rows_the_store_wrote_match_what_the_daemon_would_rewrite(tmp_path: Path) -> None:
    project = _project_with_facts(tmp_path)
    rows = read_rows(str(project))
    book = EnvStore(project / ".slmcode" / "evolve", WarningLog(), key=b"k" * 32).book
    for command in ("npm test", "cd web && yarn build", "pnpm install", "npm start"):
        assert matching(rows, command, "Bash"), command
        assert book.preflight(Call("Bash", command)) is not None, command
    for command in ("ls -la", "python3 app.py", "git status"):
        assert not matching(rows, command, "Bash")


def test_a_missing_or_odd_table_is_no_rows(tmp_path: Path) -> None:
    assert read_rows(str(tmp_path)) == []
    table = tmp_path / ".slmcode" / "evolve" / "preflight.json"
    table.parent.mkdir(parents=True)
    for text in ("{", "[]", json.dumps({"rows": "x"}), json.dumps({"rows": [1, {"fact": 2}]})):
        table.write_text(text)
        assert matching(read_rows(str(tmp_path)), "npm test") == []


def test_first_word_skips_what_runs_before_the_program() -> None:
    assert first_word("cd web && NODE_ENV=test npx vitest") == "npx"
    assert first_word("timeout 60 /usr/bin/python3 -m pytest") == "python3"
    assert first_word("  ") == ""


@settings(derandomize=True, max_examples=200)
@given(st.text(max_size=80))
def test_matching_never_raises(command: str) -> None:
    rows = [{"fact": "f", "exact": [command], "keys": ["npm"], "proven": True, "tool": ""}]
    matching(rows, command)
    EnvBook().preflight(Call("Bash", command))
