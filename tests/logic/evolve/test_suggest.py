"""Choosing a repair: several repairs per fingerprint, preconditions, ambiguity, and
argument-only rules carried to other languages and edit tools."""

from __future__ import annotations

import json

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.evolve.rule_seeds import seed_rules
from slmactor.logic.evolve.rules import MIN_APPLY_CONFIDENCE, RuleBook
from slmactor.logic.evolve.suggest import lookup
from slmactor.logic.evolve.transforms import apply_transform
from slmactor.logic.failures.fingerprint import analyze

NOW = 1_780_000_000.0
NOT_FOUND = "<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>"
MATCHES = ("<tool_use_error>Found 3 matches of the string to replace, but replace_all is false. "
           "To replace all occurrences, set replace_all to true. To replace only one occurrence, "
           "please provide more context to uniquely identify the instance.\nString: x"
           "</tool_use_error>")


def transform(name: str) -> Repair:
    return Repair("transform_args", guidance=f"repaired with {name}", transform=name, retry=True)


def edit(old: str, new: str = "y", **extra: object) -> str:
    return json.dumps({"path": "/src/a", "old_str": old, "new_str": new, **extra})


def book_with_seeds() -> RuleBook:
    book = RuleBook()
    for rule in seed_rules():
        book.add(rule)
    return book


def test_one_fingerprint_keeps_several_repairs_and_picks_by_precondition() -> None:
    fp = analyze("Edit", NOT_FOUND, "python")
    book = book_with_seeds()
    strip = book.learn(fp, transform("strip_line_number_prefix"), NOW, evidence="r1", proven=True)
    trim = book.learn(fp, transform("trim_trailing_whitespace"), NOW, evidence="r2", proven=True)
    assert strip and trim and strip.fingerprint == trim.fingerprint == fp.id
    prefixed = lookup(book, fp, NOT_FOUND, edit("12\tx = 1\n13\ty = 2"))
    assert prefixed and prefixed.rule.id == strip.id and prefixed.apply
    spaced = lookup(book, fp, NOT_FOUND, edit("x = 1   \ny = 2"))
    assert spaced and spaced.rule.id == trim.id and spaced.apply
    assert "rests on" in spaced.reason() and "r2" in spaced.reason()
    # A stale read (neither precondition holds): no transform, the shipped re-read guidance.
    stale = lookup(book, fp, NOT_FOUND, edit("x = 1\ny = 2"))
    assert stale is None or stale.rule.repair.kind != "transform_args"


def test_two_preconditions_holding_at_once_apply_nothing() -> None:
    fp = analyze("Edit", NOT_FOUND, "python")
    book = RuleBook()
    book.learn(fp, transform("strip_line_number_prefix"), NOW, evidence="r1", proven=True)
    book.learn(fp, transform("trim_trailing_whitespace"), NOW, evidence="r2", proven=True)
    both = lookup(book, fp, NOT_FOUND, edit("12\tx = 1  \n13\ty = 2"))
    assert both is not None and both.apply is False
    assert both.ambiguous == ("strip_line_number_prefix", "trim_trailing_whitespace")
    assert "several repairs fit" in both.reason()


def test_a_learned_json_repair_never_completes_a_cut_off_call() -> None:
    fp = analyze("ws_edit", "tool arguments are not valid JSON: Unterminated string", "go")
    book = RuleBook()
    book.learn(fp, transform("repair_json"), NOW, evidence="r1", proven=True)
    slip = lookup(book, fp, "invalid json", '{"path": "a.go", "old_str": "a", "new_str": "b",}')
    assert slip is not None and slip.apply
    cut = lookup(book, fp, "invalid json", '{"path": "a.go", "old_str": "a", "new_str": "b')
    assert cut is None


def test_replace_all_only_for_a_one_token_edit() -> None:
    fp = analyze("Edit", MATCHES, "go")
    book = book_with_seeds()
    book.learn(fp, transform("set_replace_all"), NOW, evidence="r1", proven=True)
    rename = lookup(book, fp, MATCHES, edit("defaultRetries", "maxRetries"))
    assert rename and rename.apply and rename.rule.repair.transform == "set_replace_all"
    context = lookup(book, fp, MATCHES, edit("    if err != nil {\n        return err", "x"))
    assert context is not None and context.rule.repair.kind == "guidance"
    assert "surrounding lines" in context.rule.repair.guidance


