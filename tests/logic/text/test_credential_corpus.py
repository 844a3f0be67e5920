"""The third-party credential corpus (tests/fixtures/credential_corpus.py, every value from
detect-secrets' or gitleaks' tests or a provider's docs) against the redactor and every cut:
each form is redacted as written, inside JSON and inside JSON in JSON; look-alikes (hashes,
UUIDs, base64 images, long identifiers) stay; and no cut followed by redaction keeps a prefix
of 6 or more characters of a secret, whichever clip made the cut."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.redact import redact, redact_obj
from slmactor.logic.text.safecut import cut_chars
from slmactor.logic.text.strings import clip, clip_words, first_line
from slmactor.logic.working.fastclip import clip_fast, first_line_fast
from tests.fixtures.credential_corpus import FORMS, LOOKALIKES, Form, all_text, leaks

#: A kept prefix this long of a secret counts as a leak (shorter ones say nothing: `sk_l`).
PREFIX = 6

CUTS: dict[str, Callable[[str, int], str]] = {
    "clip": clip, "cut_chars": cut_chars, "first_line": first_line, "clip_words": clip_words,
    "clip_fast": clip_fast, "first_line_fast": first_line_fast,
}  # fmt: skip


def test_the_corpus_is_large_named_and_unique() -> None:
    assert len(FORMS) >= 60
    assert len({f.value for f in FORMS}) == len(FORMS)
    assert all(f.source and f.value in f.line for f in FORMS)


@pytest.mark.parametrize("form", FORMS, ids=[f.form for f in FORMS])
def test_every_form_is_redacted_as_written_and_in_json(form: Form) -> None:
    once = json.dumps({"command": form.line})
    for text in (form.line, once, json.dumps({"args": once})):
        out = redact(text)
        assert form.value not in out, out
        assert "«redacted:" in out
        assert redact(out) == out


def test_every_form_is_redacted_inside_a_json_escaped_document() -> None:
    """One file's content as a tool's JSON arguments carry it: each line follows a `\\n`."""
    once = json.dumps({"file_path": "deploy/all.txt", "content": all_text()})
    for text in (once, json.dumps({"args": once})):
        out = redact(text)
        assert leaks(out) == []
        assert redact(out) == out
        assert [look for look in LOOKALIKES if json.dumps(look)[1:-1] not in out] == []


@pytest.mark.parametrize("form", FORMS, ids=[f.form for f in FORMS])
def test_every_form_is_redacted_as_a_value_of_a_record(form: Form) -> None:
    record = {"tool": "bash", "args": {"command": form.line}, "lines": form.line.splitlines()}
    assert leaks(json.dumps(redact_obj(record))) == [] or form.value not in json.dumps(
        redact_obj(record)
    )


@pytest.mark.parametrize("look", LOOKALIKES)
def test_lookalikes_stay_intact_alone_in_json_and_among_secrets(look: str) -> None:
    assert redact(look) == look
    assert redact(json.dumps({"output": look})) == json.dumps({"output": look})
    assert look in redact(all_text())


def _kept_prefix(form: Form, out: str) -> bool:
    """True when `out` keeps PREFIX or more leading characters of the secret that do not occur
    in the line anyway outside the secret."""
    prefix = form.value[: min(PREFIX, len(form.value))]
    elsewhere = form.line.replace(form.value, "\0")
    return prefix in out and prefix not in elsewhere


@pytest.mark.parametrize("form", FORMS, ids=[f.form for f in FORMS])
def test_no_cut_through_a_secret_keeps_its_prefix(form: Form) -> None:
    text = f"$ deploy --verbose\n{form.line} and then some trailing words"
    start = text.index(form.value)
    for name, cut in CUTS.items():
        line_cut = name.startswith("first_line")
        base = text.split("\n", 1)[1] if line_cut else text
        begin = base.index(form.value)
        for at in range(begin + 1, begin + len(form.value), max(len(form.value) // 12, 1)):
            out = redact(cut(base, at))
            assert not _kept_prefix(form, out), (name, at - begin, out[-160:])
    assert start > 0


@settings(derandomize=True, max_examples=400, deadline=None)
@given(
    st.sampled_from(FORMS),
    st.sampled_from(sorted(CUTS)),
    st.integers(min_value=0, max_value=400),
    st.text(alphabet=" \n\t:=\"'abcXYZ019_-./\\{}", max_size=40),
)
def test_property_cut_then_redact_never_keeps_a_prefix(
    form: Form, cut_name: str, offset: int, noise: str
) -> None:
    text = f"{noise}\n{form.line} {noise}"
    assert form.value not in redact(text)
    at = text.index(form.value) + offset % (len(form.value) + 1)
    out = redact(CUTS[cut_name](text, at))
    assert not _kept_prefix(form, out) or form.value[:PREFIX] in noise


_BENIGN = st.sampled_from(
    list(LOOKALIKES)
    + ["def check(self, token: str) -> bool:", "PASSWORD_MIN_LENGTH = 12", "api_key = settings.api_key",
       "Compiling serde v1.0.188", "key: value", "curl -H \"Authorization: Bearer $TOKEN\" x",
       "postgres://user:${DB_PASSWORD}@db/app", "sk-feature-branch-for-something", "«redacted:secret»"]
)  # fmt: skip


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(_BENIGN, max_size=8), st.sampled_from([" ", "\n", "; ", " | ", "\t"]))
def test_property_a_secret_free_text_comes_out_unchanged(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    assert redact(text) == text


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FORMS), min_size=1, max_size=4), st.lists(_BENIGN, max_size=4),
       st.text(max_size=60))  # fmt: skip
def test_property_idempotent_and_never_grows_what_is_not_a_secret(
    forms: list[Form], benign: list[str], noise: str
) -> None:
    text = "\n".join([f.line for f in forms] + benign + [noise])
    once = redact(text)
    assert redact(once) == once
    assert all(f.value not in once for f in forms)
    assert all(b in once for b in benign)
    # Only markers are added: the text without them is no longer than the input.
    added = once.count("«redacted:") - text.count("«redacted:")
    assert len(once) - len(text) <= added * len("«redacted:azure_client_secret»")


@pytest.mark.parametrize(
    "unit",
    ["1:A", "0123456789abcdef0123456789abcdef-us1", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.", "&sig=",
     "auth=QWxh", 'key="password" value="', "LS0tLS1CRUdJTi", "\\nx", "AKIA", "sk_live_",
     "hooks.slack.com/services/", "a.b.c.", "PRIVATE KEY\\n"],
)  # fmt: skip
def test_the_new_passes_take_linear_time(unit: str) -> None:
    from tests.logic.text.test_redact import cpu_seconds

    small = unit * ((1 << 18) // len(unit))
    large = unit * ((1 << 20) // len(unit))
    t_small = cpu_seconds(lambda: redact(small), repeat=2)
    t_large = cpu_seconds(lambda: redact(large), repeat=1)
    assert t_large < 2.0
    assert t_large < 8 * t_small + 0.02
