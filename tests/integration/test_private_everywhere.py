"""What a user keeps out of memory stays out, through every door, against a real daemon:
`<private>…</private>` text and a path the project excludes (`.slmcode/exclude`) sent through the
hooks of every harness (their own payload formats: tests/fixtures/hooks; OpenCode's as its room
documents it), `import sessions` of a
Claude Code transcript, the MCP server (the SDK's own client) and the Python client appear in no
file under the daemon's runtime dir, user store or project store, in no reply, and in no hook
answer a model reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from slmactor.protocol.messages import (
    EpisodeRecent,
    EvolveRules,
    FactList,
    LessonsRender,
    MemoryBlock,
    MemoryDistill,
    MemoryLines,
    MetricsShow,
    RunFinish,
)
from slmactor.testing import DaemonProcess, wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PRIV = "PRIVMARK-5d1e"
EXCL = "EXCLMARK-c0ffee"
SPAN = f" <private>{PRIV} hunter2 is my password</private>"
SECRET_FILE = "secrets/key.txt"
TEXT_KEYS = ("command", "prompt", "text", "description")
OUTPUT_KEYS = ("output", "result", "stdout", "stderr", "error", "content", "llmcontent",
               "response")
FORMATS = ("claude", "codex", "gemini", "cline", "openhands", "opencode")


def _inject(value: Any, how: str, key: str = "") -> Any:
    """`value` with a private span (`how="private"`), or the excluded file named in commands and
    its content in outputs (`how="excluded"`), in the strings a harness fills with text."""
    if isinstance(value, dict):
        return {k: _inject(v, how, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_inject(v, how, key) for v in value]
    if not isinstance(value, str):
        return value
    low = key.lower()
    if how == "private" and (low in TEXT_KEYS or any(k in low for k in OUTPUT_KEYS)):
        return value + SPAN
    if how == "excluded" and low in ("command", "commands"):
        return f"cat {SECRET_FILE}; {value}"
    if how == "excluded" and low in ("path", "file_path", "filepath", "absolute_path"):
        return SECRET_FILE
    if how == "excluded-output" and any(k in low for k in OUTPUT_KEYS):
        return f"{value} {EXCL}"
    return value


def _on_excluded_file(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The call made on the excluded file (its command or path names it) with the file's
    content in its output; None for a payload that names no command or path."""
    named = _inject(payload, "excluded")
    if named == payload:
        return None
    return _inject(named, "excluded-output")  # type: ignore[no-any-return]


def _order(path: Path) -> tuple[int, str]:
    name = path.stem
    first = ("SessionStart", "TaskStart", "UserPromptSubmit", "BeforeAgent")
    last = ("Stop", "SessionEnd", "TaskComplete", "TaskCancel", "SubagentStop")
    return (0 if name.startswith(first) else 2 if name.startswith(last) else 1, name)


def _hook(daemon: DaemonProcess, fmt: str, event: str, payload: dict[str, Any]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "slmactor", "hook", fmt, event, "--runtime-dir",
         str(daemon.runtime_dir), "--project", str(daemon.project)],
        input=json.dumps(payload), capture_output=True, text=True, timeout=60, check=False,
        env=daemon.env, cwd=daemon.project)
    assert done.returncode == 0
    return done.stdout


def _opencode(project: Path) -> list[dict[str, Any]]:
    """OpenCode's plugin events as slmactor's hook reads them (the payload its room documents,
    from OpenCode's `packages/plugin/src/index.ts`: `tool.execute.after`, `session.idle`)."""
    call = {"hook_event_name": "tool.execute.after", "session_id": "ses_priv", "cwd": str(project),
            "tool_name": "bash", "tool_input": {"command": "npm test", "description": "tests"},
            "tool_use_id": "call_1", "tool_response": {"output": "1 failing", "title": "npm test",
                                                        "metadata": {"exit": 1}}}
    idle = {"hook_event_name": "session.idle", "session_id": "ses_priv", "cwd": str(project)}
    return [{"event": "tool.execute.after", "payload": call},
            {"event": "session.idle", "payload": idle}]


def _fixtures(fmt: str, project: Path) -> list[dict[str, Any]]:
    if fmt == "opencode":
        return _opencode(project)
    return [json.loads(path.read_text().replace("$PROJECT", str(project)))
            for path in sorted((FIXTURES / "hooks" / fmt).glob("*.json"), key=_order)]


def _through_hooks(daemon: DaemonProcess) -> list[str]:
    answers = []
    for fmt in FORMATS:
        for fixture in _fixtures(fmt, daemon.project):
            payload = fixture["payload"]
            answers.append(_hook(daemon, fmt, fixture["event"], _inject(payload, "private")))
            tool_event = "Tool" in fixture["event"] or fixture["event"].startswith("tool.")
            on_file = _on_excluded_file(payload) if tool_event else None
            if on_file is not None:
                answers.append(_hook(daemon, fmt, fixture["event"], on_file))
    return answers


