"""OpenCode's room: its session storage read as sessions (the SQLite database of 1.2+, the JSON
files before it, the `{info, parts}` exports), its tool vocabulary, and the plugin event the hook
records — through the real `import sessions` and `slmactor hook` against a real daemon.

No public OpenCode session store was found to cut an excerpt from, so the data here is written
from OpenCode's own schema: `packages/opencode/src/session/session.sql.ts` (tables `session`,
`message`, `part`; JSON in `data`), `session/message-v2.ts` (`UserMessage`, `AssistantMessage`,
`ToolPart` with `state.status` completed/error/running, `TextPart`, `StepFinishPart`),
`tool/bash.ts` (a failed command *completes* with `metadata.exit`), and
`storage/json-migration.ts` (the JSON layout before SQLite), anomalyco/opencode at 063e830 /
007a940; the export line shape is entireio/cli's `hooks_opencode_transcript.go` (soph/opencode).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor import harnesses
from slmactor.harnesses.base import COMPANION, SESSION
from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess, wait_for

ROOM = harnesses.get("opencode")
T0 = 1_764_000_000_000  # ms, as OpenCode stores times


def messages(session: str, cwd: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """A session: a prompt, then `pytest` failing, an edit refused, `pytest` passing, a call cut
    off while running."""
    user = {"id": "msg_001", "sessionID": session, "role": "user", "time": {"created": T0},
            "agent": "build", "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}}
    assistant = {"id": "msg_002", "sessionID": session, "role": "assistant", "parentID": "msg_001",
                 "time": {"created": T0 + 1000, "completed": T0 + 9000}, "modelID": "claude-sonnet-4-5",
                 "providerID": "anthropic", "mode": "build", "agent": "build", "path": {"cwd": cwd, "root": cwd},
                 "cost": 0.01, "tokens": {"input": 120, "output": 80, "reasoning": 10,
                                          "cache": {"read": 3000, "write": 400}}}

    def tool(pid: str, name: str, state: dict[str, Any]) -> dict[str, Any]:
        return {"id": pid, "sessionID": session, "messageID": "msg_002", "type": "tool", "callID": f"call_{pid}",
                "tool": name, "state": state}

    parts = [
        {"id": "prt_01", "sessionID": session, "messageID": "msg_002", "type": "step-start"},
        tool("prt_02", "bash", {"status": "completed", "input": {"command": "pytest -q", "description": "tests"},
                                "output": "FAILED tests/test_api.py::test_get - KeyError: 'id'\n1 failed",
                                "title": "pytest -q", "time": {"start": T0 + 2000, "end": T0 + 3000},
                                "metadata": {"output": "1 failed", "exit": 1, "description": "tests"}}),
        tool("prt_03", "edit", {"status": "error", "input": {"filePath": f"{cwd}/api.py", "oldString": "x = 1",
                                                            "newString": "x = 2"},
                                "error": "oldString not found in content", "time": {"start": T0 + 4000,
                                                                                     "end": T0 + 4100}}),
        tool("prt_04", "bash", {"status": "completed", "input": {"command": "pytest -q", "description": "tests"},
                                "output": "3 passed", "title": "pytest -q",
                                "time": {"start": T0 + 5000, "end": T0 + 6000},
                                "metadata": {"output": "3 passed", "exit": 0, "description": "tests"}}),
        tool("prt_05", "read", {"status": "running", "input": {"filePath": f"{cwd}/api.py"},
                                "time": {"start": T0 + 7000}}),
        {"id": "prt_06", "sessionID": session, "messageID": "msg_002", "type": "step-finish", "reason": "stop",
         "cost": 0.01, "tokens": {"input": 120, "output": 80, "reasoning": 10, "cache": {"read": 3000, "write": 400}}},
    ]
    prompt = [{"id": "prt_00", "sessionID": session, "messageID": "msg_001", "type": "text",
               "text": "make the api tests pass"}]
    return [(user, prompt), (assistant, parts)]


def database(path: Path, sessions: dict[str, str]) -> None:
    """An `opencode.db` with the tables of session.sql.ts (the columns read, and the ones a row needs)."""
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER, time_updated INTEGER);
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
            directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
            time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
            time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        PRAGMA journal_mode = WAL;
    """)
    for n, (session, cwd) in enumerate(sessions.items()):
        conn.execute("INSERT INTO project VALUES (?, ?, ?, ?)", (f"prj{n}", cwd, T0, T0))
        conn.execute("INSERT INTO session VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
                     (session, f"prj{n}", "slug", cwd, "api tests", "1.2.0", T0 + n, T0 + n))
        for info, parts in messages(session, cwd):
            data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                         (f"{session}-{info['id']}", session, info["time"]["created"], T0, json.dumps(data)))
            for part in parts:
                body = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                             (f"{session}-{part['id']}", f"{session}-{info['id']}", session, T0, T0, json.dumps(body)))
    conn.commit()
    conn.close()


