"""What the MCP tools publish about themselves: described, bounded parameters, result shapes, hints.

A model picks a tool and fills its arguments from `tools/list` alone, so every parameter says what
it is for, a parameter with a closed set of values lists them (`enum`: an unknown value is refused
before the tool runs, with the allowed values named), arguments of a tool call are an object, and
each tool's result has an `outputSchema` its `structuredContent` follows.

The behaviour hints are the `ToolAnnotations` of the MCP specification, revision 2025-06-18
(https://modelcontextprotocol.io/specification/2025-06-18/schema#toolannotations; the SDK's
`mcp_types.ToolAnnotations` carries the same text): `readOnlyHint` "does not modify its
environment", `destructiveHint` "may perform destructive updates" (false: "only additive
updates"), `idempotentHint` "calling the tool repeatedly with the same arguments will have no
additional effect", `openWorldHint` false for a closed domain — "the world of a web search tool is
open, whereas that of a memory tool is not". Every hint is set explicitly, since the defaults
assume the worst (destructive, open-world).

Imported only by `mcp_server` (the `mcp` extra brings pydantic).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from slmactor.logic.memory.facts import KINDS as FACT_KINDS

#: Roles whose block shares differ (`slmactor.logic.memory.block.ROLE_SHARES`).
ROLES = ("worker", "tester", "reviewer", "planner", "explorer")
#: `remember` kinds: a fact of the distiller's kinds, or a free-form lesson.
REMEMBER_KINDS = (*FACT_KINDS, "lesson")
#: Hits `recall` returns at most.
MAX_HITS = 10


def _folded(value: Any) -> Any:
    """Case and surrounding space do not make a value unknown ("Convention " is convention)."""
    return value.strip().lower() if isinstance(value, str) else value


def _call_arguments(value: Any) -> Any:
    """A tool call's arguments: an object, or (as older clients sent them) its JSON text."""
    if isinstance(value, str):
        if not value.strip():
            return None
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise ValueError("arguments must be a JSON object (or its JSON text); "
                             f"this text is not JSON: {exc}") from exc
        if not isinstance(parsed, dict):
            # ValueError: what pydantic turns into a validation error (a TypeError escapes it).
            raise ValueError(f"arguments must be a JSON object, not {type(parsed).__name__}")  # noqa: TRY004
        return parsed
    return value


Kind = Literal["command", "layout", "convention", "gotcha", "file", "dependency", "lesson"]
Role = Literal["worker", "tester", "reviewer", "planner", "explorer"]

Query = Annotated[str, Field(min_length=1, description=(
    "The task to find similar past work for, in plain words "
    "(e.g. \"fix the pagination off-by-one\")."))]
LineIds = Annotated[list[str], Field(min_length=1, max_length=256, description=(
    "The ids of the lines to forget, as `list` (or `remember`) gave them."))]
Files = Annotated[list[str] | None, Field(description=(
    "Paths (relative to the project root) the task is about; past work on them ranks higher."))]
HitCount = Annotated[int, Field(ge=1, le=MAX_HITS, description=(
    f"How many past tasks to return, 1 to {MAX_HITS}."))]
Task = Annotated[str, Field(description=(
    "The task about to start, in plain words; empty for the project's block without a task."))]
RoleParam = Annotated[Role, BeforeValidator(_folded), Field(description=(
    "Who reads the block; it sizes the sections: worker (default: code changes), tester, "
    "reviewer, planner or explorer."))]
Text = Annotated[str, Field(min_length=1, description=(
    "What to remember, as one self-contained sentence a later session can act on."))]
KindParam = Annotated[Kind, BeforeValidator(_folded), Field(description=(
    "What it is: a fact — command (how to build, test or run), layout (where things are), "
    "convention (how code is written here), gotcha (a trap to avoid), file (what a file is "
    "for), dependency (toolchain and libraries) — or lesson (anything else worth keeping)."))]
Subject = Annotated[str, Field(description=(
    "For a fact: a few words naming what it is about (e.g. \"lint\"); a later fact with the "
    "same kind and subject reinforces or updates it. Default: the text's start."))]
ToolName = Annotated[str, Field(min_length=1, description=(
    "The name of the tool whose call failed, exactly as you called it."))]
ErrorText = Annotated[str, Field(min_length=1, description=(
    "The error the failed call returned, verbatim (its first lines are enough)."))]
Arguments = Annotated[dict[str, Any] | None, BeforeValidator(_call_arguments), Field(description=(
    "The failed call's arguments as an object, exactly as the tool received them; lets memory "
    "return repaired arguments."))]
Language = Annotated[str, Field(description=(
    "The programming language of the code involved (e.g. python), if known."))]
TaskDone = Annotated[str, Field(min_length=1, description=(
    "The task that ended, in the words it was asked in (later recalls match on them)."))]
Success = Annotated[bool, Field(description="True if the task was done, false if it was not.")]
Summary = Annotated[str, Field(description=(
    "One or two sentences on what was done and how it ended; later recalls show it."))]
FilesChanged = Annotated[list[str] | None, Field(description=(
    "Paths (relative to the project root) the task changed."))]
Fingerprint = Annotated[str, Field(min_length=1, description=(
    "The `fingerprint` of the failure, from the repair result."))]
Worked = Annotated[bool, Field(description=(
    "True if a later call got past the failure, false if it still fails."))]
