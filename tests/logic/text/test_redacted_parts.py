"""A reply part redacted once (`redacted_map`) leaves a reply exactly as redacting it again would.

Recall caches its hits' maps redacted, and `redact_obj` hands such a `Redacted` map back
unchanged; these properties check that no reply can tell: same maps, same msgpack bytes, at
every depth a part can sit at, with secrets (in text and under secret-named keys), tuples and
maps too deep for the limit.
"""

from __future__ import annotations

import random
from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.text.redact import (
    MAX_DEPTH,
    REPLY_MAX_DEPTH,
    Redacted,
    redact_obj,
    redact_reply,
    redacted_map,
)

SECRETS = [
    "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF3gH6",
    "AKIA" + "Q7RT2XZ9LM4KD8PW",
    "Authorization: Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    "export DB_PASSWORD=hunter2hunter2",
    "mysql -u root -pS3cretPassw0rd db",
]
KEYS = st.sampled_from(["query", "summary", "api_key", "password", "files", "tags", "token", "x"])
TEXT = st.one_of(st.text(max_size=40), st.sampled_from(SECRETS),
                 st.builds(lambda a, s: f"{a} {s}", st.text(max_size=20), st.sampled_from(SECRETS)))
SCALAR = st.one_of(TEXT, st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False), st.booleans(), st.none())
JSONISH = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(KEYS, inner, max_size=4),
    ),
    max_leaves=25,
)


def _chain(depth: int, leaf: Any, rng: random.Random) -> Any:
    """`leaf` nested `depth` containers deep (maps and lists, as replies nest)."""
    for _ in range(depth):
        leaf = {"inner": leaf, "note": rng.choice(SECRETS)} if rng.random() < 0.5 else [leaf, "x"]
    return leaf


def _in_reply(part: Any, depth: int) -> dict[str, Any]:
    """A reply whose part sits at `depth` (1 + maps and lists around it)."""
    value = part
    for level in range(depth - 1):
        value = {"hit": value} if level % 2 else [value]
    return {"hits": value}


def _same(a: object, b: object) -> bool:
    return a == b and msgpack.packb(a) == msgpack.packb(b)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, JSONISH, max_size=6), st.integers(1, REPLY_MAX_DEPTH + 3),
       st.integers(0, REPLY_MAX_DEPTH + 3), st.integers(0, 2**32))
def test_a_redacted_part_makes_the_same_reply_at_any_depth(
    source: dict[str, Any], depth: int, extra: int, seed: int
) -> None:
    source = {**source, "deep": _chain(extra, "AKIAQ7RT2XZ9LM4KD8PW", random.Random(seed))}
    part = redacted_map(source)
    assert _same(redact_reply(_in_reply(part, depth)), redact_reply(_in_reply(source, depth)))
    assert _same(redact_obj(_in_reply(part, depth), max_depth=MAX_DEPTH),
                 redact_obj(_in_reply(source, depth), max_depth=MAX_DEPTH))


def test_a_redacted_part_is_passed_through_only_where_nothing_in_it_is_cut() -> None:
    part = redacted_map({"summary": "fixed it", "files": ["a.py"], "nested": {"deeper": [1]}})
    assert isinstance(part, Redacted) and part.height == 3
    assert redact_obj(part, depth=REPLY_MAX_DEPTH - 3, max_depth=REPLY_MAX_DEPTH) is part
    cut = redact_obj(part, depth=REPLY_MAX_DEPTH - 2, max_depth=REPLY_MAX_DEPTH)
    assert cut is not part and type(cut) is dict
    too_deep = redacted_map({"deep": _chain(REPLY_MAX_DEPTH + 1, 1, random.Random(1))})
    assert type(too_deep) is dict  # cut by the limit: not marked, redacted again wherever it goes


def test_secrets_in_the_source_are_gone_from_the_part() -> None:
    part = redacted_map({"summary": f"the call failed with {SECRETS[0]}", "api_key": "Zx9Qw3Er5Ty7Ui"})
    assert SECRETS[0] not in str(part) and "Zx9Qw3Er5Ty7Ui" not in str(part)
    assert part == redact_obj({"summary": f"the call failed with {SECRETS[0]}", "api_key": "Zx9Qw3Er5Ty7Ui"})
