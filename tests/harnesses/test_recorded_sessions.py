"""Each room reads its harness's recorded sessions from the real-format excerpts in
`tests/fixtures/sessions/` (each folder's SOURCE.md names the public session and commit): the
session id, its directory, model, first prompt, tokens and every call with the harness's own
verdict; each file is recognised by its own room only, and a foreign JSON file by none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor import harnesses
from slmactor.cli.import_sessions import HEAD_BYTES, bounded_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
FOREIGN = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories" / "foreign-package.json"
READERS = ("claude", "codex", "gemini", "cline", "openhands", "mini_swe_agent", "sweagent")


def read(room: str, path: Path) -> list[Any]:
    return list(harnesses.get(room).read_sessions(str(path), lambda: bounded_lines(str(path))))


def sniff(path: Path) -> list[tuple[str, str]]:
    head = path.read_bytes()[:HEAD_BYTES].decode("utf-8", errors="replace")
    found = [(name, harnesses.get(name).sniff_session(path.name, head)) for name in READERS]
    return [(name, kind) for name, kind in found if kind]


def calls(record: Any) -> list[tuple[str, bool]]:
    return [(c["tool"], c["ok"]) for c in record.stats.calls]


def test_claude_code_transcript_keeps_the_edit_claude_code_rejected() -> None:
    [record] = read("claude", FIXTURES / "claude" / "session.jsonl")
    assert record.session_id == "3c7e488d-d200-4459-a292-559880d9917c"
    assert record.cwd == "/Users/user/Code/agents-md-evaluator"
    assert record.stats.model == "claude-opus-4-6"
    assert record.stats.first_prompt.startswith("Implement the following plan")
    assert calls(record) == [("Grep", True), ("Edit", False), ("Read", True)]
    edit = record.stats.calls[1]
    assert edit["error"] == "File has not been read yet. Read it first before writing to it."
    assert edit["id"].startswith("toolu_")


def test_codex_rollout_gives_each_command_its_exit_code() -> None:
    [record] = read("codex", FIXTURES / "codex" / "rollout.jsonl")
    assert record.session_id == "019c9b17-3a1b-7f72-99f4-fbc8348da5a8"
    assert record.cwd == "/Users/user/Code/torre-ca"
    assert record.stats.model == "gpt-5.3-codex"
    assert [(c["tool"], c["ok"], c.get("exit_code")) for c in record.stats.calls] == [
        ("Bash", False, 1), ("Bash", False, 2), ("Bash", True, 0)]
    assert "No such file or directory" in record.stats.calls[0]["error"]
    assert record.stats.tokens_in > 0


def test_gemini_chat_written_whole() -> None:
    [record] = read("gemini", FIXTURES / "gemini" / "session-2025-legacy.json")
    assert record.session_id == "2ccb51c5-1979-4b49-85c5-b39313a4c50e"
    assert record.stats.model == "gemini-3-pro-preview"
    assert record.stats.tokens_in > 0 and record.stats.llm_calls > 0
    failed = [c for c in record.stats.calls if not c["ok"]]
    assert [c["tool"] for c in failed] == ["replace"]
    assert failed[0]["error"].startswith("File path must be within one of the workspace directories")
    assert len(record.stats.calls) == 9


def test_gemini_jsonl_counts_each_call_once_through_rewrites_and_rewinds() -> None:
    [whole] = read("gemini", FIXTURES / "gemini" / "session-2025-legacy.json")
    [record] = read("gemini", FIXTURES / "gemini" / "session-2026-jsonl.jsonl")
    assert record.session_id == "7f3e2a10-5b1c-4d2e-9a8b-0c1d2e3f4a5b"
    # The same conversation: every call once, with its final verdict (not `executing`).
    assert calls(record) == calls(whole)
    assert [c["id"] for c in record.stats.calls] == [c["id"] for c in whole.stats.calls]


def test_gemini_project_root_comes_from_the_chat_folder(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "my-repo" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text("/srv/my-repo")
    target = chats / "session-2025-12-24T21-37-2ccb51c5.json"
    target.write_bytes((FIXTURES / "gemini" / "session-2025-legacy.json").read_bytes())
    [record] = read("gemini", target)
    assert record.cwd == "/srv/my-repo"


def test_gemini_shell_exit_code_is_a_failure() -> None:
    from slmactor.harnesses.gemini import call_outcome

    output = ("Command: winget search x\nDirectory: (root)\nOutput: No package found matching input "
              "criteria.\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)")
    call = {"status": "success", "result": [{"functionResponse": {"response": {"output": output}}}]}
    assert call_outcome(call) == (False, "No package found matching input criteria.", 1)


def test_cline_task_directory() -> None:
    [record] = read("cline", FIXTURES / "cline" / "tasks" / "1746979936610" / "api_conversation_history.json")
    assert record.session_id == "1746979936610"
    assert record.cwd == "c:/Users/user/Desktop/tori/kha"
    assert calls(record) == [("execute_command", False), ("list_files", True)]
    assert record.stats.calls[0]["error"].startswith("The tool execution failed with the following error")
    assert record.stats.calls[0]["command"]  # the shell command, as the XML call named it
    assert record.stats.llm_calls == 3 and record.stats.tokens_in > 0  # from ui_messages.json


def test_cline_task_history_names_the_directory(tmp_path: Path) -> None:
    task = tmp_path / "data" / "tasks" / "1746979936610"
    task.mkdir(parents=True)
    source = FIXTURES / "cline" / "tasks" / "1746979936610"
    for name in ("api_conversation_history.json", "ui_messages.json"):
        (task / name).write_bytes((source / name).read_bytes())
    (tmp_path / "data" / "state").mkdir()
    (tmp_path / "data" / "state" / "taskHistory.json").write_text(json.dumps(
        [{"id": "1746979936610", "ts": 1, "task": "t", "cwdOnTaskInitialization": "/srv/kha"}]))
    [record] = read("cline", task / "api_conversation_history.json")
    assert record.cwd == "/srv/kha"


def test_cline_sdk_session() -> None:
    folder = FIXTURES / "cline" / "sessions" / "fixture-success-01"
    [record] = read("cline", folder / "fixture-success-01.messages.json")
    assert record.session_id == "fixture-success-01"
    assert record.cwd == "/Users/example/dev/cline"
    assert record.stats.model == "claude-sonnet-4-6"
    assert calls(record) == [("read_files", True)]
    assert (record.stats.tokens_in, record.stats.tokens_out, record.stats.llm_calls) == (24, 8, 1)


def test_trajectory_rooms() -> None:
    [mini] = read("mini_swe_agent", FIXTURES / "mini_swe_agent" / "pydata__xarray-4629.traj.json")
    assert mini.session_id == "pydata__xarray-4629" and calls(mini) == [("bash", False), ("bash", True)]
    assert mini.stats.model == "google/gemini-3-pro-preview"
    [swe] = read("sweagent", FIXTURES / "sweagent" / "sympy__sympy-21612.traj")
    assert calls(swe) == [("str_replace_editor", True), ("python3", False), ("pip", True)]
    [basic] = read("openhands", FIXTURES / "openhands" / "basic.json")
    assert basic.session_id == "basic" and calls(basic) == [("str_replace_editor", True)]
    [instance] = read("openhands", FIXTURES / "openhands" / "output_formatted.json")
    assert instance.session_id == "alibaba__fastjson2-2775" and len(instance.stats.calls) == 4


@pytest.mark.parametrize("path, room", [
    (FIXTURES / "claude" / "session.jsonl", "claude"),
    (FIXTURES / "codex" / "rollout.jsonl", "codex"),
    (FIXTURES / "gemini" / "session-2025-legacy.json", "gemini"),
    (FIXTURES / "gemini" / "session-2026-jsonl.jsonl", "gemini"),
    (FIXTURES / "cline" / "tasks" / "1746979936610" / "api_conversation_history.json", "cline"),
    (FIXTURES / "cline" / "sessions" / "fixture-success-01" / "fixture-success-01.messages.json", "cline"),
    (FIXTURES / "mini_swe_agent" / "pydata__xarray-4629.traj.json", "mini_swe_agent"),
    (FIXTURES / "sweagent" / "sympy__sympy-21612.traj", "sweagent"),
    (FIXTURES / "openhands" / "basic.json", "openhands"),
    (FIXTURES / "openhands" / "output_formatted.json", "openhands"),
], ids=lambda v: v.name if isinstance(v, Path) else v)
def test_each_file_is_recognised_by_its_own_room_only(path: Path, room: str) -> None:
    assert sniff(path) == [(room, "session")]


def test_companions_and_foreign_files() -> None:
    assert sniff(FIXTURES / "cline" / "tasks" / "1746979936610" / "ui_messages.json") == [("cline", "companion")]
    assert sniff(FIXTURES / "cline" / "sessions" / "fixture-success-01" / "fixture-success-01.json") == [
        ("cline", "companion")]
    assert sniff(FOREIGN) == []


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                        max_size=40), max_size=12),
       st.integers(min_value=1, max_value=400))
def test_bounded_lines_never_yield_a_cut_line(tmp_path_factory: pytest.TempPathFactory, lines: list[str],
                                              cap: int) -> None:
    path = tmp_path_factory.mktemp("b") / "f.jsonl"
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    path.write_bytes(data)
    got = list(bounded_lines(str(path), cap))
    whole = [f"{line}\n" for line in lines]
    assert got == whole[: len(got)]  # a prefix of whole lines, never a partial one
    assert sum(len(g.encode("utf-8")) for g in got) <= cap
    if len(data) <= cap:
        assert got == whole


def test_standard_locations_follow_each_harness_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CODEX_HOME": str(tmp_path / "cx"),
           "GEMINI_CLI_HOME": str(tmp_path / "g"), "CLINE_DIR": str(tmp_path / "cl")}
    roots = {name: harnesses.get(name).session_roots(env, home) for name in READERS[:4]}
    assert roots["claude"] == (tmp_path / "cc" / "projects",)
    assert roots["codex"] == (tmp_path / "cx" / "sessions", tmp_path / "cx" / "archived_sessions")
    assert roots["gemini"] == (tmp_path / "g" / ".gemini" / "tmp",)
    assert roots["cline"][:2] == (tmp_path / "cl" / "data" / "tasks", tmp_path / "cl" / "data" / "sessions")
    defaults = {name: harnesses.get(name).session_roots({}, home) for name in READERS[:4]}
    assert defaults["claude"] == (home / ".claude" / "projects",)
    assert defaults["gemini"] == (home / ".gemini" / "tmp",)
    assert defaults["cline"][0] == home / ".cline" / "data" / "tasks"
    assert home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks" \
        in defaults["cline"]
    assert harnesses.get("cline").session_roots({"CLINE_DATA_DIR": "/d"}, home)[0] == Path("/d/tasks")


def test_since_takes_a_date_or_an_age() -> None:
    from slmactor.cli.import_sessions import parse_since

    assert parse_since("7d", 1_000_000.0) == 1_000_000.0 - 7 * 86400
    assert parse_since("12h", 100_000.0) == 100_000.0 - 12 * 3600
    assert parse_since("2026-01-31", 0.0) == parse_since("2026-01-31T00:00:00Z", 0.0)
    with pytest.raises(ValueError, match="not a date"):
        parse_since("last tuesday", 0.0)
