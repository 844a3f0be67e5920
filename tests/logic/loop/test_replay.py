"""Offline replay (S-17): counts on small hand-made trajectories, A/B, and the learning tally."""

from __future__ import annotations

from dataclasses import dataclass, field

from slmactor.logic.loop.replay import (
    Advice,
    LearningTally,
    RunTally,
    Step,
    StepResult,
    Trajectory,
    ab_test,
    classify,
    replay,
    replay_all,
    same_json,
)

EDIT_ARGS = '{"path":"a.py","old_str":"  1| x = 1","new_str":"x = 2"}'
EDIT_FIX = '{"path": "a.py", "old_str": "x = 1", "new_str": "x = 2"}'


def _traj(*steps: Step, passed: bool = True) -> Trajectory:
    return Trajectory("t1", "fix x", "python", "qwen2.5-coder:7b", "search_replace", passed, steps)


@dataclass
class TableRepairer:
    """A repairer answering from a fixed table keyed on the error text."""

    table: dict[str, Advice]
    asked: list[str] = field(default_factory=list)

    def suggest(self, tool: str, message: str, language: str, model: str, args: str) -> Advice:
        self.asked.append(message)
        return self.table.get(message, Advice())


def test_same_json_compares_parsed_values_then_trimmed_text() -> None:
    assert same_json(EDIT_FIX, '{"new_str":"x = 2","old_str":"x = 1","path":"a.py"}')
    assert not same_json(EDIT_FIX, EDIT_ARGS)
    assert same_json("  not json ", "not json")
    assert not same_json("{bad", "{bad}")


def test_replay_without_a_repairer_counts_the_round_trips() -> None:
    traj = _traj(
        Step(kind="assistant", tokens_in=100, tokens_out=20),
        Step(tool="read", args='{"path":"a.py"}'),
        Step(tool="edit", args=EDIT_ARGS, ok=False, error="line-number prefix in old_str",
             fixed_args=EDIT_FIX, edit_attempt=True),
        Step(tool="edit", args=EDIT_FIX, edit_attempt=True),
        Step(tool="read", args='{"path":"a.py"}'),
        Step(tool="bash", args='{"cmd":"pip install nope"}', ok=False,
             error="ERROR: No matching distribution found for nope"),
    )
    run = replay(traj, label="baseline", at=5)
    assert (run.tasks, run.tasks_passed) == (1, 0)  # an unresolved failure fails the task
    assert (run.tool_calls, run.tool_errors, run.redundant_calls) == (5, 2, 1)
    assert (run.edits_attempted, run.edits_applied, run.edits_first_attempt) == (2, 2, 1)
    assert run.llm_calls == 2  # the assistant turn + one round trip for the edit fix
    assert (run.resolved_from_memory, run.resolved_from_llm, run.unresolved) == (0, 1, 1)
    assert (run.failures, run.repair_hits) == (2, 0)
    assert (run.tokens_in, run.tokens_out, run.label, run.at) == (100, 20, "baseline", 5.0)


def test_replay_with_a_repairer_fixes_from_memory_only_on_the_known_fix() -> None:
    right = Advice(hit=True, apply=True, rule_id="rule_a", new_args=EDIT_FIX)
    traj = _traj(
        Step(tool="edit", args=EDIT_ARGS, ok=False, error="gutter", fixed_args=EDIT_FIX,
             edit_attempt=True),
        Step(tool="edit", args=EDIT_ARGS, ok=False, error="wrong", fixed_args=EDIT_FIX,
             edit_attempt=True),
        Step(tool="edit", args=EDIT_ARGS, ok=False, error="guidance only", fixed_args=EDIT_FIX,
             edit_attempt=True),
    )
    repairer = TableRepairer({
        "gutter": right,
        "wrong": Advice(hit=True, apply=True, rule_id="rule_b", new_args='{"path":"b.py"}'),
        "guidance only": Advice(hit=True, apply=True, rule_id="rule_c"),
    })
    run = replay(traj, repairer)
    assert repairer.asked == ["gutter", "wrong", "guidance only"]
    assert (run.resolved_from_memory, run.resolved_from_llm, run.unresolved) == (1, 2, 0)
    assert run.repair_hits == 3
    assert run.llm_calls == 2
    assert run.edits_applied == 3 and run.edits_first_attempt == 0  # repairs are not first-try


def test_ab_test_saves_round_trips_without_changing_correctness() -> None:
    advice = Advice(hit=True, apply=True, rule_id="rule_a", new_args=EDIT_FIX)
    trajs = [
        _traj(Step(kind="assistant"),
              Step(tool="edit", args=EDIT_ARGS, ok=False, error="gutter", fixed_args=EDIT_FIX,
                   edit_attempt=True)),
        _traj(Step(kind="assistant"), Step(tool="edit", args=EDIT_FIX, edit_attempt=True)),
    ]
    cmp = ab_test(trajs, TableRepairer({"gutter": advice}))
    assert cmp.baseline.task_pass_rate() == cmp.current.task_pass_rate() == 1.0
    assert cmp.baseline.edit_apply_rate() == cmp.current.edit_apply_rate() == 1.0
    assert cmp.baseline.llm_calls_per_task() == 1.5
    assert cmp.current.llm_calls_per_task() == 1.0
    assert cmp.current.memory_resolution_rate() == 1.0
    assert cmp.improved()
    assert [r.at for r in replay_all(trajs)] == [0.0, 1.0]


