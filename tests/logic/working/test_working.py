"""Working memory state rules (SPEC S-1.1 to S-1.6, S-1.10): caps, eviction order, counters."""

from __future__ import annotations

from slmactor import harnesses
from slmactor.logic.text.strings import hash_id
from slmactor.logic.working.memory import SEED_CAPS, WorkingMemory
from slmactor.logic.working.records import WorkingSnapshot
from slmactor.logic.working.toolclasses import ToolClasses

T0 = 1_790_000_000.0


def wm() -> WorkingMemory:
    return WorkingMemory("run-1")


# ---------------------------------------------------------------- S-1.1 caps and eviction order


def test_caps_are_the_seed_numbers() -> None:
    c = SEED_CAPS
    assert (c.events, c.files_read, c.files_edited, c.commands) == (24, 12, 12, 5)
    assert (c.open_failures, c.resolved_failures, c.decisions, c.focus) == (8, 8, 5, 16)
    assert (c.signatures, c.default_budget) == (128, 700)


def test_events_keep_the_newest_24() -> None:
    w = wm()
    for i in range(30):
        w.record_tool("ws_read", f"f{i}.go", at=T0 + i)
    events = w.snapshot().events
    assert len(events) == 24
    assert [e.path for e in events] == [f"f{i}.go" for i in range(6, 30)]
    assert w.calls == 30


def test_files_read_keep_the_newest_12_and_a_reread_moves_to_newest() -> None:
    w = wm()
    for i in range(12):
        w.record_tool("read", f"f{i}")
    w.record_tool("read", "f0")  # re-read: now the newest, so f1 is the oldest
    w.record_tool("read", "f12")
    read = w.snapshot().files_read
    assert len(read) == 12
    assert read[0] == "f2"
    assert read[-2:] == ["f0", "f12"]
    assert "f1" not in read


def test_files_edited_keep_newest_12_and_only_successful_edits() -> None:
    w = wm()
    w.record_tool("ws_edit", "bad.go", ok=False, error="no match")
    for i in range(14):
        w.record_tool("ws_write", f"e{i}")
    edited = w.snapshot().files_edited
    assert edited == [f"e{i}" for i in range(2, 14)]
    assert "bad.go" not in edited


def test_edit_without_path_and_read_without_path_touch_no_file_list() -> None:
    w = wm()
    w.record_tool("ws_edit", "")
    w.record_tool("ws_read", "   ")
    snap = w.snapshot()
    assert snap.files_read == [] and snap.files_edited == []
    assert snap.counters.calls == 2


def test_commands_keep_newest_5_with_status() -> None:
    w = wm()
    for i in range(7):
        w.record_tool("ws_shell", command=f"go test ./{i}", ok=i % 2 == 0)
    cmds = w.snapshot().commands
    assert [c.command for c in cmds] == [f"go test ./{i}" for i in range(2, 7)]
    assert [c.status for c in cmds] == ["ok", "failed", "ok", "failed", "ok"]


def test_shell_command_falls_back_to_args_and_keeps_first_line_120_bytes() -> None:
    w = wm()
    w.record_tool("bash", args="make test\nsecond line")
    w.record_tool("run_command", command="  \n  " + "x" * 300 + "\nnext")
    cmds = w.snapshot().commands
    assert cmds[0].command == "make test"
    assert cmds[1].command == "x" * 120


def test_open_failures_keep_newest_8() -> None:
    w = wm()
    for i in range(10):
        w.fail(key=f"k{i}", tool="ws_edit", message=f"boom {i}", now=T0 + i)
    keys = [f.key for f in w.snapshot().open_failures]
    assert keys == [f"k{i}" for i in range(2, 10)]


def test_resolved_failures_keep_newest_8() -> None:
    w = wm()
    for i in range(10):
        w.fail(key=f"k{i}", message="m")
        assert w.resolve(f"k{i}", "fixed", "retry")
    resolved = w.snapshot().resolved_failures
    assert [f.key for f in resolved] == [f"k{i}" for i in range(2, 10)]
    assert w.snapshot().open_failures == []


