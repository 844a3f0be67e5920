"""Histories a team committed to git, as `import sessions --git REF_OR_DIR` reads them.

Two layouts are read, each session once:

* **Transcripts in the tree** — a `Stop` hook that copies the session's transcript into the
  repository on every turn (the common hooks template's `stop.py --chat` writes `logs/chat.json`:
  Claude Code's JSONL transcript as one JSON array, disler/claude-code-hooks-mastery
  `.claude/hooks/stop.py`). Every `.json`/`.jsonl` blob of the tree at the ref (default `HEAD`)
  that a harness room recognises is read, and so is every earlier version of it in the ref's
  history (`MAX_VERSIONS` at most per path: the file is overwritten with each new session).
* **Transcript branches** — the checkpoint layout of Entire's CLI (entireio/cli
  `cmd/entire/cli/checkpoint/checkpoint.go`, `agent/chunking.go`, seen at 0.4.x): a branch
  `entire/checkpoints/v1` (local, or a remote's) whose tree holds
  `<id[:2]>/<id[2:]>/<n>/{full.jsonl, metadata.json, prompt.txt, context.md}` per session of a
  checkpoint; a transcript over 50 MB is split into `full.jsonl`, `full.jsonl.001`, … (joined
  back here with newlines). `metadata.json` names the `session_id`, `agent` ("Claude Code",
  "Gemini CLI", "OpenCode", …) and `created_at`; a session in several checkpoints is read once,
  from its latest checkpoint. The code commit a checkpoint belongs to carries the trailer
  `Entire-Checkpoint: <id>`.

Each session is filed in the repository's project (its work tree; a bare repository has none, so
its sessions are matched like a moved project's, by the repository's remote) and its report is
tagged with the commit it came from (`commit:<sha12>`). Blobs are read through one
`git cat-file --batch` process, one at a time, each up to `files.MAX_FILE_BYTES`; a file's state
key is its blob id, so an unchanged blob is never read twice.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slmactor.cli.sessions.files import HEAD_BYTES, MAX_FILE_BYTES, Lines, TextLines

#: Earlier versions of one transcript path read from history.
MAX_VERSIONS = 200
#: Branches that hold transcripts in the checkpoint layout (local names, or after a remote's).
CHECKPOINT_BRANCHES = ("entire/checkpoints/v1",)
#: Longest metadata document read.
MAX_METADATA = 1 << 20


class GitError(Exception):
    """The ref or folder is no git repository or ref git can read."""


def git(repo: Path, *args: str, data: bool = False) -> str:
    """Output of `git -C repo args…` (GitError when git fails or is missing)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False,
                              timeout=600, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args[:2])}: {exc}") from None
    if done.returncode != 0:
        raise GitError(done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:][0]
                       if done.stderr.strip() else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", errors="surrogateescape")


class BlobReader:
    """One `git cat-file --batch` process; keeps the last blob read (a file's head, lines and
    data come from one read)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._proc: subprocess.Popen[bytes] | None = None
        self._last: tuple[str, bytes] = ("", b"")

    def read(self, sha: str) -> bytes:
        if self._last[0] == sha:
            return self._last[1]
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(["git", "-C", str(self.repo), "cat-file", "--batch"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) != 3:
            raise OSError(f"git cat-file: no object {sha}")
        size = int(header[2])
        keep = min(size, MAX_FILE_BYTES)
        data = proc.stdout.read(keep)
        rest = size - keep + 1  # the rest of the object, and its closing newline
        while rest > 0:
            rest -= len(proc.stdout.read(min(rest, 1 << 20)) or b"x" * rest)
        self._last = (sha, data)
        return data

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            self._proc.wait(timeout=30)
            self._proc = None


@dataclass(slots=True)
class Blob:
    """One transcript in a repository: one blob, or the chunks of one checkpoint transcript."""

    reader: BlobReader
    shas: tuple[str, ...]
    name: str
    label: str
    size: int
    project: str
    tags: tuple[str, ...] = ()
    remote: str = ""
    #: The command-line arguments that read it again (`--git SPEC`).
    origin: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"git:{'+'.join(self.shas)}"

    @property
    def stamp(self) -> int:
        return 0

    def data(self) -> bytes:
        if len(self.shas) == 1:
            return self.reader.read(self.shas[0])
        parts: list[bytes] = []  # a transcript split in chunks: joined back, up to the cap
        left = MAX_FILE_BYTES
        for sha in self.shas:
            chunk = self.reader.read(sha)[:left]
            parts.append(chunk)
            left -= len(chunk) + 1
            if left <= 0:
                break
        return b"\n".join(parts)

    def head(self) -> str:
        return self.data()[:HEAD_BYTES].decode("utf-8", errors="replace")

    def opener(self) -> Lines:
        text = self.data().decode("utf-8", errors="replace")
        return TextLines(self.label, text.splitlines(keepends=True))


def _repo(spec: str, cwd: Path) -> tuple[Path, str, Path | None]:
    """(repository to run git in, ref to read, its work tree or None)."""
    folder = Path(spec).expanduser()
    if folder.is_dir():
        repo, ref = folder, "HEAD"
    else:
        repo, ref = cwd, spec
    try:
        top = git(repo, "rev-parse", "--show-toplevel").strip()
    except GitError:
        top = ""
    if not top:
        git(repo, "rev-parse", "--git-dir")  # a bare repository, or GitError
    return (Path(top) if top else repo), ref, (Path(top) if top else None)


def _tree(repo: Path, commit: str) -> list[tuple[str, int, str]]:
    """(blob id, size, path) of every blob in `commit`'s tree."""
    out = git(repo, "ls-tree", "-r", "-z", "--long", commit)
    found = []
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit():
            found.append((parts[2], int(parts[3]), path))
    return found


