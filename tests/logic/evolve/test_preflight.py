"""Pre-flight repair of an edit: a rewrite only when exactly one candidate
matches the file exactly once, never when it is ambiguous, never a call that would work.
Arguments are in the shared words a harness's room renamed its keys to (`ToolCall.shared`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve.preflight import (
    Candidate,
    decide,
    decide_patch,
    generic_candidates,
    generic_patch_candidates,
)

FILE = "def f(x):\n    y = x + 1\n    return y\n\n\ndef g():\n    return 2\n"


def _edit(old: str, new: str = "NEW", **extra: object) -> dict[str, object]:
    return {"path": "/r/a.py", "old_str": old, "new_str": new, **extra}


def _decide(args: dict[str, object], text: str = FILE,
            learned: list[Candidate] | None = None) -> tuple[bool, str, dict[str, object] | None]:
    decision = decide(args, text, [*(learned or []), *generic_candidates(args, text)])
    return decision.rewrite, decision.reason, decision.candidate.args if decision.candidate else None


def test_a_gutter_in_any_real_format_is_stripped_when_it_then_matches_once() -> None:
    for old in ("     2\t    y = x + 1\n     3\t    return y",
                "     2\u2192    y = x + 1\n     3\u2192    return y",
                "2\t    y = x + 1\n3\t    return y",
                "  2|     y = x + 1\n  3|     return y"):
        rewrite, _, args = _decide(_edit(old, "     2\t    y = x + 2"))
        assert rewrite and args is not None, old
        assert args["old_str"] == "    y = x + 1\n    return y"


def test_no_rewrite_when_the_text_is_already_there_or_nothing_matches() -> None:
    assert _decide(_edit("    return y"))[:2] == (False, "the text to replace is in the file")
    rewrite, reason, _ = _decide(_edit("    40\t    return z"))
    assert not rewrite and reason == "no repair matches the file"


def test_no_rewrite_when_the_repair_matches_several_places() -> None:
    text = "a = 1\nb = 2\na = 1\n"
    rewrite, reason, _ = _decide(_edit("     1\ta = 1"), text)
    assert not rewrite and "several places" in reason
    # ... unless the call asks to replace every occurrence.
    assert _decide(_edit("     1\ta = 1", replace_all=True), text)[0]
    assert _decide(_edit("     1\ta = 1", expected=2), text)[0]
    assert not _decide(_edit("     1\ta = 1", expected=3), text)[0]


def test_two_different_matching_repairs_are_ambiguous() -> None:
    text = "alpha = 1\nbeta = 2\n"
    args = _edit("alpha = 1\nbeta = 2 # old")
    first = Candidate({**args, "old_str": "alpha = 1"}, "shrink_old_str", "rule_1")
    second = Candidate({**args, "old_str": "beta = 2"}, "other", "rule_2")
    rewrite, reason, _ = _decide(args, text, learned=[first, second])
    assert not rewrite and "ambiguous" in reason


def test_a_learned_rule_that_agrees_with_a_generic_repair_is_credited() -> None:
    args = _edit("     7\t    return 2")
    learned = Candidate({**args, "old_str": "    return 2"}, "strip_line_number_prefix", "rule_x")
    decision = decide(args, FILE, [*generic_candidates(args, FILE), learned])
    assert decision.candidate is not None and decision.candidate.rule_id == "rule_x"


def test_crlf_and_trailing_blanks() -> None:
    rewrite, _, args = _decide(_edit("    y = x + 1\r\n    return y", "a\r\nb"))
    assert rewrite and args == _edit("    y = x + 1\n    return y", "a\nb")
    crlf_file = FILE.replace("\n", "\r\n")
    rewrite, _, args = _decide(_edit("    y = x + 1\n    return y", "a\nb"), crlf_file)
    assert rewrite and args is not None and args["old_str"] == "    y = x + 1\r\n    return y"
    rewrite, _, args = _decide(_edit("    y = x + 1   \n    return y"))
    assert rewrite and args is not None and args["old_str"] == "    y = x + 1\n    return y"


def test_other_arguments_are_kept() -> None:
    args = {"path": "a.py", "old_str": "     3\t    return y", "new_str": "     3\t    return -y",
            "timeout": 5}
    decision = decide(args, FILE, generic_candidates(args, FILE))
    assert decision.candidate is not None
    assert decision.candidate.args == {"path": "a.py", "old_str": "    return y",
                                       "new_str": "    return -y", "timeout": 5}


@settings(derandomize=True, max_examples=200)
@given(old=st.text(max_size=30), text=st.text(max_size=80))
def test_a_rewrite_always_matches_the_file_as_the_call_asks(old: str, text: str) -> None:
    args = _edit(old)
    decision = decide(args, text, generic_candidates(args, text))
    if decision.candidate is not None:
        assert old not in text or not old
        assert text.count(str(decision.candidate.args["old_str"])) == 1


# ------------------------------------------------------------------------ Codex apply_patch

PATCH = ("*** Begin Patch\n*** Update File: a.py\n@@ def f(x):\n-     2\t    y = x + 1\n"
         "+     2\t    y = x + 2\n      3\t    return y\n*** End Patch")


def test_a_patch_with_gutters_is_repaired_when_every_hunk_then_matches_once() -> None:
    decision = decide_patch(PATCH, {"a.py": FILE}, generic_patch_candidates(PATCH))
    assert decision.candidate is not None
    assert decision.candidate.args["patch"] == (
        "*** Begin Patch\n*** Update File: a.py\n@@ def f(x):\n-    y = x + 1\n+    y = x + 2\n"
        "     return y\n*** End Patch")


def test_a_patch_is_left_alone_when_it_applies_a_file_is_unreadable_or_it_is_ambiguous() -> None:
    clean = generic_patch_candidates(PATCH)[0].args["patch"]
    assert decide_patch(clean, {"a.py": FILE}, generic_patch_candidates(clean)).candidate is None
    assert decide_patch(PATCH, {}, generic_patch_candidates(PATCH)).candidate is None
    twice = FILE + FILE
    assert decide_patch(PATCH, {"a.py": twice}, generic_patch_candidates(PATCH)).candidate is None
