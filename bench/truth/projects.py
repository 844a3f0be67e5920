"""Which real project histories the truth measurement imports, their split, transcripts and trees.

The rules (fixed before any line was labelled; `tests/fixtures/truth/README.md` states them too):

* **A project** is one (harness, repository) pair of `bench/real_sessions.json` whose harness is an
  interactive coding agent that `slmactor import sessions` reads and whose sessions all ran in that
  repository: Claude Code, Codex CLI, Gemini CLI, Cline. Benchmark trajectory sets (mini-swe-agent,
  SWE-agent, OpenHands evaluation outputs: one instance per foreign repository) and aider (not
  importable) are not project histories.
* **The split** is the manifest's own, by repository, fixed before the classifier was tuned
  (`sha256(salt:repo)`, see the manifest's `split`): `heldout` is HELD-OUT, never tuned on by
  anyone; `dev` and `heldout2` (tuned on since its one measurement) are DEV.
* **The project tree** is the repository's tree at the commit the history reached: for
  transcripts committed inside the project's own tree, the manifest's commit; for Entire's
  checkpoint refs (`entire/checkpoints/...`), the newest commit (committer date) on any ref whose
  message carries an `Entire-Checkpoint: <id>` trailer of one of the project's checkpoints; with
  none, the mirror's `HEAD`. `projects.json` freezes the commit so every run reads the same tree.

    python -m bench.truth.projects [--write] [--mirror-root DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.fetch_real_sessions import MANIFEST

HARNESSES = ("claude", "codex", "gemini", "cline")
FIXTURE_DIR = Path(__file__).resolve().parent.parent.parent / "tests" / "fixtures" / "truth"
PROJECTS = FIXTURE_DIR / "projects.json"
SPLIT_OF = {"dev": "dev", "heldout2": "dev", "heldout": "heldout"}
_TRAILER = re.compile(r"^Entire-Checkpoint:\s*(\S+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Project:
    """One project history: its harness, repository, split, manifest sources and frozen tree."""

    harness: str
    repo: str
    split: str
    sources: tuple[dict[str, Any], ...]
    tree_commit: str = ""
    tree_how: str = ""

    @property
    def key(self) -> str:
        return f"{self.harness}/{self.repo}"

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "__", 1)

    def files(self, corpus: Path) -> list[Path]:
        """The transcript files of the project under the corpus, in the manifest's order."""
        base = corpus / self.harness / self.folder
        out: list[Path] = []
        for source in self.sources:
            root = base / source["into"] if source.get("into") else base
            out.extend(root / p for p in source["paths"])
        return out


def mirror_gitdir(mirror_root: Path | None, repo: str) -> Path | None:
    if mirror_root is None:
        return None
    local = mirror_root / repo.replace("/", "+", 1) / "repo"
    for candidate in (local / ".git", local):
        if (candidate / "objects").is_dir():
            return candidate
    return None


def _git(gitdir: Path, *args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else ""


def select(manifest: dict[str, Any]) -> list[Project]:
    """Every (harness, repository) pair of an interactive harness, with its split (the rules above)."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for source in manifest["sources"]:
        if source["harness"] in HARNESSES:
            grouped[(source["harness"], source["repo"])].append(source)
    out = []
    for (harness, repo), sources in sorted(grouped.items()):
        splits = {SPLIT_OF[s["split"]] for s in sources}
        if len(splits) != 1:
            raise ValueError(f"{harness}/{repo}: sources on both sides of the split")
        out.append(Project(harness, repo, splits.pop(), tuple(sources)))
    return out


def _checkpoint_ids(source: dict[str, Any]) -> set[str]:
    """The Entire checkpoint ids a source's files belong to (v1 `<shard>/<id>/<n>/full.jsonl`,
    whose id is shard + rest; v2 refs `refs/entire/checkpoints/<shard>/<id>`, whose id is the rest)."""
    ids: set[str] = set()
    into = source.get("into")
    if into:
        shard, rest = into.strip("/").split("/", 1)
        ids |= {rest, shard + rest}
    for path in source["paths"]:
        parts = path.split("/")
        if len(parts) >= 3:
            ids |= {parts[0] + parts[1], parts[1]}
    return ids


def find_tree_commit(project: Project, mirror_root: Path | None) -> tuple[str, str]:
    """(commit, how it was chosen) of the project's tree, by the rule in the module docstring."""
    gitdir = mirror_gitdir(mirror_root, project.repo)
    if gitdir is None:
        return "", "no mirror"
    refs = {s.get("ref") or "" for s in project.sources}
    if not any("entire/checkpoints" in r for r in refs):
        commits = {s["commit"] for s in project.sources}
        if len(commits) == 1:
            return commits.pop(), "the manifest commit (transcripts in the project's tree)"
    wanted: set[str] = set()
    for source in project.sources:
        wanted |= _checkpoint_ids(source)
    best: tuple[int, str] | None = None
    log = _git(gitdir, "log", "--all", "--format=%H %ct%n%B%x00", "--grep=Entire-Checkpoint:")
    for entry in log.split("\x00"):
        entry = entry.strip()
        if not entry:
            continue
        head, _, body = entry.partition("\n")
        commit, _, when = head.partition(" ")
        if (any(m in wanted for m in _TRAILER.findall(body)) and when.isdigit()
                and (best is None or int(when) > best[0])):
            best = (int(when), commit)
    if best is not None:
        return best[1], "the newest commit carrying one of the project's Entire-Checkpoint trailers"
    head = _git(gitdir, "rev-parse", "HEAD").strip()
    return head, "the mirror's HEAD (no commit names the project's checkpoints)"