def test_decisions_keep_last_5_first_line_160_bytes() -> None:
    w = wm()
    for i in range(7):
        assert w.decide(f"decision {i}\nwhy: because")
    assert not w.decide("   \n  ")
    w.decide("é" * 200)
    decisions = w.snapshot().decisions
    assert decisions[:4] == [f"decision {i}" for i in range(3, 7)]
    assert decisions[-1] == "é" * 80  # 160 bytes, no split character
    assert len(decisions) == 5


def test_focus_prepends_dedupes_and_keeps_first_16() -> None:
    w = wm()
    w.focus(["a", "b"])
    w.focus(["c", "a", " ", "d"])
    assert w.snapshot().focus == ["c", "a", "d", "b"]
    w.focus([f"p{i}" for i in range(20)])
    assert w.snapshot().focus == [f"p{i}" for i in range(16)]


# ---------------------------------------------------------------- S-1.3 record_tool


def test_blank_tool_is_ignored() -> None:
    w = wm()
    assert not w.record_tool("   ", "x.go")
    assert not w.record_tool("")
    assert w.calls == 0 and w.snapshot().events == []


def test_tool_is_trimmed_and_lowercased_args_clipped_error_first_line() -> None:
    w = wm()
    w.record_tool("  WS_Read ", "a.go", args="  " + "y" * 300, ok=False, error="\n\nline one\nline two")
    e = w.snapshot().events[0]
    assert e.tool == "ws_read"
    assert e.args == "y" * 200
    assert e.error == "line one"
    long_error = "E" * 500
    w.record_tool("read", ok=False, error=long_error)
    assert w.snapshot().events[-1].error == "E" * 160


def test_event_keeps_time_key_and_outcome() -> None:
    w = wm()
    w.record_tool("Bash", command="ls", ok=False, error="exit 2", key="fp_1", at=T0)
    e = w.snapshot().events[0]
    assert (e.tool, e.command, e.ok, e.error, e.key, e.at) == ("bash", "ls", False, "exit 2", "fp_1", T0)
    assert w.last_at == T0


def test_counters_count_calls_errors_and_redundant() -> None:
    w = wm()
    w.record_tool("ws_read", "a.go")
    w.record_tool("ws_read", "a.go")  # same signature → redundant
    w.record_tool("ws_read", "a.go", args="-n 5")  # different args → not redundant
    w.record_tool("ws_shell", command="go test", ok=False, error="FAIL")
    w.record_tool("ws_shell", command="go test", ok=False, error="FAIL")
    c = w.counters()
    assert (c.calls, c.errors, c.redundant) == (5, 2, 2)


def test_redundancy_window_keeps_counting_past_128_signatures_h_s_3() -> None:
    w = wm()
    for i in range(128):
        w.record_tool("read", f"f{i}")
    assert w.redundant == 0
    # The seed froze here: new signatures were never inserted, so repeats of them never counted.
    w.record_tool("read", "new")
    w.record_tool("read", "new")
    assert w.redundant == 1
    # Inserting "new" evicted the oldest signature (f0): a repeat of f0 is a fresh signature now,
    # while f2 (still in the window) counts as redundant.
    w.record_tool("read", "f0")
    assert w.redundant == 1
    w.record_tool("read", "f2")
    assert w.redundant == 2


def test_redundancy_window_evicts_in_insertion_order_not_by_use() -> None:
    w = wm()
    for i in range(128):
        w.record_tool("read", f"f{i}")
    w.record_tool("read", "f0")  # repeat: counts, but f0 keeps its (oldest) place
    assert w.redundant == 1
    w.record_tool("read", "g")  # evicts f0
    w.record_tool("read", "f0")  # fresh again
    assert w.redundant == 1


