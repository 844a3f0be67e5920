"""The replay engine over real histories (`logic/loop/histories`): the fix's distinguishing part,
call- and memory-derivable decided from the calls alone, time order, what a rewrite before the
call and advice save, wrong rewrites (of a failed call and of one that worked), and the figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.loop.histories.engine import (
    ADVICE,
    BEFORE,
    History,
    Step,
    Told,
    replay,
)
from slmactor.logic.loop.histories.facets import call_derivable, facets, memory_key, names_fix
from slmactor.logic.loop.histories.report import ALL, figures, render


def shell(command: str, **more: Any) -> tr.Call:
    return tr.Call("Bash", {"command": command, **more}, "shell")


def read(path: str, **more: Any) -> tr.Call:
    return tr.Call("Read", {"path": path, **more}, "read")  # the engine's calls speak the shared words


READS = ["Read"]


def test_the_distinguishing_part_is_what_the_fix_changed() -> None:
    assert facets(shell("python -m pytest"), shell(".venv/bin/python -m pytest"), READS) == \
        [[".venv/bin/python"]]
    assert facets(shell("npm run dev"), shell("npm run dev", run_in_background=True), READS) == \
        [["`run_in_background", "run_in_background:", "run_in_background="]]
    assert facets(read("a/x.py"), read("a/b/x.py"), READS) == [["a/b/x.py", "a/b/x.py"]]
    edit = tr.Call("Edit", {"path": "a.py", "old_str": "1\tx = 1", "new_str": "x = 2"}, "edit")
    fixed = tr.Call("Edit", {"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"}, "edit")
    assert facets(edit, fixed, READS) == [READS]  # read, then resend: the text is the model's
    bounded = facets(read("big.json"), read("big.json", offset=1, limit=400), READS)
    assert names_fix("Read it with `offset: 1` and `limit: 400`", bounded)
    assert not names_fix("Read it in parts", bounded)


def test_call_derivable_when_the_error_names_the_fix() -> None:
    big, fix = read("big.json"), read("big.json", offset=1, limit=400)
    parts = facets(big, fix, READS)
    error = "File content (912.4KB) exceeds maximum allowed size (256KB). Please use offset and limit parameters"
    assert call_derivable(big, fix, error, parts, READS, "")
    assert not call_derivable(big, fix, "File too large", parts, READS, "")
    assert call_derivable(big, fix, "anything", parts, READS, "strip_line_number_prefix")
    wrong, right = shell("python -m pytest"), shell(".venv/bin/python -m pytest")
    assert not call_derivable(wrong, right, "No module named pytest", facets(wrong, right, READS), READS, "")
    assert memory_key("shell", "dependency_missing", facets(wrong, right, READS)) == \
        memory_key("shell", "dependency_missing", [[".venv/bin/python"]])


@dataclass
class Memory:
    """A memory that learns the command fixes it is shown and rewrites them before the call
    after `proof` successes (the engine's contract, without the product's rules)."""

    proof: int = 2
    told: str = "slmactor memory: {fix} worked"
    observed: list[tuple[str, bool]] = field(default_factory=list)

    def start(self) -> dict[str, list[str]]:
        return {}

    def fingerprint(self, step: Step) -> Fingerprint:
        cls = "not_a_failure" if "no matches" in step.error else "dependency_missing"
        return Fingerprint(id=f"fp_{cls}_{step.call.family}", cls=cls, tool=step.call.tool, language="",
                           model_family="", norm=step.error, salient=step.error)

    def before(self, state: dict[str, list[str]], harness: str, call: tr.Call) -> Told | None:
        fixes = state.get(call.command, [])
        if len(fixes) >= self.proof:
            return Told(shell(fixes[-1]), by=f"rule:{call.command}", learned=True)
        return None

    def after(self, state: dict[str, list[str]], harness: str, fp: Fingerprint, step: Step,
              known_paths: Sequence[str], now: float) -> Told:
        fixes = state.get(step.call.command)
        return Told(text=self.told.format(fix=fixes[-1]), by=f"rule:{step.call.command}",
                    learned=True) if fixes else Told()

    def observe(self, state: Any, told: Told, ok: bool, now: float) -> None:
        self.observed.append((told.by, ok))

    def learn(self, state: dict[str, list[str]], fp: Fingerprint, failed: Step, fix: Step | None,
              now: float, run: str) -> tuple[str, ...]:
        if fix is None:
            return ()
        state.setdefault(failed.call.command, []).append(fix.call.command)
        return (f"rule:{failed.call.command}",)

    def read_tools(self, tool: str) -> list[str]:
        return READS

    def shipped_transform(self, failed: tr.Call, fix: tr.Call) -> str:
        return ""

    def named_paths(self, call: tr.Call) -> list[str]:
        return []


def session(name: str, started: float, harness: str = "claude") -> History:
    return History(harness, "shop", name, started, (
        Step(shell("python -m pytest"), False, "No module named pytest"),
        Step(shell("ls"), True),
        Step(shell(".venv/bin/python -m pytest"), True),
        Step(shell("rg TODO"), False, "no matches"),
    ))


def test_repeats_are_told_then_rewritten_before_the_call_in_time_order() -> None:
    memory = Memory()
    # Given out of order: replayed by start time.
    result = replay([session("s3", 300.0, "codex"), session("s1", 100.0), session("s2", 200.0)], memory)
    by = {f.session: f for f in result.failures}
    assert set(by) == {"s1", "s2", "s3"}  # "no matches" is benign: not a failure
    assert (by["s1"].repeat, by["s1"].answer, by["s1"].right) == (False, "nothing", False)
    assert (by["s2"].repeat, by["s2"].from_memory, by["s2"].answer, by["s2"].right) == (True, True, ADVICE, True)
    assert (by["s3"].answer, by["s3"].right, by["s3"].wrong) == (BEFORE, True, False)
    # Advice saves the call between the failure and the fix; a rewrite before the call saves
    # the failed call too, and every turn up to the fix.
    assert (by["s2"].failed_avoided, by["s2"].turns_avoided) == (0, 1)
    assert (by["s3"].failed_avoided, by["s3"].turns_avoided) == (1, 2)
    table = figures(result)
    assert table["claude"].advice_naming_fix == 1 and table["codex"].repaired_before == 1
    assert table[ALL].derivable == table[ALL].derivable_right == 2
    assert table[ALL].not_failures == 3 and table[ALL].rules_learned == 1  # one rule, confirmed twice
    assert "Memory got 100% of derivable repeats right (2 of 2) with 0 wrong rewrite(s)" in render(result)
    assert memory.observed == [("rule:python -m pytest", True), ("rule:python -m pytest", True)]


def test_a_rewrite_that_is_not_the_fix_and_one_of_a_call_that_worked_are_wrong() -> None:
    memory = Memory(proof=1)
    worked = History("claude", "shop", "s3", 300.0, (Step(shell("python -m pytest"), True),))
    other = History("claude", "shop", "s2", 200.0, (
        Step(shell("python -m pytest"), False, "No module named pytest"),
        Step(shell("uv run pytest"), True)))
    result = replay([session("s1", 100.0), other, worked], memory)
    wrong = next(f for f in result.failures if f.session == "s2")
    assert (wrong.answer, wrong.wrong, wrong.failed_avoided) == (BEFORE, True, -1)
    assert [(u.session, u.rewritten.command) for u in result.unneeded] == [
        ("s3", ".venv/bin/python -m pytest")]
    assert figures(result)[ALL].wrong_rewrites == 2
    assert ("rule:python -m pytest", False) in memory.observed


@settings(derandomize=True, max_examples=40)
@given(st.permutations([session("a", 1.0), session("b", 2.0, "codex"), session("c", 3.0, "gemini")]))
def test_the_replay_depends_on_time_not_on_the_order_histories_are_given(order: list[History]) -> None:
    result = replay(order, Memory())
    assert [(f.session, f.answer, f.right) for f in result.failures] == [
        ("a", "nothing", False), ("b", ADVICE, True), ("c", BEFORE, True)]


def test_a_step_keeps_the_exit_code_its_harness_reported_and_the_fingerprint_reads_it() -> None:
    # A ledger call whose output says no status: the exit code the harness gave as a field is
    # what tells a quiet `grep -q` finding nothing (no failure) from a failure — as the hook,
    # which reads the same field, tells it. One failure, one id on both paths.
    from slmactor import harnesses
    from slmactor.actors.rules import analyze_call
    from slmactor.cli.loop.histories import ProductMemory, call_of
    from slmactor.logic.loop.histories.engine import steps_of

    args = {"command": "grep -q TODO notes.txt"}
    entry = {"e": "call", "tool": "Bash", "family": "shell", "ok": False, "error": "",
             "exit_code": 1, "command": args["command"]}
    (step,) = steps_of([entry], lambda e: call_of(str(e["tool"]), dict(args)))
    assert step.record is not None and step.record.exit_code == 1
    replayed = ProductMemory().fingerprint(step)
    hooked = analyze_call(harnesses.get("claude").tool_call("Bash", args, ok=False, error="",
                                                            exit_code=1))
    assert replayed.id == hooked.id and replayed.benign
    (silent,) = steps_of([{**entry, "exit_code": None}], lambda e: call_of("Bash", dict(args)))
    assert not ProductMemory().fingerprint(silent).benign


def test_a_replayed_step_is_fingerprinted_as_the_import_reads_its_record() -> None:
    # A SWE-agent action names its program as the tool (`cd`), which no room's table has: the
    # ledger keeps its command, and reflection over an imported session reads the failure with
    # it (a reproduction script's traceback is no failure). The replay reads the same record.
    from slmactor import harnesses
    from slmactor.cli.loop.histories import ProductMemory, call_of
    from slmactor.logic.failures.fingerprint import fingerprint
    from slmactor.logic.loop.histories.engine import steps_of
    from slmactor.logic.loop.reflect import failed_call
    from slmactor.logic.loop.run_report import FailureEvent

    action = "cd /testbed && python reproduce_error.py"
    # (The observation as the trajectory cut it, in the fetched corpus's SWE-agent sessions.)
    error = ('Traceback (most recent call last):\r\n  File "/testbed/reproduce_error.py", line 6, '
             "in <module>\r\n    from django.contrib.m")
    entry = {"e": "call", "tool": "cd", "ok": False, "error": error, "args": action, "command": action}
    (step,) = steps_of([entry], lambda e: call_of("cd", {"command": action}))
    imported = fingerprint(failed_call(FailureEvent.from_dict(
        {"tool": "cd", "message": error, "failed_args": action, "command": action}, "", ""),
        harnesses.tool_family))
    replayed = ProductMemory().fingerprint(step)
    assert replayed.id == imported.id and replayed.benign and imported.benign