def load_projects(path: Path = PROJECTS) -> list[Project]:
    """The frozen project list (`projects.json`), sources taken from the manifest."""
    frozen = json.loads(path.read_text(encoding="utf-8"))
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    by_key = {p.key: p for p in select(manifest)}
    out = []
    for row in frozen["projects"]:
        base = by_key[f"{row['harness']}/{row['repo']}"]
        out.append(Project(base.harness, base.repo, row["split"], base.sources, row["tree_commit"], row["tree_how"]))
    return out


def materialize_tree(project: Project, mirror_root: Path | None, dest: Path) -> bool:
    """Write the project's tree at its frozen commit into `dest` (a fresh directory); False when
    the mirror or the commit is not on this machine (the project dir is then left empty)."""
    dest.mkdir(parents=True, exist_ok=True)
    gitdir = mirror_gitdir(mirror_root, project.repo)
    if gitdir is None or not project.tree_commit:
        return False
    listing = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", project.tree_commit],
                             capture_output=True, check=False)
    if listing.returncode != 0:
        return False
    blobs: list[tuple[str, str, str]] = []  # (mode, sha, path)
    for entry in listing.stdout.decode("utf-8", "replace").split("\x00"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and ".." not in path.split("/"):
            blobs.append((parts[0], parts[2], path))
    # A mirror may lack its largest blobs: `cat-file --batch` says "missing" and the file is skipped.
    with subprocess.Popen(["git", "--git-dir", str(gitdir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        feeder = threading.Thread(target=_feed, args=(proc.stdin, [sha for _m, sha, _p in blobs]), daemon=True)
        feeder.start()
        for mode, _sha, path in blobs:
            header = proc.stdout.readline().split()
            if len(header) != 3:
                continue
            body = proc.stdout.read(int(header[2]) + 1)[:-1]
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                continue  # symlinks are left out: they may point anywhere
            target.write_bytes(body)
        feeder.join()
    return True


def _feed(stdin: Any, shas: list[str]) -> None:
    for sha in shas:
        stdin.write(sha.encode() + b"\n")
    stdin.close()


def tree_paths(project: Project, mirror_root: Path | None) -> set[str] | None:
    """Every file path (and every directory of one) of the project's tree, relative to its root."""
    gitdir = mirror_gitdir(mirror_root, project.repo)
    if gitdir is None or not project.tree_commit:
        return None
    files = _git(gitdir, "ls-tree", "-r", "--name-only", "-z", project.tree_commit).split("\x00")
    out: set[str] = set()
    for f in files:
        if not f:
            continue
        out.add(f)
        parts = f.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return out


def default_mirror_root() -> Path | None:
    """`$SLMACTOR_MIRROR_ROOT` (the team's fetch tool's layout: `<root>/<owner>+<repo>/repo`), else none."""
    found = os.environ.get("SLMACTOR_MIRROR_ROOT")
    return Path(found) if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List (and with --write freeze) the truth set's projects.")
    parser.add_argument("--write", action="store_true", help=f"write {PROJECTS}")
    parser.add_argument("--mirror-root", type=Path, default=default_mirror_root())
    args = parser.parse_args(argv)
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    rows = []
    for project in select(manifest):
        commit, how = find_tree_commit(project, args.mirror_root)
        files = sum(len(s["paths"]) for s in project.sources)
        rows.append({"harness": project.harness, "repo": project.repo, "split": project.split,
                     "files": files, "tree_commit": commit, "tree_how": how})
        print(f"{project.split:<8}{project.key:<60}{files:>5}  {commit[:12]}  {how}")
    if args.write:
        PROJECTS.parent.mkdir(parents=True, exist_ok=True)
        doc = {"about": "The truth measurement's projects (bench/truth/projects.py states the rules); "
                        "transcripts are the bench/real_sessions.json sources of each pair.",
               "projects": rows}
        PROJECTS.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