FixedArguments = Annotated[dict[str, Any] | None, BeforeValidator(_call_arguments), Field(
    description=(
        "The arguments of the call that worked, as an object; memory learns the repair "
        "between the failed and the working call and offers it next time."))]
FixedTool = Annotated[str, Field(description=(
    "The tool of the call that worked, when it is not the one that failed (e.g. a whole-file "
    "write after a failed edit). Default: the same tool."))]
UsedRepair = Annotated[bool, Field(description=(
    "True if the call followed the repair's advice (its new_arguments or guidance); the "
    "repair's rule is credited or blamed with the outcome."))]
How = Annotated[str, Field(description=(
    "What fixed it, in one sentence (e.g. \"re-read the file and matched its indentation\")."))]


class PastFailureOut(BaseModel):
    tool: str = Field(description="The tool that failed.")
    message: str = Field(description="Its error, as the tool returned it (redacted).")
    fix: str = Field(description="What fixed it the last time; empty when nothing did.")
    times: int = Field(description="In how many of the task's recalled runs it was met.")


class PastTaskOut(BaseModel):
    task: str = Field(description="The task, as it was asked.")
    succeeded: bool = Field(description="How the newest run of the task ended.")
    at: str = Field(description="When the newest run ended (RFC 3339, UTC).")
    summary: str = Field(description="What was done, from the newest run that said.")
    runs: int = Field(description="Recalled runs of this task.")
    successes: int = Field(description="How many of them succeeded.")
    files: list[str] = Field(description="Files the runs changed.")
    failures: list[PastFailureOut] = Field(description="Distinct failures met, each once.")


class RecallOut(BaseModel):
    tasks: list[PastTaskOut] = Field(description="Past tasks, most similar first; each once.")


class BlockOut(BaseModel):
    block: str = Field(description="The memory block, Markdown; empty when memory has nothing.")


class RememberOut(BaseModel):
    stored_as: Literal["fact", "lesson"] = Field(description="Where it was stored.")
    kind: str = Field(description="Its kind.")
    subject: str = Field(description="The fact's subject; empty for a lesson.")
    id: str = Field(description="The id of the line it becomes in the memory block: `forget` "
                                "takes it back.")


class LineOut(BaseModel):
    id: str = Field(description="The line's id: give it to `forget` to take the line back.")
    section: str = Field(description="The block section the line is in.")
    heading: str = Field(description="The heading above it inside the section; may be empty.")
    text: str = Field(description="What the line says.")
    evidence: list[str] = Field(description="The records behind it, as kind:id (fact:…, "
                                            "episode:…); empty when none is known.")


class ListOut(BaseModel):
    lines: list[LineOut] = Field(description="Every line a model is told now, in block order.")
    retired: int = Field(description="Lines forgotten earlier (never told again).")


class ForgetOut(BaseModel):
    forgotten: list[str] = Field(description="Ids of the lines forgotten by this call.")
    already: list[str] = Field(description="Ids that were already forgotten.")


class RepairOut(BaseModel):
    apply: bool = Field(description="True when new_arguments is a repair memory trusts for "
                                    "this failure: retry the call with them.")
    reason: str = Field(description="Why memory advises what it does (or nothing).")
    guidance: str = Field(description="What to do about the failure; empty when unknown.")
    fingerprint: str = Field(description="The failure's identity: give it to repair_outcome "
                                         "once the failure is fixed or given up on.")
    rule_id: str = Field(description="The repair rule behind the advice; empty for none.")
    new_arguments: dict[str, Any] | None = Field(
        default=None, description="The repaired arguments, an object; absent when there is no "
                                  "deterministic repair (apply is false).")
    new_tool: str | None = Field(
        default=None, description="The tool to call with new_arguments when it differs from "
                                  "the failed one; absent for the same tool.")


class RepairOutcomeOut(BaseModel):
    fingerprint: str = Field(description="The failure reported on.")
    resolved: bool = Field(description="True if the failure is now recorded as fixed.")
    learned: str = Field(description="The repair memory learned from the working call; empty "
                                     "for none.")


class OutcomeOut(BaseModel):
    run_id: str = Field(description="The run the outcome was recorded for.")
    success: bool = Field(description="The outcome recorded.")
    duplicate: bool = Field(description="True when this repeated the previous report unchanged "
                                        "and was not recorded again.")


#: (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title) per tool.
HINTS: dict[str, tuple[bool, bool, bool, bool, str]] = {
    # Reads memory, changes nothing.
    "recall": (True, False, True, False, "Recall similar past work"),
    "memory_block": (True, False, True, False, "Memory block for a task"),
    "list": (True, False, True, False, "List what memory tells a model"),
    # Retires lines: destructive (undo is the user's, from the CLI or the page); the same ids
    # again change nothing.
    "forget": (False, True, True, False, "Forget lines of memory by id"),
    # Adds evidence for a fact or a lesson: a second call counts a second observation.
    "remember": (False, False, False, False, "Remember a fact or lesson"),
    # Records the failure in the run's working memory (its attempts count up) and answers advice.
    "repair": (False, False, False, False, "Advice for a failed tool call"),
    # Records whether the failure was fixed; learns the repair from the working call.
    "repair_outcome": (False, False, False, False, "Report how a repaired failure ended"),
    # Finishes the run: an episode, metrics and lessons are added; nothing is removed. A report
    # repeated unchanged is answered from the first (see `MemoryTools.report_outcome`).
    "report_outcome": (False, False, True, False, "Report how the task ended"),
}
