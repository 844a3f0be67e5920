"""Did a finished tool call fail, and with what error? Read from each harness's tool response.

Pure and stdlib-only (`dialects.py` imports it on every hook). Each harness says "failed"
differently, and several say it only in text (sources in `tests/fixtures/hooks/<format>/`):

- Claude Code: failures arrive on `PostToolUseFailure` (`error`, kept whole: for Bash it is
  `Exit code N\\n<output>`, and the output *is* the error). A `PostToolUse` response is a dict
  (`{stdout, stderr, interrupted}` for Bash, `{filePath, success}` for Write, ...).
- Codex CLI: `tool_response` is a string for shell tools and `apply_patch`: the exec summary
  `Exit code: N\\nWall time: S seconds\\n[Total output lines: N\\n]Output:\\n<output>`
  (`codex-rs/core/src/tools/mod.rs`, `format_exec_output_for_model_freeform`), or the unified-exec
  `... Process exited with code N ... Output:\\n<output>`. The raw output of a one-shot
  `exec_command` carries no status at all: it is taken as a success (nothing says otherwise).
- Gemini CLI: `{llmContent, returnDisplay, error?}`. `error` is set for failed edits and spawn
  errors; a shell command that exits non-zero has none — the status is only a line
  `Exit Code: N` inside `llmContent` (`packages/core/src/tools/shell.ts`), wrapped in
  `<untrusted_context>` tags.
- OpenHands SDK: `tool_response` is the observation's `model_dump()`: `is_error`, `content`
  (`[{type: text, text}]`), and for the terminal `exit_code` / `timeout` / `metadata.exit_code`
  (-1 = unknown). The event's top-level `metadata` is `{}` for PostToolUse.
- Cline: `postToolUse.success` (false = failed) and `postToolUse.result` (the text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code")
#: `*** Update File: p`, `*** Add File: p`, `*** Delete File: p`, `*** Move to: p` (apply_patch).
# Patterns, not compiled ones: a hook process compiles only those its harness needs (`re`
# caches each on first use).
_PATCH_HEADER = r"(?m)^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$"
_CODEX_EXIT = r"(?m)^(?:Exit code: |Process exited with code )(-?\d+)\s*$"
_GEMINI_EXIT = r"(?m)^(?:Exit Code: (-?\d+)|Signal: (\S+))\s*$"
_GEMINI_STATUS = r"(?m)^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): "
_UNTRUSTED = r"^\s*<untrusted_context>\n?|\n?</untrusted_context>\s*$"


def patch_paths(patch: str) -> tuple[str, ...]:
    """Every file an apply_patch names, in order, once each."""
    seen: dict[str, None] = {}
    for match in re.finditer(_PATCH_HEADER, patch):
        seen.setdefault((match.group(1) or match.group(2)).strip(), None)
    return tuple(p for p in seen if p)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content_text(value: Any) -> str:
    """Text of a string, or of a list of `{text}` parts (Gemini Parts, OpenHands TextContent)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return _text(value.get("text"))
    if isinstance(value, list):
        return "\n".join(t for t in (_content_text(v) for v in value) if t)
    return ""


def _error_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("message", "error", "reason"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return ""


def _after_output(text: str) -> str:
    """The `<output>` of an exec summary (everything after its `Output:` line), else the text."""
    _, sep, tail = text.partition("\nOutput:\n")
    if sep:
        return tail
    return text.split("Output:", 1)[1] if text.startswith("Output:") else text


def _generic(response: Any) -> tuple[bool, str]:
    """(ok, error) from a dict response: explicit failure flags, an error, a non-zero exit."""
    if not isinstance(response, Mapping):
        return True, ""
    error = response.get("error")
    if error and _error_text(error):
        return False, _error_text(error)
    if response.get("success") is False or response.get("is_error") is True or response.get("isError") is True:
        text = (_text(response.get("stderr")) or _text(response.get("message"))
                or _content_text(response.get("content")) or _text(response.get("output")))
        return False, text or "the tool reported failure"
    for key in _EXIT_KEYS:
        code = response.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            output = _text(response.get("stderr")).strip() or _content_text(response.get("content")).strip()
            return False, output or f"exit status {code}"
    if response.get("interrupted") is True:
        return False, "interrupted"
    return True, ""


def _codex(response: Any) -> tuple[bool, str]:
    if not isinstance(response, str):
        return _generic(response)
    match = re.search(_CODEX_EXIT, response[:400])  # the status leads the summary
    if match is None or int(match.group(1)) == 0:
        return True, ""
    output = _after_output(response).strip()
    return False, output or f"exit status {match.group(1)}"


def _gemini(response: Any) -> tuple[bool, str]:
    if not isinstance(response, Mapping):
        return True, ""
    error = response.get("error")
    if error and _error_text(error):
        return False, _error_text(error)
    content = re.sub(_UNTRUSTED, "", _content_text(response.get("llmContent")))
    match = re.search(_GEMINI_EXIT, content)
    if match is None or match.group(1) == "0":
        if content.startswith("Command was automatically cancelled"):
            return False, content
        return True, ""
    body = content[: m.start()] if (m := re.search(_GEMINI_STATUS, content)) else content
    output = body.removeprefix("Output: ")
    output = output.strip()
    return False, output if output and output != "(empty)" else match.group(0).strip()


def _openhands(response: Any) -> tuple[bool, str]:
    if not isinstance(response, Mapping):
        return True, ""
    text = _content_text(response.get("content")).strip()
    if response.get("is_error") is True:
        return False, text or "the tool reported an error"
    if response.get("timeout") is True:
        return False, text or "timeout"
    meta = response.get("metadata")
    codes = [response.get("exit_code"), meta.get("exit_code") if isinstance(meta, Mapping) else None]
    for code in codes:
        # -1 is the SDK's "no exit code" (still running, or unknown)
        if isinstance(code, int) and not isinstance(code, bool) and code not in (0, -1):
            return False, text or f"exit status {code}"
    return True, ""


def _cline(payload: Mapping[str, Any]) -> tuple[bool, str]:
    section = payload.get("postToolUse")
    if not isinstance(section, Mapping) or section.get("success") is not False:
        return True, ""
    return False, _text(section.get("result")) or "the tool failed"


def outcome(fmt: str, tool: str, payload: Mapping[str, Any]) -> tuple[bool, str]:
    """(ok, error) of the finished call a RECORD event reports."""
    if fmt == "cline":
        return _cline(payload)
    response = payload.get("tool_response")
    if fmt == "codex":
        return _codex(response)
    if fmt == "gemini":
        return _gemini(response)
    if fmt == "openhands":
        return _openhands(response)
    return _generic(response)
