"""The product's side of the truth measurement: import a project's history as a new user would, then
render every channel a model (or `MEMORY.md`) gets, one item per line.

Per project: a private `SLMACTOR_HOME` and `SLMACTOR_RUNTIME_DIR`, a real daemon, the project dir a
copy of the repository's tree (`projects.materialize_tree`), and the real CLI:

1. `slmactor import sessions <the project's transcripts> --harness H --project DIR`;
2. the finish pipelines settled (a run finished with `wait` after them) and `memory distill --wait`;
3. channels: `block` (`memory show --role worker`), `block_task` (the same `--query TASK`),
   `lessons` (`memory lessons`), `lessons_task` (`memory lessons --task TASK`), `rules` (every
   guidance of `evolve rules --json`), `mcp_recall` and `mcp_block` (the `recall` and
   `memory_block` tools of `slmactor mcp`, over its stdio JSON-RPC, with TASK);
4. the daemon stopped (it flushes), `md` (`.slmcode/MEMORY.md`) read;
5. the daemon started again and, for each hook probe (a real failed call of the history, one per
   failure kind: `history.hook_probes`), the real `slmactor hook <harness> <event>` fed that
   harness's payload for it in a fresh session (`hook_payload`); `hook` items are the lines of the
   context it answers with.

TASK is the first plain user prompt of the project's newest session (`history.task_text`).

Only the product's public doors are used (CLI, MCP, hook, the test helper that spawns a daemon);
nothing here decides a label.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.label_real import command_of
from bench.truth.projects import Project, materialize_tree

#: The sub-heading lines the product's Markdown uses to group lines (no claim of their own).
CHANNELS = ("block", "block_task", "lessons", "lessons_task", "rules", "mcp_recall", "mcp_block", "md", "hook")


@dataclass
class Item:
    """One line a model (or MEMORY.md) gets."""

    project: str
    split: str
    channel: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"project": self.project, "split": self.split, "channel": self.channel, "text": self.text,
                "meta": self.meta}


@dataclass
class Probe:
    """A failed call of the history, to replay through the harness's failure hook."""

    kind: str
    tool: str
    args: dict[str, Any]
    result: str
    session: str
    seq: int
    status: str | None = None


