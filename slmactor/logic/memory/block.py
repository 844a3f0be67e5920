"""The memory block a role receives: working → semantic → episodic → procedural (SPEC S-7.4).

Each section may use its role's share of the token budget. Fixed here (H-S-21): in the seed a
section was capped at `int(budget × share)` even when an earlier section was blank or used less
than its share, although its comment promised the opposite. Here the allowance is cumulative —
section *i* may use `int(budget × (share₁ + … + shareᵢ))` minus what earlier sections actually
used — so unused budget flows on to later sections, and no section ever exceeds what remains.

`BlockBuilder` is the step-by-step form for callers that fetch sections asynchronously (the
distiller actor asks the working and recall actors in between); `memory_block` is the one-call form.
Blank sections are skipped, parts are joined by a blank line, and the whole block is fitted to the
budget; the block is "" when nothing is known.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.memory.distill import fix_key, salient_of
from slmactor.logic.memory.facts import item_meaning
from slmactor.logic.text.strings import (
    TokenCounter,
    clip_words,
    count_tokens_chars,
    first_line,
    fit_lines,
    fit_to_tokens,
)
from slmactor.logic.text.trust import UNVERIFIED_LABEL, as_data

SECTIONS = ("working", "semantic", "episodic", "procedural")
DEFAULT_BUDGET = 1200
_JOINT = "\n\n"

Shares = tuple[float, float, float, float]

_WORKER: Shares = (0.45, 0.25, 0.18, 0.12)
_TESTER: Shares = (0.35, 0.35, 0.20, 0.10)
_REVIEWER: Shares = (0.35, 0.30, 0.25, 0.10)
_PLANNER: Shares = (0.15, 0.40, 0.35, 0.10)
_EXPLORER: Shares = (0.20, 0.45, 0.30, 0.05)
DEFAULT_SHARES: Shares = (0.30, 0.35, 0.25, 0.10)

ROLE_SHARES: dict[str, Shares] = {
    **dict.fromkeys(
        (
            "worker",
            "corrector",
            "deep",
            "placeholder",
            "go-worker",
            "python-worker",
            "react-worker",
        ),
        _WORKER,
    ),
    **dict.fromkeys(("tester", "go-tester", "python-tester", "react-tester"), _TESTER),
    "reviewer": _REVIEWER,
    **dict.fromkeys(("planner", "architect", "splitter", "coordinator", "composer"), _PLANNER),
    **dict.fromkeys(("explorer", "context", "docs", "memory"), _EXPLORER),
}


def shares_for(role: str) -> Shares:
    """The role's (working, semantic, episodic, procedural) shares; unknown roles get the default."""
    return ROLE_SHARES.get(role.strip().lower(), DEFAULT_SHARES)


@dataclass(slots=True)
class BlockBuilder:
    """Allots budget section by section, in `SECTIONS` order, carrying leftovers forward."""

    role: str
    budget: int = DEFAULT_BUDGET
    counter: TokenCounter = count_tokens_chars
    _used: int = 0
    _next: int = 0
    _parts: list[str] = field(default_factory=list)
    _sizes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.budget <= 0:
            self.budget = DEFAULT_BUDGET

    def allowance(self, section: str) -> int:
        """Tokens `section` may use now; sections must be visited in order (skipping is fine)."""
        index = SECTIONS.index(section)
        if index < self._next:
            raise ValueError(f"section {section!r} comes before one already added")
        cumulative = sum(shares_for(self.role)[: index + 1])
        # round() first so a share sum such as 0.45 + 0.25 = 0.7000000000000001 does not lose a token
        allowed = min(int(round(self.budget * cumulative, 9)), self.budget) - self._used
        if self._parts:
            allowed -= self.counter(_JOINT)  # the blank line joining it to the block
        return max(0, allowed)

    def add(self, section: str, text: str) -> int:
        """Add a rendered section (fitted to its allowance); returns the tokens it used."""
        allowance = self.allowance(section)
        self._next = SECTIONS.index(section) + 1
        body = text.strip("\n")
        fitted = fit_lines(body, allowance, self.counter).strip("\n") if body.strip() else ""
        if not fitted.strip():
            self._sizes[section] = 0
            return 0
        self._parts.append(fitted)
        total = self.counter(_JOINT.join(self._parts) + "\n")
        used, self._used = total - self._used, total
        self._sizes[section] = used
        return used

    @property
    def sizes(self) -> dict[str, int]:
        """Tokens used per section added so far (0 for a blank one)."""
        return dict(self._sizes)

    def render(self) -> str:
        if not self._parts:
            return ""
        return fit_to_tokens(_JOINT.join(self._parts) + "\n", self.budget, self.counter)


