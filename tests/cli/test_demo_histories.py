"""`slmactor demo`'s histories and every line it prints about memory, checked against them.

The histories (`slmactor/demo_data/histories/`) are what `tests/fixtures/demo_histories/write.py`
writes. The claims are read from `slmactor --json demo` (its printed lines and the records behind
them) and checked against the history files as parsed here, by this test's own reading of each
format — not by the harness rooms the demo reads them with: every session's calls and failures,
each failed call and the call that got the session past it, "again" (an earlier failure of the
project said the same), what memory rewrote (the very call that got past it), what it told
(names the fix's words, or is said not to), the outcomes it quotes ("worked (N of N times)": the
earlier sessions that made that fix), and the totals of the verdict.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HISTORIES = ROOT / "slmactor" / "demo_data" / "histories"


def _generator() -> Any:
    """`tests/fixtures/demo_histories/write.py`, loaded from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("demo_histories_write",
                                                  ROOT / "tests" / "fixtures" / "demo_histories" / "write.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

FAMILY = {"Bash": "shell", "exec_command": "shell", "run_shell_command": "shell", "Read": "read",
          "read_file": "read", "Edit": "edit"}
READ_TOOLS = {"Read", "read_file"}


def test_the_histories_are_what_the_generator_writes(tmp_path: Path) -> None:
    _generator().main(["write.py", str(tmp_path)])
    written = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    committed = {p.relative_to(HISTORIES).as_posix(): p.read_bytes() for p in HISTORIES.rglob("*")
                 if p.is_file() and p.name != "README.md"}
    assert written == committed


# ------------------------------------------------------------------- this test's own reading

def _claude(path: Path) -> tuple[str, list[dict[str, Any]]]:
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    calls: list[dict[str, Any]] = []
    session = ""
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        session = session or entry["sessionId"]
        content = entry["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_use":
                uses[block["id"]] = (block["name"], block["input"])
            elif block["type"] == "tool_result":
                tool, args = uses[block["tool_use_id"]]
                calls.append({"tool": tool, "args": args, "ok": not block.get("is_error"),
                              "error": block["content"] if block.get("is_error") else ""})
    return session, calls


def _codex(path: Path) -> tuple[str, list[dict[str, Any]]]:
    session, pending, calls = "", {}, []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        payload = entry["payload"]
        if entry["type"] == "session_meta":
            session = payload["id"]
        elif payload.get("type") == "function_call":
            pending[payload["call_id"]] = json.loads(payload["arguments"])
        elif payload.get("type") == "function_call_output":
            args = pending.pop(payload["call_id"])
            ok = "Process exited with code 0\n" in payload["output"]
            calls.append({"tool": "exec_command", "args": args, "ok": ok,
                          "error": "" if ok else payload["output"]})
    return session, calls


def _gemini(path: Path) -> tuple[str, list[dict[str, Any]]]:
    session, calls = "", []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        session = session or entry.get("sessionId", "")
        for call in entry.get("toolCalls", []):
            response = call["result"][0]["functionResponse"]["response"]
            text = response.get("error") or response.get("output", "")
            code = re.search(r"Exit Code: (\d+)", text)
            ok = call["status"] == "success" and not (code and code.group(1) != "0")
            calls.append({"tool": call["name"], "args": call["args"], "ok": ok, "error": "" if ok else text})
    return session, calls


def sessions() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for path in HISTORIES.rglob("*.jsonl"):
        reader = {"claude": _claude, "codex": _codex, "gemini": _gemini}[path.relative_to(HISTORIES).parts[0]]
        session, calls = reader(path)
        out[session] = calls
    return out


def _command(args: dict[str, Any]) -> str:
    return str(args.get("command") or args.get("cmd") or "")


def _target(call: dict[str, Any]) -> str:
    command = _command(call["args"])
    if command:
        return command.split()[0].rsplit("/", 1)[-1] if "pytest" not in command else "pytest"
    path = str(call["args"].get("file_path", ""))
    return path.rsplit("/", 1)[-1]


def _fix_of(calls: list[dict[str, Any]], index: int) -> int | None:
    """The first later call that did not fail, of the same family, on the same target."""
    failed = calls[index]
    for j in range(index + 1, len(calls)):
        c = calls[j]
        if c["ok"] and FAMILY[c["tool"]] == FAMILY[failed["tool"]] and _target(c) == _target(failed):
            return j
    return None


def _head(error: str) -> str:
    """The first line of an error that is the program's, past each harness's wrapper."""
    for line in error.replace("<tool_use_error>", "").splitlines():
        line = line.strip().removeprefix("Output:").strip()
        if line and not line.startswith(("Exit code", "Exit Code", "Chunk ID", "Wall time",
                                         "Process exited", "Original token", "<untrusted_context>")):
            return line
    return ""


def _same(recorded: dict[str, Any] | None, call: dict[str, Any]) -> bool:
    """A call as the demo recorded it (as the harness's room read it: Codex's `exec_command` is
    the shell call its hooks name `Bash`) is this call of the file."""
    if recorded is None:
        return False
    if FAMILY[call["tool"]] == "shell":
        return _command(recorded["args"]) == _command(call["args"]) and all(
            recorded["args"].get(k) == v for k, v in call["args"].items()
            if k not in ("command", "cmd", "yield_time_ms", "description"))
    # The replay keeps a call's arguments in the shared words (`logic/failures/call.SHARED`).
    shared = {SHARED_WORD.get(k, k): v for k, v in call["args"].items()}
    return recorded == {"tool": call["tool"], "args": shared}


#: The harnesses' keys this test's histories use → the shared word each carries.
SHARED_WORD = {"file_path": "path", "absolute_path": "path", "old_string": "old_str",
               "new_string": "new_str"}


def _fix_words(failed: dict[str, Any], fix: dict[str, Any]) -> set[str]:
    """What a fix changed, in words a text naming it must contain."""
    before, after = _command(failed["args"]), _command(fix["args"])
    words: set[str] = set()
    if before and after and before != after:
        words |= set(after.split()) - set(before.split())
    for key, value in fix["args"].items():
        if key in ("command", "cmd", "description", "old_string", "new_string"):
            continue
        if failed["args"].get(key) != value:
            words.add(str(value) if key == "file_path" else key)
    if not words and failed["args"].get("old_string") != fix["args"].get("old_string"):
        words.add("Read" if failed["tool"] == "Edit" else "read_file")
    return words


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLMACTOR_", "XDG_"))}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, "-m", "slmactor", "--json", "demo"], check=False, env=env,
                          cwd=home, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_the_sessions_and_the_import_are_counted_as_the_files_hold_them(demo: dict[str, Any]) -> None:
    raw = sessions()
    shown = {s["session"]: (s["calls"], s["failed"]) for s in demo["sessions"]}
    assert shown == {sid: (len(c), sum(not x["ok"] for x in c)) for sid, c in raw.items()}
    assert demo["imported"] == {"sessions": len(raw), "calls": sum(len(c) for c in raw.values()),
                                "failed_calls": sum(not x["ok"] for c in raw.values() for x in c)}
    for sid, (calls, failed) in shown.items():
        assert any(f"session {sid[:8]}  {calls} calls, {failed} failed" in line for line in demo["lines"])


def test_every_failure_memory_answered_is_true_of_the_histories(demo: dict[str, Any]) -> None:
    from slmactor.cli.loop.demo import failure_lines  # noqa: F401  (the lines are checked below)

    raw = sessions()
    order = [s["session"] for s in sorted(demo["sessions"], key=lambda s: s["started"])]
    seen: list[tuple[str, str, str]] = []  # (session, family, error head) of failures so far
    fixes_before: list[tuple[str, str, frozenset[str]]] = []  # (session, error head, fix words)
    failures = demo["replay"]["failures"]
    assert len(failures) == sum(not x["ok"] for c in raw.values() for x in c)
    by_position = {(f["session"], f["index"]): f for f in failures}
    for sid in order:
        calls = raw[sid]
        for i, call in enumerate(calls):
            if call["ok"]:
                continue
            f = by_position[(sid, i)]
            head = _head(call["error"])
            assert _same(f["call"], call), (f["call"], call)
            again = any(fam == FAMILY[call["tool"]] and h == head for _, fam, h in seen)
            assert f["repeat"] is again, (f, head)
            j = _fix_of(calls, i)
            assert f["fix_index"] == j
            fix = calls[j] if j is not None else None
            if fix is not None:
                assert _same(f["fix"], fix), (f["fix"], fix)
            if f["rewritten"] is not None and f["right"]:
                assert fix is not None and _same(f["rewritten"], fix), (f["rewritten"], fix)
            if f["answer"] == "advice" and fix is not None:
                words = _fix_words(call, fix)
                named = all(w in f["told"] for w in words)
                assert f["right"] is named, (words, f["told"])
            for n, m in re.findall(r"worked \((\d+) of (\d+) times?\)", f["told"]):
                earlier = sum(1 for s, h, w in fixes_before if s != sid and h == head
                              and fix is not None and w == frozenset(_fix_words(call, fix)))
                assert int(n) == int(m) == earlier, (f["told"], earlier)
            seen.append((sid, FAMILY[call["tool"]], head))
            if fix is not None:
                fixes_before.append((sid, head, frozenset(_fix_words(call, fix))))


def test_the_printed_lines_and_the_verdict_say_what_the_records_say(demo: dict[str, Any]) -> None:
    from slmactor.cli.loop.demo import failure_lines
    from slmactor.cli.loop.histories import call_of
    from slmactor.logic.loop.histories.engine import Failure

    lines = demo["lines"]
    failures = demo["replay"]["failures"]
    for f in failures:
        call = call_of(f["call"]["tool"], f["call"]["args"])
        record = Failure(f["harness"], f["project"], f["session"], f["index"], call, f["error"],
                         f["class"], f["fingerprint"], f["repeat"], f["fix_index"],
                         call_of(f["fix"]["tool"], f["fix"]["args"]) if f["fix"] else None,
                         f["distinguishing"], f["call_derivable"], f["memory_derivable"], f["answer"],
                         f["right"], f["wrong"], f["told"],
                         call_of(f["rewritten"]["tool"], f["rewritten"]["args"]) if f["rewritten"] else None)
        for line in failure_lines(record):
            assert line in lines, line
    before = sum(f["right"] and f["answer"] == "before the call" for f in failures)
    repaired = sum(f["right"] and f["answer"] == "repaired on the failure" for f in failures)
    told = sum(f["right"] and f["answer"] == "advice" for f in failures)
    wrong = sum(f["wrong"] for f in failures)
    verdict = [line for line in lines if line.startswith("Verdict: ")]
    assert len(verdict) == 1
    assert (f"{before} failed call(s) rewritten before they ran, {repaired} repaired without a model "
            f"turn, {told} told the fix; {wrong} wrong rewrite(s)") in verdict[0]
    assert before > 0 and wrong == 0 and verdict[0].startswith("Verdict: memory would have helped")
    derivable = [f for f in failures if f["derivable"]]
    right = sum(f["right"] for f in derivable)
    assert f"Memory got {round(100 * right / len(derivable))}% of derivable repeats right ({right} of " \
           f"{len(derivable)})" in "\n".join(lines)
