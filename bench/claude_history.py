"""A generated Claude Code history for `bench import_sessions`: `~/.claude/projects/<project>/
<session>.jsonl` transcripts as Claude Code 2.1.x writes them (one entry per line: `type`,
`uuid`, `parentUuid`, `sessionId`, `cwd`, `version`, `gitBranch`, `timestamp`; assistant entries
carry the Messages API response — `id`, `model`, `content` with `text` and `tool_use` blocks,
`usage`; user entries carry the typed prompt or the `tool_result` blocks, with Claude Code's
`toolUseResult` beside them; `file-history-snapshot` and `system` entries between), the shape of
tests/fixtures/sessions/claude (a real excerpt).

Sizes follow what real sessions hold (the issue's measured history: 1,000 sessions × ~100 calls,
618 MB): a `Read` result of a few KB (its `N\\t` gutter), `Bash` output of a few hundred bytes to
some KB, `Edit`s with their strings, `Grep`/`Glob` listings, ~8 % failed calls with Claude Code's
own error texts (`Exit code N`, `<tool_use_error>…`), a streamed response written as two
entries sharing a message id. Deterministic: `random.Random(seed)`.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

WORDS = ("config", "parser", "client", "server", "cache", "index", "report", "worker", "queue", "store",
         "token", "stream", "buffer", "handler", "schema", "router", "session", "metric", "loader", "job")
FAILURES = (
    ("Bash", ("Exit code 1\n============================= test session starts ==============================\n"
             "FAILED tests/test_{w}.py::test_{w}_roundtrip - AssertionError: assert 3 == 4\n"
             "========================= 1 failed, 41 passed in 2.31s =========================")),
    ("Bash", "Exit code 127\n/bin/bash: line 1: python: command not found"),
    ("Bash", "Exit code 2\nsrc/{w}.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("Edit", "<tool_use_error>String to replace not found in file.\nString:     return {w}_value</tool_use_error>"),
    ("Read", "<tool_use_error>File does not exist.</tool_use_error>"),
)


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for n in range(1, lines + 1):
        w = rng.choice(WORDS)
        out.append(f"{n}\t    {w}_value = compute_{w}({rng.choice(WORDS)}, limit={rng.randint(1, 999)})")
    return "\n".join(out)


def session(rng: random.Random, project: str, calls: int, day: int) -> tuple[str, list[str]]:
    """(session id, its transcript lines)."""
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    base = {"isSidechain": False, "userType": "external", "cwd": project, "sessionId": sid,
            "version": "2.1.50", "gitBranch": "main"}
    lines: list[str] = []
    parent = None
    second = 0

    def put(entry: dict[str, object]) -> None:
        nonlocal parent, second
        second += rng.randint(1, 9)
        mid = str(uuid.UUID(int=rng.getrandbits(128)))
        stamp = f"2026-11-{day:02d}T{10 + second // 3600 % 12:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
        lines.append(json.dumps({"parentUuid": parent, **base, **entry, "uuid": mid, "timestamp": stamp},
                                separators=(",", ":")))
        parent = mid

    w = rng.choice(WORDS)
    put({"type": "user", "message": {"role": "user", "content": f"Fix the failing {w} tests and make the "
                                                                 f"{rng.choice(WORDS)} handle empty input."}})
    for i in range(calls):
        tool = rng.choices(("Read", "Bash", "Edit", "Grep", "Glob", "Write"), (30, 30, 20, 10, 5, 5))[0]
        w = rng.choice(WORDS)
        path = f"{project}/src/{w}/{rng.choice(WORDS)}.py"
        inputs = {
            "Read": {"file_path": path},
            "Bash": {"command": rng.choice((f"pytest -q tests/test_{w}.py", f"npm run build -- --filter {w}",
                                            f"git diff --stat src/{w}", f"rg -n '{w}_value' src")),
                     "description": f"Run the {w} checks"},
            "Edit": {"file_path": path, "old_string": f"    return {w}_value", "new_string": f"    return {w}_value or 0"},
            "Grep": {"pattern": f"{w}_value", "path": f"{project}/src", "output_mode": "content"},
            "Glob": {"pattern": f"src/{w}/**/*.py"},
            "Write": {"file_path": path, "content": _code(rng, rng.randint(20, 80))},
        }[tool]
        use = f"toolu_{rng.getrandbits(64):016x}"
        mid = f"msg_{rng.getrandbits(64):016x}"
        usage = {"input_tokens": rng.randint(1, 50), "cache_creation_input_tokens": rng.randint(0, 4000),
                 "cache_read_input_tokens": rng.randint(5000, 60000), "output_tokens": rng.randint(20, 900)}
        message = {"model": "claude-sonnet-4-5-20250929", "id": mid, "type": "message", "role": "assistant",
                   "stop_reason": None, "usage": usage}
        put({"type": "assistant", "message": {**message, "content": [
            {"type": "text", "text": f"Let me look at the {w} {rng.choice(WORDS)} first."}]}, "requestId": mid})
        put({"type": "assistant", "message": {**message, "content": [
            {"type": "tool_use", "id": use, "name": tool, "input": inputs}]}, "requestId": mid})
        failed = rng.random() < 0.08
        if failed:
            choices = [f for f in FAILURES if f[0] == tool] or [FAILURES[0]]
            text = rng.choice(choices)[1].format(w=w)
            result: dict[str, object] = {"type": "tool_result", "tool_use_id": use, "is_error": True, "content": text}
            extra: object = f"Error: {text}"
        else:
            text = {
                "Read": _code(rng, rng.randint(40, 160)),
                "Bash": "\n".join(f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)} PASSED"
                                  for _ in range(rng.randint(5, 60))),
                "Edit": f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet:\n"
                        + _code(rng, 12),
                "Grep": "\n".join(f"{project}/src/{rng.choice(WORDS)}.py:{rng.randint(1, 400)}:    {w}_value = 1"
                                  for _ in range(rng.randint(3, 40))),
                "Glob": "\n".join(f"{project}/src/{w}/{rng.choice(WORDS)}.py" for _ in range(rng.randint(2, 30))),
                "Write": f"File created successfully at: {path}",
            }[tool]
            result = {"type": "tool_result", "tool_use_id": use, "content": text}
            extra = {"stdout": text, "stderr": "", "interrupted": False} if tool == "Bash" else {"type": "text"}
        put({"type": "user", "message": {"role": "user", "content": [result]}, "toolUseResult": extra})
        if i % 25 == 0:
            lines.append(json.dumps({"type": "file-history-snapshot", "messageId": str(parent),
                                     "snapshot": {"trackedFileBackups": {}, "timestamp": "2026-11-01T00:00:00Z"},
                                     "isSnapshotUpdate": False}, separators=(",", ":")))
    return sid, lines


def generate(root: Path, sessions: int, calls: int = 100, *, seed: int = 41, project: str = "") -> tuple[int, int]:
    """Write `sessions` transcripts (about `calls` calls each) under `root/<project folder>/`;
    (calls written, bytes written)."""
    rng = random.Random(seed)
    project = project or "/home/dev/code/service"
    folder = root / project.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    total_calls = total_bytes = 0
    for i in range(sessions):
        n = max(1, int(rng.gauss(calls, calls / 5)))
        sid, lines = session(rng, project, n, 1 + i % 28)
        data = "\n".join(lines) + "\n"
        (folder / f"{sid}.jsonl").write_text(data)
        total_calls += n
        total_bytes += len(data.encode())
    return total_calls, total_bytes