def lines_of(text: str) -> list[str]:
    """The non-blank lines of a rendered text."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


_SCORE_COLUMNS = re.compile(r"^\s*-?\d+\.\d{3}\s+\d\.\d{2}\s+\d+×\s+")


class Renderer:
    """One project's daemon and CLI, in a private home and runtime dir."""

    def __init__(self, project: Project, files: list[Path], workdir: Path, mirror_root: Path | None) -> None:
        self.project = project
        self.files = files
        self.workdir = workdir
        self.mirror_root = mirror_root
        # ipc socket paths must stay short: the daemon's own dirs live under /tmp
        self.base = Path(tempfile.mkdtemp(prefix="truth-", dir="/tmp"))
        self.project_dir = workdir / "project"
        self.daemon: Any = None
        self.log: list[str] = []

    # -- daemon --------------------------------------------------------------------------------

    def start(self) -> None:
        from slmactor.testing import spawn_daemon

        (self.base / "notify.sock").unlink(missing_ok=True)
        self.daemon = spawn_daemon(base=self.base, runtime_dir=self.base / "rt", home=self.base / "home",
                                   project=self.project_dir, debug_hooks=False, ready_timeout=60)

    def stop(self) -> None:
        if self.daemon is not None and self.daemon.proc.poll() is None:
            self.daemon.stop(timeout=60)
        self.daemon = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def _env(self) -> dict[str, str]:
        assert self.daemon is not None
        env: dict[str, str] = self.daemon.env
        return env

    def cli(self, *argv: str, as_json: bool = False, timeout: float = 600) -> Any:
        assert self.daemon is not None
        args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(self.daemon.runtime_dir), "--no-autostart",
                "--timeout", "120", "--project", str(self.project_dir), *(["--json"] if as_json else []), *argv]
        done = subprocess.run(args, capture_output=True, timeout=timeout, env=self._env(), check=False)
        if done.returncode != 0:
            raise RuntimeError(f"slmactor {' '.join(argv[:3])} exited {done.returncode}: "
                               f"{done.stderr.decode(errors='replace')[-1500:]}")
        out = done.stdout.decode("utf-8", "replace")
        return json.loads(out) if as_json else out

    def settle(self) -> None:
        """Wait until every finish pipeline the import started has run (the reflector runs them
        one at a time in arrival order; a run finished with `wait` after them returns after them)."""
        from slmactor.protocol.messages import RunFinish

        scratch = self.base / "settle"
        scratch.mkdir(exist_ok=True)
        with self.daemon.client(project=scratch, timeout=600) as client:
            client.ask(RunFinish(report={"run_id": f"settle-{time.monotonic_ns()}"}, wait=True))

    # -- the steps -----------------------------------------------------------------------------

    def prepare(self) -> bool:
        if self.project_dir.exists():
            shutil.rmtree(self.project_dir)
        return materialize_tree(self.project, self.mirror_root, self.project_dir)

    def import_history(self) -> dict[str, Any]:
        summary: dict[str, Any] = self.cli("import", "sessions", *map(str, self.files), "--harness",
                                           self.project.harness, as_json=True, timeout=3600)
        self.settle()
        self.cli("memory", "distill", "--wait", as_json=True)
        self.settle()
        return summary

    def render_cli(self, task: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(channel, line, meta) of the CLI channels."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        for channel, argv in (("block", ("memory", "show", "--role", "worker")),
                              ("block_task", ("memory", "show", "--role", "worker", "--query", task)),
                              ("lessons", ("memory", "lessons")),
                              ("lessons_task", ("memory", "lessons", "--task", task))):
            text = self.cli(*argv)
            out += [(channel, _SCORE_COLUMNS.sub("", line), {}) for line in lines_of(text)
                    if not line.startswith(("(no lessons yet)", "(no do/don't lessons", "Do/don't lessons ("))]
        rules = self.cli("evolve", "rules", as_json=True)
        for rule in rules.get("rules", []):
            repair = rule.get("repair") or {}
            guidance = repair.get("guidance") or rule.get("guidance") or ""
            meta = {"rule": rule.get("id"), "trigger": rule.get("trigger"), "repair_kind": repair.get("kind"),
                    "successes": rule.get("successes"), "failures": rule.get("failures"),
                    "scope": rule.get("scope")}
            out += [("rules", line, meta) for line in lines_of(str(guidance))]
        return out

    def render_mcp(self, task: str) -> list[tuple[str, str, dict[str, Any]]]:
        """The text the `recall` and `memory_block` tools answer with, line by line."""
        assert self.daemon is not None
        args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(self.daemon.runtime_dir), "--no-autostart",
                "--project", str(self.project_dir), "mcp"]
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=self._env(), text=True)
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
            stdin.flush()
            while True:
                line = stdout.readline()
                if not line:
                    raise RuntimeError("slmactor mcp closed its output")
                reply: dict[str, Any] = json.loads(line)
                if reply.get("id") == ident:
                    return reply

        out: list[tuple[str, str, dict[str, Any]]] = []
        try:
            ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench-truth", "version": "1"}})
            stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            stdin.flush()
            for ident, channel, name, arguments in ((2, "mcp_recall", "recall", {"task": task}),
                                                    (3, "mcp_block", "memory_block", {"task": task})):
                reply = ask(ident, "tools/call", {"name": name, "arguments": arguments})
                content = (reply.get("result") or {}).get("content") or []
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "text":
                        out += [(channel, line, {}) for line in lines_of(str(block.get("text", "")))]
        finally:
            stdin.close()
            proc.wait(timeout=60)
        return out

    def read_memory_md(self) -> list[tuple[str, str, dict[str, Any]]]:
        path = self.project_dir / ".slmcode" / "MEMORY.md"
        if not path.is_file():
            return []
        return [("md", line, {}) for line in lines_of(path.read_text(encoding="utf-8", errors="replace"))]

    def render_hooks(self, probes: list[Probe]) -> list[tuple[str, str, dict[str, Any]]]:
        out: list[tuple[str, str, dict[str, Any]]] = []
        assert self.daemon is not None
        for n, probe in enumerate(probes):
            shaped = hook_payload(self.project.harness, probe, str(self.project_dir), f"truth-probe-{n}")
            if shaped is None:
                continue
            event, payload = shaped
            args = [sys.executable, "-m", "slmactor", "--runtime-dir", str(self.daemon.runtime_dir), "--no-autostart",
                    "hook", self.project.harness, event]
            done = subprocess.run(args, input=json.dumps(payload).encode(), capture_output=True, timeout=120,
                                  env=self._env(), check=False)
            answer = done.stdout.decode("utf-8", "replace").strip()
            try:
                doc = json.loads(answer) if answer else {}
            except ValueError:
                doc = {}
            meta = {"probe": {"kind": probe.kind, "tool": probe.tool, "session": probe.session, "seq": probe.seq},
                    "event": event}
            out += [("hook", line, meta) for line in lines_of(context_of(self.project.harness, doc, probe))]
        return out


def context_of(harness: str, answer: dict[str, Any], probe: Probe) -> str:
    """The text a hook answer puts before the model (its context field, in the harness's shape);
    Gemini's denial reason repeats the tool's own error first, which is the tool's, not ours."""
    if harness == "cline":
        return str(answer.get("contextModification") or "")
    specific = answer.get("hookSpecificOutput")
    parts = []
    if isinstance(specific, dict) and specific.get("additionalContext"):
        parts.append(str(specific["additionalContext"]))
    if harness == "gemini" and answer.get("reason"):
        # The denial reason repeats the tool's own output first: that is the tool's text, not ours.
        reason = str(answer["reason"])
        ours = re.search(r"^slmactor\b", reason, re.MULTILINE)
        parts.append(reason[ours.start():] if ours else "")
    if answer.get("systemMessage"):
        parts.append(str(answer["systemMessage"]))
    return "\n".join(parts)


