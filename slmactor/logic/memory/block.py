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

The block is built from **items** (`BlockItem`: its section, its line, a key for "said once" and
"not told yet", the fix it names, the records it rests on) made by each section's renderer, which
knows what it wrote; it becomes text last (`items_text`). `said_once` and a hook's `untold`
compare keys, never the wording: no renderer's arrow ("— fix:", "-> Do:", "→ fixed by") is read
back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.memory.block_items import (
    SUBHEADING,
    TITLE,
    BlockItem,
    bullet,
    fit_items,
    heading,
    items_text,
    lines_as_items,
    plain,
    render,
)
from slmactor.logic.memory.distill import fix_key, salient_of
from slmactor.logic.memory.facts import item_meaning
from slmactor.logic.text.strings import (
    TokenCounter,
    clip_words,
    count_tokens_chars,
    first_line,
)
from slmactor.logic.text.trust import UNVERIFIED_LABEL, as_data

__all__ = ["SUBHEADING", "TITLE", "BlockBuilder", "BlockItem", "bullet", "heading",
           "items_text", "lines_as_items", "plain", "render", "said_once"]

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
    _parts: list[list[BlockItem]] = field(default_factory=list)
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

    def add(self, section: str, items: Sequence[BlockItem] | str) -> int:
        """Add a section's items (fitted to its allowance, whole items); returns the tokens it
        used. Text is taken as its lines (`lines_as_items`)."""
        allowance = self.allowance(section)
        self._next = SECTIONS.index(section) + 1
        if isinstance(items, str):
            items = lines_as_items(section, items)
        body = _trimmed(items)
        fitted = _trimmed(fit_items(body, allowance, self.counter)) if body else []
        if not fitted:
            self._sizes[section] = 0
            return 0
        self._parts.append(fitted)
        total = self.counter(_JOINT.join(items_text(p) for p in self._parts) + "\n")
        used, self._used = total - self._used, total
        self._sizes[section] = used
        return used

    @property
    def sizes(self) -> dict[str, int]:
        """Tokens used per section added so far (0 for a blank one)."""
        return dict(self._sizes)

    def items(self) -> list[BlockItem]:
        """The block's items, parts joined by a blank line, within the budget."""
        out: list[BlockItem] = []
        for part in self._parts:
            if out:
                out.append(plain(part[0].section, ""))
            out.extend(part)
        return _trimmed(fit_items(out, self.budget, lambda t: self.counter(t + "\n")))

    def render(self) -> str:
        return render(self.items())


def _trimmed(items: Sequence[BlockItem]) -> list[BlockItem]:
    """Without blank lines at either end."""
    kept = list(items)
    while kept and not kept[0].text.strip():
        kept.pop(0)
    while kept and not kept[-1].text.strip():
        kept.pop()
    return kept


def memory_block(
    role: str,
    budget: int,
    render_section: Callable[[str, int], str | Sequence[BlockItem]],
    counter: TokenCounter = count_tokens_chars,
) -> str:
    """The whole block; `render_section(section, allowance)` makes one section within its
    allowance (its items, or lines of text)."""
    builder = BlockBuilder(role, budget, counter)
    for section in SECTIONS:
        allowance = builder.allowance(section)
        builder.add(section, render_section(section, allowance) if allowance > 0 else [])
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


def semantic_section(facts: Callable[[int], Sequence[BlockItem]], lessons: Sequence[BlockItem],
                     allowance: int, counter: TokenCounter = count_tokens_chars) -> list[BlockItem]:
    """The semantic section: the facts (`facts(tokens)` makes their items within `tokens`) in
    what the do/don't `lessons` leave of `allowance`, then the lessons; no lessons → the facts
    alone."""
    if lessons:
        allowance -= counter(items_text(lessons) + "\n\n")
    found = list(facts(allowance))
    if found and lessons:
        found.append(plain("semantic", ""))
    return [*found, *lessons]


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


