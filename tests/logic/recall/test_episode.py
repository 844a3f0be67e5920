"""Episode normalisation (S-2.2), lenient parsing and the failure-note predicates (S-2.3, H-S-20)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.recall.episode import (
    CommandRun,
    Episode,
    FailureNote,
    GateResult,
    IndexEntry,
    episode_id,
    normalize_episode,
)
from slmactor.logic.text.timefmt import to_rfc3339

NOW = 1_800_000_000.75


def test_defaults_time_id_and_verdict() -> None:
    e = normalize_episode(Episode(query="  fix it  ", files_changed=(" a.py ", "a.py", "")), NOW)
    assert e.at == 1_800_000_000.0  # now, whole seconds
    assert e.query == "fix it" and e.files_changed == ("a.py",)
    assert e.verdict == "partial"  # not a success, but files changed
    assert e.id == episode_id(e.at, "fix it", ["a.py"])
    assert e.id.startswith("ep_") and len(e.id) == 15
    assert normalize_episode(Episode(query="x"), NOW).verdict == "failure"
    assert normalize_episode(Episode(query="x", success=True), NOW).verdict == "success"
    assert normalize_episode(Episode(query="x", verdict="aborted"), NOW).verdict == "aborted"
    assert normalize_episode(Episode(id=" keep ", query="x"), NOW).id == "keep"


def test_caps_of_s22() -> None:
    e = normalize_episode(
        Episode(
            at=NOW - 10.5,
            query="q" * 700,
            summary="é" * 400,  # 800 bytes → cut to ≤ 600 bytes without splitting a character
            plan=tuple(f"step {i % 14}" for i in range(30)) + ("p" * 200,),
            language="  Python ",
            model=" qwen ",
            files_changed=tuple(f"f{i}.py" for i in range(30)),
            tools_used=tuple(f"t{i}" for i in range(20)),
            tags=tuple(f"tag{i}" for i in range(10)),
            failures=tuple(FailureNote(message="m" * 300, resolution="r" * 300) for _ in range(9)),
            gates=tuple(GateResult(f"g{i}", True, "d" * 300) for i in range(9)),
            commands=tuple(CommandRun(f"cmd {i}\nsecond line", True) for i in range(10)),
        ),
        NOW,
    )
    assert e.at == float(int(NOW - 10.5))
    assert len(e.query.encode()) == 600 and len(e.summary.encode()) <= 600
    assert e.summary == "é" * 300
    assert len(e.plan) == 12 and e.plan[0] == "step 0"
    assert e.language == "python" and e.model == "qwen"
    assert len(e.files_changed) == 24 and e.files_changed[0] == "f0.py"
    assert len(e.tools_used) == 16 and len(e.tags) == 8
    assert len(e.failures) == 9 and len(e.failures[0].message) == 240
    assert e.failures[0].resolution == "r" * 300  # a fix is kept whole (up to 600 bytes)
    assert len(e.gates) == 8 and len(e.gates[0].detail) == 200
    assert [c.cmd for c in e.commands] == [f"cmd {i}" for i in range(2, 10)]  # the last 8


def test_round_trip_and_rfc3339_on_disk() -> None:
    e = normalize_episode(
        Episode(query="q", at=NOW, failures=(FailureNote("fp", "compile_error", "bash", "m",
                                                         "r", "rule:x", 2),)),
        NOW,
    )
    d = e.to_dict()
    assert d["at"] == to_rfc3339(NOW) and d["failures"][0]["class"] == "compile_error"
    assert Episode.from_dict(d) == e


def test_lenient_parse_of_hand_written_records() -> None:
    e = Episode.from_dict({"id": "ep_1", "at": "2026-01-02T03:04:05+02:00", "plan": "not a list",
                           "files_changed": ["a", 3, None], "llm_calls": "many",
                           "tokens_in": 12.0, "commands": [{"cmd": "ls"}, "junk"],
                           "success": 1, "unknown": {"x": 1}})
    assert e.id == "ep_1" and e.at == 1767315845.0
    assert e.plan == () and e.files_changed == ("a", "3") and e.llm_calls == 0
    assert e.tokens_in == 12 and e.commands == (CommandRun("ls", False),) and e.success
    assert Episode.from_dict({}).id == ""
    assert Episode.from_dict({"at": float("nan")}).at == 0.0
    assert Episode.from_dict({"at": 1e300}).at == 0.0
    assert normalize_episode(Episode(at=1e300), NOW).at == float(int(NOW))


def test_failure_note_predicates_fix_h_s_20() -> None:
    assert FailureNote(resolved_by="rule:reread").from_memory()
    assert FailureNote(resolved_by="retry").resolved()
    assert not FailureNote(resolved_by="retry").from_memory()  # H-S-20: a retry is not memory
    assert not FailureNote(resolved_by="llm").from_memory()
    assert not FailureNote(resolved_by="Human").from_memory()
    assert not FailureNote(resolved_by="  ").resolved()


def test_index_entry_projection() -> None:
    e = normalize_episode(Episode(query="q", files_changed=("a.py",), tags=("x",),
                                  failures=(FailureNote(),), success=True), NOW)
    entry = IndexEntry.of(e, 42)
    assert entry.failures == 1 and entry.offset == 42
    assert IndexEntry.from_dict(entry.to_dict()) == entry
    assert IndexEntry.from_dict({"id": "x", "offset": -1}) is None
    assert IndexEntry.from_dict({"id": "", "offset": 0}) is None


@settings(derandomize=True, max_examples=200)
@given(st.dictionaries(st.sampled_from(["id", "at", "query", "plan", "files_changed", "failures",
                                        "commands", "gates", "success", "wall_ms"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.floats()
                                    | st.text(max_size=10),
                                    lambda inner: st.lists(inner, max_size=3)
                                    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                                    max_leaves=8)))
def test_from_dict_never_raises_and_normalises(data: dict[str, object]) -> None:
    e = normalize_episode(Episode.from_dict(data), NOW)
    assert e.id and e.at > 0
    assert Episode.from_dict(e.to_dict()) == e
