"""The block audit: what a real CLI's requests carried from us, checked line by line.

Our text is found in a request by the headings and prefixes we write (`## What we know about
this project`, `## Similar work done before`, `## Lessons from past builds`, `slmactor memory:`,
`slmactor:`), up to the end of the string the harness put it in (Claude Code wraps hook context
in a `<system-reminder>`). Checked there:

* no line twice in one request (the session-start block and a prompt's additions together);
* no placeholder of the fingerprint's masking (`<path>`, `<n>`, …), HTML escape, rule or
  fingerprint id, or "fix: llm";
* every "works here (k/n runs succeeded)" and "applies P% of the time here (a/b hunks)"
  recomputed from the episodes the project had stored before the request, as stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_OURS = re.compile(r"(## What we know about this project|## Similar work done before|"
                   r"## Lessons from past builds|slmactor memory: |slmactor: )")
_END = re.compile(r"</system-reminder>|\Z")
_MASKS = re.compile(r"<(?:addr|dur|hash|id|line|n|output|path|str|ts|url)>|&lt;|&gt;|&amp;|"
                    r"\brule_[0-9a-f]{12}\b|\bfp_[0-9a-f]{12}\b|fix(?:ed by)?: llm\b")
_WORKS = re.compile(r"`([^`]+)` works here \((\d+)/(\d+) runs succeeded\)")
_APPLIES = re.compile(r"Edit format `([^`]+)` applies (\d+)% of the time here \((\d+)/(\d+) hunks\)")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def our_text(body: Mapping[str, Any]) -> list[str]:
    """Each piece of text we injected into one request (tools and the CLI's system prompt are
    not searched: only the conversation)."""
    conversation = body.get("messages") or body.get("input") or body.get("contents") or []
    pieces: list[str] = []
    for text in _strings(conversation):
        for match in _OURS.finditer(text):
            end = _END.search(text, match.start())
            piece = text[match.start():end.start() if end else len(text)]
            # A later marker inside this piece starts a piece of its own.
            nxt = _OURS.search(text, match.end())
            if nxt is not None and nxt.start() < match.start() + len(piece):
                piece = text[match.start():nxt.start()]
            pieces.append(piece)
    return pieces


def _norm(command: str) -> str:
    return " ".join(command.split())


def problems(body: Mapping[str, Any], episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """What is wrong with what one request carried from us; [] when nothing is."""
    found: list[str] = []
    lines: dict[str, int] = {}
    for piece in our_text(body):
        for line in piece.splitlines():
            stripped = line.strip()
            if stripped.startswith("- "):
                lines[stripped] = lines.get(stripped, 0) + 1
            mask = _MASKS.search(line)
            if mask:
                found.append(f"masked or internal text {mask.group(0)!r} in: {stripped}")
        for command, ok, runs in _WORKS.findall(piece):
            said = (int(ok), int(runs))
            counted = [0, 0]
            for ep in episodes:
                for run in ep.get("commands") or []:
                    if _norm(str(run.get("cmd", ""))) == _norm(command):
                        counted[1] += 1
                        counted[0] += run.get("ok") is True
            if said != tuple(counted):
                found.append(f"`{command}` works here {said} but the episodes say {tuple(counted)}")
        for fmt, pct, ok, total in _APPLIES.findall(piece):
            applied = sum(int(ep.get("edits_applied") or 0) for ep in episodes
                          if ep.get("edit_format") == fmt)
            attempted = sum(int(ep.get("edits_attempted") or 0) for ep in episodes
                            if ep.get("edit_format") == fmt)
            if (int(ok), int(total)) != (applied, attempted) or \
                    int(pct) != (applied * 100 // attempted if attempted else -1):
                found.append(f"`{fmt}` applies {pct}% ({ok}/{total}) but the episodes say "
                             f"{applied}/{attempted}")
    found.extend(f"said {n} times in one request: {line}" for line, n in lines.items() if n > 1)
    return found


def claims(body: Mapping[str, Any]) -> int:
    """How many recomputable claims one request carried (so an audit is seen to check some)."""
    return sum(len(_WORKS.findall(p)) + len(_APPLIES.findall(p)) for p in our_text(body))


def dump(body: Mapping[str, Any]) -> str:
    return json.dumps(our_text(body), indent=1)[:4000]