def _episode_items(ep: Mapping[str, Any], known: frozenset[str] = frozenset()) -> list[BlockItem]:
    query = ep.get("query")
    if not isinstance(query, str) or not query.strip():
        return []
    task = clip_words(first_line(query, 4 * _QUERY_BYTES), _QUERY_BYTES)
    if ep.get("verified") is False:
        # A repository's committed episode: not this user's work, so no outcome and no fix,
        # only the task as the recall actor quoted it (commands withheld), labelled.
        episode_id = ep.get("id")
        return [bullet("episodic", f"- ({UNVERIFIED_LABEL}, not work done here) {task}",
                       evidence=(episode_id,) if isinstance(episode_id, str) and episode_id else ())]
    ok = ep.get("success") is True
    # A run whose record states no verdict (an imported transcript) gets no mark: the mark
    # would claim what the records do not hold.
    mark = "" if ep.get("verdict") == "unknown" else ("✓ " if ok else "✗ ")
    line = f"- {mark}{as_data(task)}"
    files = [f for f in ep.get("files_changed", ep.get("files", [])) or [] if isinstance(f, str)]
    if files:
        line += " → touched " + ", ".join(f"`{f}`" for f in files[:_FILES_SHOWN])
    episode_id = ep.get("id")
    source = (episode_id,) if isinstance(episode_id, str) and episode_id else ()
    lines = [bullet("episodic", line, evidence=source)]
    shown: set[str] = set()
    for failure in ep.get("failures", []) if isinstance(ep.get("failures"), list) else []:
        if not isinstance(failure, Mapping):
            continue
        resolved_by = failure.get("resolved_by")
        if not isinstance(resolved_by, str) or not resolved_by.strip():
            continue
        if failure.get("kind") or failure.get("held") is False:
            continue  # a refusal or a policy is no failure to fix; a fix that did not hold
        key = fix_key(failure)  # one line per fix: the same rule twice says nothing new
        if key in shown:
            continue
        shown.add(key)
        resolution = failure.get("resolution")
        if not isinstance(resolution, str) or not resolution.strip():
            continue  # who fixed it ("llm", "retry", a rule's id) says nothing a model can use
        fix = resolution.strip().removeprefix("fixed by ")  # harnesses often write it themselves
        if len(fix) > _HIT_FIX_BYTES * 4 or "\n" in fix:
            continue  # told whole or not at all: a clipped fix is not runnable as shown
        said = failure.get("said")  # the error as the program wrote it, where the episode has it
        msg = clip_words(said if isinstance(said, str) and said.strip() else salient_of(failure),
                         _HIT_MSG_BYTES)
        shown_fix = as_data(fix)
        hit = f"hit: {as_data(msg)} → fixed by {shown_fix}"
        if msg and item_meaning(hit, numbers=False) not in known:
            fingerprint = failure.get("fingerprint")
            lines.append(bullet("episodic", f"  - {hit}", fix=shown_fix, evidence=(
                *source, *((fingerprint,) if isinstance(fingerprint, str) and fingerprint else ()))))
    return lines


def episodic_items(
    episodes: Sequence[Mapping[str, Any]],
    budget: int,
    counter: TokenCounter = count_tokens_chars,
    shown: Sequence[BlockItem] = (),
) -> list[BlockItem]:
    """`## Similar work done before` with up to 3 episodes, dropped whole to fit `budget`.

    An episode of a task already shown (the same query) is skipped, and the next
    one takes its place: a repeated task tells the reader nothing new. Likewise a
    failure fixed by a rule the block already names (`shown`: the items of the sections before
    this one).
    """
    known = frozenset(item_meaning(item.text.strip()[2:], numbers=False)
                      for item in shown if item.bullet)
    blocks: list[list[BlockItem]] = []
    tasks: set[str] = set()
    for ep in episodes:
        if len(blocks) >= MAX_EPISODES:
            break
        query = ep.get("query")
        task = _task_key(query) if isinstance(query, str) else ""
        if not task or task in tasks:
            continue
        tasks.add(task)
        block = _episode_items(ep, known)
        if block:
            blocks.append(block)
    while blocks:
        items = [heading("episodic", EPISODIC_HEADING, TITLE), *(i for b in blocks for i in b)]
        if counter(items_text(items) + "\n") <= budget:
            return items
        blocks.pop()
    return []


def episodic_section(episodes: Sequence[Mapping[str, Any]], budget: int,
                     counter: TokenCounter = count_tokens_chars, shown: str = "") -> str:
    """`episodic_items` as text (`shown`: the text of the sections before, as its lines)."""
    return render(episodic_items(episodes, budget, counter, lines_as_items("semantic", shown)))


# --- said once ------------------------------------------------------------------


def said_once(items: Sequence[BlockItem]) -> list[BlockItem]:
    """`items` without every bullet that repeats what, or the fix, an earlier bullet already
    said (the same fix learned as a gotcha, a convention and a lesson is one thing to read),
    and without every heading left with no bullet under it. Compares the items' keys and
    fixes, as their renderers set them: no line is read back."""
    seen_keys: set[str] = set()
    seen_fixes: set[str] = set()
    # Headings that own bullets now: only those can be left empty by what is dropped (a
    # section of plain lines, such as working memory's, is never a candidate).
    had_bullets = {id(item) for i, item in enumerate(items)
                   if item.heading and _has_bullets(items, i + 1, item.heading)}
    kept: list[BlockItem] = []
    for item in items:
        if item.bullet:
            if item.key in seen_keys or (item.fix and item.fix in seen_fixes):
                continue
            seen_keys.add(item.key)
            if item.fix:
                seen_fixes.add(item.fix)
        kept.append(item)
    out: list[BlockItem] = []
    for i, item in enumerate(kept):
        if id(item) in had_bullets and not _has_bullets(kept, i + 1, item.heading):
            continue
        if not item.text.strip() and out and not out[-1].text.strip():
            continue  # one blank line between sections, however many were dropped
        out.append(item)
    return out


def _has_bullets(items: Sequence[BlockItem], start: int, level: int) -> bool:
    """Whether a bullet follows before the heading's part ends: a title's at the next title, a
    sub-heading's at the next heading of either kind."""
    for item in items[start:]:
        if item.bullet:
            return True
        if item.heading and (item.heading >= level):
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
