""""Did you mean …?" for a mistyped command, subcommand, choice or option.

Owns: finding the closest known word (`difflib`, the standard library's matcher: no new
dependency) and adding it to argparse's own error line. A command name, subcommand or choice is
matched against the choices argparse lists in its "invalid choice" message; an unknown option
against the options of the (sub)command the line reached, so `slmactor memory facts --knd
command` suggests `--kind`, which only `memory facts` has.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable, Sequence

_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<choices>.*)\)$")
#: How alike a word must be to be offered (difflib's ratio; its default, 0.6, offers `start`
#: for `stats`, which is useful, and nothing for unrelated words).
CUTOFF = 0.6


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The known word most like `word`, when one is close enough."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def options_of(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings
            if action.help != argparse.SUPPRESS]


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaf(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The deepest (sub)command parser the words of `argv` name."""
    for word in argv:
        below = subparsers_of(parser).get(word)
        if below is not None:
            parser = below
    return parser


def with_suggestion(message: str) -> str:
    """argparse's "invalid choice" message with the closest choice offered."""
    match = _INVALID_CHOICE.search(message)
    if not match:
        return message
    choices = re.findall(r"'([^']*)'", match["choices"])
    best = closest(match["word"], choices)
    return f"{message}; did you mean '{best}'?" if best else message


def unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The "unrecognized arguments" message, with the closest option for each unknown one."""
    message = f"unrecognized arguments: {' '.join(extras)}"
    hints = []
    for token in extras:
        if token.startswith("--"):
            best = closest(token.split("=", 1)[0], options_of(parser))
            if best:
                hints.append(f"'{best}' for '{token}'")
    return f"{message}; did you mean {', '.join(hints)}?" if hints else message
