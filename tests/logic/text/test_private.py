"""`<private>` spans and excluded paths (slmactor.logic.text.private): what a user keeps out of
memory is cut at the door, and what is left stays well-formed."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.private import (
    EXCLUDED_MARK,
    PRIVATE_MARK,
    Excluder,
    names_excluded,
    parse_patterns,
    scrub,
    strip_private,
    strip_private_json_bytes,
)

SECRET = "hunter2-PRIVMARK"


def test_a_private_span_is_cut_with_its_tags_and_a_mark_left() -> None:
    assert strip_private(f"use <private>{SECRET}</private> here") == f"use {PRIVATE_MARK} here"
    assert strip_private(f"a <PRIVATE>{SECRET}</Private> b") == f"a {PRIVATE_MARK} b"
    assert strip_private(f"multi <private>line\n{SECRET}\n</private>") == f"multi {PRIVATE_MARK}"


def test_a_tag_left_open_hides_the_rest() -> None:
    assert SECRET not in strip_private(f"keep this <private>{SECRET} and more")
    assert strip_private(f"keep this <private>{SECRET}").startswith("keep this ")


def test_an_open_tag_in_json_text_hides_to_the_end_of_its_string_only() -> None:
    text = json.dumps({"command": f"echo <private>{SECRET} \"quoted\"", "cwd": "/p"})
    out = strip_private(text)
    assert SECRET not in out
    assert json.loads(out) == {"command": f"echo {PRIVATE_MARK}", "cwd": "/p"}


def test_text_without_a_span_is_returned_as_is() -> None:
    text = "nothing private <priv> here"
    assert strip_private(text) is text


@settings(derandomize=True, max_examples=200)
@given(st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=4),
       st.text(max_size=30), st.booleans())
def test_a_hook_payload_stays_valid_json_and_loses_the_span(fields: dict[str, str], secret: str,
                                                          closed: bool) -> None:
    span = f"<private>{SECRET}{secret}" + ("</private>" if closed else "")
    payload = {**fields, "prompt": f"before {span} after"}
    raw = json.dumps(payload, ensure_ascii=False).encode()
    out = json.loads(strip_private_json_bytes(raw))
    assert SECRET not in json.dumps(out, ensure_ascii=False)
    assert out["prompt"].startswith("before ")
    for key, value in fields.items():
        if key != "prompt" and "<private" not in value.lower():
            assert out[key] == value


EXCLUDER = Excluder("/repo", parse_patterns("# team secrets\nsecrets/\n*.pem\n\nconfig/prod/*.yml\n"))


def test_patterns_follow_gitignore_lines() -> None:
    assert EXCLUDER.excludes("secrets/db.txt")
    assert EXCLUDER.excludes("/repo/secrets/deep/a.txt")
    assert EXCLUDER.excludes("./secrets/db.txt:12")
    assert EXCLUDER.excludes("keys/server.pem")
    assert EXCLUDER.excludes("config/prod/app.yml")
    assert not EXCLUDER.excludes("config/dev/app.yml")
    assert not EXCLUDER.excludes("src/secretsauce.py")
    assert not EXCLUDER.excludes("/repo")


def test_a_record_naming_an_excluded_path_is_dropped_and_other_mentions_replaced() -> None:
    body = {"report": {"calls": [{"tool": "Read", "args": '{"file_path": "/repo/secrets/k"}',
                                  "output": "API_KEY=abc"},
                                 {"tool": "Bash", "args": '{"command": "ls src"}'}],
                       "summary": "read secrets/k and fixed <private>it</private>"}}
    out = scrub(body, EXCLUDER)
    assert out["report"]["calls"] == [{"tool": "Bash", "args": '{"command": "ls src"}'}]
    assert out["report"]["summary"] == f"read {EXCLUDED_MARK} and fixed {PRIVATE_MARK}"
    assert names_excluded(body, EXCLUDER)
    assert not names_excluded({"tool": "Bash", "command": "ls"}, EXCLUDER)
    assert not names_excluded(body, Excluder("/repo"))