def test_failed_call_opens_failure_with_its_key_and_recounts() -> None:
    w = wm()
    w.record_tool("ws_edit", "a.go", ok=False, error="old_string not found\nClosest text:", key="fp_9", at=T0)
    w.record_tool("ws_edit", "a.go", ok=False, error="still not found", key="fp_9", at=T0 + 5)
    (f,) = w.snapshot().open_failures
    assert (f.key, f.tool, f.path, f.message, f.attempts) == ("fp_9", "ws_edit", "a.go", "still not found", 2)
    assert (f.first_at, f.last_at) == (T0, T0 + 5)
    assert w.errors == 2


def test_failed_call_without_key_gets_the_seed_hash_key() -> None:
    w = wm()
    w.record_tool("WS_Shell", command="make", ok=False, error="Make: *** No Rule")
    (f,) = w.snapshot().open_failures
    assert f.key == hash_id("wf_", "ws_shell", "make: *** no rule")


# ---------------------------------------------------------------- S-1.4 / S-1.5 fail and resolve


def test_fail_message_first_line_200_and_key_from_tool_and_message() -> None:
    w = wm()
    key = w.fail(tool="WS_Edit", path="x.go", message="  " + "m" * 300 + "\nsecond")
    (f,) = w.snapshot().open_failures
    assert f.message == "m" * 200
    assert key == f.key == hash_id("wf_", "ws_edit", "m" * 120)


def test_fail_same_key_recounts_and_keeps_message_when_new_one_is_empty() -> None:
    w = wm()
    w.fail(key="k", tool="t", message="first", now=T0)
    w.fail(key="k", message="", now=T0 + 1)
    (f,) = w.snapshot().open_failures
    assert (f.attempts, f.message, f.first_at, f.last_at) == (2, "first", T0, T0 + 1)


def test_fail_with_nothing_to_remember_is_ignored() -> None:
    w = wm()
    assert w.fail() == ""
    assert w.snapshot().open_failures == []


def test_recounted_failure_becomes_newest_so_it_survives_the_cap() -> None:
    w = wm()
    for i in range(8):
        w.fail(key=f"k{i}", message="m")
    w.fail(key="k0", message="again")
    w.fail(key="k8", message="m")
    keys = [f.key for f in w.snapshot().open_failures]
    assert "k0" in keys and "k1" not in keys
    assert keys[-2:] == ["k0", "k8"]


def test_resolve_moves_failure_and_records_who() -> None:
    w = wm()
    w.fail(key="fp", tool="ws_edit", message="boom", now=T0)
    assert w.resolve("fp", "re-read then retried " + "z" * 300, "rule:rule_ab12", now=T0 + 9)
    snap = w.snapshot()
    assert snap.open_failures == []
    (r,) = snap.resolved_failures
    assert r.resolved_by == "rule:rule_ab12"
    assert len(r.resolution.encode()) == 200
    assert r.last_at == T0 + 9


def test_resolve_unknown_or_empty_key_is_false() -> None:
    w = wm()
    w.fail(key="fp", message="boom")
    assert not w.resolve("")
    assert not w.resolve("   ")
    assert not w.resolve("nope")
    assert w.resolve("fp")
    assert not w.resolve("fp")  # already resolved
    assert len(w.snapshot().open_failures) == 0


# ---------------------------------------------------------------- S-1.6 start, summarize, reset