def _transcript(tmp_path: Path, project: Path) -> Path:
    """A real Claude Code transcript (the fixture) whose prompt holds a private span, plus a Read
    of the excluded file and its content, in the transcript's own line shapes."""
    lines = [json.loads(line) for line in
             (FIXTURES / "sessions" / "claude" / "session.jsonl").read_text().splitlines()]
    for line in lines:
        line["cwd"] = str(project)
    lines[0]["message"]["content"] += SPAN
    call, result = json.loads(json.dumps(lines[1])), json.loads(json.dumps(lines[2]))
    use = call["message"]["content"][0]
    use.update(name="Read", input={"file_path": str(project / SECRET_FILE)}, id="toolu_secret")
    answer = result["message"]["content"][0]
    answer.update(tool_use_id="toolu_secret", content=f"1\tAPI_KEY={EXCL}")
    result.pop("toolUseResult", None)
    lines[3:3] = [call, result]
    root = tmp_path / "history" / "claude" / "projects" / "-p"
    root.mkdir(parents=True)
    out = root / "8d1c7e11-6a43-4d7e-9a5e-2b0d6c0f9a01.jsonl"
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return tmp_path / "history"


async def _through_mcp(daemon: DaemonProcess) -> list[str]:
    mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, env={**os.environ, "SLMACTOR_HOME": str(daemon.home)},
        args=["-m", "slmactor", "mcp", "--runtime-dir", str(daemon.runtime_dir), "--project",
              str(daemon.project)], cwd=str(daemon.project))
    texts = []
    async with mcp.Client(params) as client:
        for name, args in (
                ("remember", {"text": "Deploy with make ship" + SPAN, "kind": "command"}),
                ("remember", {"text": f"The API key lives in {SECRET_FILE}", "kind": "gotcha"}),
                ("memory_block", {"task": "ship it" + SPAN}),
                ("recall", {"task": f"read {SECRET_FILE}"}),
                ("report_outcome", {"task": "ship the release" + SPAN, "success": True,
                                    "summary": f"read {SECRET_FILE} first",
                                    "files_changed": [SECRET_FILE, "app.py"]})):
            result = await client.call_tool(name, args)
            texts.append(json.dumps([getattr(p, "text", "") for p in result.content]))
    return texts


def _through_client(daemon: DaemonProcess) -> str:
    with daemon.client(timeout=30) as client:
        client.record_tool("run-private", "Bash", command="make deploy" + SPAN, ok=False,
                           error="deploy failed" + SPAN)
        client.record_tool("run-private", "Read", path=SECRET_FILE, ok=True, error="")
        client.record_tool("run-private", "Bash", command=f"cat {SECRET_FILE}", ok=True,
                           error=EXCL)
        client.remember("release", "Release from the main branch" + SPAN)
        block = client.memory_block("release" + SPAN)
        report = {"run_id": "run-private", "query": "cut the release" + SPAN,
                  "summary": f"done; read {SECRET_FILE} first", "planned_tasks": 1,
                  "completed_tasks": 1, "files_changed": [SECRET_FILE, "app.py"],
                  "failures": [{"tool": "Read", "message": f"{SECRET_FILE}: {EXCL}",
                                "failed_args": json.dumps({"file_path": SECRET_FILE})}]}
        client.ask(RunFinish(report=report, wait=True))
    return block


def _replies(daemon: DaemonProcess) -> str:
    with daemon.client(timeout=60) as client:
        client.ask(MemoryDistill(wait=True))
        asks = [MemoryBlock(), MemoryBlock(query="release deploy key"), MemoryLines(),
                EpisodeRecent(n=0), FactList(), LessonsRender(), EvolveRules(include_all=True),
                MetricsShow(last=0)]
        return json.dumps([client.ask(a) for a in asks], ensure_ascii=False)


def _stored(daemon: DaemonProcess) -> dict[str, str]:
    """Every file the daemon, the hooks, import and MCP wrote, but the user's own secret file."""
    found = {}
    for path in daemon.base.rglob("*"):
        if path.is_file() and not path.is_symlink() and path != daemon.project / SECRET_FILE:
            found[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return found


@pytest.mark.slow
def test_private_text_and_excluded_paths_are_never_stored_or_told(
        daemon: DaemonProcess, tmp_path: Path) -> None:
    project = daemon.project
    (project / ".slmcode").mkdir(exist_ok=True)
    (project / ".slmcode" / "exclude").write_text("# never in memory\nsecrets/\n")
    (project / "secrets").mkdir()
    (project / SECRET_FILE).write_text(f"API_KEY={EXCL}\n")
    told = _through_hooks(daemon)
    history = _transcript(tmp_path, project)
    imported = subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--no-autostart", "--json", "import", "sessions", str(history), "--project",
         str(project)], env=daemon.env, capture_output=True, text=True, timeout=180, check=False)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["new"] == 1
    told += anyio.run(_through_mcp, daemon)
    told.append(_through_client(daemon))
    with daemon.client() as client:
        wait_for(lambda: client.ask(EpisodeRecent(n=0, ids_only=True))["total"] >= 3,
                 "the sessions stored", timeout=60)
    replies = _replies(daemon)
    stored = _stored(daemon)
    # The doors worked on real content, not on nothing: the sessions and memories are there.
    assert "Deploy with make ship" in replies and "cut the release" in replies
    assert "«private»" in replies and "«excluded»" in replies
    # ... the hooks' sessions too: their prompts were recorded, the spans cut.
    assert "fix the failing parser test «private»" in replies
    for marker in (PRIV, EXCL, "hunter2"):
        assert marker not in replies
        assert not [t for t in told if marker in t]
        leaked = [path for path, text in stored.items() if marker in text]
        assert leaked == [], f"{marker} stored in {leaked}"
    assert not [p for p, t in stored.items() if SECRET_FILE in t and ".slmcode/exclude" not in p]
    shutil.rmtree(history)
