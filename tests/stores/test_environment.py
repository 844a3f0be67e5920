"""environment.json and the hook's pre-flight table: round trip, trust, forgetting, corruption."""

from __future__ import annotations

import json
from pathlib import Path

from slmactor.logic.evolve.environment import Call
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.environment import FACTS_NAME, KEYS_NAME, TABLE_NAME, EnvStore

NOW = 1_800_000_000.0
KEY = b"k" * 32


def _store(tmp_path: Path, key: bytes | None = KEY, warnings: WarningLog | None = None) -> EnvStore:
    return EnvStore(tmp_path / ".slmcode" / "evolve", warnings if warnings is not None else WarningLog(),
                    key=key,
                    now=lambda: NOW)


def _teach(store: EnvStore) -> None:
    store.book.learn("dependency_missing",
                     Call("Bash", "python3 app.py", session="s1", error="ModuleNotFoundError: x"),
                     Call("Bash", ".venv/bin/python app.py", session="s1"), NOW)
    store.save()


def test_facts_the_table_and_its_keys_are_written_and_read_back(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _teach(store)
    evolve = tmp_path / ".slmcode" / "evolve"
    table = json.loads((evolve / TABLE_NAME).read_text())
    assert table["rows"][0]["exact"] == ["python3 app.py"]
    assert (evolve / KEYS_NAME).read_text() == "python3\n"
    again = _store(tmp_path)
    assert again.book.to_list() == store.book.to_list()
    assert again.book.preflight(Call("Bash", "python3 app.py")) is not None


def test_a_fact_a_repository_brought_is_kept_but_never_used(tmp_path: Path) -> None:
    _teach(_store(tmp_path, key=b"someone else's key......"))
    mine = _store(tmp_path)
    assert not mine.book.facts and len(mine.unverified) == 1
    mine.save()
    record = json.loads((tmp_path / ".slmcode" / "evolve" / FACTS_NAME).read_text())["facts"][0]
    assert "sig" not in record  # written back without a signature: using it never launders it
    assert not (tmp_path / ".slmcode" / "evolve" / KEYS_NAME).exists()
    assert json.loads((tmp_path / ".slmcode" / "evolve" / TABLE_NAME).read_text())["rows"] == []


def test_forget_removes_every_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _teach(store)
    store.forget()
    evolve = tmp_path / ".slmcode" / "evolve"
    assert not any((evolve / name).exists() for name in (FACTS_NAME, TABLE_NAME, KEYS_NAME))
    assert not _store(tmp_path).book.facts


def test_a_corrupt_file_is_set_aside_and_the_project_starts_without_facts(tmp_path: Path) -> None:
    evolve = tmp_path / ".slmcode" / "evolve"
    evolve.mkdir(parents=True)
    (evolve / FACTS_NAME).write_text("{not json")
    warnings = WarningLog()
    store = _store(tmp_path, warnings=warnings)
    assert not store.book.facts and (evolve / f"{FACTS_NAME}.corrupt").exists()
    assert warnings.recent()
