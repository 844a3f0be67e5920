"""Census of a directory of real agent transcripts: sessions, tool calls and failed calls per harness.

A census aid for the real-sessions corpus (`bench/fetch_real_sessions.py` builds it from
`bench/real_sessions.json`), not the project's transcript readers: each reader here is only good
enough to pair a call with its result and to apply the harness's own failure verdict.

* Claude Code JSONL (`~/.claude/projects/*/<uuid>.jsonl`, also Entire's `full.jsonl`): a
  `tool_use` block paired with the `tool_result` of the same id; failed when `is_error` is true.
* Codex CLI rollouts: `function_call`/`custom_tool_call` paired with their `*_output` by
  `call_id`; failed on `Process exited with code N` (N != 0), `"exit_code": N` in the JSON output
  form, or an `apply_patch` verification failure.
* Gemini CLI chats (`session-*.json`): every `toolCalls[]` entry; failed when `status` is
  `error` or `cancelled`, or a shell result reports `Exit Code: N` with N != 0.
* Cline task history (`api_conversation_history.json`): the XML tool tag of an assistant turn
  paired with the next `[tool ...] Result:`; failed on `The tool execution failed`, `[ERROR]`, or
  the user denying the operation.
* mini-swe-agent `*.traj.json`: an assistant action paired with the next user observation;
  failed on `<returncode>` != 0, a format error, an output-too-long warning or a timeout notice.
* SWE-agent `.traj`: `trajectory[].action/observation`; failed when the observation carries
  SWE-agent's or the shell's error text (SWE-agent 0.x records no exit code).
* OpenHands event lists (a saved trajectory, or the `history` of each instance of an evaluation
  output): an action paired with the observation whose `cause` is its id; failed on
  an `error` observation, `exit_code` != 0 or a result text starting `ERROR:`.
* aider `.aider.chat.history.md`: one session per `# aider chat started at`; calls are applied
  edits, run commands and the errors aider printed; failed on those error lines.

    python bench/real_census.py [ROOT] [--json]      (ROOT defaults as in fetch_real_sessions.py)

Streams: JSONL is read line by line; a JSON document is loaded one file at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Call:
    seq: int
    tool: str
    args: dict[str, Any]
    result: str
    failed: bool
    #: the harness's own status of the call where it records one (Gemini CLI: success/error/cancelled)
    status: str | None = None


@dataclass
class Session:
    harness: str
    path: Path
    session_id: str
    version: str | None = None
    calls: list[Call] = field(default_factory=list)


def _text(content: Any) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c.get("text", c.get("content", ""))) if isinstance(c, dict) else str(c)
                         for c in content)
    if isinstance(content, dict):
        return _text(content.get("text", content.get("content", json.dumps(content))))
    return "" if content is None else str(content)


def jsonl_records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


# --- Claude Code ------------------------------------------------------------------------------

def read_claude(path: Path) -> Iterator[Session]:
    session = Session("claude", path, path.stem)
    pending: dict[str, Call] = {}
    seq = 0
    for rec in jsonl_records(path):
        session.session_id = rec.get("sessionId", session.session_id)
        session.version = rec.get("version", session.version)
        content = (rec.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                call = Call(seq, str(block.get("name")), block.get("input") or {}, "", False)
                pending[str(block.get("id"))] = call
                seq += 1
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in pending:
                call = pending.pop(str(block.get("tool_use_id")))
                call.result = _text(block.get("content"))
                call.failed = bool(block.get("is_error"))
                session.calls.append(call)
    yield session


# --- Codex CLI --------------------------------------------------------------------------------

_CODEX_EXIT = re.compile(r"Process exited with code (-?\d+)|\"exit_code\"\s*:\s*(-?\d+)|^Exit code: (-?\d+)", re.MULTILINE)


def codex_failed(tool: str, output: str) -> bool:
    match = _CODEX_EXIT.search(output[:4000])
    if match:
        return int(next(g for g in match.groups() if g is not None)) != 0
    return tool == "apply_patch" and ("verification failed" in output or output.startswith("error"))


def read_codex(path: Path) -> Iterator[Session]:
    session = Session("codex", path, path.stem)
    pending: dict[str, Call] = {}
    seq = 0
    for rec in jsonl_records(path):
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if rec.get("type") == "session_meta":
            session.session_id = str(payload.get("id", session.session_id))
            session.version = payload.get("cli_version")
        elif kind in ("function_call", "custom_tool_call"):
            raw = str(payload.get("arguments", payload.get("input", "")))
            try:
                args = json.loads(raw) if kind == "function_call" else {"input": raw}
            except ValueError:
                args = {"raw": raw}
            pending[str(payload.get("call_id"))] = Call(seq, str(payload.get("name")),
                                                        args if isinstance(args, dict) else {"raw": args}, "", False)
            seq += 1
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = pending.pop(str(payload.get("call_id")), None)
            if call is None:
                continue
            out = payload.get("output")
            call.result = out if isinstance(out, str) else json.dumps(out)
            call.failed = codex_failed(call.tool, call.result)
            session.calls.append(call)
    yield session


# --- Gemini CLI -------------------------------------------------------------------------------

_GEMINI_EXIT = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)


def read_gemini(path: Path) -> Iterator[Session]:
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    session = Session("gemini", path, str(doc.get("sessionId", path.stem)))
    seq = 0
    for msg in doc.get("messages", []):
        for tc in msg.get("toolCalls") or []:
            response: dict[str, Any] = {}
            for part in tc.get("result") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    response = part["functionResponse"].get("response") or {}
            text = str(response.get("error") or response.get("output") or tc.get("resultDisplay") or "")
            exit_match = _GEMINI_EXIT.search(text)
            failed = tc.get("status") in ("error", "cancelled") or bool(exit_match and exit_match.group(1) != "0")
            status = tc.get("status")
            session.calls.append(Call(seq, str(tc.get("name")), tc.get("args") or {}, text, failed,
                                      status if isinstance(status, str) else None))
            seq += 1
    yield session


# --- Cline ------------------------------------------------------------------------------------

_CLINE_RESULT = re.compile(r"^\[(\w+)(?: for '([^']*)')?[^\]]*\] Result:")
_CLINE_TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "search_files",
                "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
                "access_mcp_resource", "ask_followup_question", "attempt_completion", "plan_mode_respond",
                "new_task", "load_mcp_documentation", "web_fetch")
_CLINE_FAIL = ("The tool execution failed with the following error", "[ERROR]", "The user denied this operation")


def _cline_args(text: str, tool: str) -> dict[str, Any]:
    body = re.search(rf"<{tool}>(.*?)(?:</{tool}>|$)", text, re.DOTALL)
    if not body:
        return {}
    return {k: v.strip() for k, v in re.findall(r"<(\w+)>(.*?)</\1>", body.group(1), re.DOTALL)}


def read_cline(path: Path) -> Iterator[Session]:
    history = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    session = Session("cline", path, path.parent.name)
    last: Call | None = None
    seq = 0
    for msg in history:
        blocks = msg.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks or []
        texts = [b.get("text", "") if b.get("type") == "text" else _text(b.get("content")) for b in blocks
                 if isinstance(b, dict)]
        if msg.get("role") == "assistant":
            joined = "\n".join(texts)
            found = [(joined.find(f"<{t}>"), t) for t in _CLINE_TOOLS if f"<{t}>" in joined]
            if found:
                tool = min(found)[1]
                last = Call(seq, tool, _cline_args(joined, tool), "", False)
                seq += 1
        elif last is not None:
            for i, text in enumerate(texts):
                if _CLINE_RESULT.match(text):
                    result = "\n".join([text, *texts[i + 1:i + 2]])
                    last.result = result
                    # the verdict opens the result block; a program's own "[ERROR]" log lines later are output
                    last.failed = any(block.lstrip().startswith(_CLINE_FAIL) or _CLINE_FAIL[0] in block[:300]
                                      for block in texts[i:i + 2])
                    session.calls.append(last)
                    last = None
                    break
    yield session


# --- mini-swe-agent ---------------------------------------------------------------------------

_RC = re.compile(r"<returncode>(-?\d+)</returncode>")
_MINI_FORMAT = ("EXACTLY ONE action", "EXACTLY ONE bash code block", "format error", "Please always provide")
_MINI_TOO_LONG = "The output of your last command was too long"
_MINI_TIMEOUT = ("timed out and has been killed", "The last command")


def mini_failed(text: str) -> bool:
    rc = _RC.search(text)
    if rc:
        return rc.group(1) != "0" or _MINI_TOO_LONG in text
    return any(m in text for m in _MINI_FORMAT) or all(m in text for m in _MINI_TIMEOUT)


def read_mini(path: Path) -> Iterator[Session]:
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    info = doc.get("info") or {}
    session = Session("mini-swe-agent", path, str(doc.get("instance_id", path.stem)), info.get("mini_version"))
    action: Call | None = None
    seq = 0
    for msg in doc.get("messages", []):
        content = _text(msg.get("content"))
        if msg.get("role") == "assistant":
            # mini-swe-agent's default action regex: exactly one ```bash block is an action
            blocks = re.findall(r"```bash\s*\n(.*?)\n```", content, re.DOTALL)
            action = Call(seq, "bash", {"command": blocks[0].strip() if len(blocks) == 1 else None,
                                        "blocks": len(blocks)}, "", False)
            seq += 1
        elif msg.get("role") in ("user", "tool") and action is not None:
            action.result = content
            action.failed = mini_failed(content)
            session.calls.append(action)
            action = None
    yield session


# --- SWE-agent --------------------------------------------------------------------------------

_SWE_FAIL = re.compile(r"Your proposed edit has introduced new syntax error|command not found|No such file or "
                       r"directory|Traceback \(most recent call last\)|^Error:|^Usage: |not found$|"
                       r"EXECUTION TIMED OUT|is not a valid", re.MULTILINE)


def read_swe(path: Path) -> Iterator[Session]:
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    session = Session("swe-agent", path, path.stem)
    for seq, step in enumerate(doc.get("trajectory", [])):
        action = str(step.get("action", "")).strip()
        observation = str(step.get("observation", ""))
        tool = action.split()[0] if action.split() else ""
        session.calls.append(Call(seq, tool, {"command": action}, observation, bool(_SWE_FAIL.search(observation))))
    yield session


# --- OpenHands --------------------------------------------------------------------------------

def read_openhands(path: Path) -> Iterator[Session]:
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "history" in doc[0]:
        # an evaluation output: one instance per element, its events under "history"
        for instance in doc:
            yield from _openhands_events(path, str(instance.get("instance_id", path.stem)), instance.get("history"))
    else:
        yield from _openhands_events(path, path.stem, doc)


def _openhands_events(path: Path, session_id: str, events: Any) -> Iterator[Session]:
    session = Session("openhands", path, session_id)
    actions: dict[Any, Call] = {}
    seq = 0
    for ev in events if isinstance(events, list) else []:
        if "action" in ev and ev.get("source") == "agent" and ev["action"] not in ("message", "finish", "think"):
            actions[ev.get("id")] = Call(seq, str(ev["action"]), ev.get("args") or {}, "", False)
            seq += 1
        elif "observation" in ev and ev.get("cause") in actions:
            call = actions.pop(ev.get("cause"))
            call.result = str(ev.get("content", ""))
            exit_code = ((ev.get("extras") or {}).get("metadata") or {}).get("exit_code")
            call.failed = ev["observation"] == "error" or (isinstance(exit_code, int) and exit_code not in (0, -1)) \
                or call.result.startswith("ERROR:")
            session.calls.append(call)
    yield session


# --- aider ------------------------------------------------------------------------------------

_AIDER_FAIL = re.compile(r"^> .*(failed to match|did not conform|Error|error:|Unable to|Failed|exceeded|Malformed)", re.MULTILINE)


def read_aider(path: Path) -> Iterator[Session]:
    text = path.read_text(encoding="utf-8", errors="replace")
    parts = re.split(r"^# aider chat started at ", text, flags=re.MULTILINE)
    for i, part in enumerate(parts[1:]):
        session = Session("aider", path, f"{path.parent.name}#{i}:{part[:19]}")
        seq = 0
        for line in part.splitlines():
            if line.startswith("> Applied edit to "):
                session.calls.append(Call(seq, "edit", {"file": line[18:].strip()}, line, False))
            elif line.startswith("> Running "):
                session.calls.append(Call(seq, "run", {"command": line[10:].strip()}, line, False))
            elif _AIDER_FAIL.match(line):
                session.calls.append(Call(seq, "aider", {}, line[2:], True))
            else:
                continue
            seq += 1
        yield session


READERS = {"claude": read_claude, "codex": read_codex, "gemini": read_gemini, "cline": read_cline,
           "mini-swe-agent": read_mini, "swe-agent": read_swe, "openhands": read_openhands, "aider": read_aider}


def _is_session_file(harness: str, path: Path) -> bool:
    name = path.name
    return {"claude": name.endswith(".jsonl"), "codex": name.endswith(".jsonl"),
            "gemini": name.endswith(".json") or name == "full.jsonl", "cline": name == "api_conversation_history.json",
            "mini-swe-agent": name.endswith(".traj.json"), "swe-agent": name.endswith(".traj"),
            "openhands": name.endswith(".json"), "aider": name.endswith(".aider.chat.history.md")}[harness]


def iter_sessions(root: Path) -> Iterator[tuple[str, Session]]:
    """(repository dir name, session) for every session file under root/<harness>/<owner>__<repo>/."""
    for harness, reader in READERS.items():
        base = root / harness
        if not base.is_dir():
            continue
        for repo_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for path in sorted(repo_dir.rglob("*")):
                if path.is_file() and _is_session_file(harness, path):
                    try:
                        for session in reader(path):
                            yield repo_dir.name, session
                    except (ValueError, OSError, AttributeError, TypeError):
                        continue


def census(root: Path) -> dict[str, dict[str, int]]:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for _repo, session in iter_sessions(root):
        row = rows[session.harness]
        row["sessions"] += 1
        row["calls"] += len(session.calls)
        row["failed"] += sum(c.failed for c in session.calls)
    return {h: dict(r) for h, r in sorted(rows.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Count sessions, tool calls and failed calls per harness.")
    default = Path(os.environ.get("SLMACTOR_REAL_CORPUS") or Path.home() / ".cache" / "slmactor-real" / "corpus")
    parser.add_argument("root", nargs="?", type=Path, default=default)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    table = census(args.root)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    print(f"{'harness':<16}{'sessions':>10}{'calls':>10}{'failed':>10}")
    for harness, row in table.items():
        print(f"{harness:<16}{row.get('sessions', 0):>10}{row.get('calls', 0):>10}{row.get('failed', 0):>10}")
    total = Counter[str]()
    for row in table.values():
        total.update(row)
    print(f"{'total':<16}{total['sessions']:>10}{total['calls']:>10}{total['failed']:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