def memory_block(
    role: str,
    budget: int,
    render: Callable[[str, int], str],
    counter: TokenCounter = count_tokens_chars,
) -> str:
    """The whole block; `render(section, allowance)` produces one section within its allowance."""
    builder = BlockBuilder(role, budget, counter)
    for section in SECTIONS:
        allowance = builder.allowance(section)
        builder.add(section, render(section, allowance) if allowance > 0 else "")
    return builder.render()


# --- the episodic section (S-7.5) ----------------------------------------------------------

EPISODIC_HEADING = "## Similar work done before"
MAX_EPISODES = 3
#: Episodes asked of recall for the section: more than shown, so a repeated task can be skipped.
RECALL_CANDIDATES = 2 * MAX_EPISODES
_QUERY_BYTES = 120
_FILES_SHOWN = 4
_HIT_MSG_BYTES = 100
_HIT_FIX_BYTES = 80


def semantic_section(facts: Callable[[int], str], lessons: str, allowance: int,
                     counter: TokenCounter = count_tokens_chars) -> str:
    """The semantic section: the facts (`facts(tokens)` renders them within `tokens`) in what
    the do/don't `lessons` leave of `allowance`, then the lessons; no lessons → the facts alone."""
    if lessons:
        allowance -= counter(lessons + "\n\n")
    return "\n\n".join(part for part in (facts(allowance), lessons) if part)


def episodes_of(reply: object) -> list[Mapping[str, Any]]:
    """The episode records in a recall or `episode.recent` reply, best or newest first.

    Accepts a bare list or a map holding `hits`/`episodes`; a hit may wrap its episode
    (`{"episode": {...}, "score": …}`), or only its index entry (`{"entry": {...}}`, which has
    `files` instead of `files_changed` and no failure details), or be the episode itself.
    """
    items: object = reply
    if isinstance(reply, Mapping):
        items = reply.get("hits", reply.get("episodes", []))
    if not isinstance(items, list):
        return []
    out: list[Mapping[str, Any]] = []
    for item in items:
        if isinstance(item, Mapping):
            inner = item.get("episode", item.get("entry"))
            out.append(inner if isinstance(inner, Mapping) else item)
    return out


def _task_key(query: str) -> str:
    return " ".join(query.lower().split())


def _episode_lines(ep: Mapping[str, Any], known: frozenset[str] = frozenset()) -> list[str]:
    query = ep.get("query")
    if not isinstance(query, str) or not query.strip():
        return []
    task = clip_words(first_line(query, 4 * _QUERY_BYTES), _QUERY_BYTES)
    if ep.get("verified") is False:
        # A repository's committed episode: not this user's work, so no outcome and no fix,
        # only the task as the recall actor quoted it (commands withheld), labelled.
        return [f"- ({UNVERIFIED_LABEL}, not work done here) {task}"]
    ok = ep.get("success") is True
    line = f"- {'✓' if ok else '✗'} {as_data(task)}"
    files = [f for f in ep.get("files_changed", ep.get("files", [])) or [] if isinstance(f, str)]
    if files:
        line += " → touched " + ", ".join(f"`{f}`" for f in files[:_FILES_SHOWN])
    lines = [line]
    shown: set[str] = set()
    for failure in ep.get("failures", []) if isinstance(ep.get("failures"), list) else []:
        if not isinstance(failure, Mapping):
            continue
        resolved_by = failure.get("resolved_by")
        if not isinstance(resolved_by, str) or not resolved_by.strip():
            continue
        key = fix_key(failure)  # one line per fix: the same rule twice says nothing new
        if key in shown:
            continue
        shown.add(key)
        resolution = failure.get("resolution")
        if not isinstance(resolution, str) or not resolution.strip():
            if resolved_by.strip() != "retry":
                continue  # who fixed it ("llm", a rule's id) says nothing a model can use
            resolution = "retry"
        fix = resolution.strip().removeprefix("fixed by ")  # harnesses often write it themselves
        said = failure.get("said")  # the error as the program wrote it, where the episode has it
        msg = clip_words(said if isinstance(said, str) and said.strip() else salient_of(failure),
                         _HIT_MSG_BYTES)
        fix = as_data(clip_words(first_line(fix, 4 * _HIT_FIX_BYTES), _HIT_FIX_BYTES))
        hit = f"hit: {as_data(msg)} → fixed by {fix}"
        if msg and item_meaning(hit, numbers=False) not in known:
            lines.append(f"  - {hit}")
    return lines


