"""The parts of `import sessions` a person reads or a disk feeds: the progress line, git remote
matching, the bounded line reader and the transcript line parser."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.cli.sessions import files
from slmactor.cli.sessions.files import LINE_TOO_LONG, Lines, Pass
from slmactor.cli.sessions.places import Places, command, normalize_remote
from slmactor.cli.sessions.progress import Progress, duration
from slmactor.logic.loop.transcripts import MAX_JSON_DEPTH, json_objects, parse_json


def test_a_terminal_gets_a_bar_with_files_bytes_and_time_left() -> None:
    now = [0.0]
    out = io.StringIO()
    shown = Progress(10, 100_000_000, stream=out, terminal=True, clock=lambda: now[0])
    now[0] = 20.0
    shown.update(3, 25_000_000)
    assert out.getvalue() == ("\rimporting sessions: [######..................]  25% 3/10 files, "
                              "25/100 MB, 1m00s left\x1b[K")


def test_a_pipe_gets_one_plain_line_per_tenth_and_one_when_quiet_long() -> None:
    now = [0.0]
    out = io.StringIO()
    shown = Progress(100, 1000, stream=out, terminal=False, clock=lambda: now[0])
    for done in range(0, 1001, 5):
        now[0] += 0.01
        shown.update(done // 10, done)
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("importing sessions: 100% 100/100 files")
    now[0] += 100.0
    shown.update(100, 1000, final=True)
    assert len(out.getvalue().splitlines()) == 10  # 100 % was said already
    slow = Progress(5, 1000, stream=io.StringIO(), terminal=False, clock=lambda: now[0])
    now[0] += 31.0
    slow.update(1, 1)  # under a tenth, but half a minute of silence
    assert slow.lines_written == 1


def test_durations_read_like_a_person_says_them() -> None:
    assert [duration(s) for s in (4.4, 65, 3 * 3600 + 120)] == ["4s", "1m05s", "3h02m"]


def test_every_spelling_of_a_remote_is_one_remote() -> None:
    spellings = ["git@github.com:Team/Service.git", "https://github.com/team/service",
                 "ssh://git@github.com:22/team/service.git", "https://bot:token@github.com/team/service/",
                 "git://github.com/team/service.git"]
    assert {normalize_remote(s) for s in spellings} == {"github.com/team/service"}
    assert normalize_remote("") == normalize_remote("not a url") == ""


@settings(derandomize=True, max_examples=200)
@given(st.text(max_size=60))
def test_normalizing_a_remote_never_raises_and_is_idempotent(url: str) -> None:
    once = normalize_remote(url)
    assert normalize_remote(once) in (once, "")


def test_a_gone_directory_matches_the_one_project_named_like_it(tmp_path: Path) -> None:
    (tmp_path / "code" / "svc").mkdir(parents=True)
    (tmp_path / "code" / "web").mkdir()
    places = Places([tmp_path / "code" / "web"])
    # Beside a known project: the folder named like the gone one.
    assert places.match("/Users/a/src/svc/pkg")[0] == tmp_path / "code" / "svc"
    assert places.match("/Users/a/src/nothing") == (None, [])
    # The top two folders of an absolute path are never a project's name.
    (tmp_path / "code" / "Users").mkdir()
    assert places.match("/Users/a") == (None, [])


def test_the_suggested_command_names_the_files_or_their_folder() -> None:
    assert command(["/h/a b.jsonl"], "") == "slmactor import sessions '/h/a b.jsonl' --project DIR"
    many = [f"/h/p/{i}.jsonl" for i in range(20)]
    assert command(many, "/x") == "slmactor import sessions /h/p --project /x"
    assert command(["--git", "/r"], "") == "slmactor import sessions --git /r --project DIR"


@settings(derandomize=True, max_examples=100)
@given(st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.integers(min_value=0, max_value=2000))
def test_the_reader_yields_whole_lines_within_the_counted_size(tmp_path_factory: object, lines: list[bytes],
                                                               size: int) -> None:
    path = tmp_path_factory.mktemp("r") / "f.jsonl"  # type: ignore[attr-defined]
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(data)
    got = list(Lines(str(path), min(size, len(data)))())
    whole = [line.decode("utf-8", errors="replace") + "\n" for line in lines]
    assert got == whole[:len(got)]
    assert sum(len(line) + 1 for line in lines[:len(got)]) <= size  # nothing past the counted size
    if size >= len(data):
        assert got == whole


def test_an_over_long_line_is_drained_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\n" + b"x" * 5000 + b"\nb\n")
    skipped: dict[str, int] = {}
    lines = list(files._read(str(path), 10_000, 100, "", skipped))
    assert lines == ["a\n", "b\n"] and skipped == {LINE_TOO_LONG: 1}
    whole = Pass(str(path), 10_000, "")
    assert list(whole) == ["a\n", "x" * 5000 + "\n", "b\n"] and whole.skipped == {}


def test_any_line_parses_to_a_value_or_a_reason() -> None:
    assert parse_json('{"a": "x\x00\x01"}') == ({"a": "x\x00\x01"}, "")
    assert parse_json("[" * 100_000)[1] in ("line nested deeper than 200", "line is not JSON")
    assert parse_json("[" * 100_000 + "]" * 100_000)[1] == "line nested deeper than 200"
    deep = json.dumps({"k": json.loads("[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5))})
    assert parse_json(deep)[1] == "line nested deeper than 200"
    skipped: dict[str, int] = {}
    assert list(json_objects(["[1]\n", "\n", "{}\n", "nope\n"], skipped)) == [{}]
    assert skipped == {"line is not a JSON object": 1, "line is not JSON": 1}


@settings(derandomize=True, max_examples=300)
@given(st.text(max_size=200))
def test_the_line_parser_never_raises(text: str) -> None:
    value, why = parse_json(text)
    assert (why == "") or value is None
