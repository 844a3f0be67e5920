"""`hook install --harness opencode`: one plugin file OpenCode loads, written and taken out again,
and the plugin itself run under Node with the hook commands replaced by scripts (what it sends,
what it appends, that a hook that fails or hangs changes nothing).

The plugin's contract with OpenCode (the `Hooks` of @opencode-ai/plugin 1.18.33: the arguments
of `tool.execute.after`, the `event` of a tool part in state `error`, `session.idle`) is checked
with the real binary in tests/realcli/test_opencode_plugin.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from slmactor import harnesses
from slmactor.hooks import install
from slmactor.hooks.install_files import PLUGIN_MARKER

ROOM = harnesses.get("opencode")
COMMAND = "/opt/slmactor/bin/slmactor"


def _path(tmp_path: Path, scope: str = "project", env: dict[str, str] | None = None) -> Path:
    return install.settings_path("opencode", scope, tmp_path / "proj", tmp_path / "home", env or {})


def test_the_plugin_goes_where_opencode_loads_plugins(tmp_path: Path) -> None:
    assert _path(tmp_path) == tmp_path / "proj" / ".opencode" / "plugins" / "slmactor.js"
    assert _path(tmp_path, "user") == tmp_path / "home" / ".config" / "opencode" / "plugins" / "slmactor.js"
    moved = _path(tmp_path, "user", {"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert moved == tmp_path / "xdg" / "opencode" / "plugins" / "slmactor.js"


def test_install_is_one_file_once_and_uninstall_takes_it_out(tmp_path: Path) -> None:
    path = _path(tmp_path)
    first = install.apply("opencode", path, COMMAND)
    assert first.changed and path.is_file()
    text = path.read_text()
    assert PLUGIN_MARKER in text.splitlines()[0]
    for event in ("tool.execute.after", "session.idle"):
        assert f"{COMMAND} hook opencode {event}" in text
    assert "session.idle --background" in text  # `opencode run` exits right after it
    assert install.has_ours("opencode", path)
    assert not install.apply("opencode", path, COMMAND).changed
    dry = install.remove("opencode", path, dry_run=True)
    assert dry.changed and path.is_file()
    assert install.remove("opencode", path).changed
    assert not path.exists()
    assert not install.remove("opencode", path).changed


def test_a_users_own_file_of_that_name_is_left_alone(tmp_path: Path) -> None:
    path = _path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({})\n")
    change = install.apply("opencode", path, COMMAND)
    assert not change.changed and "not slmactor's" in change.notes[0]
    assert path.read_text() == "export const Mine = async () => ({})\n"
    assert not install.remove("opencode", path).changed
    assert path.is_file()


NODE = shutil.which("node")

DRIVER = """
import { SlmactorPlugin } from "%(plugin)s";
const hooks = await SlmactorPlugin({ directory: "/home/dev/proj" });
const ok = { title: "t", output: "boom", metadata: { exit: 1 } };
await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_1", callID: "c1",
                                    args: { command: "make" } }, ok);
const part = { type: "tool", tool: "edit", callID: "c2", sessionID: "ses_1",
               state: { status: "error", input: { filePath: "a.py" }, error: "Could not find oldString" } };
await hooks.event({ event: { type: "message.part.updated", properties: { part } } });
await hooks.event({ event: { type: "message.part.updated", properties: { part } } });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
console.log(JSON.stringify({ output: ok.output }));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_plugin_sends_each_call_once_and_appends_the_advice(tmp_path: Path) -> None:
    got = tmp_path / "got.jsonl"
    record = f"cat >> {got}; echo >> {got}"
    lines = {"tool.execute.after": f"{record}; echo '{{\"additionalContext\": \"slmactor: run make -j1\"}}'",
             "session.idle": f"{record}; echo '{{}}'"}
    plugin = tmp_path / "slmactor.mjs"
    plugin.write_text(ROOM.plugin_text(lines, 10))
    (tmp_path / "drive.mjs").write_text(DRIVER % {"plugin": plugin.as_posix()})
    done = subprocess.run([str(NODE), str(tmp_path / "drive.mjs")], capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(done.stdout) == {"output": "boom\n\nslmactor: run make -j1"}
    sent = [json.loads(line) for line in got.read_text().splitlines() if line.strip()]
    assert [(p["hook_event_name"], p.get("tool_name")) for p in sent] == [
        ("tool.execute.after", "bash"), ("tool.execute.after", "edit"), ("session.idle", None)]
    assert sent[0] == {"hook_event_name": "tool.execute.after", "session_id": "ses_1",
                       "cwd": "/home/dev/proj", "tool_name": "bash", "tool_input": {"command": "make"},
                       "tool_use_id": "c1", "tool_response": {"title": "t", "output": "boom",
                                                              "metadata": {"exit": 1}}}
    assert sent[1]["tool_response"] == {"status": "error", "error": "Could not find oldString"}
    # What the room makes of them: a failed command, a failed edit.
    assert ROOM.outcome("bash", "tool.execute.after", sent[0]) == (False, "Exit code 1\nboom")
    assert ROOM.outcome("edit", "tool.execute.after", sent[1]) == (False, "Could not find oldString")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_hook_that_fails_or_hangs_changes_nothing(tmp_path: Path) -> None:
    lines = {"tool.execute.after": "sleep 30", "session.idle": "exit 3"}
    plugin = tmp_path / "slmactor.mjs"
    plugin.write_text(ROOM.plugin_text(lines, 1))
    (tmp_path / "drive.mjs").write_text(DRIVER % {"plugin": plugin.as_posix()})
    done = subprocess.run([str(NODE), str(tmp_path / "drive.mjs")], capture_output=True, text=True,
                          timeout=60, check=True)
    assert json.loads(done.stdout) == {"output": "boom"}
