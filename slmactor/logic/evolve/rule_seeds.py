"""The 38 shipped repair rules (SPEC S-10.14): scope builtin, seeded, prior Beta(4,1).

They encode failure modes that are already understood, so they are believed from day one.  To
disable one, set `"retired": true` on it in rules.json; deleting it does not work — seeds are
re-merged on every load.

Seed #22 (python + "indentation" → unfence_code) never fired in the seed because IndentationError
classified as `unknown`; the classifier now files it under compile_error (H-S-24).  Seed #3's
whitespace transform no longer shadows seed #2's re-read on every not-found failure: lookup skips a
transform that would not change the failed arguments (H-S-25, see `rules.py`).
"""

from __future__ import annotations

from slmactor.logic.evolve.repairs import Repair
from slmactor.logic.evolve.rules import Rule, Trigger, rule_id

_SEEDS: tuple[tuple[Trigger, Repair], ...] = (
    (Trigger("edit_line_numbers"), Repair(
        "transform_args", transform="strip_line_number_prefix", retry=True,
        guidance="old_str still carries the read tool's line-number gutter ('  42| '); remove "
                 "the gutter and copy only the file's own text.")),
    (Trigger("edit_not_found", tool="ws_edit"), Repair(
        "action", action="reread_file", retry=True,
        guidance="old_str did not match. ws_read the file again and copy 2-3 lines VERBATIM "
                 "(same indentation and whitespace) as old_str.")),
    (Trigger("edit_not_found", tool="ws_edit", message_contains=("closest text",)), Repair(
        "transform_args", transform="trim_trailing_whitespace", retry=True,
        guidance="The mismatch is whitespace only: trailing spaces differ from the file.")),
    # Every harness's edit tool (no tool in the trigger; worded in its own names).
    (Trigger("edit_not_found"), Repair(
        "guidance",
        guidance="The text to replace is not in the file as sent. ws_read the file again, then "
                 "resend the ws_edit with old_str copied VERBATIM from what it holds now (same "
                 "indentation and whitespace).")),
    (Trigger("edit_ambiguous"), Repair(
        "guidance",
        guidance="old_str matches more than one place. ws_read the file around the place you "
                 "mean and add its surrounding lines to old_str to make it unique; use "
                 "replace_all only if every occurrence must change.")),
    (Trigger("edit_empty_old_str"), Repair(
        "guidance",
        guidance="old_str is empty. To create a file use ws_write; to append, anchor old_str on "
                 "the last 2-3 lines of the file.")),
    (Trigger("edit_noop"), Repair(
        "guidance",
        guidance="old_str and new_str are identical. Make a real change, or return the status "
                 "JSON if the work is already done.")),
    (Trigger("file_not_read"), Repair(
        "action", action="reread_file", retry=True,
        guidance="The file must be read (ws_read) before it can be edited.")),
    (Trigger("patch_failed"), Repair(
        "edit_format", edit_format="search_replace", retry=True,
        guidance="The patch did not apply: its context lines must match the file exactly. "
                 "ws_read the file again and resend the patch with context copied from what it "
                 "holds now; where search/replace edits exist, fall back to them.")),
    (Trigger("malformed_json"), Repair(
        "transform_args", transform="repair_json", retry=True,
        guidance="The tool arguments were not valid JSON; they were repaired mechanically. Emit "
                 "strict JSON: double quotes, no trailing commas, no prose.")),
    (Trigger("truncated_output"), Repair(
        "action", action="raise_max_tokens", retry=True,
        guidance="The output was cut off by the token limit. Do NOT guess the rest; write smaller "
                 "pieces.")),
    (Trigger("context_overflow"), Repair(
        "action", action="compact_context", retry=True,
        guidance="The context window is full. Compact the conversation, then continue.")),
    (Trigger("no_progress"), Repair(
        "action", action="force_different_action",
        guidance="You repeated the same call without progress. Take a DIFFERENT action.")),
    (Trigger("review_rejected"), Repair(
        "action", action="split_task",
        guidance="The reviewer keeps rejecting the change. Split the task into smaller steps.")),
    (Trigger("permission_denied"), Repair(
        "guidance",
        guidance="That operation is not permitted. Use an allowed equivalent; do not retry the "
                 "blocked command.")),
    (Trigger("out_of_scope_write"), Repair(
        "action", action="force_different_action",
        guidance="Stay within the focus files. Read-only roles (explorer, docs, context, planner, "
                 "splitter, reviewer) do not edit files at all.")),
    (Trigger("file_not_found"), Repair(
        "action", action="reread_file",
        guidance="The path does not exist. List the directory (ws_glob / ws_list) before "
                 "guessing paths.")),
    (Trigger("dependency_missing"), Repair(
        "guidance",
        guidance="A command, module or package is missing. Report the missing dependency; do not "
                 "reimplement it.")),
    (Trigger("rate_limit"), Repair(
        "action", action="backoff_retry", retry=True,
        guidance="The provider rate-limited the request. Back off, then retry.")),
    # A shell command the harness killed at its time limit (Claude Code's 2 min Bash default,
    # Gemini's and mini-swe-agent's timeouts): no task_timeout of ours applies to it.
    (Trigger("timeout", tool="bash"), Repair(
        "guidance",
        guidance="The command ran past the shell tool's time limit. Do not rerun it as it was: "
                 "narrow it (one test file, or `pytest -k NAME`), or start a long job in the "
                 "background and read its output as it runs.")),
    (Trigger("timeout"), Repair(
        "action", action="split_task",
        guidance="The operation timed out. Do not retry it unchanged: split it into smaller "
                 "steps, or give it a longer timeout where the tool takes one (slmcode tasks: "
                 "raise task_timeout or lower max_parallel).")),
    # The environment a command ran in (failures/runtimes.py): until the project's own fix is
    # learned (which version manager, which venv, how this project starts its server), what
    # kind of fix it is.
    (Trigger("runtime_version"), Repair(
        "guidance",
        guidance="The runtime on PATH is not the version this project requires (its package or "
                 "version manager said so). Switch this shell to the project's version first "
                 "(the version manager the project uses, with the version it names in .nvmrc, "
                 ".python-version, .tool-versions or go.mod), then rerun the same command; do not "
                 "change the project's required version.")),
    (Trigger("env_not_activated"), Repair(
        "guidance",
        guidance="The project's environment is not active in this shell (no version selected "
                 "here, a version manager or virtualenv not loaded). Activate it in the same "
                 "command, before the rest (source the venv or the version manager, or use the "
                 "project's own runner), then rerun.")),
    (Trigger("server_no_return"), Repair(
        "guidance",
        guidance="This command starts a server or watcher that does not return, so the shell "
                 "tool waited until its time limit. Start it in the background (`… > server.log "
                 "2>&1 &`, or the tool's own background option), then check it with a request or "
                 "by reading its log.")),
    (Trigger("compile_error", language="go", message_contains=("declared and not used",)), Repair(
        "guidance", guidance="Go refuses unused variables: remove the variable or use it.")),
    (Trigger("compile_error", language="go", message_contains=("undefined",)), Repair(
        "action", action="reread_file",
        guidance="The name is undefined. grep for the real name before inventing one.")),
    (Trigger("compile_error", language="python", message_contains=("indentation",)), Repair(
        "transform_args", transform="unfence_code", retry=True,
        guidance="A Markdown code fence was pasted into the file; write only the code inside the "
                 "fence.")),
    # What real sessions fail on, fixable from the failed call alone (the census of real
    # failed calls in the design notes): no tool name in the trigger, so every harness's edit/read/shell tool of the
    # family gets them, worded in its own names (`hooks.advice.localize`).
    (Trigger("output_too_large", message_contains=("offset",)), Repair(
        "guidance",
        guidance="The file is larger than ws_read returns at once: ws_read it in parts with "
                 "`offset` and `limit` (for example `offset: 1, limit: 200`), or ws_grep for the "
                 "lines you need.")),
    # A read the harness cut itself and said so, naming its own range (Gemini CLI's read_file,
    # Cline's read_files: "start_line"/"end_line").
    (Trigger("output_too_large", message_contains=("start_line",)), Repair(
        "guidance",
        guidance="The file is longer than ws_read shows at once: what came back was cut. Read "
                 "it in ranges (its `start_line` and `end_line`), or search it for the lines you "
                 "need, instead of reading it whole.")),
    (Trigger("output_too_large"), Repair(
        "guidance",
        guidance="The output was too long: rerun the command bounded (append `| head -n 100`, "
                 "read a range with `sed -n 'A,Bp'`, or `grep -n` for what you need) instead of "
                 "printing the whole file or tree; for a recursive listing (`ls -R`, `find` "
                 "without `-maxdepth`) list one level (`ls -la`) or one folder.")),
    (Trigger("tool_misuse", message_contains=("already exists",)), Repair(
        "guidance",
        guidance="The file already exists: overwrite it (ws_write the whole file) or change it "
                 "with ws_edit instead of creating it again.")),
    (Trigger("tool_misuse", message_contains=("not been read",)), Repair(
        "action", action="reread_file", retry=True,
        guidance="Read the file first (ws_read), then resend the same ws_edit call unchanged.")),
    (Trigger("tool_misuse", message_contains=("modified since read",)), Repair(
        "action", action="reread_file", retry=True,
        guidance="The file changed since it was read: ws_read it again, then resend the "
                 "ws_edit with old_str copied from what it holds now.")),
    (Trigger("tool_misuse", message_contains=("new_str",)), Repair(
        "guidance",
        guidance='new_str is required: to delete the text, pass new_str: "" (an empty string).')),
    (Trigger("tool_misuse", message_contains=("multiple commands",)), Repair(
        "guidance",
        guidance="One command per call: send the commands one at a time (or join them with && "
                 "in a single command).")),
    # A SEARCH/REPLACE diff whose markers form no block (Cline's replace_in_file parser,
    # src/core/assistant-message/diff.ts: "Invalid state transition … StateSearch →
    # StateReplace", "SEARCH/REPLACE operations still active"). Markers differ by harness
    # (`------- SEARCH` / `+++++++ REPLACE`, or `<<<<<<< SEARCH` / `>>>>>>> REPLACE`).
    (Trigger("format_rejected", message_contains=("search", "replace")), Repair(
        "guidance",
        guidance="The diff's markers did not form SEARCH/REPLACE blocks. Resend it with each "
                 "change as one whole block: the SEARCH marker line, the current lines exactly, "
                 "`=======`, the new lines, the REPLACE marker line — each marker on a line of "
                 "its own, as the tool's instructions write them, and every block closed "
                 "(ws_read the file first if unsure of the current lines).")),
    (Trigger("format_rejected", message_contains=("exactly one",)), Repair(
        "guidance",
        guidance="Reply with exactly one action: one ```bash block holding one command.")),
    (Trigger("tool_misuse", message_contains=("directory",)), Repair(
        "guidance",
        guidance="That path is a directory: list it (ws_list) instead of ws_read, then read a "
                 "file in it.")),
)


def seed_rules() -> list[Rule]:
    """Fresh copies of the 38 shipped rules (zero samples)."""
    return [Rule(id=rule_id(trigger, repair), trigger=trigger, repair=repair, scope="builtin",
                 seeded=True, note="shipped with slmactor") for trigger, repair in _SEEDS]
