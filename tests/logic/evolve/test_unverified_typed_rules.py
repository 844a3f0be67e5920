"""A typed rule a repository brought unsigned (`Rule.verified` false) is never chosen as what
worked here, and never rewrites a call before it runs — however often its file says it worked."""

from __future__ import annotations

import dataclasses

from slmactor.logic.evolve import typed_repairs as tr
from slmactor.logic.evolve.rules import RuleBook
from slmactor.logic.failures.fingerprint import analyze

NOW = 1_800_000_000.0
MESSAGE = "/usr/bin/python: No module named pytest"


def shell(command: str) -> tr.Call:
    return tr.Call("Bash", {"command": command}, "shell")


def _book(verified: bool) -> tuple[RuleBook, tr.Call]:
    failed = shell("python -m pytest tests/a.py -q")
    fix = shell(".venv/bin/python -m pytest tests/a.py -q")
    fp = analyze("Bash", MESSAGE, command=failed.command, family="shell")
    book = RuleBook()
    rule = tr.learn(book, fp, failed, fix, NOW)
    assert rule is not None
    for n in range(5):
        book.observe(rule.id, True, NOW + n + 1)
    if not verified:
        book.rules[rule.id] = dataclasses.replace(book.rules[rule.id], verified=False)
    return book, failed


def test_the_users_own_substitution_is_chosen_and_rewrites_before_a_run() -> None:
    book, failed = _book(verified=True)
    fp = analyze("Bash", MESSAGE, command=failed.command, family="shell")
    assert tr.choose(book, fp, MESSAGE, failed) is not None
    picked = tr.preflight(book, shell("python -m pytest tests/b.py"))
    assert picked is not None and picked.rewritten is not None


def test_an_unverified_substitution_is_neither_chosen_nor_a_preflight_rewrite() -> None:
    book, failed = _book(verified=False)
    fp = analyze("Bash", MESSAGE, command=failed.command, family="shell")
    assert tr.choose(book, fp, MESSAGE, failed) is None
    assert tr.preflight(book, shell("python -m pytest tests/b.py")) is None