def storage(root: Path, session: str, cwd: str) -> Path:
    """The JSON layout before 1.2 (json-migration.ts); the session file's path."""
    (root / "project").mkdir(parents=True, exist_ok=True)
    (root / "project" / "prj.json").write_text(json.dumps({"id": "prj", "worktree": cwd}))
    ses = root / "session" / "prj" / f"{session}.json"
    ses.parent.mkdir(parents=True, exist_ok=True)
    ses.write_text(json.dumps({"id": session, "projectID": "prj", "directory": cwd, "title": "api tests",
                               "version": "1.0.150", "time": {"created": T0, "updated": T0}}))
    for info, parts in messages(session, cwd):
        (root / "message" / session).mkdir(parents=True, exist_ok=True)
        (root / "message" / session / f"{info['id']}.json").write_text(json.dumps(info))
        (root / "part" / info["id"]).mkdir(parents=True, exist_ok=True)
        for part in parts:
            (root / "part" / info["id"] / f"{part['id']}.json").write_text(json.dumps(part, indent=2))
    return ses


def check(record: Any, session: str, cwd: str) -> None:
    assert (record.session_id, record.cwd) == (session, cwd)
    calls = [(c["tool"], c["ok"], c.get("exit_code")) for c in record.stats.calls]
    assert calls == [("bash", False, 1), ("edit", False, None), ("bash", True, 0)]  # the running read never ended
    assert record.stats.calls[0]["error"].startswith("Exit code 1\nFAILED tests/test_api.py")
    assert record.stats.calls[0]["command"] == "pytest -q"
    assert record.stats.calls[1]["error"] == "oldString not found in content"
    assert record.stats.calls[1]["path"] == f"{cwd}/api.py"
    stats = record.stats
    assert (stats.model, stats.llm_calls, stats.tokens_in, stats.tokens_out) == ("claude-sonnet-4-5", 1, 3520, 90)
    assert stats.first_prompt == "make the api tests pass"
    assert (stats.started_at, stats.ended_at) == (T0 / 1000, (T0 + 9000) / 1000)


