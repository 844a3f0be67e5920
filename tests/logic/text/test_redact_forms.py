"""Credentials in commands, URLs and env assignments: every form of the corpus is
redacted, look-alikes (hashes, UUIDs, `$PASSWORD`, `<token>`) survive, and the redactor stays
idempotent, bounded and linear with the new passes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.redact import redact, redact_obj, redact_reply
from tests.fixtures.secret_corpus import LOOKALIKES, SECRETS, Secret
from tests.logic.text.test_redact import cpu_seconds

#: The longest marker a redaction writes (`«redacted:digitalocean_token»`).
MAX_MARKER = max(len(f"«redacted:{k}»") for k in ("digitalocean_token", "password", "secret"))


@pytest.mark.parametrize("secret", SECRETS, ids=[s.form for s in SECRETS])
def test_every_form_of_the_corpus_is_redacted(secret: Secret) -> None:
    out = redact(secret.line)
    assert secret.value not in out
    assert "«redacted:" in out
    assert redact(out) == out


@pytest.mark.parametrize("secret", SECRETS, ids=[s.form for s in SECRETS])
def test_every_form_is_redacted_inside_json_text(secret: Secret) -> None:
    """Tool arguments arrive as JSON text, sometimes JSON inside JSON (escaped quotes)."""
    once = json.dumps({"command": secret.line})
    twice = json.dumps({"args": once})
    for text in (once, twice):
        out = redact(text)
        assert secret.value not in out, out
        assert redact(out) == out


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("psql postgres://app:Pg5ecretVal1@db.internal:5432/app", "postgres://app:"),
        ("psql postgres://app:Pg5ecretVal1@db.internal:5432/app", "@db.internal:5432/app"),
        ("curl -s -u admin:CurlPw88x https://api.example.com/v1", "-u admin:"),
        ("mysql -uroot -pMysqlPw66 app < dump.sql", "mysql -uroot -p"),
        ("pg_dump --password PgDumpPw44 -h db mydb", " -h db mydb"),
    ],
)
def test_only_the_password_part_goes(line: str, kept: str) -> None:
    assert kept in redact(line)


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_survive(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "PWD=/home/jane/src/project",  # the working directory, not a password
        "postgres://user:password@localhost/db",  # the documentation example
        "mysql -p****",
        "curl -u user:$TOKEN https://x",
        "--password <password>",
        "docker run -u 1000:1000 image",
        "ssh://git@example.com:22/org/repo.git",
        "http://[::1]:8080/path@x",
        "primary_key   idx_users_email_unique",
        "password=short",
    ],
)
def test_references_and_neighbours_are_not_secrets(text: str) -> None:
    assert redact(text) == text


def test_replies_are_redacted_deeper_than_stored_records() -> None:
    deep: object = "DB_PASS=DbPassVal12c"
    for _ in range(30):
        deep = {"k": deep}
    out = repr(redact_reply(deep))
    assert "DbPassVal12c" not in out and "too-deep" not in out
    assert "too-deep" in repr(redact_obj(deep))


_NOISE = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    _NOISE,
    st.sampled_from(SECRETS),
    st.sampled_from(LOOKALIKES),
    st.sampled_from([" ", "\n", "; ", " | "]),
)
def test_property_secret_gone_lookalike_intact_idempotent_bounded(
    noise: str, secret: Secret, look: str, sep: str
) -> None:
    text = f"{noise}\n{secret.line}{sep}\n{look}\n{noise}"
    once = redact(text)
    assert secret.value not in once
    assert look in once
    assert redact(once) == once
    added = once.count("«redacted:") - text.count("«redacted:")
    assert len(once) - len(text) <= added * MAX_MARKER


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_property_arbitrary_text_is_idempotent_and_bounded(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    added = once.count("«redacted:") - text.count("«redacted:")
    assert added >= 0
    assert len(once) - len(text) <= added * MAX_MARKER


_SECRET_SLOTS = ("password={}", "--password {}", "token: {}", "postgres://u:{}@db/x",
                 "mysql -p{} db", "curl -u u:{} https://x", "aws_secret_access_key {}")
_NEUTRAL_SLOTS = ("commit {}", "id={}", "see {} in the log", "{}", "build {} failed")


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    st.from_regex(r"[0-9a-f]{40}|[0-9a-f]{64}", fullmatch=True) | st.uuids().map(str),
    st.sampled_from(_NEUTRAL_SLOTS),
)
def test_property_hashes_and_uuids_survive(value: str, template: str) -> None:
    text = template.format(value)
    assert redact(text) == text


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    st.from_regex(r"\$[A-Z_]{1,20}|\$\{[A-Z_]{1,20}\}|<[a-z_]{1,20}>", fullmatch=True),
    st.sampled_from(_SECRET_SLOTS + _NEUTRAL_SLOTS),
)
def test_property_references_survive_even_in_secret_slots(value: str, template: str) -> None:
    text = template.format(value)
    assert redact(text) == text


@pytest.mark.parametrize(
    "unit",
    ["a://", "a://b:", "mysql -p", "mysql x", "--password ", "--a-b-c-", "curl -u a:", "curl ",
     "login a ", "login a password ", "aws_secret_access_key ", "a_b_key ", "redis-cli ",
     "sshpass ", "x@", "PGPASSWORD=", "DB_PASS="],
)  # fmt: skip
def test_new_passes_take_linear_time(unit: str) -> None:
    small = unit * ((1 << 18) // len(unit))
    large = unit * ((1 << 20) // len(unit))
    t_small = cpu_seconds(lambda: redact(small), repeat=2)
    t_large = cpu_seconds(lambda: redact(large), repeat=1)
    assert t_large < 2.0
    assert t_large < 8 * t_small + 0.02
