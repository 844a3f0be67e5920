"""Working memory as plain data and back: what a checkpoint holds, so live runs survive a restart.

`memory_state` turns one `WorkingMemory` into JSON-ready lists and numbers (every field that
`render`, `snapshot` and later tool calls depend on, in the order that decides eviction), and
`restore_memory` rebuilds an equal memory from it. Restoring never trusts the data: a field of the
wrong shape is skipped, lists are cut to the caps, so a hand-edited or half-old checkpoint gives
a smaller memory, never an exception. Part of the working package: it reads the memory's slots.
"""

from __future__ import annotations

from typing import Any

from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.working.memory import SEED_CAPS, WorkingCaps, WorkingMemory, _OpenFailure
from slmactor.logic.working.records import FailureNote
from slmactor.logic.working.toolclasses import DEFAULT_TOOL_CLASSES, ToolClasses

#: Bumped when the state's shape changes; a checkpoint of another version is not restored.
STATE_VERSION = 1


def memory_state(memory: WorkingMemory) -> dict[str, Any]:
    """Everything needed to rebuild `memory` (plain JSON values)."""
    return {
        "run_id": memory.run_id,
        "task": memory.task,
        "role": memory.role,
        "summary": memory.summary,
        "focus": list(memory._focus),
        "events": [list(e) for e in memory._events],
        "read": list(memory._read),
        "edited": list(memory._edited),
        "commands": [[line, ok] for line, ok in memory._commands],
        "open": [[f.key, f.tool, f.path, f.message, f.attempts, f.first_at, f.last_at]
                 for f in memory._open.values()],
        "resolved": [[n.key, n.tool, n.path, n.message, n.attempts, n.first_at, n.last_at,
                      n.resolution, n.resolved_by] for n in memory._resolved.values()],
        "decisions": list(memory._decisions),
        "signatures": [[*sig, memory._sigs[sig]] for sig in memory._sig_order if sig in memory._sigs],
        "counters": [memory.calls, memory.errors, memory.redundant],
        "last_at": memory.last_at,
    }


def _strs(value: Any, limit: int) -> list[str]:
    items = value if isinstance(value, list) else []
    return [v for v in items if isinstance(v, str)][-limit:] if limit > 0 else []


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _rows(value: Any, width: int, limit: int) -> list[list[Any]]:
    rows = [r for r in (value if isinstance(value, list) else []) if isinstance(r, list) and len(r) == width]
    return rows[-limit:] if limit > 0 else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def restore_memory(
    state: Any, *, classes: ToolClasses = DEFAULT_TOOL_CLASSES, caps: WorkingCaps = SEED_CAPS
) -> WorkingMemory | None:
    """The memory `state` describes, or None when it is not a state at all."""
    if not isinstance(state, dict):
        return None
    memory = WorkingMemory(_text(state.get("run_id")), classes=classes, caps=caps)
    memory.task = cut_chars(_text(state.get("task")), caps.task_bytes)
    memory.role = cut_chars(_text(state.get("role")), caps.role_bytes)
    memory.summary = cut_chars(_text(state.get("summary")), caps.summary_bytes)
    memory._focus = _strs(state.get("focus"), caps.focus)
    for name, path, args, command, ok, error, key, at in _rows(state.get("events"), 8, caps.events):
        if all(isinstance(v, str) for v in (name, path, args, command, error, key)):
            memory._events.append((name, path, args, command, ok is True, error, key, _num(at)))
    memory._read = dict.fromkeys(_strs(state.get("read"), caps.files_read))
    memory._edited = dict.fromkeys(_strs(state.get("edited"), caps.files_edited))
    for line, ok in _rows(state.get("commands"), 2, caps.commands):
        if isinstance(line, str):
            memory._commands.append((line, ok is True))
    for key, tool, path, message, attempts, first_at, last_at in _rows(state.get("open"), 7, caps.open_failures):
        if isinstance(key, str) and key:
            failure = _OpenFailure(key, _text(tool), _text(path), _text(message), _num(first_at))
            failure.attempts = max(_count(attempts), 1)
            failure.last_at = _num(last_at)
            memory._open[key] = failure
    for row in _rows(state.get("resolved"), 9, caps.resolved_failures):
        key = row[0]
        if isinstance(key, str) and key:
            memory._resolved[key] = FailureNote(
                key=key, tool=_text(row[1]), path=_text(row[2]), message=_text(row[3]),
                attempts=max(_count(row[4]), 1), first_at=_num(row[5]), last_at=_num(row[6]),
                resolution=_text(row[7]), resolved_by=_text(row[8]),
            )
    for decision in _strs(state.get("decisions"), caps.decisions):
        memory._decisions.append(decision)
    for *sig, seen in _rows(state.get("signatures"), 5, caps.signatures):
        if all(isinstance(v, str) for v in sig):
            key4 = (sig[0], sig[1], sig[2], sig[3])
            if key4 not in memory._sigs:
                memory._sig_order.append(key4)
            memory._sigs[key4] = max(_count(seen), 1)
    counters = state.get("counters")
    if isinstance(counters, list) and len(counters) == 3:
        memory.calls, memory.errors, memory.redundant = (_count(c) for c in counters)
    memory.last_at = _num(state.get("last_at"))
    return memory
