"""What `memory forget` and `evolve reset` say they removed: every part, with what it held.

Owns the wording only. The daemon's replies carry the numbers (`removed`: part → count from the
distiller; `regressions`, `rules.dropped`, `policy.keys` from the reflector's reset), so a user
reads exactly what went and what was kept, including what was user-wide rather than this
project's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Memory part (the distiller's `removed` keys) → (label, unit).
PARTS: tuple[tuple[str, str, str], ...] = (
    ("working", "working memory", "run"),
    ("episodic", "episodes", "episode"),
    ("graph", "knowledge graph", "edge"),
    ("semantic", "facts", "fact"),
    ("lessons", "lessons", "lesson"),
    ("memory_md", "MEMORY.md", "bullet slmactor wrote (your own lines and teammates' stay)"),
    ("mirrors", "WORKING.md / REFLECTION.md", "file"),
    ("procedural", "procedures and latencies (user-wide)", "record"),
)
#: What a reset leaves, and how to remove it too.
KEPT = ("kept: run metrics (.slmcode/metrics; `slmactor metrics`), procedural memory "
        "(user-wide; `slmactor memory forget procedural`)")


def _count(n: int, unit: str) -> str:
    if " " in unit:  # a phrase: pluralise its first word
        first, rest = unit.split(" ", 1)
        return f"{n} {first}{'' if n == 1 else 's'} {rest}"
    return f"{n} {unit}{'' if n == 1 else 's'}"


def memory_lines(reply: Mapping[str, Any]) -> list[str]:
    """One line per memory part forgotten, then one per part that could not be."""
    removed = reply.get("removed") or {}
    lines = [f"  {label}: {_count(int(removed.get(key, 0)), unit)}"
             for key, label, unit in PARTS if key in (reply.get("forgotten") or ())]
    errors = reply.get("errors") or {}
    lines += [f"  {name}: NOT forgotten: {why}" for name, why in errors.items()]
    return lines


#: What `memory forget all` leaves (no memory file: these are what the loop learned and the
#: store's own files), and how to remove it too.
KEPT_BY_FORGET_ALL = ("kept: learned rules, regression checks and policy (`slmactor evolve "
                      "reset`), run metrics (.slmcode/metrics; `slmactor metrics`), the stores' "
                      ".lock and .gitignore")


def render_forget(scope: str, reply: Mapping[str, Any]) -> str:
    lines = memory_lines(reply)
    kept = [KEPT_BY_FORGET_ALL] if scope == "all" else []
    return "\n".join([f"forgot {scope}:" if lines else f"forgot {scope}: nothing", *lines, *kept])


def render_reset(project: str, outcome: Mapping[str, Any]) -> str:
    lines = [f"reset {project}; removed:",
             f"  regression checks: {int(outcome.get('regressions', 0))}"]
    rules = outcome.get("rules")
    if isinstance(rules, Mapping) and rules.get("ok") is not False:
        lines.append(f"  learned rules (this project's and your user-wide ones): "
                     f"{int(rules.get('dropped', 0))}")
    policy = outcome.get("policy")
    if isinstance(policy, Mapping) and policy.get("ok") is not False:
        scopes = " and ".join("user-wide" if s == "user" else "this project's"
                              for s in policy.get("scopes") or ())
        lines.append(f"  policy ({scopes or 'none'}): {_count(int(policy.get('keys', 0)), 'key')}")
    memory = outcome.get("memory")
    if isinstance(memory, Mapping):
        lines += memory_lines(memory)
    failed = outcome.get("failed") or []
    for name in failed:
        part = outcome.get(name)
        why = part.get("error", "") if isinstance(part, Mapping) else ""
        lines.append(f"  {name}: NOT reset{': ' + why if why else ''}")
    lines.append(KEPT)
    return "\n".join(lines)
