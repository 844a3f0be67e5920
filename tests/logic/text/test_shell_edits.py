"""The files a shell line edits: an agent's edit made in the shell counts as an edit (what a
fix "passed after editing `x`" names), never as a command to run first."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.shell import edited_paths


@pytest.mark.parametrize(("command", "files"), [
    ("sed -i 's/a - b/a + b/' calc.py", ["calc.py"]),
    ("sed -i.bak -e 's/x/y/' a.py b.py", ["a.py", "b.py"]),
    ("sed --in-place 's/x/y/' ./src/a.py", ["src/a.py"]),
    ('perl -pi -e "s/a/b/" x.pl', ["x.pl"]),
    ("cat > calc.py <<'EOF'\ndef add(a, b):\n    return a + b\nEOF", ["calc.py"]),
    ("printf 'x = 1\\n' >> conf.py", ["conf.py"]),
    ("cd src && sed -i 's/x/y/' a.py && pytest", ["a.py"]),
])
def test_in_place_edits_and_written_files_are_edits(command: str, files: list[str]) -> None:
    assert edited_paths(command) == files


@pytest.mark.parametrize("command", [
    "sed -n '1,100p' big.log",             # a read
    "python3 server.py > server.log 2>&1 &",  # a program's log, not content written
    "pytest -q > out.txt",
    "echo done > /dev/null",
    "cat calc.py",
    "grep -rn 'a - b' .",
])
def test_reads_and_logs_are_no_edits(command: str) -> None:
    assert edited_paths(command) == []


@settings(max_examples=300, derandomize=True)
@given(st.text(max_size=200))
def test_any_line_is_read_without_error_and_names_only_its_own_words(command: str) -> None:
    for path in edited_paths(command):
        assert path and path in command.replace("./", "")
