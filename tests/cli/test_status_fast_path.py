"""`slmactor status` skips argparse only for argument lists argparse would read the same way."""

from __future__ import annotations

import pytest

from slmactor.cli.main import _status_fast_path, build_parser

FIELDS = ("json", "project", "runtime_dir", "no_autostart", "timeout", "command")


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["--json", "status"],
        ["--runtime-dir", "/tmp/x", "status"],
        ["--timeout", "1.5", "--json", "--runtime-dir", "/tmp/x", "status"],
        ["--project", "/repo", "--no-autostart", "status"],
        ["status", "--json"],  # options after the command, as the README writes it
        ["--json", "status", "--timeout", "2", "--runtime-dir", "/tmp/x"],
    ],
)
def test_fast_path_reads_what_argparse_reads(argv: list[str]) -> None:
    fast = _status_fast_path(argv)
    assert fast is not None
    full = build_parser("status").parse_args(argv)
    assert {f: getattr(fast, f) for f in FIELDS} == {f: getattr(full, f) for f in FIELDS}


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["status", "--help"],
        ["status", "status"],
        ["status", "--debug"],
        ["--timeout", "soon", "status"],
        ["--runtime-dir", "status"],
        ["--runtime-dir"],
        ["stop"],
        ["memory", "status"],
        ["--version"],
    ],
)
def test_anything_else_goes_through_the_full_parser(argv: list[str]) -> None:
    assert _status_fast_path(argv) is None