def episodic_section(
    episodes: Sequence[Mapping[str, Any]],
    budget: int,
    counter: TokenCounter = count_tokens_chars,
    shown: str = "",
) -> str:
    """`## Similar work done before` with up to 3 episodes, dropped whole to fit `budget`.

    An episode of a task already shown (the same query) is skipped, and the next
    one takes its place: a repeated task tells the reader nothing new. Likewise a
    failure fixed by a rule the block already names (`shown`: the sections before this one).
    """
    known = frozenset(item_meaning(item, numbers=False) for item in block_items(shown))
    blocks: list[list[str]] = []
    tasks: set[str] = set()
    for ep in episodes:
        if len(blocks) >= MAX_EPISODES:
            break
        query = ep.get("query")
        task = _task_key(query) if isinstance(query, str) else ""
        if not task or task in tasks:
            continue
        tasks.add(task)
        block = _episode_lines(ep, known)
        if block:
            blocks.append(block)
    while blocks:
        text = EPISODIC_HEADING + "\n" + "\n".join(line for b in blocks for line in b) + "\n"
        if counter(text) <= budget:
            return text
        blocks.pop()
    return ""


# --- said once ------------------------------------------------------------------

#: The fix a bullet names: a gotcha's "— fix: X", a convention's "— fixed by X", a lesson's
#: "-> Do: X", an episode hit's "→ fixed by X" (a sighting count after it is not part of it).
_FIX_OF = re.compile(r"(?:— fix: |— fixed by |-> Do: |→ fixed by )(.+?)(?:\s*\(seen \d+×\))?\s*$")
#: Shorter fixes ("retry") name no content that could be repeated.
_MIN_FIX_CHARS = 12


def said_once(text: str) -> str:
    """`text` with every bullet dropped that repeats a line, or a fix, an earlier bullet already
    gave (the same fix learned as a gotcha, a convention and a lesson is one thing to read), and
    every heading left without bullets dropped with it."""
    seen_lines: set[str] = set()
    seen_fixes: set[str] = set()
    kept: list[str] = []
    lines = text.splitlines()
    # Headings that own bullets now: only those can be left empty by what is dropped (a
    # section of plain lines, such as working memory's, is never a candidate).
    had_bullets = {line for i, line in enumerate(lines)
                   if _is_heading(line) and _has_bullets(lines, i + 1, line.strip().startswith("## "))}
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("- "):
            key = " ".join(stripped.lower().split())
            match = _FIX_OF.search(stripped)
            fix = " ".join(match.group(1).lower().split()) if match else ""
            if key in seen_lines or (len(fix) >= _MIN_FIX_CHARS and fix in seen_fixes):
                continue
            seen_lines.add(key)
            if len(fix) >= _MIN_FIX_CHARS:
                seen_fixes.add(fix)
        kept.append(line)
    out: list[str] = []
    for i, line in enumerate(kept):
        if (line in had_bullets
                and not _has_bullets(kept, i + 1, line.strip().startswith("## "))):
            continue
        if not line.strip() and out and not out[-1].strip():
            continue  # one blank line between sections, however many were dropped
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _is_heading(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("## ") or (stripped.endswith(":") and not stripped.startswith("- ")
                                          and len(stripped) < 80)


def _has_bullets(lines: list[str], start: int, title: bool) -> bool:
    """Whether a bullet follows before the heading's section ends: a `## ` title's at the next
    title, a sub-heading's (`Gotchas:`) at the next heading of either kind."""
    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("- "):
            return True
        if stripped.startswith("## ") or (not title and _is_heading(line)):
            return False
    return False


# --- what a block is worth ------------------------------------------------------


def block_items(text: str) -> list[str]:
    """The bullet items of a rendered block (facts, episodes, their hits, procedures)."""
    return [line.strip()[2:] for line in text.splitlines() if line.lstrip().startswith("- ")]


def distinct_items(text: str) -> tuple[int, int]:
    """(items that mean something new, all items) of a block: an item naming a rule already
    named, or repeating a claim (numbers aside), is not new."""
    items = block_items(text)
    return len({item_meaning(item, numbers=False) for item in items}), len(items)