def test_classify_marks_a_confident_repair_with_other_args_as_wrong() -> None:
    failed = Step(tool="edit", args=EDIT_ARGS, ok=False, error="e", fixed_args=EDIT_FIX)
    wrong = classify(failed, Advice(hit=True, apply=True, rule_id="r", new_args="{}"))
    assert (wrong.outcome, wrong.wrong_repair) == ("llm", True)
    unfixable = Step(tool="bash", args="{}", ok=False, error="e")
    assert classify(unfixable, Advice(hit=True, apply=True, new_args='{"x":1}')).wrong_repair
    # A suggestion below the apply bar is a hit, not a repair.
    shy = classify(failed, Advice(hit=True, apply=False, rule_id="r", new_args=EDIT_FIX))
    assert (shy.outcome, shy.hit, shy.wrong_repair) == ("llm", True, False)
    assert classify(Step(), None).outcome == "ok"


def test_run_tally_report_is_a_reflectable_run_report() -> None:
    traj = _traj(Step(tool="edit", args=EDIT_ARGS, ok=False, error="gutter",
                      fixed_args=EDIT_FIX, edit_attempt=True))
    tally = RunTally(traj)
    tally.tool(traj.steps[0], StepResult("memory", True, "rule_a"))
    report = tally.report("run-1", "pass-2")
    assert report["completed_tasks"] == 1 and report["label"] == "pass-2"
    (failure,) = report["failures"]
    assert failure["resolved_by"] == "rule:rule_a" and failure["rule_id"] == "rule_a"
    assert failure["failed_args"] == EDIT_ARGS and failure["fixed_args"] == EDIT_FIX


def test_learning_tally_counts_repeats_of_reproducible_fixes() -> None:
    tally = LearningTally()
    tally.add("fp_a", StepResult("llm"), reproducible=True)  # first: taught by the model
    tally.add("fp_a", StepResult("memory", True, "r"), reproducible=True)
    tally.add("fp_a", StepResult("memory", True, "r"), reproducible=True)
    tally.add("fp_b", StepResult("llm"), reproducible=False)  # guidance-only fix
    tally.add("fp_b", StepResult("llm"), reproducible=False)  # not a reproducible repeat
    tally.add("fp_c", StepResult("unresolved"), reproducible=False)
    tally.add("fp_a", StepResult("llm", True, "r", wrong_repair=True), reproducible=True)
    data = tally.to_dict()
    assert (data["fixed_from_memory"], data["fixed_by_model"], data["unresolved"]) == (2, 4, 1)
    assert (data["repeat_failures"], data["repeat_fixed_from_memory"]) == (3, 2)
    assert data["wrong_repairs"] == 1
    assert tally.repeat_share == 2 / 3
    assert LearningTally().repeat_share is None


def test_a_repeat_is_a_fix_seen_before_not_a_fingerprint_seen_before() -> None:
    # one fingerprint holds several fixes, and a fix carries over to other languages.
    tally = LearningTally()
    tally.add("fp_py", StepResult("llm"), True, "edit_not_found:strip_line_number_prefix")
    tally.add("fp_py", StepResult("llm"), True, "edit_not_found:trim_trailing_whitespace")
    tally.add("fp_py", StepResult("llm"), False)  # a stale read: no transform could fix it
    tally.add("fp_go", StepResult("memory", True, "r"), True,
              "edit_not_found:strip_line_number_prefix")  # the same fix, another language
    data = tally.to_dict()
    assert (data["repeat_failures"], data["repeat_fixed_from_memory"]) == (1, 1)
    # The older measure counts every later failure of the first fingerprint.
    assert (data["fingerprint_repeats"], data["fingerprint_repeats_fixed_from_memory"]) == (2, 0)


def test_trajectory_from_dict_accepts_object_args_and_defaults() -> None:
    traj = Trajectory.from_dict(
        {"steps": [{"tool": "edit", "args": {"path": "a"}, "ok": False, "error": "x",
                    "fixed_args": {"path": "b"}}, "junk", {"kind": "weird"}]},
        default_id="stem",
    )
    assert traj.id == "stem"
    assert traj.steps[0].args == '{"path":"a"}' and traj.steps[0].fixed_args == '{"path":"b"}'
    assert len(traj.steps) == 2 and traj.steps[1].kind == "tool"


def test_the_edit_format_decision_rewards_first_attempt_edits() -> None:
    traj = _traj(
        Step(tool="edit", args=EDIT_ARGS, ok=False, error="gutter", fixed_args=EDIT_FIX,
             edit_attempt=True),
        Step(tool="edit", args=EDIT_FIX, edit_attempt=True),
        Step(tool="bash", args="{}", ok=False, error="no such module"),
    )
    tally = RunTally(traj)
    tally.tool(traj.steps[0], StepResult("llm"))
    tally.tool(traj.steps[1], StepResult("ok"))
    tally.tool(traj.steps[2], StepResult("unresolved"))
    (decision,) = tally.report("r", "x")["decisions"]
    assert decision == {"decision": "edit_format", "arm": "search_replace",
                        "outcome": {"applied": True, "retries": 1, "failed": True}}
    assert RunTally(_traj(Step(tool="read"))).decisions() == []  # no edits, nothing to reward
