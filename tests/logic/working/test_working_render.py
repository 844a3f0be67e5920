"""Digest and render of working memory (SPEC S-1.7 to S-1.9, S-0.4/S-0.5 budget fitting)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.strings import count_tokens_chars
from slmactor.logic.working.digest import DIGEST_TRUNCATED, Digest, render_digest
from slmactor.logic.working.memory import MIRROR_BUDGET, WorkingMemory, working_markdown
from slmactor.logic.working.records import CommandRun, FailureNote


def full() -> WorkingMemory:
    """A run with every list at its cap."""
    w = WorkingMemory("run-1")
    w.start("run-1", "Fix the flaky HTTP client retry\nsecond line of the task", "worker")
    w.focus([f"pkg/http/file{i}.go" for i in range(16)])
    for i in range(12):
        w.record_tool("ws_read", f"pkg/http/read{i}.go")
        w.record_tool("ws_edit", f"pkg/http/edit{i}.go")
    for i in range(5):
        w.record_tool("ws_shell", command=f"go test ./pkg/http/... -run Test{i}", ok=i != 2)
    for i in range(8):
        w.fail(key=f"k{i}", tool="ws_edit", path=f"pkg/http/edit{i}.go", message=f"old_string not found {i}")
    for i in range(8, 16):
        w.fail(key=f"k{i}", tool="ws_shell", message=f"exit status {i}")
        w.resolve(f"k{i}", f"reran with -count=1 ({i})", "retry")
    for i in range(5):
        w.decide(f"keep the retry loop in client.go, decision {i}")
    w.summarize("Read the client, found the retry bug, edited twice, tests now pass except one. " * 5)
    return w


def test_render_is_empty_when_nothing_is_known() -> None:
    w = WorkingMemory("run-1")
    assert w.render() == ""
    w.start("run-1")  # a run id alone is not worth a block
    assert w.render() == ""
    w.record_tool("TodoWrite")  # a call of an unclassified tool leaves the digest empty too
    assert w.render() == ""


def test_render_heading_order_is_exact() -> None:
    w = WorkingMemory("r")
    w.start("r", "Fix the bug\nmore", "worker")
    w.focus(["b.go", "a.go"])
    w.summarize("looked around")
    w.record_tool("ws_read", "a.go")
    w.record_tool("ws_edit", "b.go")
    w.record_tool("ws_shell", command="go test ./...", ok=False, error="FAIL")
    w.fail(key="k", tool="ws_edit", path="c.go", message="old_string not found")
    w.fail(key="k2", tool="ws_grep", message="no matches")
    w.resolve("k2", "", "llm")
    w.decide("keep it small")
    assert w.render() == (
        "## Working memory (this run)\n"
        "Current task: Fix the bug\n"
        "Role: worker\n"
        "Focus files: b.go, a.go\n"
        "\n"
        "So far: looked around\n"
        "\n"
        "Files read:\n"
        "- a.go\n"
        "\n"
        "Files edited:\n"
        "- b.go\n"
        "\n"
        "Commands run + exit status:\n"
        "- `go test ./...` → failed\n"
        "\n"
        "Failed tool calls:\n"
        "- ws_shell: FAIL\n"
        "- ws_edit c.go: old_string not found\n"
        "\n"
        "Decisions:\n"
        "- keep it small\n"
        "\n"
        "Already fixed this run (do not redo):\n"
        "- no matches → fixed by llm\n"
    )


def test_render_with_only_a_digest_still_has_the_heading() -> None:
    w = WorkingMemory("r")
    w.record_tool("read", "x.py")
    assert w.render() == "## Working memory (this run)\n\nFiles read:\n- x.py\n"


def test_digest_shows_the_newest_three_open_failures() -> None:
    w = WorkingMemory("r")
    for i in range(5):
        w.fail(key=f"k{i}", tool="t", message=f"m{i}")
    assert [f.message for f in w.digest().failures] == ["m2", "m3", "m4"]


def test_fixed_by_falls_back_to_resolved_by_then_unknown() -> None:
    w = WorkingMemory("r")
    for key, res, by in (("a", "re-read", "rule:r1"), ("b", "", "rule:r2"), ("c", "", "")):
        w.fail(key=key, message=f"msg {key}")
        w.resolve(key, res, by)
    assert w.digest().extra == {
        "Already fixed this run (do not redo)": [
            "msg a → fixed by re-read",
            "msg b → fixed by rule:r2",
            "msg c → fixed by unknown",
        ]
    }


def test_render_digest_extra_keys_sorted_after_decisions() -> None:
    d = Digest(decisions=["d"], extra={"Zeta": ["z"], "Alpha": ["a"], "Empty": []})
    assert render_digest(d, 10_000) == "Decisions:\n- d\n\nAlpha:\n- a\n\nZeta:\n- z\n\n"


def test_render_digest_truncates_to_byte_budget_with_marker() -> None:
    d = Digest(files_read=[f"file{i}.py" for i in range(100)])
    out = render_digest(d, 200)
    assert out.endswith(DIGEST_TRUNCATED)
    assert len(out.encode()) <= 200
    assert out.startswith("Files read:\n- file0.py\n")
    assert render_digest(d, 5) == ""
    assert render_digest(Digest(), 1000) == ""


def test_failure_line_forms() -> None:
    d = Digest(
        failures=[
            FailureNote(key="1", tool="ws_edit", path="a.go", message="boom"),
            FailureNote(key="2", tool="ws_shell", message="exit 1"),
            FailureNote(key="3", message="bare message"),
            FailureNote(key="4", tool="ws_read", path="b.go"),
        ],
        commands=[CommandRun("make", True)],
    )
    assert render_digest(d, 10_000) == (
        "Commands run + exit status:\n- `make` → ok\n\n"
        "Failed tool calls:\n- ws_edit a.go: boom\n- ws_shell: exit 1\n- bare message\n- ws_read b.go\n\n"
    )


def test_default_budget_700_is_never_exceeded_at_full_caps() -> None:
    w = full()
    out = w.render()
    assert out.startswith("## Working memory (this run)\nCurrent task: Fix the flaky HTTP client retry\n")
    assert count_tokens_chars(out) <= 700
    assert w.render(0) == out and w.render(-5) == out


def test_small_budgets_are_respected_by_the_counter_in_use() -> None:
    w = full()

    def words(s: str) -> int:  # a deliberately different counter
        return len(s.split())

    for budget in (1, 10, 50, 100, 200, 400, 700, 4000):
        assert count_tokens_chars(w.render(budget)) <= budget
        assert words(w.render(budget, words)) <= budget


def test_large_budget_shows_everything() -> None:
    out = full().render(4000)
    assert "…" not in out
    assert out.count("\n- ") == 12 + 12 + 5 + 3 + 5 + 8


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    budget=st.integers(min_value=-5, max_value=1200),
    texts=st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=30),
    chars_per_token=st.integers(min_value=1, max_value=6),
)
def test_render_never_exceeds_budget_for_any_counter(budget: int, texts: list[str], chars_per_token: int) -> None:
    w = WorkingMemory("r")
    w.start("r", texts[0], "role")
    for i, t in enumerate(texts):
        w.record_tool(("ws_read", "ws_edit", "ws_shell")[i % 3], t[:40], args=t, ok=i % 4 != 0, error=t)
        w.decide(t)
        w.focus([t[:20]])
    w.summarize(" ".join(texts))

    def counter(s: str) -> int:
        return -(-len(s) // chars_per_token)

    out = w.render(budget, counter)
    assert counter(out) <= (budget if budget > 0 else 700)


def test_working_markdown_mirror() -> None:
    w = WorkingMemory("run-7")
    assert working_markdown(w, 1_790_000_000.0) == ""
    w.record_tool("ws_read", "a.go")
    w.record_tool("ws_read", "a.go")
    w.record_tool("ws_shell", command="go vet", ok=False, error="vet: bad")
    text = working_markdown(w, 1_790_000_000.0)
    assert text.startswith(
        "# Working memory\n\n"
        "_Snapshot from 2026-09-21T14:13:20Z. Regenerated every run; safe to delete._\n\n"
        "_Run `run-7`: 3 tool calls, 1 failed, 1 redundant._\n\n"
        "## Working memory (this run)\n"
    )
    assert "- `go vet` → failed\n" in text
    assert count_tokens_chars(full().render(MIRROR_BUDGET)) <= MIRROR_BUDGET
