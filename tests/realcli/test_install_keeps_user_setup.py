"""With the real CLIs: after `slmactor hook install` (the user's own settings, the default scope)
the user's own hooks still load and run beside ours, in the file formats they wrote them in, and
`hook uninstall` gives their file's bytes back.

Per harness, the user already has a hook of their own that appends a line to a marker file:
Claude Code in a 4-space settings file, Gemini CLI in settings with comments, Codex CLI inline
in `config.toml` (ours join them there: Codex warns when a folder has `hooks.json` too), Cline as its own
`PostToolUse` script. One short session with a scripted model runs a shell command; then the
marker shows the user's hook ran, and a model request carrying the project's memory (which only
our session hooks add) or, for Cline, the command in the session's episode shows ours did. (The OpenHands SDK
needs Python 3.12 and is not installed here: its format is covered by
`tests/hooks/test_install_formats.py` only.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.realcli.harness import World, binary, private_world, write_calc
from tests.realcli.models import Call, ModelServer, Turn, serving

FACT = "the tests run with make check"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _marker(world: World) -> Path:
    return world.base / "user-hook-ran"


def _own_hook(world: World) -> str:
    return f"cat >/dev/null; echo ran >> {_marker(world)}"


def _remember(world: World) -> None:
    with world.daemon.client(project=world.project) as client:
        client.remember("tests", FACT)


def _ours_ran(server: ModelServer) -> bool:
    return any(FACT in json.dumps(entry.body) for entry in server.main_requests())


def _check(world: World, server: ModelServer, path: Path, original: bytes, harness: str) -> None:
    assert _marker(world).is_file() and "ran" in _marker(world).read_text(), "the user's hook did not run"
    assert _ours_ran(server), "our hooks did not add the memory block"
    world.slmactor("hook", "uninstall", "--harness", harness)
    assert path.read_bytes() == original


def test_claude_user_settings_keep_their_hook_and_layout() -> None:
    claude = binary("claude")
    with private_world() as world:
        write_calc(world.project)
        _remember(world)
        path = world.home / ".claude" / "settings.json"
        path.parent.mkdir()
        # The user's own file: 4-space indent, an inline array, their own PostToolUse hook.
        path.write_text('{\n    "permissions": {"allow": ["Bash(true)"]},\n    "hooks": {\n'
                        '        "PostToolUse": [\n            {\n                "matcher": "Bash",\n'
                        f'                "hooks": [{{"type": "command", "command": "{_own_hook(world)}"}}]\n'
                        '            }\n        ]\n    }\n}\n')
        original = path.read_bytes()
        report = world.install_hooks("claude", scope="--user")
        assert report["path"] == str(path) and report["scope"] == "user"
        assert not [line for line in report["diff"].splitlines() if line.startswith("-") and not line.startswith("---")]
        steps = [Turn(calls=(Call("Bash", {"command": "true", "description": "a command"}),))]
        with serving("anthropic", steps, "claude-sonnet-4-5") as server:
            env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-scripted-offline",
                   "CLAUDE_CONFIG_DIR": str(path.parent), "DISABLE_TELEMETRY": "1",
                   "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                   "IS_SANDBOX": "1"}
            done = world.run([str(claude), "-p", "run true", "--model", "claude-sonnet-4-5",
                              "--dangerously-skip-permissions"], extra_env=env, timeout=100)
        assert done.returncode == 0, done.stderr[-2000:]
        _check(world, server, path, original, "claude")


def test_gemini_settings_with_comments_keep_their_hook() -> None:
    gemini = binary("gemini")
    with private_world() as world:
        write_calc(world.project)
        _remember(world)
        path = world.home / ".gemini" / "settings.json"
        path.parent.mkdir()
        # Gemini reads its settings with comments (strip-json-comments): the user's have some.
        path.write_text(
            '{\n  // offline, no telemetry\n'
            '  "security": {"auth": {"selectedType": "gemini-api-key"}},\n'
            '  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},\n'
            '  "privacy": {"usageStatisticsEnabled": false}, /* mine */\n'
            '  "telemetry": {"enabled": false},\n'
            '  "hooks": {\n    "AfterTool": [\n      {\n        "matcher": "run_shell_command",\n'
            f'        "hooks": [{{"name": "mine", "type": "command", "command": "{_own_hook(world)}"}}]\n'
            '      }\n    ]\n  }\n}\n')
        original = path.read_bytes()
        report = world.install_hooks("gemini", scope="--user")
        assert report["path"] == str(path)
        assert "// offline, no telemetry" in path.read_text() and "/* mine */" in path.read_text()
        steps = [Turn(calls=(Call("run_shell_command", {"command": "true", "description": "run it"}),))]
        with serving("gemini", steps, "gemini-2.5-pro") as server:
            env = {"GOOGLE_GEMINI_BASE_URL": server.base_url, "GEMINI_API_KEY": "offline-scripted",
                   "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_TELEMETRY_ENABLED": "false"}
            done = world.run([str(gemini), "-p", "run true", "-m", "gemini-2.5-pro", "--yolo"],
                             extra_env=env, timeout=100)
        assert done.returncode == 0, done.stderr[-2000:]
        _check(world, server, path, original, "gemini")


def test_codex_inline_config_toml_hooks_run_beside_ours() -> None:
    codex = binary("codex")
    with private_world() as world:
        write_calc(world.project)
        _remember(world)
        home = world.home / ".codex"
        home.mkdir()
        with serving("responses", [Turn(calls=(Call("exec_command", {"cmd": "true", "yield_time_ms": 10000}),))],
                     "gpt-5.5") as server:
            config = home / "config.toml"
            config.write_text(
                'model = "gpt-5.5"\nmodel_provider = "scripted"\ncheck_for_update_on_startup = false\n'
                f'chatgpt_base_url = "{server.base_url}/backend-api/"\n'
                "[features]\nplugins = false\n[analytics]\nenabled = false\n"
                "[model_providers.scripted]\n"
                f'name = "scripted"\nbase_url = "{server.base_url}/v1"\n'
                'wire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n'
                # The user's own hook, inline (codex-rs/config/src/hook_config.rs `HooksToml`).
                '[[hooks.PostToolUse]]\n[[hooks.PostToolUse.hooks]]\ntype = "command"\n'
                f'command = "{_own_hook(world)}"\n')
            before = config.read_bytes()
            report = world.install_hooks("codex", scope="--user")
            # Ours join the user's inline hooks: Codex reads one representation.
            assert report["path"] == str(config) and not (home / "hooks.json").exists()
            assert config.read_bytes().startswith(before)
            done = world.run([str(codex), "exec", "--skip-git-repo-check",
                              "--dangerously-bypass-approvals-and-sandbox", "--trust",
                              "--dangerously-bypass-hook-trust", "run true"],
                             extra_env={"CODEX_HOME": str(home), "SCRIPTED_API_KEY": "sk-offline"},
                             timeout=100)
        assert done.returncode == 0, done.stderr[-2000:]
        assert _marker(world).read_text().count("ran") == 1  # the user's hook ran once, not twice
        assert "loading hooks from both" not in done.stderr
        hooks = home / "hooks.json"
        assert _ours_ran(server)
        world.slmactor("hook", "uninstall", "--harness", "codex")
        # Codex itself adds the project's trust (`--trust`) to config.toml; ours touched none of it.
        assert not hooks.exists() and config.read_bytes().startswith(before)


def test_clines_own_post_tool_use_keeps_running_beside_ours() -> None:
    from tests.realcli.test_cline_smoke import stop_hub

    cline = str(binary("cline"))
    with private_world() as world:
        write_calc(world.project)
        _remember(world)
        folder = world.home / "Documents" / "Cline" / "Hooks"
        folder.mkdir(parents=True)
        theirs = folder / "PostToolUse"
        theirs.write_text(f"#!/bin/sh\n{_own_hook(world)}\necho '{{\"cancel\": false}}'\n")
        original = theirs.read_bytes()
        report = world.install_hooks("cline", scope="--user")
        assert (folder / "PostToolUse.sh").is_file() and theirs.read_bytes() == original
        assert [n for n in report["notes"] if "kept your" in n]
        settings = world.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True)
        (settings / "global-settings.json").write_text(json.dumps({"telemetryOptOut": True,
                                                                  "autoUpdateEnabled": False}))
        steps = [Turn(calls=(Call("run_commands", {"commands": ["true"]}),))]
        try:
            with serving("chat", steps, "scripted-coder") as server:
                auth = world.run([cline, "auth", "-p", "openai-compatible", "-k", "offline", "-m",
                                  "scripted-coder", "-b", f"{server.base_url}/v1"], timeout=60,
                                 label="cline-auth")
                assert auth.returncode == 0, auth.stderr
                done = world.run([cline, "run true", "--json"], timeout=100, label="cline")
                assert done.returncode == 0, done.stderr[-2000:]
                assert _marker(world).is_file()
                # Ours ran too: our PostToolUse.sh recorded the command in the session's episode.
                world.wait_episodes(1)
                assert {"cmd": "true", "ok": True} in world.stored_episodes()[0]["commands"]
        finally:
            stop_hub(world)
        world.slmactor("hook", "uninstall", "--harness", "cline")
        assert sorted(p.name for p in folder.iterdir()) == ["PostToolUse"] and theirs.read_bytes() == original
