"""`slmactor import sessions` against a real daemon: a generated history at scale, and real public
transcripts.

**Generated history** (always; `bench/claude_history.py`: 1,000 Claude Code sessions × ~100
calls, ~450 MB of transcripts in Claude Code 2.1.x's format; `--quick`: 100): the floor is
`json.loads` of every line of the same files in one process, measured in the same run; the
import's calls/s is its ratio to that floor (target ≥ 0.3×). Peak RSS of the import process
(`ru_maxrss`) and of the daemon (`VmHWM`), each ≤ 200 MB; a second import of the unchanged
history costs ≤ 5 % of the first; every session becomes one run in the daemon.

**Real corpus** (when present): the corpus is the directory `bench/real_sessions.json` names (each source's repository, commit
and paths; `python bench/fetch_real_sessions.py` fetches it, into `$SLMACTOR_REAL_CORPUS` or
`~/.cache/slmactor-real/corpus`): Claude Code, Codex CLI, Gemini CLI, Cline, mini-swe-agent,
SWE-agent and OpenHands sessions, plus files that are no session (aider's Markdown logs, Cline's
companions). Never committed; the bench says how to fetch it when it is missing.

Rows:
* the first import (`--project` a temp project: the sessions' own directories are on other
  people's machines): sessions found, formats, new sessions, later copies of a session that
  carry more calls (imported as its next part), files skipped as no session, and the daemon's
  run count afterwards — every session (and part) a run exactly once;
* a second import of the same tree: new sessions (target 0);
* a ~1 GiB tree made by repeating the corpus's files (symlinks in a temp dir, removed after):
  new sessions (target 0: copies are the sessions already imported), throughput in MB/s and the
  importer's peak RSS (target ≤ 256 MB); the floor, measured in the same run, is a plain read of
  the same tree (ratio: import throughput / read throughput).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly, wait_for

Row = dict[str, Any]
TREE_BYTES = 1 << 30


def _corpus() -> Path:
    from bench.fetch_real_sessions import default_corpus

    return default_corpus()


def _import(daemon: DaemonProcess, root: Path, *extra: str, project: Path | None = None
            ) -> tuple[dict[str, Any], float, int]:
    """(summary, wall seconds, peak RSS in bytes) of one `import sessions` process."""
    args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--no-autostart",
            "--json", "--timeout", "60", "import", "sessions", str(root), "--project",
            str(project or daemon.project), *extra]
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(args, env=daemon.env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"import sessions exited {proc.returncode}: {text[-2000:]}")
    return json.loads(text), wall, usage.ru_maxrss * 1024


def _repeat(corpus: Path, target: Path, size: int) -> int:
    """Symlink the corpus's files into `target` copy after copy until `size` bytes; the bytes."""
    files = sorted((p, p.stat().st_size) for p in corpus.rglob("*") if p.is_file())
    total, copy = 0, 0
    while total < size:
        for path, length in files:
            link = target / f"copy{copy}" / path.relative_to(corpus)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path)
            total += length
            if total >= size:
                break
        copy += 1
    return total


def _read_floor(root: Path) -> tuple[float, int]:
    """Seconds and bytes of reading every file under `root` line by line (no parsing)."""
    started = time.monotonic()
    total = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            with open(Path(folder) / name, "rb") as fh:
                for line in fh:
                    total += len(line)
    return time.monotonic() - started, total


def _runs(daemon: DaemonProcess, project: Path | None = None) -> int:
    with daemon.client(project=project or daemon.project) as c:  # where `_import` files them
        return len(c.ask(MetricsShow(last=0))["runs"])


def _json_floor(root: Path) -> tuple[float, int]:
    """Seconds and lines of `json.loads` of every line of every file under `root`."""
    started = time.monotonic()
    lines = 0
    loads = json.loads
    for path in sorted(root.rglob("*.jsonl")):
        with open(path, "rb") as fh:
            for line in fh:
                loads(line)
                lines += 1
    return time.monotonic() - started, lines


def _peak_rss(pid: int) -> int:
    """A live process's peak resident memory in bytes (Linux: /proc/PID/status VmHWM)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def generated(quick: bool) -> list[Row]:
    """The generated history's rows."""
    from bench.claude_history import generate

    sessions = 100 if quick else 1000
    scratch = Path(tempfile.mkdtemp(prefix="slm-import-gen-"))
    daemon = spawn_daemon()
    try:
        history = scratch / "projects"
        calls, size = generate(history, sessions)
        project = scratch / "service"
        project.mkdir()
        floor_s, lines = _json_floor(history)
        floor_s = min(floor_s, _json_floor(history)[0])  # the faster of two: the floor, warm
        first, wall, rss = _import(daemon, history, project=project)
        runs = wait_for(lambda: _runs(daemon, project) if _runs(daemon, project) >= first["new"] else 0,
                        "every imported session a run", timeout=1200, pause=0.5)
        daemon_rss = _peak_rss(daemon.proc.pid)
        second, wall2, _ = _import(daemon, history, project=project)
        calls_s, floor_calls_s = first["calls"] / wall, calls / floor_s
        return [
            {"name": "generated: history", "value": sessions, "unit": "sessions",
             "target": f"{calls:,} calls, {lines:,} lines, {size / 1e6:.0f} MB (Claude Code transcripts)"},
            {"name": "generated: floor, json.loads of every line", "value": round(floor_calls_s), "unit": "calls/s",
             "target": f"{floor_s:.2f}s for the {lines:,} lines"},
            {"name": "generated: import sessions/s", "value": round(first["new"] / wall, 1), "unit": "sess/s",
             "target": f"{first['new']} new of {first['sessions']}, {wall:.1f}s"},
            {"name": "generated: import calls/s", "value": round(calls_s), "unit": "calls/s",
             "floor": round(floor_calls_s), "ratio": round(calls_s / floor_calls_s, 3), "target": "≥ 0.3"},
            {"name": "generated: import peak RSS", "value": round(rss / 1e6), "unit": "MB", "target": "≤ 200"},
            {"name": "generated: daemon peak RSS", "value": round(daemon_rss / 1e6), "unit": "MB", "target": "≤ 200"},
            {"name": "generated: runs in the daemon", "value": runs, "unit": "runs", "floor": first["new"],
             "ratio": round(runs / max(1, first["new"]), 3), "target": "= new (ratio 1)"},
            {"name": "generated: second import", "value": round(wall2, 2), "unit": "s", "floor": round(wall, 2),
             "ratio": round(wall2 / wall, 3),
             "target": f"≤ 0.05 of the first ({second['unchanged_files']} files unchanged, {second['new']} new)"},
        ]
    finally:
        stop_quietly(daemon)
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(daemon.base, ignore_errors=True)


