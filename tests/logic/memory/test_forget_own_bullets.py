"""`forget_own_bullets`: what `memory forget project|all` and `evolve reset` take out of a
MEMORY.md — the bullets this user's daemon wrote, and nothing a person or a teammate wrote."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.memory.lessons import (
    GLOBAL_HEADER,
    PROJECT_HEADER,
    Lesson,
    forget_own_bullets,
    global_block,
    render_bullet,
)

KEY = b"k" * 32
OTHER = b"o" * 32
AT = "2026-01-01T00:00:00Z"
words = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=30).map(lambda s: s.strip() or "x")


def _ours(text: str) -> str:
    return render_bullet(Lesson("t1", "failure", text, AT), KEY) + "\n"


def _teammates(text: str) -> str:
    return render_bullet(Lesson("t2", "convention", text, AT), OTHER) + "\n"


def test_a_file_of_only_our_bullets_goes_entirely() -> None:
    text, removed = forget_own_bullets(PROJECT_HEADER + _ours("a") + _ours("b"), KEY, PROJECT_HEADER)
    assert (text, removed) == ("", 2)


def test_a_global_block_left_empty_loses_its_heading() -> None:
    block = global_block("Run r1", render_bullet(Lesson("t", "success", "ok", AT)), 1.7e9)
    mine = "- my note\n"
    text, removed = forget_own_bullets(GLOBAL_HEADER + mine + block, None, GLOBAL_HEADER)
    assert removed == 1 and "Run r1" not in text
    assert text.strip() == (GLOBAL_HEADER + mine).strip()  # blank lines aside


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.tuples(st.sampled_from(["ours", "teammate", "user", "prose"]), words), max_size=12))
def test_only_our_bullets_go_and_everything_else_stays_in_order(lines: list[tuple[str, str]]) -> None:
    render = {"ours": _ours, "teammate": _teammates, "user": lambda t: f"- {t}\n",
              "prose": lambda t: f"{t}\n"}
    source = PROJECT_HEADER + "".join(render[kind](t) for kind, t in lines)
    text, removed = forget_own_bullets(source, KEY, PROJECT_HEADER)
    kept = PROJECT_HEADER + "".join(render[kind](t) for kind, t in lines if kind != "ours")
    assert removed == sum(kind == "ours" for kind, _ in lines)
    assert text == ("" if kept == PROJECT_HEADER else kept)
    assert forget_own_bullets(text, KEY, PROJECT_HEADER)[1] == 0  # nothing more to take
