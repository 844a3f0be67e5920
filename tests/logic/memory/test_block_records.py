"""The block's de-duplication reads keys, not Markdown (acceptance): "said once" (the daemon)
and "not told this session yet" (the hook) are run on items whose lines record every way they
are read, with the regular-expression functions wrapped too — and read no line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from slmactor.logic.memory.block import SUBHEADING, TITLE, BlockItem, said_once
from slmactor.logic.memory.block_items import untold

READS: list[str] = []


class Line(str):
    """A line that notes every method a reader calls on it, but the blank check (`strip`)."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name not in ("strip", "__class__", "__len__", "__str__", "__hash__", "__eq__"):
            READS.append(name)
        return super().__getattribute__(name)


@contextmanager
def reads() -> Iterator[list[str]]:
    """Every read of a line and every regular expression used meanwhile."""
    READS.clear()
    originals = {name: getattr(re, name) for name in ("compile", "search", "match", "fullmatch",
                                                      "sub", "split", "findall", "finditer")}

    def wrap(name: str) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            READS.append(f"re.{name}")
            return originals[name](*args, **kwargs)
        return counted

    for name in originals:
        setattr(re, name, wrap(name))
    try:
        yield READS
    finally:
        for name, fn in originals.items():
            setattr(re, name, fn)


def _item(section: str, text: str, key: str = "", *, bullet: bool = False, fix: str = "",
          heading: int = 0) -> BlockItem:
    return BlockItem(section, Line(text), key, bullet, fix, (), heading)


ITEMS = [
    _item("semantic", "## What we know", heading=TITLE), _item("semantic", ""),
    _item("semantic", "Gotchas:", heading=SUBHEADING),
    _item("semantic", "- venv missing — fix: python3 x.py", "gotcha-1", bullet=True,
          fix="python3 x.py instead of .venv/bin/python"),
    _item("semantic", "Conventions:", heading=SUBHEADING),
    _item("semantic", "- bash failed — fixed by python3", "convention-1", bullet=True,
          fix="python3 x.py instead of .venv/bin/python"),
    _item("semantic", ""), _item("episodic", "## Similar work done before", heading=TITLE),
    _item("episodic", "- ✓ run x", "episode-1", bullet=True),
    _item("episodic", "- ✓ run x", "episode-1", bullet=True),
]


def test_said_once_and_untold_read_no_line() -> None:
    with reads() as seen:
        once = said_once(ITEMS)
        fresh = untold(once, {"gotcha-1"})
    assert seen == []
    assert [i.key for i in once if i.bullet] == ["gotcha-1", "episode-1"]
    assert "Conventions:" not in [str(i.text) for i in once]  # left empty, it went
    assert [str(i.text) for i in fresh] == ["## Similar work done before", "- ✓ run x"]


def test_the_reader_would_be_seen() -> None:
    # The wrapping sees a reader that parses lines (as the text-based said-once did).
    with reads() as seen:
        ITEMS[3].text.startswith("- ")
        re.search(r"— fix: (.+)", ITEMS[3].text)
    assert seen == ["startswith", "re.search"]
