"""`slmactor import lessons` and `slmactor memory lessons --task/--tag` against the real daemon."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from slmactor.stores.base.layout import ProjectLayout
from slmactor.testing import DaemonProcess
from tests.fixtures.lessons.corpus import write_corpus


def cli(daemon: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=120,
    )


def test_a_5000_line_corpus_with_1_percent_corrupt_lines_keeps_every_good_line(
        daemon: DaemonProcess, tmp_path: Path) -> None:
    corpus = tmp_path / "memory.jsonl"
    good, bad = write_corpus(corpus, 5000, corrupt_every=100)
    assert (good, bad) == (4950, 50)
    done = cli(daemon, "import", "lessons", str(corpus), "--project", str(daemon.project),
               "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary == {"file": str(corpus), "read": 5000, "imported": 4950, "merged": 0,
                       "bad": 50, "total": 4950}
    stored = ProjectLayout(daemon.project).lessons.read_text().splitlines()
    originals = set()
    for line in corpus.read_bytes().splitlines():
        try:
            originals.add(json.loads(line)["trigger"])
        except (ValueError, TypeError, KeyError):
            continue
    assert len(originals) == 4950
    assert {json.loads(line)["trigger"] for line in stored} == originals
    # importing the same corpus again adds nothing: every good line merges into its twin
    again = json.loads(cli(daemon, "--json", "--project", str(daemon.project), "import",
                           "lessons", str(corpus)).stdout)
    assert (again["imported"], again["merged"], again["bad"], again["total"]) == (0, 4950, 50, 4950)


def test_import_summary_and_errors(daemon: DaemonProcess, tmp_path: Path) -> None:
    corpus = tmp_path / "small.jsonl"
    corpus.write_text(
        json.dumps({"ts": 1, "type": "anti", "trigger": "hardcoded CORS origins in flask app",
                    "fix": "breaks other machines", "polarity": "dont", "tags": ["flask"]})
        + "\n\n{not json\n"
        + json.dumps({"trigger": "hardcoded CORS origins in flask app", "fix": "dup",
                      "type": "error_pattern", "confidence": 0.99}) + "\n"
    )
    done = cli(daemon, "--project", str(daemon.project), "import", "lessons", str(corpus))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"read 3 line(s) of {corpus}: 1 imported, 1 merged into existing lessons, 1 bad "
        "(skipped); the project now holds 1 do/don't lesson(s)")
    assert done.stderr == ""  # no progress line when stderr is not a terminal
    missing = cli(daemon, "--project", str(daemon.project), "import", "lessons",
                  str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    junk = tmp_path / "junk.jsonl"
    junk.write_text("a\nb\n")
    all_bad = cli(daemon, "--project", str(daemon.project), "--json", "import", "lessons",
                  str(junk))
    assert all_bad.returncode == 2 and json.loads(all_bad.stdout)["bad"] == 2


def test_progress_is_shown_on_a_terminal(daemon: DaemonProcess, tmp_path: Path) -> None:
    corpus = tmp_path / "memory.jsonl"
    write_corpus(corpus, 1200, corrupt_every=100)
    main, child = pty.openpty()  # stderr is a terminal, stdout a pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
             "--no-autostart", "--project", str(daemon.project), "import", "lessons",
             str(corpus)],
            check=False, env=daemon.env, stdout=subprocess.PIPE, stderr=child, text=True,
            timeout=120)
        os.close(child)
        shown = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the writer side is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(main)
    assert done.returncode == 0
    assert shown.count(b"\rimporting lessons: ") == 3  # one update per batch of 500 lines
    assert b"importing lessons: 1200 line(s) read, 12 bad" in shown
    assert done.stdout.startswith("read 1200 line(s)")


def test_memory_lessons_in_recall_order_for_a_task(daemon: DaemonProcess, tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    rows = [
        {"ts": 1e9, "type": "architecture", "trigger": "borrow checker on shared config",
         "fix": "wrap it in Arc", "confidence": 1.0, "used": 50, "polarity": "do",
         "tags": ["rust"], "source_task": "Build a Rust CLI with cargo"},
        {"ts": 1e9, "type": "architecture", "trigger": "Flask app factory",
         "fix": "register blueprints in create_app", "confidence": 0.3, "used": 0,
         "polarity": "do", "tags": ["flask"], "source_task": ""},
        {"ts": 1e9, "type": "error_pattern", "trigger": "f-string SQL with user input",
         "fix": "SQL injection", "confidence": 0.9, "used": 3, "polarity": "dont",
         "tags": ["python", "sqlite"], "source_task": ""},
        {"ts": 1e9, "type": "error_pattern", "trigger": "useEffect without deps",
         "fix": "infinite render loop", "confidence": 0.9, "used": 9, "polarity": "dont",
         "tags": ["react"], "source_task": ""},
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    project = ["--project", str(daemon.project)]
    assert cli(daemon, *project, "import", "lessons", str(corpus)).returncode == 0
    listed = cli(daemon, *project, "--json", "memory", "lessons", "--task",
                 "Build a Python Flask REST API")
    assert listed.returncode == 0, listed.stderr
    order = [le["trigger"] for le in json.loads(listed.stdout)["lessons"]]
    # the Rust lesson (confidence 1.0, 50 uses) and the React one are filtered out
    assert order == ["f-string SQL with user input", "Flask app factory"]
    text = cli(daemon, *project, "memory", "lessons", "--task", "Build a Python Flask REST API")
    first = text.stdout.splitlines()[0]
    assert "NEVER: f-string SQL with user input (Reason: SQL injection)" in first
    tagged = json.loads(cli(daemon, *project, "--json", "memory", "lessons", "--tag",
                            "react").stdout)
    assert [le["trigger"] for le in tagged["lessons"]] == ["useEffect without deps"]
    plain = cli(daemon, *project, "memory", "lessons")
    assert "Do/don't lessons (score, confidence, uses):" in plain.stdout
    show = cli(daemon, *project, "memory", "show", "--query", "Build a Python Flask REST API")
    assert "## Anti-patterns from past builds (NEVER do these):" in show.stdout
    assert "useEffect" not in show.stdout
    bad = cli(daemon, *project, "memory", "lessons", "--limit", "-1")
    assert bad.returncode == 2
