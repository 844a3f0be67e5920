"""The door's value rules: numbers msgpack or the stores cannot hold, NaN and infinities,
container floods — refused with a typed error for every kind; NUL bytes in a text replaced, never
a reason to refuse it; and every reply encodable by construction."""

from __future__ import annotations

import math
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError, codec
from slmactor.protocol.messages import MESSAGES


def _frames(kind_name: str, **fields: Any) -> list[bytes]:
    return [kind_name.encode(), msgpack.packb({"v": PROTOCOL_VERSION, "id": "t.1", **fields})]


def _refused(frames: list[bytes]) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        codec.load_fields(frames)
    return info.value


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("run.reset", {"run_id": "x", "project": "/tmp/a\x00b"}),
        ("client.dropped", {"count": 2**63}),
        ("client.dropped", {"count": codec.MAX_SAFE_INT + 1}),
        ("client.dropped", {"count": -(2**53)}),
        ("metrics.record", {"run": {"tokens_in": 2**64 - 1}}),
        ("metrics.record", {"run": {"cost": math.nan}}),
        ("metrics.record", {"run": {"nested": [{"x": math.inf}]}}),
        ("record_tool", {"run_id": "r", "tool": "t", "at": math.nan}),
        ("record_tool", {"run_id": "r", "tool": "t", "at": -math.inf}),
        ("record_tool", {"run_id": "r", "tool": "t", "at": 2**60}),
        ("calibration.get", {"context_window": 2**63 - 1}),
        ("calibration.get", {"task_timeout_ms": 1e300}),
    ],
)
def test_values_the_stores_cannot_hold_are_refused_as_bad_field(kind: str, fields: dict[str, Any]) -> None:
    error = _refused(_frames(kind, **fields))
    assert error.code == ErrorCode.BAD_FIELD
    assert error.request_id == "t.1"  # the sender still gets its answer


def test_limits_themselves_are_accepted() -> None:
    _cls, fields = codec.load_fields(_frames("client.dropped", count=codec.MAX_SAFE_INT))
    assert fields["count"] == codec.MAX_SAFE_INT
    _cls, fields = codec.load_fields(_frames("metrics.record", run={"t": -codec.MAX_SAFE_INT, "c": 0.5}))
    assert fields["run"] == {"t": -codec.MAX_SAFE_INT, "c": 0.5}


def test_a_flood_of_nested_empty_arrays_is_refused_cheaply() -> None:
    # 1 MiB of empty arrays would decode to ~65 MiB; the body may hold MAX_CONTAINERS in all.
    body = msgpack.packb({"v": PROTOCOL_VERSION, "id": "t.1", "junk": [[[] for _ in range(9_000)] for _ in range(3)]})
    assert len(body) < codec.MAX_MESSAGE_BYTES
    error = _refused([b"status", body])
    assert error.code == ErrorCode.BAD_MSGPACK
    assert "maps and arrays" in error.reason
    # Under the total, the same shape is fine (the unknown field is ignored).
    ok = msgpack.packb({"v": PROTOCOL_VERSION, "id": "t.1", "junk": [[] for _ in range(9_000)]})
    assert codec.load_fields([b"status", ok])[1] == {"id": "t.1"}


def test_a_result_msgpack_cannot_encode_is_saturated_not_lost() -> None:
    reply = codec.load_reply(codec.dump_result("r.1", {"total": 2**64 + 5, "low": -(2**70), 3: {1, 2}}))
    assert reply.ok
    assert reply.result == {"total": 2**63 - 1, "low": -(2**63), "3": [1, 2]}  # keys made strings


def test_busy_carries_a_retry_hint() -> None:
    reply = codec.load_reply(codec.dump_error("r.1", ErrorCode.BUSY, "full", retry_ms=100))
    assert (reply.ok, reply.code, reply.retry_ms) == (False, int(ErrorCode.BUSY), 100)
    assert codec.load_reply(codec.dump_error("r.1", ErrorCode.INTERNAL, "x")).retry_ms == 0


_anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text() | st.integers(), inner, max_size=4)
    | st.tuples(inner, inner),
    max_leaves=20,
)


@settings(derandomize=True, max_examples=500)
@given(_anything)
def test_every_result_becomes_a_decodable_reply(result: Any) -> None:
    reply = codec.load_reply(codec.dump_result("r.1", result))
    assert reply.id == "r.1" and reply.ok


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_nul_in_any_string_field_of_any_kind_is_replaced_and_bad_numbers_refused(kind: str) -> None:
    schema = codec.schemas_for_all()[kind]
    for name, (checker, _cap) in schema.items():
        if checker is codec._check_str:
            _cls, fields = codec.load_fields(_frames(kind, **{name: "a\x00b"}))
            assert fields[name] == "a\ufffdb"
        elif checker is codec._check_str_list:
            _cls, fields = codec.load_fields(_frames(kind, **{name: ["ok", "a\x00"]}))
            assert fields[name] == ["ok", "a\ufffd"]
        elif checker is codec._check_int:
            assert _refused(_frames(kind, **{name: 2**63})).code == ErrorCode.BAD_FIELD
        elif checker is codec._check_float:
            assert _refused(_frames(kind, **{name: math.inf})).code == ErrorCode.BAD_FIELD


@pytest.mark.parametrize(
    ("kind", "fields", "expected"),
    [
        ("focus", {"run_id": "r\x00", "paths": ["a\x00b"]}, {"run_id": "r\ufffd", "paths": ["a\ufffdb"]}),
        ("metrics.record", {"run": {"label\x00": 1}}, {"run": {"label\ufffd": 1}}),
        ("metrics.record", {"run": {"label": ["ok", {"n\x00": "u\x00l"}]}},
         {"run": {"label": ["ok", {"n\ufffd": "u\ufffdl"}]}}),
    ],
)
def test_nul_anywhere_in_a_text_becomes_the_replacement_character(
        kind: str, fields: dict[str, Any], expected: dict[str, Any]) -> None:
    _cls, got = codec.load_fields(_frames(kind, **fields))
    assert {k: got[k] for k in expected} == expected


@settings(derandomize=True, max_examples=300)
@given(st.recursive(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
                                      inner, max_size=3), max_leaves=12))
def test_a_decoded_free_form_value_holds_no_nul_and_keeps_everything_else(value: Any) -> None:
    _cls, got = codec.load_fields(_frames("metrics.record", run={"x": value}))

    def texts(v: Any) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, dict):
            return [t for k, item in v.items() for t in (k, *texts(item))]
        return [t for item in v for t in texts(item)] if isinstance(v, list) else []

    assert not any("\x00" in t for t in texts(got["run"]))
    assert [t.replace("\x00", "\ufffd") for t in texts({"x": value})] == texts(got["run"])