def test_the_database_of_1_2_is_read_session_by_session(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    database(db, {"ses_a": "/w/a", "ses_b": "/w/b"})
    head = db.read_bytes()[:65536].decode("utf-8", errors="replace")
    assert ROOM.sniff_session("opencode.db", head) == SESSION
    assert ROOM.sniff_session("other.db", head) == ""  # another program's database
    records = list(ROOM.read_sessions(str(db), lambda: iter(())))
    assert [r.session_id for r in records] == ["ses_a", "ses_b"]
    check(records[0], "ses_a", "/w/a")
    db.chmod(0o400)  # read-only, as it would be for another user: still read
    assert len(list(ROOM.read_sessions(str(db), lambda: iter(())))) == 2


def test_the_json_storage_before_1_2_is_read_from_its_session_file(tmp_path: Path) -> None:
    ses = storage(tmp_path / "storage", "ses_old", "/w/old")
    assert ROOM.sniff_session(ses.name, ses.read_text()) == SESSION
    part = next((tmp_path / "storage" / "part").rglob("prt_02.json"))
    message = next((tmp_path / "storage" / "message").rglob("msg_002.json"))
    assert ROOM.sniff_session(part.name, part.read_text()) == COMPANION
    assert ROOM.sniff_session(message.name, message.read_text()) == COMPANION
    [record] = ROOM.read_sessions(str(ses), lambda: iter(()))
    check(record, "ses_old", "/w/old")


def test_exports_are_read_as_lines_or_as_one_document(tmp_path: Path) -> None:
    lines = tmp_path / "full.jsonl"
    lines.write_text("".join(json.dumps({"info": i, "parts": p}) + "\n" for i, p in messages("ses_x", "/w/x")))
    head = lines.read_text()
    assert ROOM.sniff_session("full.jsonl", head) == SESSION
    assert harnesses.get("claude").sniff_session("full.jsonl", head) == ""
    [record] = ROOM.read_sessions(str(lines), lambda: iter(lines.read_text().splitlines(keepends=True)))
    assert record.session_id == "ses_x" and record.cwd == "/w/x"
    doc = tmp_path / "export.json"
    doc.write_text(json.dumps({"info": {"id": "ses_y", "directory": "/w/y", "title": "t"},
                               "messages": [{"info": i, "parts": p} for i, p in messages("ses_y", "/w/y")]},
                              indent=2))
    assert ROOM.sniff_session("export.json", doc.read_text()) == SESSION
    [record] = ROOM.read_sessions(str(doc), lambda: iter(doc.read_text().splitlines(keepends=True)))
    check(record, "ses_y", "/w/y")


def test_its_tools_are_filed_by_family_and_kind() -> None:
    classes = harnesses.tool_classes()
    assert classes.classify("bash")[1] == "shell" and classes.classify("apply_patch")[1] == "edit"
    assert ROOM.tool_kind("edit", {}) == "edit" and ROOM.tool_kind("read", {}) == "read"
    assert ROOM.paths("apply_patch", {"patchText": "*** Begin Patch\n*** Update File: a/b.py\n@@\n-x\n+y\n"
                                                   "*** End Patch"}) == ("a/b.py",)
    assert ROOM.vocabulary["old_str"] == "oldString"


def test_import_reads_the_standard_location_into_each_sessions_project(daemon: DaemonProcess, tmp_path: Path) -> None:
    data = tmp_path / "data" / "opencode"
    data.mkdir(parents=True)
    project = daemon.project.resolve()
    database(data / "opencode.db", {"ses_db": str(project)})
    storage(data / "storage", "ses_json", str(project))
    env = {**daemon.env, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir), "--no-autostart",
                           "--json", "import", "sessions", "--harness", "opencode"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["new"], result["calls"], result["failed_calls"]) == (2, 6, 4)
    assert result["skipped_files"] == {"not a session": 1}  # project/prj.json: not a session file
    runs = wait_for(lambda: _runs(daemon, project) if len(_runs(daemon, project)) == 2 else None, "both sessions")
    assert set(runs) == {"import:opencode:ses_db", "import:opencode:ses_json"}
    assert runs["import:opencode:ses_db"]["tool_errors"] == 2


def _runs(daemon: DaemonProcess, project: Path) -> dict[str, Any]:
    with daemon.client(project=project) as client:
        return {r["run_id"]: r for r in client.ask(MetricsShow(last=0))["runs"]}


def test_the_plugin_event_of_a_failed_command_is_recorded(daemon: DaemonProcess) -> None:
    project = daemon.project.resolve()
    payload = {"hook_event_name": "tool.execute.after", "session_id": "ses_hook", "cwd": str(project),
               "tool_name": "bash", "tool_input": {"command": "npm test"}, "tool_use_id": "call_1",
               "tool_response": {"title": "npm test", "output": "1 failing",
                                 "metadata": {"output": "1 failing", "exit": 1}}}
    for event, body in (("tool.execute.after", payload),
                        ("session.idle", {"hook_event_name": "session.idle", "session_id": "ses_hook",
                                          "cwd": str(project)})):
        done = subprocess.run([sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
                               "hook", "opencode", event], input=json.dumps(body).encode(), env=daemon.env,
                              capture_output=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
    run = wait_for(lambda: _runs(daemon, project).get("ses_hook"), "the hooked session's report")
    assert (run["tool_calls"], run["tool_errors"]) == (1, 1)
