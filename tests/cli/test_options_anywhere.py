"""The common options work before or after any (sub)command, with the same result.

Every leaf command of the full parser is parsed three ways — options first, options after the
command name, options at the end — and must give the same namespace. A few README commands then
run against a real daemon both ways and must print the same thing and exit the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from slmactor.cli.main import COMMON_OPTIONS, build_parser
from slmactor.testing import DaemonProcess

COMMON_ARGV = ["--json", "--project", "/tmp", "--runtime-dir", "/tmp/rt", "--no-autostart",
               "--timeout", "7.5"]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaf_commands(parser: argparse.ArgumentParser,
                  path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    children = _subparsers(parser)
    if not children and path:
        yield path, parser
    for name, child in children.items():
        yield from leaf_commands(child, (*path, name))


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    if action.type in (int, float):
        return "1"
    return "x"


def required_argv(parser: argparse.ArgumentParser) -> list[str]:
    """Values for the arguments a command cannot run without."""
    argv: list[str] = []
    for action in parser._actions:
        if action.option_strings:
            if action.required:
                argv += [action.option_strings[0], _value(action)]
        elif action.nargs not in ("?", "*", argparse.SUPPRESS) and not isinstance(
                action, argparse._SubParsersAction):
            argv.append(_value(action))
    return argv


PARSER = build_parser(None)
LEAVES = list(leaf_commands(PARSER))


def test_every_group_and_the_top_level_commands_are_walked() -> None:
    names = {path for path, _ in LEAVES}
    assert ("status",) in names and ("memory", "recall") in names and ("evolve", "rules") in names
    assert ("metrics", "replay") in names and ("service", "install") in names
    assert len(names) > 25


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=" ".join)
def test_common_options_before_and_after_the_command_parse_the_same(path: tuple[str, ...]) -> None:
    leaf = dict(LEAVES)[path]
    rest = required_argv(leaf)
    before = PARSER.parse_args([*COMMON_ARGV, *path, *rest])
    after = PARSER.parse_args([*path, *rest, *COMMON_ARGV])
    between = PARSER.parse_args([*path, *COMMON_ARGV, *rest])
    assert vars(before) == vars(after) == vars(between)
    assert before.json is True and before.timeout == 7.5 and before.project == "/tmp"
    assert before.runtime_dir == "/tmp/rt" and before.no_autostart is True


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=" ".join)
def test_defaults_hold_when_no_option_is_given(path: tuple[str, ...]) -> None:
    args = PARSER.parse_args([*path, *required_argv(dict(LEAVES)[path])])
    assert (args.json, args.project, args.runtime_dir, args.no_autostart, args.timeout) == (
        False, None, None, False, 5.0)


def test_every_argument_has_help_text() -> None:
    missing = []
    for path, leaf in [((), PARSER), *LEAVES]:
        for action in leaf._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append(f"{' '.join(path)}: {action.option_strings or action.dest}")
    assert missing == []


@pytest.mark.parametrize("path", [p for p, _ in LEAVES], ids=" ".join)
def test_subcommand_help_shows_the_common_options(path: tuple[str, ...]) -> None:
    text = dict(LEAVES)[path].format_help()
    for flags, _ in COMMON_OPTIONS:
        assert flags[0] in text


def _cli(daemon: DaemonProcess, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SLMACTOR_HOME=str(daemon.home))
    return subprocess.run([sys.executable, "-m", "slmactor", *argv], capture_output=True,
                          text=True, timeout=60, env=env, check=False)


README_COMMANDS = [
    ["status"],
    ["memory", "recall", "fix the failing test"],
    ["memory", "episodes", "3"],
    ["memory", "facts"],
    ["evolve", "rules"],
    ["metrics", "show"],
]


@pytest.mark.parametrize("command", README_COMMANDS, ids=" ".join)
def test_readme_commands_give_the_same_answer_either_way(daemon: DaemonProcess,
                                                         command: list[str]) -> None:
    common = ["--json", "--project", str(daemon.project), "--runtime-dir", str(daemon.runtime_dir),
              "--no-autostart", "--timeout", "20"]
    before = _cli(daemon, *common, *command)
    after = _cli(daemon, *command, *common)
    assert before.returncode == after.returncode == 0, (before.stderr, after.stderr)
    first, second = json.loads(before.stdout), json.loads(after.stdout)
    for volatile in ("uptime_s", "rss_bytes", "actors", "events", "cpu_s", "open_fds", "requests"):
        first.pop(volatile, None)
        second.pop(volatile, None)
    assert first == second


def test_help_command_prints_the_commands_help() -> None:
    done = subprocess.run([sys.executable, "-m", "slmactor", "help", "memory", "recall"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "--explain" in done.stdout and "--json" in done.stdout
    bare = subprocess.run([sys.executable, "-m", "slmactor", "help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert bare.returncode == 0 and "memory" in bare.stdout and "exit codes" in bare.stdout


def test_a_group_without_its_subcommand_lists_them(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "slmactor", "memory"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    for sub in ("episodes", "recall", "facts", "forget", "working"):
        assert sub in done.stderr
