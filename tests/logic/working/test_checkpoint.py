"""Checkpoint state of working memory: any memory survives `memory_state` → JSON →
`restore_memory` unchanged, keeps behaving the same afterwards (eviction order, redundancy), and
any garbage restores to a smaller memory or None, never an exception."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.working.checkpoint import memory_state, restore_memory
from slmactor.logic.working.memory import WorkingMemory

_name = st.sampled_from(["Read", "Edit", "Bash", "Write", "grep", "", "x"])
_text = st.text(max_size=30)
_op = st.one_of(
    st.tuples(st.just("tool"), _name, _text, _text, _text, st.booleans(), _text, _text,
              st.floats(0, 2e9)),
    st.tuples(st.just("fail"), _text, _name, _text, _text),
    st.tuples(st.just("resolve"), _text, _text, _text),
    st.tuples(st.just("focus"), st.lists(_text, max_size=20)),
    st.tuples(st.just("decide"), _text),
    st.tuples(st.just("summarize"), _text),
    st.tuples(st.just("start"), _text, _text, _text),
)


def _apply(memory: WorkingMemory, op: tuple[Any, ...], now: float) -> None:
    kind, *args = op
    if kind == "tool":
        memory.record_tool(*args)
    elif kind == "fail":
        memory.fail(*args, now=now)
    elif kind == "resolve":
        memory.resolve(*args, now=now)
    elif kind == "focus":
        memory.focus(args[0], now)
    elif kind == "decide":
        memory.decide(args[0], now)
    elif kind == "summarize":
        memory.summarize(args[0], now)
    else:
        memory.start(*args, now=now)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(_op, max_size=60), st.lists(_op, max_size=20))
def test_a_restored_memory_equals_the_original_and_evolves_the_same(ops: list[Any], more: list[Any]) -> None:
    memory = WorkingMemory("r1")
    for i, op in enumerate(ops):
        _apply(memory, op, float(i))
    state = json.loads(json.dumps(memory_state(memory)))  # what the checkpoint file holds
    restored = restore_memory(state)
    assert restored is not None
    assert restored.snapshot() == memory.snapshot()
    assert restored.render() == memory.render()
    for i, op in enumerate(more):  # same eviction order and redundancy counts from here on
        _apply(memory, op, 100.0 + i)
        _apply(restored, op, 100.0 + i)
    assert restored.snapshot() == memory.snapshot()


_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=30,
)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_junk, st.dictionaries(st.sampled_from(
    ["run_id", "task", "focus", "events", "read", "edited", "commands", "open", "resolved",
     "decisions", "signatures", "counters", "last_at"]), _junk))
def test_garbage_restores_without_raising(junk: Any, fields: dict[str, Any]) -> None:
    assert restore_memory(junk) is None or isinstance(junk, dict)
    memory = restore_memory(fields)
    assert memory is not None
    memory.render()
    memory.record_tool("Read", "a.py")