def test_an_argument_only_rule_is_proposed_in_another_language_below_its_source() -> None:
    book = RuleBook()
    source = book.learn(analyze("Edit", NOT_FOUND, "python"), transform("trim_trailing_whitespace"),
                        NOW, evidence="run-py", proven=True)
    assert source is not None
    go = analyze("Edit", NOT_FOUND, "go")
    args = edit("x := 1 \ny := 2")
    pick = lookup(book, go, NOT_FOUND, args)
    assert pick is not None and pick.proposed and pick.source == source
    proposed = pick.rule
    assert proposed.trigger.language == "go" and proposed.origin == source.id
    assert MIN_APPLY_CONFIDENCE <= proposed.confidence < source.confidence
    assert pick.apply
    assert f"rests on {source.id}" in pick.reason() and "run-py" in pick.reason()
    # Adopted, it earns its own confidence from outcomes: one wrong repair and it stops applying.
    adopted = book.adopt(proposed, NOW)
    again = lookup(book, go, NOT_FOUND, args)
    assert again is not None and again.rule.id == adopted.id and not again.proposed
    book.observe(adopted.id, False, NOW)
    after = lookup(book, go, NOT_FOUND, args)
    assert after is not None and after.rule.id == adopted.id and not after.apply
    assert book.rules[source.id].confidence == source.confidence  # the source is not blamed


def test_a_proposal_crosses_edit_tools_but_not_classes_or_tool_families() -> None:
    book = RuleBook()
    book.learn(analyze("ws_edit", "old_str not found in a.py", "python"),
               transform("trim_trailing_whitespace"), NOW, evidence="r", proven=True)
    other_tool = lookup(book, analyze("Edit", NOT_FOUND, "rust"), NOT_FOUND, edit("let a = 1; "))
    assert other_tool is not None and other_tool.proposed
    shell = analyze("Bash", "old_str not found", "rust")
    assert lookup(book, shell, "old_str not found", edit("let a = 1; ")) is None
    ambiguous = analyze("Edit", MATCHES, "rust")
    assert lookup(book, ambiguous, MATCHES, edit("a ")) is None


def test_a_rule_that_needs_the_language_keeps_its_key() -> None:
    book = RuleBook()
    fp = analyze("Edit", NOT_FOUND, "python")
    book.learn(fp, Repair("guidance", guidance="re-read the file"), NOW, evidence="r", proven=True)
    book.learn(fp, transform("shrink_old_str"), NOW, evidence="r", proven=True)
    go = analyze("Edit", NOT_FOUND, "go")
    assert lookup(book, go, NOT_FOUND, edit("a\nb\nc\nd")) is None


def test_proposed_repairs_change_the_arguments() -> None:
    book = RuleBook()
    book.learn(analyze("Edit", NOT_FOUND, "python"), transform("strip_line_number_prefix"), NOW,
               evidence="r", proven=True)
    args = edit("     3\u2192fn main() {\n     4\u2192    run();", "x")
    pick = lookup(book, analyze("Edit", NOT_FOUND, "rust"), NOT_FOUND, args)
    assert pick is not None and pick.apply
    new_args, changed = apply_transform(pick.rule.repair.transform, args)
    assert changed and json.loads(new_args)["old_str"] == "fn main() {\n    run();"


def test_a_proposed_rule_survives_a_round_trip_through_rules_json() -> None:
    from slmactor.logic.evolve.rules import Rule
    from slmactor.logic.evolve.transfer import propose

    book = RuleBook()
    source = book.learn(analyze("Edit", NOT_FOUND, "python"), transform("unfence_code"), NOW,
                        evidence="r", proven=True)
    assert source is not None
    proposed = propose(source, analyze("Edit", NOT_FOUND, "java"))
    again = Rule.from_dict(json.loads(json.dumps(proposed.to_dict())))
    assert again == proposed and again.confidence == proposed.confidence
    assert Rule.from_dict({**proposed.to_dict(), "prior": ["x", 1]}).prior is None


def test_an_unrecognised_error_carries_only_self_evident_repairs() -> None:
    unknown = "<tool_use_error>Edit failed: something new</tool_use_error>"
    book = RuleBook()
    py = analyze("Edit", unknown, "python")
    assert py.cls == "unknown"
    book.learn(py, transform("strip_line_number_prefix"), NOW, evidence="r1", proven=True)
    book.learn(py, transform("trim_trailing_whitespace"), NOW, evidence="r2", proven=True)
    go = analyze("Edit", unknown, "go")
    gutter = lookup(book, go, unknown, edit("12\tx := 1\n13\ty := 2"))
    assert gutter is not None and gutter.proposed and gutter.apply
    assert lookup(book, go, unknown, edit("x := 1  ")) is None  # whitespace is not self-evident


