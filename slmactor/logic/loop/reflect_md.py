"""`REFLECTION.md`: the human-readable report of one reflected run (SPEC S-14.4 – S-14.6).

The computed sections come first and are deterministic. A harness may add a model's commentary
(`enrich`): it is appended under "Model commentary", labelled advisory only, capped at 800 bytes —
and a missing, failing (not a string) or blank answer returns the document byte for byte unchanged.
The daemon never calls a model itself; `summary_prompt` gives the harness the exact prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from slmactor.logic.text.strings import clip, cut_bytes
from slmactor.logic.text.timefmt import to_rfc3339

if TYPE_CHECKING:
    from slmactor.logic.loop.reflection import Reflection

MAX_NOTES_SHOWN = 12
COMMENTARY_BYTES = 800
REFLECTION_BYTES = 16 * 1024
TRUNCATED = "_[truncated]_"
SUMMARY_PROMPT = (
    "In at most three sentences, state the single most useful lesson from this run report. "
    "Only use facts present below. No preamble."
)
LEARNED_RULES_NOTE = (
    "_Learned rules start at low confidence and must keep working: a rule that fails four times "
    "in a row is retired._"
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _intent_table(r: Reflection) -> list[str]:
    rep = r.report
    gates_passed = sum(1 for g in rep.gates if g.passed)
    edits = f"{rep.edits_applied}/{rep.edits_attempted}"
    if rep.edits_attempted > 0:
        edits += f" ({rep.edits_applied * 100 // rep.edits_attempted}%)"
    wall = f"{rep.wall_ms / 1000:.1f}s" if rep.wall_ms > 0 else "–"
    rows = [
        ("Tasks planned → done", f"{rep.planned_tasks} → {rep.completed_tasks}"),
        ("Tasks blocked", str(rep.blocked_tasks)),
        ("Gates passed", f"{gates_passed}/{len(rep.gates)}"),
        ("Edits applied", edits),
        ("Retries", str(rep.retries)),
        ("LLM calls", str(rep.llm_calls)),
        ("Tokens in/out", f"{rep.tokens_in} / {rep.tokens_out}"),
        ("Tool calls (errors, repeats)",
         f"{rep.tool_calls} ({rep.tool_errors}, {rep.redundant_calls})"),
        ("Wall time", wall),
        ("Verdict", "success" if rep.success() else "incomplete"),
    ]
    return ["| Measure | Value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]


def _failures(r: Reflection) -> list[str]:
    lines: list[str] = []
    for note in r.notes[:MAX_NOTES_SHOWN]:
        message = clip(note.message.replace("\n", " "), 120)
        lines.append(f"- `{note.fingerprint or 'fp_none'}` {note.cls} — {message} → "
                     f"{note.handled()}")
    if len(r.notes) > MAX_NOTES_SHOWN:
        lines.append(f"- _…and {len(r.notes) - MAX_NOTES_SHOWN} more_")
    if not r.notes:
        lines.append("_No failures._")
    tally = (f"Resolved from memory: {r.tally['memory']} · from a fresh LLM round-trip: "
             f"{r.tally['llm']} · unresolved: {r.tally['unresolved']}")
    other = r.tally["retry"] + r.tally["human"] + r.tally["other"]
    if other:
        tally += f" · by retry or a person: {other}"
    return [*lines, "", tally]


def _repair_text(repair: dict[str, object]) -> str:
    kind = repair.get("kind")
    field = {"transform_args": ("transform", "transform args: "),
             "switch_tool": ("tool", "switch tool: "),
             "edit_format": ("edit_format", "edit format: "),
             "shell": ("command", "run: "),
             "action": ("action", "action: ")}.get(str(kind))
    if field is not None:
        return f"{field[1]}{repair.get(field[0], '')}"
    if kind == "config":
        return f"set {repair.get('config_key', '')}={repair.get('config_value', '')}"
    return "guidance"


def render_markdown(r: Reflection) -> str:
    """The computed report. An empty report still gives a valid document."""
    run = r.run_id or "unset"
    out = ["# Reflection", "", f"_Run `{run}` — {to_rfc3339(r.at)}_", ""]
    out += [f"**Task:** {_cell(first_line_or(r.report.query))}", ""]
    out += ["## Intent vs outcome", "", *_intent_table(r), ""]
    out += ["## Failures and how each was handled", "", *_failures(r), ""]
    out += ["## New repair rules learned", ""]
    if r.candidates:
        for cand in r.candidates:
            out.append(f"- `{cand.fingerprint}` {cand.cls} ({cand.tool}) → "
                       f"{_repair_text(cand.repair)}")
    else:
        out.append("_None this run._")
    out += ["", LEARNED_RULES_NOTE, ""]
    out += ["## Choices made and what they earned", ""]
    if r.rewards:
        out += ["| Decision | Chose | Reward |", "|---|---|---:|"]
        out += [f"| {_cell(w.decision)} | {_cell(w.arm)} | {w.reward:.2f} |" for w in r.rewards]
    else:
        out.append("_No recorded choices._")
    out += ["", "## Regression checks added", ""]
    if r.checks:
        out += [f"- {_cell(c.description)} ({c.kind})" for c in r.checks]
    else:
        out.append("_None._")
    return "\n".join(out) + "\n"


def first_line_or(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return clip(line, 400)
    return "_(no task text)_"


def summary_prompt(markdown: str) -> str:
    """The prompt a harness sends to its model to get the optional commentary."""
    return SUMMARY_PROMPT + "\n\n" + markdown


def enrich(markdown: str, summary: object) -> str:
    """Append the model's commentary, advisory only; anything but non-blank text changes nothing."""
    if not isinstance(summary, str) or not summary.strip():
        return markdown
    text = cut_bytes(summary.strip(), COMMENTARY_BYTES).rstrip()
    if not text:
        return markdown
    return (markdown + "\n## Model commentary\n\n_Advisory only — the sections above are "
            "computed._\n\n" + text + "\n")


def cap_document(markdown: str, limit: int = REFLECTION_BYTES) -> str:
    """S-14.6: keep `REFLECTION.md` within 16 KiB, marking the cut with `_[truncated]_`."""
    if len(markdown.encode("utf-8")) <= limit:
        return markdown
    room = limit - len(TRUNCATED.encode()) - 2
    return cut_bytes(markdown, room).rstrip() + "\n" + TRUNCATED + "\n"
