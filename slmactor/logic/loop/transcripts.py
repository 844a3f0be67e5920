"""What a harness's own session transcript says that its hooks do not: the record every reader
fills (`TranscriptStats`) and the line reading they share.

Each harness's reader lives in its room (`slmactor/harnesses/<name>.py`: Claude Code's JSONL
transcript, Codex CLI's rollout) and returns a `TranscriptStats`: model, LLM calls, tokens, the
first prompt, and the tool calls only the transcript knows. Pure: the caller reads the file
(bounded) and passes its lines.

A line is whatever a disk holds: `parse_json` takes any text — control characters raw inside a
string (`strict=False`), nesting as deep as the interpreter's stack allows (a deeper one, or one
nested past `MAX_JSON_DEPTH`, is refused with its reason rather than raising), never longer than
`MAX_TRANSCRIPT_LINE` — and `json_objects` skips and counts each line it cannot use, by reason,
in the `skipped` counter it is given (or the one its `lines` carries, as `import sessions`'
bounded reader does), so one hostile line costs that line and nothing else.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: A transcript line longer than this is a tool result, never an assistant message's usage.
MAX_TRANSCRIPT_LINE = 1 << 20
#: Deepest nesting of a transcript line's JSON that readers take (real entries nest < 20 deep);
#: deeper values would make every later recursive step (encoding, redaction) a hazard.
MAX_JSON_DEPTH = 200
#: Why a line was skipped (the keys of a `skipped` counter).
SKIP_TOO_LONG = f"line longer than {MAX_TRANSCRIPT_LINE >> 20} MiB"
SKIP_TOO_DEEP = f"line nested deeper than {MAX_JSON_DEPTH}"
SKIP_NOT_JSON = "line is not JSON"
SKIP_NOT_OBJECT = "line is not a JSON object"

_DECODER = json.JSONDecoder(strict=False)


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


def _depth_over(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (iterative: no recursion of its own)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


def parse_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> tuple[Any, str]:
    """(value, "") for a JSON text, or (None, why it was refused): not JSON, or nested deeper
    than `max_depth`. Control characters raw inside strings are taken as they are; nothing
    raises. The depth is only measured where the text has more brackets than `max_depth`."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        return None, SKIP_TOO_DEEP
    except ValueError:
        return None, SKIP_NOT_JSON
    if (text.count("[") + text.count("{") > max_depth and isinstance(value, (dict, list))
            and _depth_over(value, max_depth)):
        return None, SKIP_TOO_DEEP
    return value, ""


def count(skipped: dict[str, int] | None, reason: str) -> None:
    """One more line skipped for `reason` (nothing when no one counts)."""
    if skipped is not None:
        skipped[reason] = skipped.get(reason, 0) + 1


def json_objects(lines: Iterable[str], skipped: dict[str, int] | None = None) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL text; a cut, oversized, too deep or non-object line is skipped
    and counted in `skipped` (default: the `skipped` counter `lines` carries, if any) — a blank
    one is not counted; a transcript being written while it is read ends in a partial line."""
    if skipped is None:
        skipped = getattr(lines, "skipped", None)
    for line in lines:
        if len(line) > MAX_TRANSCRIPT_LINE:
            count(skipped, SKIP_TOO_LONG)
            continue
        if not line.strip():
            continue
        entry, why = parse_json(line)
        if why:
            count(skipped, why)
        elif isinstance(entry, dict):
            yield entry
        else:
            count(skipped, SKIP_NOT_OBJECT)