def test_a_shell_command_killed_at_its_time_limit_is_told_to_narrow_or_background_it() -> None:
    # Claude Code 2.1.328's Bash result when its 2 min default killed the command (as in the
    # real sessions of tests/fixtures/real_failures), and mini-swe-agent's
    # `AgentConfig.timeout_template` (minisweagent/agents/default.py).
    book = book_with_seeds()
    for tool, error in (("Bash", "Error: Exit code 143\nCommand timed out after 2m 0s"),
                        ("bash", ("The last command <command>pytest tests</command> timed out and "
                                 "has been killed.\nThe output of the command was:\n <output>\n"
                                 "</output>\nPlease try another command and make sure to avoid "
                                 "those requiring interactive input."))):
        fp = analyze(tool, error, command="pytest tests", family="shell")
        found = lookup(book, fp, error, json.dumps({"command": "pytest tests"}))
        assert found is not None and fp.cls == "timeout"
        assert "background" in found.rule.repair.guidance
        assert "task_timeout" not in found.rule.repair.guidance
    # A task of the bundled orchestrator that ran out of time keeps its own advice.
    task = analyze("", "asyncio.TimeoutError: task exceeded task_timeout")
    found = lookup(book, task, "task exceeded task_timeout", "{}")
    assert found is not None and "task_timeout" in found.rule.repair.guidance


def _real_timeouts() -> list[dict[str, object]]:
    """Shell timeouts from real sessions (tests/fixtures/real_failures/dev.jsonl: Gemini CLI's
    `run_shell_command` block, mini-swe-agent's notice, Claude Code's `Exit code 143`)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "fixtures" / "real_failures" / "dev.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if row["kind"] == "timeout"]


def test_a_shell_timeout_gets_the_shell_advice_in_every_harness_not_the_task_timeout() -> None:
    """The shipped shell-timeout advice is bound to `bash`; Gemini's `run_shell_command`
    (and every room's shell tool) is the same family and gets it too, not the advice about
    slmcode's own task_timeout, which no harness's shell has."""
    from slmactor import harnesses

    rows = [row for row in _real_timeouts() if harnesses.tool_family(str(row["tool"])) == "shell"]
    tools = {str(row["tool"]) for row in rows}
    assert {"run_shell_command", "Bash", "bash"} <= tools
    book = book_with_seeds()
    for row in rows:
        # With the call's command, as the daemon analyses it (`npx astro dev & … kill; wait`
        # printed a server's banner and exited 143 by its own kill: no server left running).
        command = str(row["args"].get("command") or "") if isinstance(row["args"], dict) else ""
        fp = analyze(str(row["tool"]), str(row["error"]), command=command)
        assert fp.cls == "timeout"
        found = lookup(book, fp, str(row["error"]), family=harnesses.tool_family)
        assert found is not None, row["tool"]
        assert "shell tool's time limit" in found.rule.repair.guidance, row["tool"]
        assert "task_timeout" not in found.rule.repair.guidance


def test_a_tool_bound_advice_does_not_reach_another_family() -> None:
    from slmactor import harnesses

    book = book_with_seeds()
    fp = analyze("replace", "Error: operation timed out after 60s")
    found = lookup(book, fp, "Error: operation timed out after 60s", family=harnesses.tool_family)
    assert found is not None and fp.cls == "timeout"
    assert "shell tool's time limit" not in found.rule.repair.guidance


def test_a_cline_diff_without_blocks_is_told_the_marker_structure() -> None:
    """Cline's parser (src/core/assistant-message/diff.ts) refuses a replace_in_file diff whose
    markers form no block: the advice gives the block structure, not "read the file again"."""
    error = ("[replace_in_file for 'src/app.py'] Result:\nThe tool execution failed with the "
             "following error:\n<error>\nInvalid state transition.\nValid transitions are:\n"
             "- Idle \u2192 StateSearch\n- StateSearch \u2192 StateReplace\n</error>")
    fp = analyze("replace_in_file", error, family="edit")
    found = lookup(book_with_seeds(), fp, error)
    assert fp.cls == "format_rejected" and found is not None
    assert "SEARCH marker line" in found.rule.repair.guidance
    assert "REPLACE marker line" in found.rule.repair.guidance


def test_a_learned_fix_that_names_a_command_answers_only_its_own_failure() -> None:
    # "Run `git pull --rebase` first" got one script's failure past; another script failing
    # with the same class needs nothing of it.
    generate = 'Exit code 1\nerror: script "generate" exited with code 1'
    lint = 'Exit code 1\nerror: script "lint" exited with code 1'
    fp, other = analyze("Bash", generate, "typescript"), analyze("Bash", lint, "typescript")
    assert fp.cls == other.cls and fp.id != other.id
    book = RuleBook()
    named = Repair("guidance", guidance="Run `git pull --rebase` first, then the same call")
    assert book.learn(fp, named, NOW, evidence="r1", proven=True) is not None
    found = lookup(book, fp, generate)
    assert found is not None and found.rule.repair.guidance == named.guidance
    assert lookup(book, other, lint) is None