# --- hook payloads, each in its harness's published shape -----------------------------------------
#
# Claude Code: `PostToolUseFailure` {session_id, transcript_path, cwd, permission_mode,
#   hook_event_name, tool_name, tool_input, tool_use_id, error, is_interrupt} (Claude Code 2.1.x hooks
#   reference, as tests/fixtures/hooks/claude/PostToolUseFailure-Bash.json); `error` is the tool
#   result's text without its `<tool_use_error>` tags.
# Codex CLI: `PostToolUse` for its shell tools, reported as `Bash` with `tool_input.command` and the
#   exec summary string as `tool_response` (codex-rs hooks schema, as
#   tests/fixtures/hooks/codex/PostToolUse-Bash-failed.json); other tools run no hook.
# Gemini CLI: `AfterTool` {tool_name, tool_input, tool_response {llmContent, returnDisplay[, error]}}
#   (gemini-cli packages/core/src/hooks/types.ts, as tests/fixtures/hooks/gemini/AfterTool-*-failed.json);
#   a shell result is wrapped in `<untrusted_context>` with its `Exit Code: N` line; a cancelled call
#   runs no AfterTool.
# Cline: `PostToolUse` {clineVersion, hookName, taskId, workspaceRoots, postToolUse {toolName,
#   parameters (strings), result, success: false}} (cline .clinerules/hooks/README.md, as
#   tests/fixtures/hooks/cline/PostToolUse-editor-failed.json).

_CODEX_SHELL = frozenset({"exec_command", "shell", "local_shell", "container.exec", "shell_command"})
_TAGS = re.compile(r"</?tool_use_error>")


def hook_payload(harness: str, probe: Probe, project_dir: str, session: str) -> tuple[str, dict[str, Any]] | None:
    """(event, payload) the harness's hook gets for this failed call, or None when it runs none."""
    if harness == "claude":
        return "PostToolUseFailure", {
            "session_id": session, "transcript_path": f"/tmp/{session}.jsonl", "cwd": project_dir,
            "permission_mode": "default", "hook_event_name": "PostToolUseFailure", "tool_name": probe.tool,
            "tool_input": probe.args, "tool_use_id": f"toolu_{session}", "error": _TAGS.sub("", probe.result).strip(),
            "is_interrupt": False, "duration_ms": 0}
    if harness == "codex":
        if probe.tool not in _CODEX_SHELL:
            return None
        return "PostToolUse", {
            "session_id": session, "transcript_path": f"/tmp/rollout-{session}.jsonl", "cwd": project_dir,
            "model": "gpt-5-codex", "permission_mode": "default", "turn_id": "turn-1", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": command_of(probe.args)}, "tool_response": probe.result,
            "tool_use_id": f"call_{session}"}
    if harness == "gemini":
        if probe.status == "cancelled":
            return None
        response: dict[str, Any]
        if probe.status == "error":
            response = {"llmContent": probe.result, "returnDisplay": probe.result,
                        "error": {"message": probe.result, "type": "unknown"}}
        else:
            response = {"llmContent": f"<untrusted_context>\n{probe.result}\n</untrusted_context>",
                        "returnDisplay": probe.result}
        return "AfterTool", {
            "session_id": session, "transcript_path": f"/tmp/session-{session}.json", "cwd": project_dir,
            "timestamp": "2026-01-01T00:00:00.000Z", "hook_event_name": "AfterTool", "tool_name": probe.tool,
            "tool_input": probe.args, "tool_response": response}
    if harness == "cline":
        return "PostToolUse", {
            "clineVersion": "3.17.0", "hookName": "PostToolUse", "timestamp": "1767225600000", "taskId": session,
            "workspaceRoots": [project_dir], "userId": "bench-truth",
            "postToolUse": {"toolName": probe.tool, "parameters": {k: str(v) for k, v in probe.args.items()},
                            "result": probe.result, "success": False, "executionTimeMs": 1}}
    return None


def render_project(project: Project, files: list[Path], workdir: Path, mirror_root: Path | None, task: str,
                   probes: list[Probe], progress: Any = None) -> tuple[list[Item], dict[str, Any]]:
    """Every item a model gets after importing the project's history, and the import's summary."""
    renderer = Renderer(project, files, workdir, mirror_root)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    info: dict[str, Any] = {}
    try:
        info["tree"] = renderer.prepare()
        renderer.start()
        info["import"] = renderer.import_history()
        rows += renderer.render_cli(task)
        rows += renderer.render_mcp(task)
        renderer.stop()
        rows += renderer.read_memory_md()
        renderer.start()
        rows += renderer.render_hooks(probes)
    finally:
        renderer.cleanup()
    items = [Item(project.key, project.split, channel, text, meta) for channel, text, meta in rows]
    return items, info
