"""Re-create the directory of real public agent transcripts that `bench/real_sessions.json` names.

The corpus is other people's data, so it is never committed: the manifest records, for each
source, the public repository, the exact commit, the ref it came from and the paths of the
transcript files, and this script puts each file at

    TARGET/<harness>/<owner>__<repo>/<path as in the repository>

by `git show <commit>:<path>`. A source may name a subdirectory `into` that its files land
under (`TARGET/<harness>/<owner>__<repo>/<into>/<path>`): Entire's v2 layout keeps each checkpoint
on its own ref (`refs/entire/checkpoints/<shard>/<id>`) whose tree starts at `0/full.jsonl`, so
without it two checkpoints of one repository would write the same file; `into` is the ref's
`<shard>/<id>`, which gives the v1 branch's layout. The repository comes from `--mirror-root` when a bare copy is
already on this machine (`<root>/<owner>+<repo>/repo`, the layout the team's fetch tool leaves),
otherwise it is cloned once over https into `--cache` (blobless and without checkout, then only
the named commit is fetched), which needs the network.

    python bench/fetch_real_sessions.py [--target DIR] [--split dev|heldout|heldout2|all]
        [--mirror-root DIR] [--cache DIR] [--json]

The target defaults to `$SLMACTOR_REAL_CORPUS` (else `~/.cache/slmactor-real/corpus`), the mirror
root to `$SLMACTOR_MIRROR_ROOT` (else none), the clone cache to `~/.cache/slmactor-real/git`.

Existing files with the right size are kept, so a second run copies nothing. Exit status 0 when
every named file was written, 1 when some could not be had (each one is listed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "real_sessions.json"
CACHE = Path.home() / ".cache" / "slmactor-real"


def default_corpus() -> Path:
    """Where the corpus lives unless told: `$SLMACTOR_REAL_CORPUS`, else the user's cache."""
    return Path(os.environ.get("SLMACTOR_REAL_CORPUS") or CACHE / "corpus")


def _git(gitdir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, check=False)


def _has_commit(gitdir: Path, commit: str) -> bool:
    return _git(gitdir, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def repo_gitdir(repo: str, commit: str, ref: str | None, mirror_root: Path | None, cache: Path) -> Path | None:
    """A git directory that holds `commit` of `repo`: a local mirror, else a clone in the cache."""
    if mirror_root is not None:
        local = mirror_root / repo.replace("/", "+", 1) / "repo"
        for candidate in (local / ".git", local):
            if (candidate / "objects").is_dir() and _has_commit(candidate, commit):
                return candidate
    gitdir = cache / (repo.replace("/", "__", 1) + ".git")
    if not gitdir.is_dir():
        url = f"https://github.com/{repo}.git"
        made = subprocess.run(["git", "clone", "--bare", "--filter=blob:none", "--quiet", url, str(gitdir)],
                              capture_output=True, check=False)
        if made.returncode != 0:
            return None
    if not _has_commit(gitdir, commit):
        wanted = [commit] + ([f"+{ref}:{ref}"] if ref else [])
        _git(gitdir, "fetch", "--quiet", "--filter=blob:none", "origin", *wanted)
    return gitdir if _has_commit(gitdir, commit) else None


def materialize(manifest: dict[str, Any], target: Path, split: str, mirror_root: Path | None,
                cache: Path) -> dict[str, Any]:
    written = kept = 0
    missing: list[str] = []
    for source in manifest["sources"]:
        if split != "all" and source["split"] != split:
            continue
        owner_repo = source["repo"].replace("/", "__", 1)
        gitdir = repo_gitdir(source["repo"], source["commit"], source.get("ref"), mirror_root, cache)
        base = target / source["harness"] / owner_repo
        if source.get("into"):
            base = base / source["into"]
        for path in source["paths"]:
            dest = base / path
            if gitdir is None:
                missing.append(f"{source['repo']}@{source['commit'][:12]}:{path} (repository not reachable)")
                continue
            size = _git(gitdir, "cat-file", "-s", f"{source['commit']}:{path}")
            if size.returncode != 0:
                missing.append(f"{source['repo']}@{source['commit'][:12]}:{path} (not in the commit)")
                continue
            if dest.is_file() and dest.stat().st_size == int(size.stdout):
                kept += 1
                continue
            blob = _git(gitdir, "show", f"{source['commit']}:{path}")
            if blob.returncode != 0:
                missing.append(f"{source['repo']}@{source['commit'][:12]}:{path} (blob unavailable)")
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".part")
            tmp.write_bytes(blob.stdout)
            tmp.replace(dest)
            written += 1
    return {"target": str(target), "split": split, "written": written, "kept": kept, "missing": missing}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--target", type=Path, default=default_corpus())
    parser.add_argument("--split", choices=("dev", "heldout", "heldout2", "all"), default="all")
    mirrors = os.environ.get("SLMACTOR_MIRROR_ROOT")
    parser.add_argument("--mirror-root", type=Path, default=Path(mirrors) if mirrors else None)
    parser.add_argument("--cache", type=Path, default=CACHE / "git")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    manifest = json.loads(args.manifest.read_text(encoding="utf-8"))
    mirror_root = args.mirror_root if args.mirror_root is not None and args.mirror_root.is_dir() else None
    summary = materialize(manifest, args.target, args.split, mirror_root, args.cache)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['written']} written, {summary['kept']} already there, "
              f"{len(summary['missing'])} missing -> {summary['target']}")
        for line in summary["missing"]:
            print("  missing:", line)
    return 1 if summary["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
