"""What a harness's own session transcript says that its hooks do not: the record every reader
fills (`TranscriptStats`) and the line reading they share.

Each harness's reader lives in its room (`slmactor/harnesses/<name>.py`: Claude Code's JSONL
transcript, Codex CLI's rollout) and returns a `TranscriptStats`: model, LLM calls, tokens, the
first prompt, and the tool calls only the transcript knows. Pure: the caller reads the file
(bounded) and passes its lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: A transcript line longer than this is a tool result, never an assistant message's usage.
MAX_TRANSCRIPT_LINE = 1 << 20


@dataclass(frozen=True, slots=True)
class TranscriptStats:
    """What a session transcript says about the session's model use and its calls."""

    model: str = ""
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    started_at: float = 0.0
    ended_at: float = 0.0
    first_prompt: str = ""
    #: Tool calls only the transcript knows (ledger entries: `{"e": "call", ...}`).
    calls: tuple[dict[str, Any], ...] = field(default=())


def as_count(value: Any) -> int:
    """A non-negative whole count from a JSON number (0 for anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and value > 0 else 0


def json_objects(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL text; a cut, blank, oversized or non-object line is skipped
    (a transcript being written while it is read ends in a partial line)."""
    for line in lines:
        if len(line) > MAX_TRANSCRIPT_LINE or not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry
