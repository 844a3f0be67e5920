"""bench/fetch_real_sessions.py: a source's files land under its `into` subdirectory, and --split picks sources.

Entire's v2 layout keeps every checkpoint on its own ref whose tree starts at `0/full.jsonl`, so two
checkpoints of one repository name the same path; `into` keeps them apart. The repository here is a
local git repository laid out as the mirror root expects (`<root>/<owner>+<repo>/repo`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from bench.fetch_real_sessions import materialize


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"})
    return done.stdout.strip()


def _checkpoint(repo: Path, text: str) -> str:
    """An orphan commit whose tree is `0/full.jsonl` holding text, as one Entire v2 checkpoint ref holds."""
    _git(repo, "checkout", "-q", "--orphan", f"cp-{len(text)}")
    _git(repo, "rm", "-rfq", "--ignore-unmatch", ".")
    (repo / "0").mkdir(exist_ok=True)
    (repo / "0" / "full.jsonl").write_text(text, encoding="utf-8")
    _git(repo, "add", "0/full.jsonl")
    _git(repo, "commit", "-qm", "checkpoint")
    return _git(repo, "rev-parse", "HEAD")


def _source(commit: str, into: str | None, split: str) -> dict[str, Any]:
    source: dict[str, Any] = {"harness": "claude", "repo": "o/r", "ref": None, "commit": commit,
                              "paths": ["0/full.jsonl"], "split": split}
    if into is not None:
        source["into"] = into
    return source


def test_into_keeps_checkpoints_with_the_same_path_apart_and_split_selects(tmp_path: Path) -> None:
    repo = tmp_path / "mirrors" / "o+r" / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    first, second = _checkpoint(repo, '{"a": 1}\n'), _checkpoint(repo, '{"b": 22}\n')
    manifest = {"sources": [_source(first, "aa/0001", "heldout2"), _source(second, "bb/0002", "heldout2"),
                            _source(first, None, "dev")]}
    target = tmp_path / "corpus"

    summary = materialize(manifest, target, "heldout2", tmp_path / "mirrors", tmp_path / "cache")

    assert summary["missing"] == [] and summary["written"] == 2
    base = target / "claude" / "o__r"
    assert (base / "aa" / "0001" / "0" / "full.jsonl").read_text(encoding="utf-8") == '{"a": 1}\n'
    assert (base / "bb" / "0002" / "0" / "full.jsonl").read_text(encoding="utf-8") == '{"b": 22}\n'
    assert not (base / "0").exists()  # the dev source was not asked for
    again = materialize(manifest, target, "heldout2", tmp_path / "mirrors", tmp_path / "cache")
    assert again["written"] == 0 and again["kept"] == 2