def run(quick: bool) -> list[Row]:
    rows = generated(quick)
    corpus = _corpus()
    if not corpus.is_dir():
        rows.append({"name": "corpus: not run", "value": None, "unit": "",
                     "target": f"no corpus at {corpus}; fetch it with `python bench/fetch_real_sessions.py "
                               f"--target {corpus}` (sources and commits in bench/real_sessions.json) or point "
                               f"SLMACTOR_REAL_CORPUS at it"})
        return rows
    daemon = spawn_daemon()
    scratch = Path(tempfile.mkdtemp(prefix="slm-import-bench-"))
    try:
        first, wall, rss = _import(daemon, corpus)
        formats = sorted(h for h, row in first["by_harness"].items() if row["sessions"])
        expected = first["new"] + first["continued"]
        imported = wait_for(lambda: _runs(daemon) if _runs(daemon) >= expected else 0,
                            "every imported session a run", timeout=600, pause=0.5)
        not_sessions = sum(first["skipped_files"].values())
        rows += [
            {"name": "corpus: sessions found", "value": first["sessions"], "unit": "sessions",
             "target": "≥ 300"},
            {"name": "corpus: formats with sessions", "value": len(formats), "unit": ", ".join(formats),
             "target": "≥ 4"},
            {"name": "corpus: new sessions (unique ids)", "value": first["new"], "unit": "sessions"},
            {"name": "corpus: copies of a session already seen", "value": first["already_imported"],
             "unit": "sessions"},
            {"name": "corpus: later copies with new calls (next parts)", "value": first["continued"],
             "unit": "parts"},
            {"name": "corpus: runs in the daemon after import", "value": imported, "unit": "runs",
             "floor": expected, "ratio": round(imported / max(1, expected), 3),
             "target": "= new + parts (ratio 1)"},
            {"name": "corpus: files skipped (no session)", "value": not_sessions, "unit": "files",
             "target": json.dumps(first["skipped_files"])},
            {"name": "corpus: calls / failed calls", "value": first["calls"], "unit": "calls",
             "floor": first["failed_calls"], "target": json.dumps(dict(list(first["failures_by_class"].items())[:5]))},
            {"name": "corpus: lessons learned / repair candidates", "value": first["lessons_learned"],
             "unit": "lessons", "floor": first["repair_candidates"]},
            {"name": "corpus: first import wall time", "value": round(wall, 1), "unit": "s",
             "target": f"{first['bytes'] / 1e6:.0f} MB read, peak RSS {rss / 1e6:.0f} MB"},
        ]
        second, wall2, _ = _import(daemon, corpus)
        rows.append({"name": "corpus: second import, new sessions", "value": second["new"], "unit": "sessions",
                     "target": f"0 ({second['unchanged_files']} files unchanged, {wall2:.1f}s)"})
        if not quick:
            tree = scratch / "tree"
            size = _repeat(corpus, tree, TREE_BYTES)
            floor_s, floor_bytes = _read_floor(tree)
            big, wall3, rss3 = _import(daemon, tree)
            mbps = big["bytes"] / 1e6 / wall3
            floor_mbps = floor_bytes / 1e6 / floor_s
            rows += [
                {"name": "1 GiB tree: bytes of session files read", "value": round(big["bytes"] / 1e6),
                 "unit": "MB", "target": f"tree {size / 1e6:.0f} MB, {big['files']} session files"},
                {"name": "1 GiB tree: new sessions and parts", "value": big["new"] + big["continued"],
                 "unit": "sessions", "target": f"0 (all {big['sessions']} are copies of imported ones)"},
                {"name": "1 GiB tree: throughput", "value": round(mbps, 1), "unit": "MB/s",
                 "floor": round(floor_mbps, 1), "ratio": round(mbps / floor_mbps, 3),
                 "target": "floor: a plain line read of the same tree"},
                {"name": "1 GiB tree: importer peak RSS", "value": round(rss3 / 1e6), "unit": "MB",
                 "target": "≤ 256 MB"},
            ]
    finally:
        stop_quietly(daemon)
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(daemon.base, ignore_errors=True)
    return rows