def _remote(repo: Path) -> str:
    try:
        url = git(repo, "remote", "get-url", "origin").strip()
    except GitError:
        return ""
    return url


def _versions(repo: Path, ref: str, paths: list[str]) -> dict[str, list[tuple[str, str]]]:
    """path → [(blob id, commit)] of each version `ref`'s history gave it, newest first."""
    if not paths:
        return {}
    out = git(repo, "log", "--format=C%H", "--raw", "--no-abbrev", "--no-renames", "-z", ref, "--", *paths)
    found: dict[str, list[tuple[str, str]]] = {}
    commit = ""
    tokens = out.split("\0")
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("\n")
        if token.startswith("C") and len(token) >= 41 and ":" not in token[:41]:
            commit = token[1:41]
            token = token[41:].lstrip("\n")
        if token.startswith(":"):
            fields = token[1:].split()
            path = tokens[i + 1] if i + 1 < len(tokens) else ""
            i += 2
            if len(fields) >= 4 and fields[3] != "0" * 40 and path:
                versions = found.setdefault(path, [])
                if len(versions) < MAX_VERSIONS and all(v[0] != fields[3] for v in versions):
                    versions.append((fields[3], commit))
            continue
        i += 1
    return found


def _checkpoint_refs(repo: Path) -> list[str]:
    out = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes")
    return [ref for ref in out.splitlines() if ref.endswith(tuple(f"/{b}" for b in CHECKPOINT_BRANCHES))]


def _trailer_commits(repo: Path) -> dict[str, str]:
    """checkpoint id → the code commit whose message carries `Entire-Checkpoint: <id>`."""
    try:
        out = git(repo, "log", "--all", "--format=%H%x1f%(trailers:key=Entire-Checkpoint,valueonly,separator=%x2C)")
    except GitError:
        return {}
    found: dict[str, str] = {}
    for line in out.splitlines():
        commit, _, ids = line.partition("\x1f")
        for cid in ids.split(","):
            if cid.strip():
                found.setdefault(cid.strip(), commit)
    return found


