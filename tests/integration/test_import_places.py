"""`slmactor import sessions` as a user of a moved or cloned project, of a year of history, of a
long import and of a team's committed transcripts meets it, against a real daemon:

* a session whose directory is gone is filed in the project here named like it (or with its git
  remote); where none (or two) is, it is skipped with the exact `--project` command, and that
  command imports every such session (the skipped file was never recorded as done);
* sessions older than the episode age limit are counted with what was kept from them; their
  episodes are pruned, unless `--keep-old`;
* progress has a total: plain lines per 10 % on stderr when not a terminal, stdout the result's;
* `--git` reads the transcripts a repository holds: a `Stop` hook's `logs/chat.json` copy in its
  tree (every committed version of it) and an `entire/checkpoints/v1` branch, each session once,
  filed in the repository's project and tagged with its commit.

Transcripts follow Claude Code 2.1.x's JSONL transcript (see test_import_hostile.py); the committed
layouts follow the tools that write them: disler/claude-code-hooks-mastery `.claude/hooks/stop.py
--chat` (the transcript's entries as one JSON array, `json.dump(..., indent=2)`, in
`logs/chat.json`), and entireio/cli 0.4.x `cmd/entire/cli/checkpoint/checkpoint.go`
(`<id[:2]>/<id[2:]>/<n>/full.jsonl` + `metadata.json` with `session_id`, `agent`, `created_at`;
`agent/chunking.go`: chunks `full.jsonl.001`, …; the code commit's `Entire-Checkpoint:` trailer).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodePrune, EpisodeRecent, MetricsShow
from slmactor.testing import DaemonProcess, wait_for
from tests.integration.test_import_hostile import transcript

pytestmark = pytest.mark.timeout(300)


def importing(daemon: DaemonProcess, cwd: Path, *args: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                           "--no-autostart", "--json", "import", "sessions", *args],
                          cwd=cwd, env=daemon.env, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout), done.stderr


def run_ids(daemon: DaemonProcess, project: Path) -> set[str]:
    with daemon.client(project=project) as client:
        return {r["run_id"] for r in client.ask(MetricsShow(last=0))["runs"]}


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


def repo(path: Path, remote: str = "") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    if remote:
        git(path, "remote", "add", "origin", remote)
    return path


# ------------------------------------------------------------------------------ moved projects


def test_a_moved_project_is_found_by_its_name(daemon: DaemonProcess, tmp_path: Path) -> None:
    here = repo(tmp_path / "code" / "myrepo")
    history = tmp_path / "history"
    history.mkdir()
    (history / "s.jsonl").write_text(transcript("moved", "/Users/alice/old/myrepo"))
    (history / "sub.jsonl").write_text(transcript("moved-sub", "/Users/alice/old/myrepo/backend"))
    result, _ = importing(daemon, here, str(history))
    assert (result["new"], result["matched_elsewhere"], result["skipped_sessions"]) == (2, 2, {})
    assert wait_for(lambda: run_ids(daemon, here) if len(run_ids(daemon, here)) == 2 else None,
                    "both sessions in the project here") == {"import:claude:moved", "import:claude:moved-sub"}


def test_a_cloned_project_is_found_by_its_git_remote(daemon: DaemonProcess, tmp_path: Path) -> None:
    # The team's repository, cloned here under another name, holds a session whose directory
    # was somewhere else entirely: the clone's `origin` is what ties them.
    origin = repo(tmp_path / "upstream", "git@github.com:team/service.git")
    chat = origin / "logs" / "chat.json"
    chat.parent.mkdir()
    entries = [json.loads(line) for line in transcript("cloned", "/home/bob/work/svc").splitlines()]
    chat.write_text(json.dumps(entries, indent=2))
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "session")
    bare = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    git(bare, "remote", "set-url", "origin", "https://github.com/Team/service")
    checkout = repo(tmp_path / "checkout", "https://github.com/team/service.git")
    result, _ = importing(daemon, checkout, "--git", str(bare))
    assert (result["new"], result["matched_elsewhere"]) == (1, 1)
    assert wait_for(lambda: run_ids(daemon, checkout), "the run in the checkout") == {"import:claude:cloned"}


def test_an_unmatched_session_names_the_command_that_imports_it(daemon: DaemonProcess, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    history = tmp_path / "claude" / "-Users-alice-code-gone"
    history.mkdir(parents=True)
    for i in range(3):
        (history / f"{i}.jsonl").write_text(transcript(f"gone-{i}", "/Users/alice/code/gone"))
    first, _text = importing(daemon, elsewhere, str(tmp_path / "claude"))
    assert first["new"] == 0
    assert first["skipped_sessions"] == {"ran in a directory not here (give --project)": 3}
    [moved] = first["moved"]
    assert moved["cwd"] == "/Users/alice/code/gone" and moved["sessions"] == 3
    words = shlex.split(moved["command"])
    assert words[:3] == ["slmactor", "import", "sessions"] and words[-2:] == ["--project", "DIR"]
    # The command, with the user's checkout for DIR: every session, though the files were read.
    target = repo(tmp_path / "checkout" / "gone")
    again, _ = importing(daemon, elsewhere, *words[3:-1], str(target))
    assert again["new"] == 3 and again["unchanged_files"] == 0
    assert len(wait_for(lambda: run_ids(daemon, target) if len(run_ids(daemon, target)) == 3 else None,
                        "three runs")) == 3
    # The files are done now: a rerun reads nothing.
    assert importing(daemon, elsewhere, str(tmp_path / "claude"))[0]["unchanged_files"] == 3


def test_two_projects_named_like_it_make_it_ambiguous(daemon: DaemonProcess, tmp_path: Path) -> None:
    one = repo(tmp_path / "a" / "api")
    repo(tmp_path / "a" / "web")
    history = tmp_path / "history"
    history.mkdir()
    # Name order: the session that ran in the second `api` is read first.
    (history / "a.jsonl").write_text(transcript("mine", str(tmp_path / "b" / "api")))
    (history / "b.jsonl").write_text(transcript("amb", "/Users/alice/x/api"))
    (tmp_path / "b" / "api").mkdir(parents=True)  # a second project named `api` exists here
    result, _text = importing(daemon, one, str(history))
    assert result["skipped_sessions"] == {
        "ran in a directory not here; more than one project here is named like it": 1}
    [moved] = result["moved"]
    assert sorted(moved["candidates"]) == [str(tmp_path / "a" / "api"), str(tmp_path / "b" / "api")]


# ----------------------------------------------------------------------------------------- age


def test_old_sessions_are_reported_and_kept_on_request(daemon: DaemonProcess, tmp_path: Path) -> None:
    project = daemon.project
    history = tmp_path / "history"
    history.mkdir()
    (history / "old.jsonl").write_text(transcript("old", str(project), text="old", stamp="2024-01-0{i}T10:00:00Z"))
    (history / "new.jsonl").write_text(transcript("fresh", str(project), text="fresh", stamp="2026-11-2{i}T10:00:00Z"))
    result, _ = importing(daemon, tmp_path, str(history))
    old = result["old_sessions"]
    assert (old["sessions"], old["episodes_kept"]) == (1, 0) and old["lessons"] >= 1
    assert result["episode_age_limit_days"] == 180

    def episodes() -> set[str]:
        with daemon.client(project=project) as client:
            return {e["query"] for e in client.ask(EpisodeRecent(n=0))["episodes"]}

    wait_for(lambda: len(episodes()) == 2, "both episodes")
    with daemon.client(project=project) as client:
        client.ask(EpisodePrune())
    assert episodes() == {"fix the fresh test"}  # the old one's similar-work memory is gone

    (history / "older.jsonl").write_text(transcript("older", str(project), text="older", stamp="2023-05-0{i}T10:00:00Z"))
    kept, _ = importing(daemon, tmp_path, str(history), "--keep-old")
    assert (kept["old_sessions"]["sessions"], kept["old_sessions"]["episodes_kept"]) == (1, 1)
    wait_for(lambda: "fix the older test" in episodes(), "the kept episode")
    with daemon.client(project=project) as client:
        client.ask(EpisodePrune())
    assert episodes() == {"fix the fresh test", "fix the older test"}


# ------------------------------------------------------------------------------------ progress


def test_progress_is_plain_lines_on_stderr_with_a_total(daemon: DaemonProcess, tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    for i in range(20):
        (history / f"{i:02d}.jsonl").write_text(transcript(f"p{i}", str(daemon.project), calls=20))
    result, err = importing(daemon, tmp_path, str(history), "--dry-run")
    assert result["new"] == 20  # stdout is the JSON result alone (json.loads took all of it)
    lines = [line for line in err.splitlines() if line.startswith("importing sessions:")]
    assert 2 <= len(lines) <= 11, err
    assert lines[-1].startswith("importing sessions: 100% 20/20 files")
    shares = [int(line.split()[2].rstrip("%")) for line in lines]
    assert shares == sorted(shares) and len({s // 10 for s in shares}) == len(shares)


# ----------------------------------------------------------------------------------------- git


def _checkpoint(root: Path, cid: str, n: int, session: str, created: str, body: str, agent: str = "Claude Code",
                chunks: int = 1) -> None:
    folder = root / cid[:2] / cid[2:] / str(n)
    folder.mkdir(parents=True, exist_ok=True)
    lines = body.splitlines()
    per = -(-len(lines) // chunks)
    for i in range(chunks):
        name = "full.jsonl" if i == 0 else f"full.jsonl.{i:03d}"
        (folder / name).write_text("\n".join(lines[i * per:(i + 1) * per]))
    (folder / "metadata.json").write_text(json.dumps({
        "checkpoint_id": cid, "session_id": session, "strategy": "manual-commit", "created_at": created,
        "checkpoints_count": 1, "files_touched": [], "agent": agent}, indent=2))
    (folder / "prompt.txt").write_text("fix it")
    (root / cid[:2] / cid[2:] / "metadata.json").write_text(json.dumps({
        "checkpoint_id": cid, "strategy": "manual-commit", "checkpoints_count": 1, "files_touched": [],
        "sessions": [{"metadata": f"/{cid[:2]}/{cid[2:]}/{n}/metadata.json",
                      "transcript": f"/{cid[:2]}/{cid[2:]}/{n}/full.jsonl"}]}, indent=2))


def test_committed_transcripts_in_the_tree_and_on_a_checkpoint_branch(daemon: DaemonProcess,
                                                                      tmp_path: Path) -> None:
    team = repo(tmp_path / "team")
    chat = team / "logs" / "chat.json"
    chat.parent.mkdir()
    for i in range(2):  # the Stop hook overwrote it with each session; both were committed
        entries = [json.loads(line) for line in transcript(f"tree-{i}", "/home/dev/team").splitlines()]
        chat.write_text(json.dumps(entries, indent=2))
        (team / "README.md").write_text(f"v{i}")
        git(team, "add", "-A")
        git(team, "commit", "-qm", f"work {i}")
    # The checkpoint branch: one session in two checkpoints (read once, from the later), one
    # split into chunks, and the code commit that names a checkpoint in its trailer.
    git(team, "commit", "-q", "--allow-empty", "-m", "feature\n\nEntire-Checkpoint: a1b2c3d4e5f6")
    code_commit = git(team, "rev-parse", "HEAD").strip()
    git(team, "checkout", "-q", "--orphan", "entire/checkpoints/v1")
    git(team, "rm", "-rfq", ".")
    _checkpoint(team, "0a1b2c3d4e5f", 0, "cp-1", "2026-11-20T10:00:00Z",
                transcript("cp-1", "/home/dev/team", calls=1))
    _checkpoint(team, "a1b2c3d4e5f6", 0, "cp-1", "2026-11-21T10:00:00Z",
                transcript("cp-1", "/home/dev/team", calls=4, text="cp1"))
    _checkpoint(team, "a1b2c3d4e5f6", 1, "cp-2", "2026-11-21T11:00:00Z",
                transcript("cp-2", "/home/dev/team", calls=6), chunks=3)
    git(team, "add", "-A")
    git(team, "commit", "-qm", "Checkpoint")
    git(team, "checkout", "-q", "main")

    result, _ = importing(daemon, tmp_path, "--git", str(team))
    assert result["new"] == 4 and result["skipped_sessions"] == {}, result
    assert result["calls"] == 3 + 3 + 4 + 6
    ids = wait_for(lambda: run_ids(daemon, team) if len(run_ids(daemon, team)) == 4 else None, "four runs")
    assert ids == {"import:claude:tree-0", "import:claude:tree-1", "import:claude:cp-1", "import:claude:cp-2"}

    def tags() -> list[str]:
        with daemon.client(project=team) as client:
            episodes = {e["query"]: e for e in client.ask(EpisodeRecent(n=0))["episodes"]}
        return list(episodes.get("fix the cp1 test", {}).get("tags", []))

    assert f"commit:{code_commit[:12]}" in wait_for(tags, "cp-1's episode")
    # Each once: a second read finds every blob unchanged.
    again, _ = importing(daemon, tmp_path, "--git", str(team))
    assert (again["new"], again["unchanged_files"]) == (0, 4)
