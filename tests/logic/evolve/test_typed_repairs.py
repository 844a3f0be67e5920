"""Typed repairs: learned from (failed call, fixing call), offered only where they fit, named in
the calls' own words, rewritten only when exact."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.evolve.repairs import Spec
from slmactor.logic.evolve.rules import RuleBook
from slmactor.logic.failures.fingerprint import Fingerprint, analyze

NOW = 1_800_000_000.0


def shell(command: str) -> tr.Call:
    return tr.Call("Bash", {"command": command}, "shell")


def test_interpreter_substitution_is_learned_and_rewrites_the_next_call() -> None:
    repair = tr.infer(shell("python -m pytest tests/a.py -q"),
                      shell(".venv/bin/python -m pytest tests/a.py -q"), "missing_module")
    assert repair is not None and repair.kind == "substitute_command" and repair.valid
    later = shell("python -m pytest tests/b.py")
    assert tr.fits(repair, later)
    done = tr.rewrite(repair, later)
    assert done is not None and done.command == ".venv/bin/python -m pytest tests/b.py"
    # Not for a command that does not start with the substituted words.
    assert not tr.fits(repair, shell("node index.js"))
    text = tr.advice(repair, later, "No module named pytest", 3, 3)
    assert "`.venv/bin/python`" in text and "3 of 3 times" in text
    assert "other arguments" not in text


def test_read_limit_is_an_argument_of_the_read_tool_named_as_the_harness_spells_it() -> None:
    failed = tr.Call("Read", {"path": "/p/big.md"}, "read")
    repair = tr.infer(failed, tr.Call("Read", {"path": "/p/big.md", "limit": 200}, "read"),
                      "output_too_large")
    assert repair is not None and repair.kind == "bound_output"
    other = tr.Call("read_file", {"absolute_path": "/q/huge.md"}, "read")  # Gemini's tool
    assert tr.fits(repair, other)
    assert "`limit: 200`" in tr.advice(repair, other, "too large", 1, 1)
    # A call that already passes a limit is not one this repair can fix.
    assert not tr.fits(repair, tr.Call("Read", {"path": "/x", "limit": 10}, "read"))


def test_a_fix_that_also_changed_content_is_advice_never_a_rewrite() -> None:
    failed = tr.Call("bash", {"command": None, "blocks": 2}, "shell")
    fix = tr.Call("bash", {"command": "sed -n '1,5p' a.py", "blocks": 1}, "shell")
    repair = tr.infer(failed, fix, "format_rejected")
    assert repair is not None and tr.rewrite(repair, failed) is None


def test_same_call_resent_is_a_precondition_and_never_rewritten() -> None:
    call = tr.Call("Edit", {"path": "/p/a.go", "old_str": "x", "new_str": "y"}, "edit")
    repair = tr.infer(call, call, "tool_misuse", "other")
    assert repair is not None and repair.kind == "precondition"
    assert tr.rewrite(repair, call) is None
    assert "Read `/p/a.go` first" in tr.advice(repair, call, "not read", 2, 2, read_tool="Read")


def test_an_edit_resent_with_other_text_teaches_reading_the_file_first() -> None:
    failed = tr.Call("replace_in_file", {"path": "src/a.js", "patch": "<<<<<<< SEARCH\nold"}, "edit")
    fixed = tr.Call("replace_in_file", {"path": "src/a.js", "patch": "<<<<<<< SEARCH\nreal"}, "edit")
    repair = tr.infer(failed, fixed, "edit_not_found")
    assert repair is not None and repair.kind == "precondition" and tr.rewrite(repair, failed) is None
    later = tr.Call("Edit", {"path": "b.py", "old_str": "x", "new_str": "y"}, "edit")
    text = tr.advice(repair, later, "String to replace not found in file.", 4, 4, read_tool="Read")
    assert "Read `b.py` first, then the Edit resent with its text copied from what it read" in text
    assert "4 of 4 times" in text and "same Edit call" not in text
    # Another file, or a setting changed too: not a read-again.
    elsewhere = tr.Call("replace_in_file", {"path": "src/b.js", "patch": "x"}, "edit")
    assert getattr(tr.infer(failed, elsewhere, "edit_not_found"), "kind", None) != "precondition"
    # A misuse that reading does not fix (ambiguity) learns nothing from new text.
    assert tr.infer(failed, fixed, "edit_ambiguous") is None


def test_a_learned_repair_answers_only_where_its_precondition_holds() -> None:
    from slmactor.logic.evolve.suggest import lookup

    book = RuleBook()
    missing = analyze("read_file", "Error reading file: File not found: /p/docs/a.md")
    tr.learn(book, missing, tr.Call("read_file", {"path": "docs/a.md"}, "read"),
             tr.Call("read_file", {"path": "docs/guide/a.md"}, "read"), NOW, run="s1")
    other = tr.Call("read_file", {"path": "src/main.py"}, "read")
    # The path correction is for docs/a.md only: for another missing file nobody names it.
    assert tr.choose(book, missing, "", other) is None
    assert lookup(book, missing, "", json.dumps(other.args)) is None


def test_tool_switch_path_correction_and_do_not_retry() -> None:
    failed = tr.Call("Read", {"path": "/p/src"}, "read")
    switch = tr.infer(failed, tr.Call("LS", {"path": "/p/src"}, "read"), "tool_misuse")
    assert switch is not None and switch.kind == "switch_tool" and switch.tool == "LS"
    moved = tr.infer(tr.Call("Read", {"path": "/p/docs/a.md"}, "read"),
                     tr.Call("Read", {"path": "/p/doc/a.md"}, "read"), "path_not_found")
    assert moved is not None and moved.kind == "correct_path"
    done = tr.rewrite(moved, tr.Call("Read", {"path": "/p/docs/a.md"}, "read"))
    assert done is not None and done.path == "/p/doc/a.md"
    stop = tr.infer(tr.Call("mcp__x__search", {"q": "a"}, ""), None, "service_exhausted")
    assert stop is not None and stop.kind == "do_not_retry" and not stop.retry
    assert tr.rewrite(stop, tr.Call("mcp__x__search", {"q": "a"}, "")) is None


def test_pair_finds_the_call_that_got_past_the_failure() -> None:
    calls = [(shell("pytest -q"), True), (tr.Call("Read", {"path": "a"}, "read"), False),
             (shell("ls"), False), (shell("uv run pytest -q"), False)]
    assert tr.pair(calls, 0) == 3
    assert tr.pair([(shell("pytest -q"), True), (shell("pytest -q"), True)], 0) is None


def test_a_typed_repair_is_a_rule_with_beta_confidence_and_evidence() -> None:
    book = RuleBook()
    fp = analyze("Bash", "Exit code 127\nbash: pytest: command not found", command="pytest -q",
                 family="shell")
    repair = tr.infer(shell("pytest -q"), shell("uv run pytest -q"), fp.cls)
    assert repair is not None
    evidence = tr.evidence(shell("uv run pytest -q"))
    rule = book.learn(fp, repair, NOW, evidence="run1 " + evidence, proven=True)
    assert rule is not None and rule.successes == 1 and rule.confidence == 0.5
    again = book.learn(fp, repair, NOW, evidence="run2 " + evidence, proven=True)
    assert again is not None and again.id == rule.id and again.successes == 2
    assert again.repair.spec is not None and again.repair.spec.what == {
        "from": "pytest", "to": "uv run pytest", "pre": "pytest"}
    assert again.to_dict()["repair"]["spec"] == repair.spec.to_dict()  # a map on the wire


def test_evidence_is_redacted() -> None:
    text = tr.evidence(shell("curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz0123456789'"))
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789" not in text


_WORD = st.text(alphabet="abcdefghij./-_", min_size=1, max_size=8)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=6), st.lists(_WORD, min_size=1, max_size=3),
       st.lists(_WORD, min_size=1, max_size=3))
def test_a_learned_substitution_rewrites_its_own_failure_into_its_fix(
        rest: list[str], old: list[str], new: list[str]) -> None:
    failed, fix = shell(" ".join(old + rest)), shell(" ".join(new + rest))
    repair = tr.infer(failed, fix, "missing_module")
    if repair is None or repair.kind != "substitute_command":
        return
    done = tr.rewrite(repair, failed)
    assert done is not None and done.command == fix.command


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.dictionaries(st.sampled_from(["file_path", "limit", "offset", "old_string", "x"]),
                       st.one_of(st.integers(0, 500), _WORD), max_size=4),
       st.dictionaries(st.sampled_from(["file_path", "limit", "offset", "old_string", "x"]),
                       st.one_of(st.integers(0, 500), _WORD), max_size=4))
def test_a_rewrite_of_its_own_failure_is_the_fix_or_nothing(a: dict[str, object],
                                                           b: dict[str, object]) -> None:
    failed, fix = tr.Call("Read", a, "read"), tr.Call("Read", b, "read")
    repair = tr.infer(failed, fix, "output_too_large")
    if repair is None:
        return
    assert repair.valid
    done = tr.rewrite(repair, failed)
    assert done is None or dict(done.args) == dict(fix.args)


def test_a_switch_to_a_tool_that_takes_content_never_carries_another_file_s_content() -> None:
    # Cline: a `replace_in_file` whose SEARCH block missed, got past by `write_to_file` of the
    # whole file. The switch is what memory knows; the new file's text is the model's work.
    failed = tr.Call("replace_in_file", {"path": "src/a.js", "patch": "<<<<<<< SEARCH\nx\n"}, "edit")
    fix = tr.Call("write_to_file", {"path": "src/a.js", "content": "import React from 'react';\n"}, "edit")
    switch = tr.infer(failed, fix, "edit_not_found")
    assert switch is not None and switch.kind == "switch_tool"
    assert switch.spec is not None and "content" not in json.dumps(switch.spec.what.get("set"))
    later = tr.Call("replace_in_file", {"path": "src/b.js", "patch": "<<<<<<< SEARCH\ny\n"}, "edit")
    assert tr.rewrite(switch, later) is None  # no rewrite: b.js would get a.js's text
    assert "`write_to_file` instead of `replace_in_file`" in tr.advice(switch, later, "", 3, 3)


def test_a_switch_learned_with_content_in_its_settings_is_never_rewritten() -> None:
    # A rule stored before content was left to the model still holds the text it saw.
    failed = tr.Call("replace_in_file", {"path": "a.js", "patch": "x"}, "edit")
    stored = tr.infer(failed, tr.Call("write_to_file", {"path": "a.js", "mode": "w"}, "edit"),
                      "edit_not_found")
    assert stored is not None
    assert stored.spec is not None
    what = {k: v for k, v in stored.spec.what.items() if k != "partial"}
    legacy = dataclasses.replace(stored, spec=Spec(stored.spec.when, {
        **what, "set": {"content": "import React from 'react';"}}))
    assert tr.rewrite(legacy, tr.Call("replace_in_file", {"path": "b.js", "patch": "y"}, "edit")) is None


def test_advice_names_the_other_fix_that_also_worked_here() -> None:
    book = RuleBook()
    error = ("[replace_in_file for 'src/a.js'] Result:\nThe tool execution failed with the following "
             "error:\n<error>\nThe SEARCH block:\nx\n...does not match anything in the file.\n</error>")
    fp = analyze("replace_in_file", error, family="edit")
    failed = tr.Call("replace_in_file", {"path": "src/a.js", "patch": "<<<<<<< SEARCH\nx\n"}, "edit")
    resend = tr.Call("replace_in_file", {"path": "src/a.js", "patch": "<<<<<<< SEARCH\nz\n"}, "edit")
    rewrite_whole = tr.Call("write_to_file", {"path": "src/a.js", "content": "all of it"}, "edit")
    for n in range(3):
        assert tr.learn(book, fp, failed, resend, NOW + n, run=f"r{n}") is not None
    assert tr.learn(book, fp, failed, rewrite_whole, NOW + 9, run="r9") is not None
    choice = tr.choose(book, fp, error, failed, read_tool="read_file")
    assert choice is not None and choice.rewritten is None
    assert "read_file `src/a.js` first" in choice.text  # the fix with the longer record first
    assert "Also worked here: `write_to_file` instead of `replace_in_file` (1 of 1 time)." in choice.text
    # One fix known: nothing else is offered.
    only = RuleBook()
    tr.learn(only, fp, failed, resend, NOW, run="r0")
    single = tr.choose(only, fp, error, failed, read_tool="read_file")
    assert single is not None and "Also worked" not in single.text


def _book_with(pair: tuple[tr.Call, tr.Call], fp: Fingerprint, successes: int) -> RuleBook:
    """A book that learned `pair` (failed call, its fix) and saw the fix work `successes` times."""
    book = RuleBook()
    rule = tr.learn(book, fp, *pair, NOW)
    assert rule is not None
    for n in range(successes - 1):
        book.observe(rule.id, True, NOW + n + 1)
    return book


def test_a_fix_of_the_model_s_own_work_is_named_never_applied_in_its_place() -> None:
    # A runtime error (what the program said about the code) got past 3 times by the same
    # substitution: it is told, with its record, and the model decides.
    message = "Error: No agent running in worktree 'w1'"
    failed = tr.Call("exec_command", {"cmd": "workmux capture w1"}, "shell")
    fix = tr.Call("exec_command", {"cmd": "workmux status w1"}, "shell")
    fp = analyze("exec_command", message, command="workmux capture w1", family="shell")
    assert fp.cls in tr.MODEL_CLASSES
    book = _book_with((failed, fix), fp, 3)
    picked = tr.choose(book, fp, message, failed)
    assert picked is not None and picked.rewritten is None
    assert "workmux status" in picked.text


def test_a_bounded_read_is_advice_the_model_picks_its_range() -> None:
    # The limit that worked last time is one range of many: named, not imposed.
    message = ("<tool_use_error>File content (14572 tokens) exceeds maximum allowed tokens (10000). "
               "Use offset and limit parameters to read specific portions of the file.</tool_use_error>")
    failed = tr.Call("Read", {"path": "/p/spec.md"}, "read")
    fix = tr.Call("Read", {"path": "/p/spec.md", "limit": 200}, "read")
    fp = analyze("Read", message, family="read")
    book = _book_with((failed, fix), fp, 4)
    picked = tr.choose(book, fp, message, failed)
    assert picked is not None and picked.rewritten is None and "`limit: 200`" in picked.text


def test_a_switch_of_a_call_carrying_content_is_never_a_rewrite() -> None:
    # A switch that keeps only the path, applied to a Cline replace_in_file: the new call would
    # lose its diff, which is the model's to write again — only the advice, never a rewrite.
    learned = tr.infer(tr.Call("read_file", {"path": "a.py"}, "read"),
                       tr.Call("list_files", {"path": "a.py"}, "search"), "tool_misuse")
    assert learned is not None and learned.kind == "switch_tool"
    switch = dataclasses.replace(learned, spec=Spec({"family": "edit", "tool": "replace_in_file"},
                                                    {"keep": ["path"], "set": {},
                                                     "tool": "replace_in_file"}))
    failed = tr.Call("replace_in_file", {"path": "c.py", "patch": "<<<<<<< SEARCH\nq\n"}, "edit")
    assert tr.fits(switch, failed)
    assert tr.rewrite(switch, failed) is None
    # Without content to lose the same switch is a rewrite.
    assert tr.rewrite(switch, tr.Call("replace_in_file", {"path": "c.py"}, "edit")) is not None


def test_a_substitution_learned_on_the_model_s_own_failure_never_rewrites_before_a_run() -> None:
    message = "Error: No agent running in worktree 'w1'"
    failed = tr.Call("exec_command", {"cmd": "workmux capture w1"}, "shell")
    fix = tr.Call("exec_command", {"cmd": "workmux status w1"}, "shell")
    fp = analyze("exec_command", message, command="workmux capture w1", family="shell")
    book = _book_with((failed, fix), fp, 5)
    assert tr.preflight(book, tr.Call("exec_command", {"cmd": "workmux capture w2"}, "shell")) is None
    # an interpreter learned on a missing module still is (the pre-flight's purpose)
    missing = "ModuleNotFoundError: No module named 'pytest'"
    fp = analyze("Bash", missing, command="python -m pytest -q", family="shell")
    book = _book_with((shell("python -m pytest -q"), shell(".venv/bin/python -m pytest -q")), fp, 3)
    done = tr.preflight(book, shell("python -m pytest tests/b.py"))
    assert done is not None and done.rewritten is not None


def test_an_added_selector_is_shown_with_the_command_it_worked_on_and_not_rewritten_elsewhere(
) -> None:
    # Seen in a mini-swe-agent session: `pytest A` timed out, `pytest A -k integrate` worked;
    # later `pytest B` timed out. `-k integrate` names tests of A: saying `pytest B -k
    # integrate` worked, or running it, would be untrue.
    repair = tr.infer(shell("pytest xarray/tests/test_units.py"),
                      shell("pytest xarray/tests/test_units.py -k integrate"), "timeout")
    assert repair is not None and repair.kind == "change_args"
    other = shell("pytest sklearn/impute/tests/test_impute.py")
    assert tr.fits(repair, other) and tr.rewrite(repair, other) is None
    text = tr.advice(repair, other, "timed out", 1, 1)
    assert "`pytest xarray/tests/test_units.py -k integrate`" in text
    assert "test_impute.py -k integrate" not in text
    same = tr.rewrite(repair, shell("pytest xarray/tests/test_units.py"))
    assert same is not None and same.command == "pytest xarray/tests/test_units.py -k integrate"
    # Options and numbers alone carry over to another command of the same head.
    flags = tr.infer(shell("pytest a.py"), shell("pytest a.py --timeout 600 -q"), "timeout")
    assert flags is not None
    moved = tr.rewrite(flags, shell("pytest b.py"))
    assert moved is not None and moved.command == "pytest b.py --timeout 600 -q"
    # A path is not an option, however short (`.`).
    here = tr.infer(shell("pytest -x"), shell("pytest -x ."), "timeout")
    assert here is not None and tr.rewrite(here, shell("pytest -x -q")) is None


def test_a_range_set_inside_a_read_s_one_file_entry_is_a_bounded_read() -> None:
    # Cline 3's `read_files {files: [{path, start_line, end_line}]}`, as its hook's `parameters`
    # carry it (the list as JSON text) and as its tool takes it (a list).
    for files in ('[{"path": "/p/big.log"}]', [{"path": "/p/big.log"}]):
        failed = tr.Call("read_files", {"files": files}, "read")
        fix = tr.Call("read_files", {"files": [{"path": "/p/big.log", "start_line": 1,
                                                "end_line": 100}]}, "read")
        repair = tr.infer(failed, fix, "output_too_large")
        assert repair is not None and repair.kind == "bound_output"
        assert tr.named_fix(repair, failed) == "read_files with `start_line: 1`, `end_line: 100`"
        done = tr.rewrite(repair, tr.Call("read_files", {"files": [{"path": "/p/other.log"}]},
                                          "read"))
        assert done is not None and done.args == {
            "files": [{"path": "/p/other.log", "start_line": 1, "end_line": 100}]}
    # An entry that names its range already, or several files: not this repair's to change.
    assert not tr.fits(repair, tr.Call("read_files", {"files": [{"path": "/x", "end_line": 9}]},
                                       "read"))
    assert not tr.fits(repair, tr.Call("read_files", {"files": [{"path": "/x"}, {"path": "/y"}]},
                                       "read"))


def test_the_same_file_read_bounded_by_another_program_got_past_a_cut_read() -> None:
    # Codex's unified exec cut `cat big.log`; `sed -n '1,100p' big.log` got past it.
    assert tr.same_target(shell("cat big.log"), shell("sed -n '1,100p' big.log"))
    assert tr.same_target(shell("cat logs/app.log"), shell("head -n 50 logs/app.log"))
    # Another file, or a program that bounds nothing on other arguments: not the same target.
    assert not tr.same_target(shell("cat a.log"), shell("head -n 5 b.log"))
    assert not tr.same_target(shell("cat -A a.log"), shell("python3 show.py a.log"))


def test_a_command_that_only_lost_its_quotes_teaches_no_added_argument() -> None:
    # The same words, quoted otherwise: nothing was added, so "Add `` to the command" is no fix.
    repair = tr.infer(shell("grep -n 'a b' x.py"), shell('grep -n "a b" x.py'), "runtime_error")
    assert repair is None or repair.kind != "change_args"


def test_a_script_of_several_lines_teaches_no_substitution_of_its_words() -> None:
    # Its lines run together would name a command nobody ran (`cd /p ssh-add -l`).
    failed = shell("cd /p/wakil\ngit add a.md\ngit commit -m 'docs'")
    assert tr.infer(failed, shell("cd /p/wakil\nssh-add -l 2>&1\ngit commit -m 'docs'"),
                    "runtime_error") is None
    assert tr.infer(shell("cd /p && make"), shell("cd /p && make -j4 && make install"),
                    "runtime_error") is None
