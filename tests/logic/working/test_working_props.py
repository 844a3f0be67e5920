"""Property tests: any sequence of working-memory operations keeps every S-1 invariant."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.strings import count_tokens_chars
from slmactor.logic.working.memory import SEED_CAPS, WorkingMemory
from slmactor.logic.working.records import WorkingSnapshot

_TOOLS = st.sampled_from(["Read", "ws_edit", "Bash", "str_replace_editor", "TodoWrite", " ", "GREP", ""])
_SHORT = st.text(alphabet=st.sampled_from(list("ab/.é \n")), max_size=12)
_TEXT = st.text(max_size=300)

_OPS = st.one_of(
    st.tuples(st.just("record"), _TOOLS, _SHORT, _SHORT, _SHORT, st.booleans(), _TEXT, _SHORT),
    st.tuples(st.just("fail"), _SHORT, _TOOLS, _SHORT, _TEXT),
    st.tuples(st.just("resolve"), _SHORT, _SHORT, _SHORT),
    st.tuples(st.just("focus"), st.lists(_SHORT, max_size=20)),
    st.tuples(st.just("decide"), _TEXT),
    st.tuples(st.just("summarize"), _TEXT),
    st.tuples(st.just("start"), _SHORT, _TEXT, _SHORT),
)


def _apply(w: WorkingMemory, op: tuple[Any, ...], at: float) -> None:
    kind = op[0]
    if kind == "record":
        _, tool, path, args, command, ok, error, key = op
        w.record_tool(tool, path, args, command, ok, error, key, at)
    elif kind == "fail":
        w.fail(op[1], op[2], op[3], op[4], at)
    elif kind == "resolve":
        w.resolve(op[1], op[2], op[3], at)
    elif kind == "focus":
        w.focus(op[1], at)
    elif kind == "decide":
        w.decide(op[1], at)
    elif kind == "summarize":
        w.summarize(op[1], at)
    else:
        w.start(op[1], op[2], op[3], at)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(ops=st.lists(_OPS, max_size=120), budget=st.integers(min_value=1, max_value=900))
def test_any_sequence_keeps_caps_counters_and_budget(ops: list[tuple[Any, ...]], budget: int) -> None:
    w = WorkingMemory("r")
    calls = errors = 0
    for i, op in enumerate(ops):
        before = w.calls
        _apply(w, op, 1_790_000_000.0 + i)
        if op[0] == "record" and w.calls > before:
            calls += 1
            errors += not op[5]
        snap = w.snapshot()
        c = SEED_CAPS
        assert len(snap.events) <= c.events and len(snap.files_read) <= c.files_read
        assert len(snap.files_edited) <= c.files_edited and len(snap.commands) <= c.commands
        assert len(snap.open_failures) <= c.open_failures
        assert len(snap.resolved_failures) <= c.resolved_failures
        assert len(snap.decisions) <= c.decisions and len(snap.focus) <= c.focus
        assert len(set(snap.files_read)) == len(snap.files_read)
        assert len(set(snap.focus)) == len(snap.focus)
        assert len({f.key for f in snap.open_failures}) == len(snap.open_failures)
        assert all(len(e.args.encode("utf-8", "surrogatepass")) <= c.args_bytes for e in snap.events)
        assert all(len(e.error.encode("utf-8", "surrogatepass")) <= c.error_bytes for e in snap.events)
        assert all("\n" not in e.error for e in snap.events)
    counters = w.counters()
    assert (counters.calls, counters.errors) == (calls, errors)
    assert 0 <= counters.redundant < max(counters.calls, 1)
    assert count_tokens_chars(w.render(budget)) <= budget
    snap = w.snapshot()
    assert WorkingSnapshot.from_dict(snap.to_dict()) == snap
