"""The items a memory block is made of: one line each, as its section's renderer made it.

`BlockItem` holds the line, a key for "said once" and for "not told this session yet" (what it
says, lower-cased words), whether it is a bullet, the fix it names (so one fix worded as a
gotcha, a convention and a lesson is said once), the records it rests on, and whether it is a
heading. Renderers build items where they know what they write (`bullet`, `heading`, `plain`);
`items_text`/`render` make the text, last. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.text.strings import TokenCounter, count_tokens_chars

#: A title (`## …`) and a sub-heading (`Gotchas:`): shown only over items that follow them.
TITLE = 2
SUBHEADING = 1
#: Shorter fixes ("retry") name no content that could be repeated.
MIN_FIX_CHARS = 12


def line_key(text: str) -> str:
    """What a line says, for "said once" and "told": its words, lower-cased."""
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class BlockItem:
    """One line of the memory block, as its renderer made it."""

    section: str
    #: The line as shown ("" for the blank line between parts).
    text: str
    #: What it says ("" for a heading or a blank line): a hook tells a session each key once.
    key: str = ""
    #: A bullet, which "said once" drops when its key or its fix was already said.
    bullet: bool = False
    #: The fix it names (normalised), "" when none: one fix is said once, however worded.
    fix: str = ""
    #: The records it rests on (fact, episode, lesson, rule ids; fingerprints).
    evidence: tuple[str, ...] = ()
    #: TITLE, SUBHEADING, or 0 (an item or a plain line).
    heading: int = 0
    #: What the line presents as there to use, as written (its fix, its command, its folders):
    #: what its claim's check reads for paths ("" when it presents nothing).
    uses: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"section": self.section, "text": self.text}
        for name in ("key", "bullet", "fix", "heading", "uses"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.evidence:
            out["evidence"] = list(self.evidence)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> BlockItem | None:
        """The item a wire map describes (None when it is none)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
            return None

        def text(name: str) -> str:
            value = data.get(name)
            return value if isinstance(value, str) else ""

        evidence = data.get("evidence")
        heading = data.get("heading")
        return cls(text("section"), text("text"), text("key"), data.get("bullet") is True,
                   text("fix"), tuple(e for e in evidence if isinstance(e, str))
                   if isinstance(evidence, list) else (),
                   heading if isinstance(heading, int) and heading in (TITLE, SUBHEADING) else 0,
                   text("uses"))


def bullet(section: str, text: str, *, fix: str = "", evidence: Iterable[str] = (),
           uses: str | None = None) -> BlockItem:
    """A bullet line (`- …`, `  - hit: …`) that names `fix` (its own words for it, "" when
    none), rests on `evidence`, and presents `uses` as there to use (its fix by default)."""
    fixed = line_key(fix)
    return BlockItem(section, text, line_key(text), True,
                     fixed if len(fixed) >= MIN_FIX_CHARS else "", tuple(evidence),
                     uses=fix if uses is None else uses)


def heading(section: str, text: str, level: int = SUBHEADING) -> BlockItem:
    return BlockItem(section, text, heading=level)


def plain(section: str, text: str) -> BlockItem:
    """A line that is neither a bullet nor a heading (working memory's, a note), or a blank."""
    return BlockItem(section, text, line_key(text))


def lines_as_items(section: str, text: str) -> list[BlockItem]:
    """The items of a section its renderer wrote as lines of its own: `## ` titles, `- `
    bullets, plain lines. For a renderer that writes text (working memory's): it is the one
    splitting it, as it wrote it."""
    out: list[BlockItem] = []
    for line in text.strip("\n").split("\n") if text.strip() else ():
        stripped = line.strip()
        if stripped.startswith("## "):
            out.append(heading(section, line, TITLE))
        elif stripped.startswith("- "):
            out.append(bullet(section, line))
        else:
            out.append(plain(section, line))
    return out


def items_text(items: Sequence[BlockItem]) -> str:
    """The items as the block's text: one line each."""
    return "\n".join(item.text for item in items)


def fit_items(items: Sequence[BlockItem], budget: int,
              counter: TokenCounter = count_tokens_chars) -> list[BlockItem]:
    """`items` within `budget` tokens, whole items dropped from the end, and a heading or a
    blank left last with them (`strings.fit_lines` over items)."""
    if budget <= 0:
        return []
    kept = list(items)
    if counter(items_text(kept)) <= budget:
        return kept
    while kept and counter(items_text(kept)) > budget:
        kept.pop()
        while kept and (kept[-1].heading or not kept[-1].text.strip()
                        or kept[-1].text.rstrip().endswith(":")):
            kept.pop()
    return kept or _cut(items, budget, counter)


def _cut(items: Sequence[BlockItem], budget: int, counter: TokenCounter) -> list[BlockItem]:
    """Not even the first whole item fits: the items' text cut to `budget` (`fit_to_tokens`),
    the item it ends in keeping its key with what is left of its line."""
    from dataclasses import replace

    from slmactor.logic.text.strings import fit_to_tokens

    left = fit_to_tokens(items_text(items), budget, counter)
    out: list[BlockItem] = []
    for item in items:
        if not left:
            break
        line, _, left = left.partition("\n")
        out.append(item if line == item.text else replace(item, text=line))
    return out


def render(items: Sequence[BlockItem]) -> str:
    """The block's text: its items' lines, ending with a newline ("" when there is none)."""
    return items_text(items) + "\n" if items else ""


def untold(items: Sequence[BlockItem], told: set[str],
           digest: Callable[[str], str] = str) -> list[BlockItem]:
    """The items a session was not told yet (`told`: the keys it was, as `digest` keeps them),
    each heading kept only over the new items under it; [] when nothing is new."""
    out: list[BlockItem] = []
    pending: list[BlockItem] = []
    for item in items:
        if item.heading:
            # A title opens a new part; a sub-heading replaces the one before it in that part.
            pending = [h for h in pending if h.heading > item.heading] + [item]
            continue
        if not item.text.strip() or digest(item.key) in told:
            continue
        if pending:
            if out and pending[0].heading == TITLE:
                out.append(plain(item.section, ""))
            out.extend(pending)
            pending = []
        out.append(item)
    return out