def _checkpoints(repo: Path, reader: BlobReader, ref: str, project: str, remote: str,
                 trailers: dict[str, str], origin: tuple[str, ...]) -> list[Blob]:
    """Each session's latest transcript on a checkpoint branch."""
    sessions: dict[str, dict[str, list[tuple[str, int, str]]]] = {}
    for sha, size, path in _tree(repo, ref):
        parts = path.split("/")
        if len(parts) != 4 or not parts[2].isdigit():
            continue
        sessions.setdefault("/".join(parts[:3]), {}).setdefault(parts[3], []).append((sha, size, path))
    latest: dict[str, tuple[str, str, list[tuple[str, int, str]], str]] = {}
    for folder, files in sorted(sessions.items()):
        chunks = sorted(((name, entry) for name, entries in files.items() for entry in entries
                         if name == "full.jsonl" or (name.startswith("full.jsonl.") and name[11:].isdigit())),
                        key=lambda pair: 0 if pair[0] == "full.jsonl" else int(pair[0][11:]))
        if not chunks:
            continue
        meta: dict[str, Any] = {}
        for sha, size, _path in files.get("metadata.json", []):
            if size <= MAX_METADATA:
                try:
                    loaded = json.loads(reader.read(sha))
                except (ValueError, RecursionError, OSError):
                    loaded = {}
                meta = loaded if isinstance(loaded, dict) else {}
        session = str(meta.get("session_id") or folder)
        created = str(meta.get("created_at") or "")
        checkpoint = str(meta.get("checkpoint_id") or folder.replace("/", "")[:12])
        if session not in latest or created >= latest[session][0]:
            latest[session] = (created, checkpoint, [entry for _name, entry in chunks], folder)
    blobs = []
    for _session, (_created, checkpoint, pieces, folder) in sorted(latest.items()):
        commit = trailers.get(checkpoint, "")
        tags = (f"checkpoint:{checkpoint}", *((f"commit:{commit[:12]}",) if commit else ()))
        blobs.append(Blob(reader, tuple(sha for sha, _size, _path in pieces), "full.jsonl",
                          f"{repo}:{ref.removeprefix('refs/')}:{folder}/full.jsonl",
                          sum(size for _sha, size, _path in pieces), project, tags, remote, origin))
    return blobs


def items(spec: str, cwd: Path, rooms: list[Any] | None = None) -> tuple[list[Blob], Path]:
    """The transcripts `spec` (a repository folder, or a ref of the repository around `cwd`)
    holds, and the repository's project folder (its work tree, or the repository)."""
    from slmactor.cli.sessions.files import array_as_lines, looks_like_array

    repo, ref, tree = _repo(spec, cwd)
    commit = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    if not commit:
        raise GitError(f"{spec}: not a commit")
    project = str(tree) if tree is not None else ""
    remote = _remote(repo)
    origin = ("--git", str(Path(spec).expanduser().absolute()) if Path(spec).expanduser().is_dir() else spec)
    reader = BlobReader(repo)
    checkpoint_refs = [ref] if ref != "HEAD" and any(ref.endswith(b) for b in CHECKPOINT_BRANCHES) \
        else ([] if ref != "HEAD" else _checkpoint_refs(repo))
    found: list[Blob] = []
    if not (ref != "HEAD" and checkpoint_refs):
        # The tree: blobs some room recognises (or JSON arrays of objects), then their history.
        sessions: dict[str, tuple[str, int]] = {}
        for sha, size, path in _tree(repo, commit):
            name = os.path.basename(path)
            if not name.endswith((".json", ".jsonl")) or not 0 < size <= MAX_FILE_BYTES:
                continue
            head = reader.read(sha)[:HEAD_BYTES].decode("utf-8", errors="replace")
            ok = any(_sniffs(room, name, head) for room in rooms or ())
            if not ok and looks_like_array(name, head):
                lines, _why = array_as_lines(reader.read(sha))
                ok = any(_sniffs(room, name + "l", "".join(lines[:64])[:HEAD_BYTES]) for room in rooms or ())
            if ok:
                sessions[path] = (sha, size)
        versions = _versions(repo, commit, sorted(sessions))
        for path, (sha, size) in sorted(sessions.items()):
            history = versions.get(path) or [(sha, commit)]
            if all(v[0] != sha for v in history):
                history.insert(0, (sha, commit))
            for blob, at in history:
                blob_size = size if blob == sha else _size(repo, blob)
                found.append(Blob(reader, (blob,), os.path.basename(path), f"{repo}@{at[:12]}:{path}",
                                  blob_size, project, (f"commit:{at[:12]}",), remote, origin))
    if checkpoint_refs:
        trailers = _trailer_commits(repo)
        for branch in checkpoint_refs:
            found.extend(_checkpoints(repo, reader, branch, project, remote, trailers, origin))
    return found, (tree if tree is not None else repo)


def _sniffs(room: Any, name: str, head: str) -> bool:
    try:
        return bool(room.sniff_session(name, head))
    except Exception:  # noqa: BLE001 - a room that cannot tell does not claim it
        return False


def _size(repo: Path, sha: str) -> int:
    try:
        return int(git(repo, "cat-file", "-s", sha).strip() or 0)
    except (GitError, ValueError):
        return 0
