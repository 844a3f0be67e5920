"""`slmactor completion bash|zsh|fish` completes what the parsers accept, in the real shells
(zsh and fish when installed), and a mistyped command or option gets "did you mean"."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.cli.main import build_parser
from slmactor.cli.shell.completion import script, tree
from slmactor.cli.shell.suggest import closest

REPO = Path(__file__).resolve().parents[2]
#: (words typed, the word being completed) → what must be offered, and what must not.
CASES = [
    (["mem"], {"memory"}, {"metrics"}),
    (["memory", "f"], {"facts", "forget"}, {"episodes"}),
    (["--project", "/x", "memory", "fa"], {"facts"}, {"forget"}),
    (["memory", "facts", "--k"], {"--kind"}, {"--json"}),
    (["hook", "install", "--harness", "c"], {"claude", "codex", "cline"}, {"gemini"}),
    (["completion", ""], {"bash", "zsh", "fish"}, set()),
    (["evolve", "reset", "--y"], {"--yes"}, set()),
]


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, **kw)  # type: ignore[call-overload]


def test_the_tree_has_every_command_and_its_options() -> None:
    nodes = tree(build_parser(None))
    assert {"memory facts", "evolve reset", "hook install", "completion"} <= set(nodes)
    assert "--kind" in nodes["memory facts"].options and "--json" in nodes["memory facts"].options
    assert nodes["hook install"].choices["--harness"][0] == "claude"
    assert "--timeout" in nodes[""].valued and "--json" not in nodes[""].valued


def _shell_words(shell: str, tmp_path: Path, words: list[str]) -> set[str]:
    path = tmp_path / f"slmactor.{shell}"
    path.write_text(script(shell))
    line = " ".join(["slmactor", *words])
    if shell == "fish":
        done = _run(["fish", "-c", f"source {path}; complete -C'{line}'"])
        return {row.split("\t", 1)[0] for row in done.stdout.splitlines()}
    prelude = "autoload -U compinit && compinit -u -D; " if shell == "zsh" else ""
    last, before = ("-1", "-2") if shell == "zsh" else ("COMP_CWORD", "COMP_CWORD-1")
    program = (f"{prelude}source {path}; COMP_WORDS=(slmactor {' '.join(repr(w) for w in words)}); "
               f"COMP_CWORD=$((${{#COMP_WORDS[@]}}-1)); COMPREPLY=(); "
               f'_slmactor slmactor "${{COMP_WORDS[{last}]}}" "${{COMP_WORDS[{before}]}}"; '
               "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = _run([shell, "-c", program])
    assert done.returncode == 0, done.stderr
    offered = set(done.stdout.split())
    # zsh's bashcompinit leaves the prefix matching to zsh's own `compadd`.
    return {w for w in offered if w.startswith(words[-1])} if shell == "zsh" else offered


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_shell_completes_the_command_line(shell: str, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    for words, wanted, unwanted in CASES:
        offered = _shell_words(shell, tmp_path, words)
        assert wanted <= offered and not unwanted & offered, (words, offered)


def test_completion_prints_the_script() -> None:
    done = _run([sys.executable, "-m", "slmactor", "completion", "bash"])
    assert done.returncode == 0 and "complete -F _slmactor slmactor" in done.stdout


@pytest.mark.parametrize(("argv", "hint"), [
    (["stauts"], "did you mean 'status'?"),
    (["memory", "fatcs"], "did you mean 'facts'?"),
    (["memory", "facts", "--knd", "command"], "did you mean '--kind' for '--knd'?"),
    (["status", "--jsno"], "did you mean '--json' for '--jsno'?"),
    (["hook", "install", "--harness", "cluade"], "did you mean 'claude'?"),
])
def test_a_typo_gets_did_you_mean(argv: list[str], hint: str) -> None:
    done = _run([sys.executable, "-m", "slmactor", *argv, "--no-autostart"])
    assert done.returncode == 2 and hint in done.stderr, done.stderr


def test_nothing_is_offered_for_an_unrelated_word() -> None:
    done = _run([sys.executable, "-m", "slmactor", "zzqqxx"])
    assert done.returncode == 2 and "did you mean" not in done.stderr


@settings(derandomize=True, max_examples=200)
@given(st.lists(st.text(alphabet="abcdefg-", min_size=1, max_size=8), min_size=1, max_size=10),
       st.text(alphabet="abcdefg-", max_size=8))
def test_closest_is_a_candidate_and_a_known_word_is_itself(words: list[str], typed: str) -> None:
    found = closest(typed, words)
    assert found is None or found in words
    assert closest(words[0], words) == words[0]
