"""Stack tags of lessons and tasks: the known-tag list, synonyms and extension hints (SPEC C-9).

Two readings of a text, as in the seed:

* `infer_task_tags(task)` is **strict**: the literal words of the task (`[a-z0-9]+` on the lowercased
  text) that are known tags. It decides the hard tag filter of recall, so it must not guess.
* `infer_tags_from_text(text)` is **broad**: for lesson bodies and source tasks. Known tags
  (words `[a-z0-9_]+`), plus synonym expansions (`aiosqlite` → python, sqlite, asyncio; `irc` →
  python, asyncio; …), plus file-extension and tool hints (`.py`/`pytest` → python, `.ts`/`.tsx`/
  `tsconfig` → typescript, `.rs`/`cargo` → rust, `.go` → go).

Stack comparisons (recall's tag filter and decays, budget matching) use `stack_tags`: the tags
without the phase words (`build`, `plan`, …), which every task of that phase shares.

One more deliberate difference: the seed matched extension hints as bare substrings, so `x.pyc`,
`results.tsv` or `foo.gofmt` counted; here an extension must end its word (`\\.py\\b`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: The 54 canonical tags of the seed (`_KNOWN_TAGS`), stack words and phase words alike.
_KNOWN_TAG_TEXT = """
    python typescript javascript react vue angular electron desktop go golang rust cargo tokio
    wordpress plugin php browser extension chrome mv3 pytorch torch cuda gpu training deep
    transformer html css node flask django fastapi express pygame click asyncio aiosqlite sqlite
    pytest vitest jest phpunit modular flat plan deps scaffold review build integrate wiring
    validate package
"""
KNOWN_TAGS: frozenset[str] = frozenset(_KNOWN_TAG_TEXT.split())

#: Known tags that name a phase of work, not a stack. Every "Build a …" task carries `build`, so
#: a stack comparison that counted phase words would find every such pair of tasks "the same
#: stack" — the seed's decay layers and budget matching did, and so never fired for them.
PHASE_TAGS: frozenset[str] = frozenset(
    ("plan", "deps", "scaffold", "review", "build", "integrate", "wiring", "validate", "package"))

#: The 23 synonym expansions of the seed (`_TAG_SYNONYMS`); an empty set means "no stack".
TAG_SYNONYMS: dict[str, frozenset[str]] = {
    word: frozenset(tags.split())
    for word, tags in {
        "aiosqlite": "python sqlite asyncio",
        "sqlalchemy": "python sqlite",
        "fastapi": "python fastapi asyncio",
        "celery": "python",
        "redis": "",
        "tsc": "typescript",
        "tsx": "typescript react",
        "jsx": "javascript react",
        "npx": "node",
        "npm": "node",
        "ruff": "python",
        "mypy": "python",
        "black": "python",
        "uvicorn": "python fastapi",
        "websockets": "python asyncio",
        "irc": "python asyncio",
        "tetris": "python pygame",
        "curses": "python",
        "pygame": "python pygame",
        "rich": "python",
        "ascii": "",
        "wp_query": "php wordpress",
        "manifest_v3": "browser extension chrome mv3",
    }.items()
}

_TASK_WORD = re.compile(r"[a-z0-9]+")
_TEXT_WORD = re.compile(r"[a-z0-9_]+")
#: (pattern, tag): file extensions must end their word; tool names are plain substrings.
_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\.py\b|pytest"), "python"),
    (re.compile(r"\.tsx?\b|tsconfig"), "typescript"),
    (re.compile(r"\.rs\b|cargo"), "rust"),
    (re.compile(r"\.go\b"), "go"),
)


def infer_task_tags(task: str) -> set[str]:
    """Known tags that appear literally in `task` (strict: no synonyms, no hints)."""
    return set(_TASK_WORD.findall(task.lower())) & KNOWN_TAGS


def infer_tags_from_text(text: str) -> set[str]:
    """Known tags of `text`, widened by synonyms and file-extension / tool hints."""
    lowered = text.lower()
    # `[a-z0-9_]+` keeps `wp_query` and `manifest_v3` whole for their synonyms; the parts between
    # underscores count too, so the broad reader finds every tag the strict one does
    # (`code_review` is a review task for both; the seed's reader missed it here).
    words = set(_TEXT_WORD.findall(lowered)) | set(_TASK_WORD.findall(lowered))
    tags = words & KNOWN_TAGS
    for word in words:
        expansion = TAG_SYNONYMS.get(word)
        if expansion:
            tags |= expansion
    for pattern, tag in _HINTS:
        if pattern.search(lowered):
            tags.add(tag)
    return tags


def stack_tags(tags: Iterable[str]) -> set[str]:
    """The tags that name a stack (phase words dropped): what "same stack" compares."""
    return set(tags) - PHASE_TAGS


def normalize_tags(tags: Iterable[object]) -> list[str]:
    """Tags as stored: strings only, trimmed, lowercased, spaces → `_`, unique, sorted."""
    out = {
        "_".join(tag.strip().lower().split())
        for tag in tags
        if isinstance(tag, str) and tag.strip()
    }
    return sorted(out)