def test_start_keeps_counters_files_commands_failures_and_clears_focus_decisions_events() -> None:
    w = wm()
    w.record_tool("ws_read", "a.go")
    w.record_tool("ws_edit", "b.go")
    w.record_tool("ws_shell", command="go test")
    w.record_tool("ws_edit", "c.go", ok=False, error="boom", key="k")
    w.fail(key="k2", message="other")
    w.resolve("k2", "fixed")
    w.focus(["a.go"])
    w.decide("use the stdlib")
    w.summarize("did things")
    before = w.counters()
    w.start("", "  Second task\nwith detail ", " worker ")
    snap = w.snapshot()
    assert snap.run_id == "run-1"  # blank run id keeps the old one
    assert (snap.task, snap.role) == ("Second task\nwith detail", "worker")
    assert snap.focus == [] and snap.decisions == [] and snap.events == []
    assert snap.counters == before
    assert snap.files_read == ["a.go"] and snap.files_edited == ["b.go"]
    assert [c.command for c in snap.commands] == ["go test"]
    assert [f.key for f in snap.open_failures] == ["k"]
    assert [f.key for f in snap.resolved_failures] == ["k2"]
    assert snap.summary == "did things"
    w.start("run-2")
    assert w.run_id == "run-2"


def test_summarize_clips_to_600_bytes_and_blank_clears() -> None:
    w = wm()
    w.summarize("  " + "s" * 700)
    assert w.summary == "s" * 600
    w.summarize("")
    assert w.summary == ""


def test_reset_clears_everything_including_counters() -> None:
    w = wm()
    w.start("run-1", "task", "role")
    w.record_tool("read", "a", ok=False, error="x")
    w.focus(["a"])
    w.decide("d")
    w.summarize("s")
    w.reset()
    assert w.snapshot() == WorkingSnapshot()
    assert w.is_blank()
    assert w.render() == ""
    w.record_tool("read", "a")  # usable afterwards, counters start again
    w.record_tool("read", "a")
    assert (w.calls, w.redundant) == (2, 1)


# ---------------------------------------------------------------- tool classes on the hot path


def test_harness_tool_names_are_classified() -> None:
    w = WorkingMemory("r", classes=harnesses.tool_classes())
    w.record_tool("Read", "/r/a.py")
    w.record_tool("Grep", "/r/src")
    w.record_tool("MultiEdit", "/r/b.py")
    w.record_tool("apply_patch", "/r/c.py")
    w.record_tool("Bash", command="pytest -q")
    w.record_tool("execute_bash", command="ls")
    w.record_tool("str_replace_editor", "/r/d.py", command="view")
    w.record_tool("str_replace_editor", "/r/e.py", command="str_replace")
    w.record_tool("str_replace_editor", "/r/f.py", args='{"command": "create", "path": "/r/f.py"}')
    w.record_tool("TodoWrite", "/r/todo")
    snap = w.snapshot()
    assert snap.files_read == ["/r/a.py", "/r/src", "/r/d.py"]
    assert snap.files_edited == ["/r/b.py", "/r/c.py", "/r/e.py", "/r/f.py"]
    assert [c.command for c in snap.commands] == ["pytest -q", "ls"]
    assert snap.counters.calls == 10


def test_seed_only_classes_ignore_harness_names() -> None:
    w = WorkingMemory("r", classes=ToolClasses.seed())
    w.record_tool("Grep", "/r/src")
    w.record_tool("ws_grep", "/r/pkg")
    assert w.snapshot().files_read == ["/r/pkg"]


def test_snapshot_round_trips_through_dict() -> None:
    w = wm()
    w.start("run-1", "fix the parser", "worker", now=T0)
    w.focus(["p.go"], now=T0)
    w.record_tool("ws_read", "p.go", at=T0 + 1)
    w.record_tool("ws_edit", "p.go", ok=False, error="nope", key="fp", at=T0 + 2)
    w.fail(key="k2", tool="ws_shell", message="exit 1", now=T0 + 3)
    w.resolve("k2", "reran", "retry", now=T0 + 4)
    w.decide("parse lazily", now=T0 + 5)
    w.summarize("read and tried", now=T0 + 6)
    snap = w.snapshot()
    assert WorkingSnapshot.from_dict(snap.to_dict()) == snap
    assert snap.to_dict()["events"][0]["at"] == "2026-09-21T14:13:21Z"
