"""The wire contract, pinned: exact bytes of representative requests and replies, a round trip of
every kind, the decode limits, and `clients/PROTOCOL.md` kept in step with the code.

A client in another language is written against `clients/PROTOCOL.md` and these bytes; if one of
these tests has to change, the protocol changed and `PROTOCOL_VERSION` (or the doc) must say so.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slmactor.protocol import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    ErrorCode,
    Kind,
    Message,
    ProtocolError,
    codec,
    dump,
    dump_error,
    dump_result,
    load,
    load_reply,
)
from slmactor.protocol.messages import (
    MESSAGES,
    Decide,
    EpisodeAppend,
    EpisodeRecent,
    Focus,
    LessonAdd,
    MemoryRecall,
    Ping,
    PolicyUpdate,
    RecordTool,
    Status,
)

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "clients" / "PROTOCOL.md"


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


# ---------------------------------------------------------------- golden requests

#: The vectors, language-neutral (hex bytes + decoded value): the Node client's tests read the
#: same file (clients/node/test/golden.test.js).
VECTORS_FILE = REPO / "clients" / "golden-vectors.json"
VECTORS: dict[str, dict[str, Any]] = {
    v["name"]: v
    for group in ("requests", "replies")
    for v in json.loads(VECTORS_FILE.read_text(encoding="utf-8"))[group]
}


def _hex(name: str) -> str:
    return str(VECTORS[name]["hex"])


GOLDEN_REQUESTS: list[tuple[Message, bytes, str]] = [
    (Ping(id="c1.1"), b"ping", _hex("ping")),
    (Status(id="a.7", project="/home/u/repo"), b"status", _hex("status with a project")),
    (
        RecordTool(project="/home/u/repo", run_id="r1", tool="Bash", command="pytest -q", ok=False,
                   error="1 failed", at=1700000000.5, client="ab12", seq=3),
        b"record_tool",
        _hex("record_tool tell"),
    ),
    (
        MemoryRecall(id="c1.2", project="/p", query="fix flaky test", files=["tests/test_x.py"],
                     n=5, explain=True),
        b"memory.recall",
        _hex("memory.recall with a list and a bool"),
    ),
    (
        LessonAdd(id="c1.3", project="/p",
                  lessons=[{"task_id": "t1", "kind": "pitfall", "text": "run ruff first"}]),
        b"lesson.add",
        _hex("lesson.add with a list of maps"),
    ),
    (
        PolicyUpdate(id="x", decision="edit_format", arm="diff", outcome={"applied": True, "retries": 0}),
        b"policy.update",
        _hex("policy.update with a map"),
    ),
]


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_each_vector_decodes_to_its_value_and_back(name: str) -> None:
    vector = VECTORS[name]
    body = bytes.fromhex(vector["hex"])
    assert msgpack.unpackb(body) == vector["value"]
    assert _pack(vector["value"]) == body  # the same bytes from the decoded value, keys in order


def test_every_request_vector_is_pinned_to_a_message() -> None:
    pinned = {body_hex for _msg, _kind, body_hex in GOLDEN_REQUESTS}
    file_requests = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))["requests"]
    assert {v["hex"] for v in file_requests} == pinned
    assert {v["kind"] for v in file_requests} == {k.decode() for _m, k, _h in GOLDEN_REQUESTS}


@pytest.mark.parametrize(("msg", "kind", "body_hex"), GOLDEN_REQUESTS, ids=lambda v: str(v)[:20])
def test_request_encodes_to_the_golden_bytes(msg: Message, kind: bytes, body_hex: str) -> None:
    assert dump(msg) == [kind, bytes.fromhex(body_hex)]


@pytest.mark.parametrize(("msg", "kind", "body_hex"), GOLDEN_REQUESTS, ids=lambda v: str(v)[:20])
def test_golden_bytes_decode_to_the_message(msg: Message, kind: bytes, body_hex: str) -> None:
    assert load([kind, bytes.fromhex(body_hex)]) == msg


def test_a_foreign_client_may_order_keys_freely_and_send_ints_for_floats() -> None:
    # What a JS or Go client might send: keys in another order, `at` as an integer, an id as int,
    # a field this daemon does not know (ignored, so newer clients can talk to older daemons).
    body = {"at": 1700000000, "tool": "Read", "run_id": "r9", "v": 1, "newer_field": [1, 2]}
    msg = load([b"record_tool", _pack(body)])
    assert msg == RecordTool(run_id="r9", tool="Read", at=1700000000.0)
    assert isinstance(msg, RecordTool) and type(msg.at) is float
    assert load([b"ping", _pack({"id": 7, "v": 1})]) == Ping(id="7")


# ---------------------------------------------------------------- golden replies

GOLDEN_RESULT = _hex("success reply")
GOLDEN_ERROR = _hex("error reply")


def test_success_reply_golden_bytes() -> None:
    frames = dump_result("c1.1", {"actor": "control", "pong": True, "state": "running"})
    assert frames == [b"reply", bytes.fromhex(GOLDEN_RESULT)]
    reply = load_reply(frames)
    assert (reply.id, reply.ok, reply.result) == ("c1.1", True, {"actor": "control", "pong": True, "state": "running"})


def test_error_reply_golden_bytes() -> None:
    frames = dump_error("c1.2", ErrorCode.BAD_FIELD, "field 'n': expected an integer, got str")
    assert frames == [b"reply", bytes.fromhex(GOLDEN_ERROR)]
    reply = load_reply(frames)
    assert (reply.id, reply.ok, reply.code) == ("c1.2", False, 5)
    assert reply.reason == "field 'n': expected an integer, got str"


def test_error_reason_is_capped_at_4096_characters() -> None:
    body = msgpack.unpackb(dump_error("r", ErrorCode.INTERNAL, "x" * 10_000)[1])
    assert len(body["error"]["reason"]) == 4096


def test_error_codes_never_change_number() -> None:
    # Clients switch on these numbers; a code is added at the end and never renumbered or reused.
    assert {c.name: int(c) for c in ErrorCode} == {
        "BAD_FRAMES": 1, "BAD_MSGPACK": 2, "BAD_VERSION": 3, "UNKNOWN_KIND": 4, "BAD_FIELD": 5,
        "TOO_LARGE": 6, "BUSY": 7, "TIMEOUT": 8, "UNAVAILABLE": 9, "INTERNAL": 10,
        "NOT_FOUND": 11, "BAD_PROJECT": 12, "STORE_ERROR": 13, "SHUTTING_DOWN": 14,
        "FORBIDDEN": 15, "INVALID": 16,
    }
    assert PROTOCOL_VERSION == 1


# ---------------------------------------------------------------- round trip of every kind

# The round-trip domain: no NUL in a string (one is replaced by U+FFFD), numbers finite and within
# ±MAX_SAFE_INT (values outside it are refused with BAD_FIELD; see tests/protocol/test_codec_limits.py).
_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=24)
_int = st.integers(min_value=-codec.MAX_SAFE_INT, max_value=codec.MAX_SAFE_INT)
_float = st.floats(min_value=-codec.MAX_SAFE_INT, max_value=codec.MAX_SAFE_INT, allow_nan=False)
_plain = st.one_of(st.none(), st.booleans(), _int, _float, _text)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_map = st.dictionaries(
    _text,
    st.recursive(_plain, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                 max_leaves=8),
    max_size=4,
).filter(lambda d: _depth(d) <= codec.MAX_DEPTH)


def _strategy_for(tp: Any) -> st.SearchStrategy[Any]:
    if tp is str:
        return _text
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _int
    if tp is float:
        return _float
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args == (str,):
        return st.lists(_text, max_size=5)
    if origin is list:
        return st.lists(_map, max_size=3)
    if origin is dict:
        return _map
    raise AssertionError(f"no strategy for {tp!r}")


#: A tool call's map (`messages.CALL_FIELDS`): any of its fields, each of its type.
_call_map = st.fixed_dictionaries({}, optional={
    "tool": st.text(max_size=20).filter(lambda t: "\x00" not in t), "family": st.sampled_from(["edit", "shell", ""]),
    "args": _map, "words": st.dictionaries(st.sampled_from(["path", "old_str"]), st.text(max_size=8).filter(lambda t: "\x00" not in t), max_size=2),
    "command": _text, "paths": st.lists(_text, max_size=3), "ok": st.booleans(), "error": _text,
    "exit_code": _int, "call_id": _text,
})


def _message_strategy(cls: type[Message]) -> st.SearchStrategy[Message]:
    hints = typing.get_type_hints(cls)
    fields = {f.name: _call_map if f.name in cls.CALLS else _strategy_for(hints[f.name])
              for f in dataclasses.fields(cls)}
    fields["id"] = st.text(max_size=codec.MAX_ID)
    return st.builds(cls, **fields)


_any_message = st.sampled_from(sorted(MESSAGES)).flatmap(lambda kind: _message_strategy(MESSAGES[kind]))


def test_every_kind_has_a_class_and_a_schema() -> None:
    assert set(MESSAGES) == {str(k) for k in Kind}
    assert set(codec.schemas_for_all()) == set(MESSAGES)  # raises for an unsupported field type


@settings(derandomize=True, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_any_message)
def test_round_trip_of_every_kind(msg: Message) -> None:
    frames = dump(msg)
    assert frames[0] == str(msg.KIND).encode("ascii")
    assert load(frames) == msg


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_round_trip_of_each_kind_at_its_defaults(kind: str) -> None:
    msg = MESSAGES[kind](id="d.1")
    assert msgpack.unpackb(dump(msg)[1]) == {"v": PROTOCOL_VERSION, "id": "d.1"}
    assert load(dump(msg)) == msg


# ---------------------------------------------------------------- decode limits


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _frames(kind: str, **body: Any) -> list[bytes]:
    return [kind.encode(), _pack({"v": 1, "id": "q.1", **body})]


BAD_INPUTS: list[tuple[str, list[bytes], ErrorCode]] = [
    ("one frame", [b"ping"], ErrorCode.BAD_FRAMES),
    ("three frames", [b"ping", _pack({"v": 1}), b""], ErrorCode.BAD_FRAMES),
    ("oversize body", _frames("decide", text="x" * MAX_MESSAGE_BYTES), ErrorCode.TOO_LARGE),
    ("str over the default cap", _frames("decide", text="x" * (codec.MAX_TEXT + 1)), ErrorCode.BAD_FIELD),
    ("str over its field cap", _frames("record_tool", args="x" * 16_385), ErrorCode.BAD_FIELD),
    ("list over the default cap", _frames("memory.recall", files=["a"] * (codec.MAX_LIST + 1)),
     ErrorCode.BAD_FIELD),
    ("list over its field cap", _frames("focus", paths=["a"] * 65), ErrorCode.BAD_FIELD),
    ("list item over 64 KiB", _frames("memory.recall", files=["x" * (codec.MAX_TEXT + 1)]), ErrorCode.BAD_FIELD),
    ("array over 10,000 items", _frames("episode.append", episode={"a": list(range(10_001))}),
     ErrorCode.BAD_MSGPACK),
    ("map over 10,000 keys", _frames("episode.append", episode={str(i): 0 for i in range(10_001)}),
     ErrorCode.BAD_MSGPACK),
    ("map field nested 17 deep", _frames("episode.append", episode=_nested(17)), ErrorCode.BAD_FIELD),
    ("list[map] field nested 17 deep", _frames("lesson.add", lessons=[_nested(17)]), ErrorCode.BAD_FIELD),
    ("msgpack nested 100,000 deep", [b"ping", b"\x91" * 100_000 + b"\xc0"], ErrorCode.BAD_MSGPACK),
    ("ext type", _frames("episode.append", episode={"a": msgpack.ExtType(5, b"x")}), ErrorCode.BAD_MSGPACK),
    # msgpack decodes its timestamp ext (-1) without ext_hook: the field checks refuse it.
    ("timestamp ext in a map field", _frames("episode.append", episode={"at": msgpack.Timestamp(1)}),
     ErrorCode.BAD_FIELD),
    ("timestamp ext in a list[map] field", _frames("lesson.add", lessons=[{"at": msgpack.Timestamp(1)}]),
     ErrorCode.BAD_FIELD),
    ("timestamp ext as a str field", _frames("memory.recall", query=msgpack.Timestamp(1)), ErrorCode.BAD_FIELD),
    ("timestamp ext as the version", [b"ping", b"\x81\xa1v\xd6\xff\x00\x00\x00\x01"], ErrorCode.BAD_VERSION),
    ("int where str", _frames("memory.recall", query=5), ErrorCode.BAD_FIELD),
    ("bytes where str", _frames("memory.recall", query=b"fix"), ErrorCode.BAD_FIELD),
    ("str where int", _frames("episode.recent", n="3"), ErrorCode.BAD_FIELD),
    ("bool where int", _frames("episode.recent", n=True), ErrorCode.BAD_FIELD),
    ("float where int", _frames("episode.recent", n=3.0), ErrorCode.BAD_FIELD),
    ("int where bool", _frames("memory.recall", explain=1), ErrorCode.BAD_FIELD),
    ("str where float", _frames("latency.observe", ms="12"), ErrorCode.BAD_FIELD),
    ("str where list", _frames("memory.recall", files="a.py"), ErrorCode.BAD_FIELD),
    ("int inside list[str]", _frames("memory.recall", files=[1]), ErrorCode.BAD_FIELD),
    ("int inside list[map]", _frames("lesson.add", lessons=[1]), ErrorCode.BAD_FIELD),
    ("list where map", _frames("policy.update", outcome=[]), ErrorCode.BAD_FIELD),
    ("project not a str", _frames("status", project=5), ErrorCode.BAD_FIELD),
    ("project too long", _frames("status", project="/" + "a" * 4096), ErrorCode.BAD_FIELD),
    ("unknown kind", _frames("no.such.kind"), ErrorCode.UNKNOWN_KIND),
    ("non-ASCII kind", [b"\xffping", _pack({"v": 1})], ErrorCode.UNKNOWN_KIND),
    ("no version", [b"ping", _pack({"id": "q.1"})], ErrorCode.BAD_VERSION),
    ("version 2", [b"ping", _pack({"v": 2, "id": "q.1"})], ErrorCode.BAD_VERSION),
    ("version 0", [b"ping", _pack({"v": 0})], ErrorCode.BAD_VERSION),
    ("version as str", [b"ping", _pack({"v": "1"})], ErrorCode.BAD_VERSION),
    ("version as bool", [b"ping", _pack({"v": True})], ErrorCode.BAD_VERSION),
    ("version as float", [b"ping", _pack({"v": 1.0})], ErrorCode.BAD_VERSION),
    ("body is an array", [b"ping", _pack([1, 2])], ErrorCode.BAD_MSGPACK),
    ("empty body", [b"ping", b""], ErrorCode.BAD_MSGPACK),
    ("truncated body", [b"ping", _pack({"v": 1, "id": "q.1"})[:-1]], ErrorCode.BAD_MSGPACK),
    ("trailing bytes", [b"ping", _pack({"v": 1}) + b"\x00"], ErrorCode.BAD_MSGPACK),
    ("invalid UTF-8", [b"ping", b"\x81\xa1v\xa1\xff"], ErrorCode.BAD_MSGPACK),
    ("integer map key", [b"ping", _pack({1: 1})], ErrorCode.BAD_MSGPACK),
]


@pytest.mark.parametrize(("frames", "code"), [(f, c) for _, f, c in BAD_INPUTS],
                         ids=[name for name, _, _ in BAD_INPUTS])
def test_bad_input_is_refused_with_its_code(frames: list[bytes], code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as caught:
        load(frames)
    assert caught.value.code == code, caught.value.reason


def test_limits_are_inclusive() -> None:
    # At the cap is accepted, one past it is not (see the BAD_INPUTS rows for the other side).
    assert load(_frames("decide", text="x" * codec.MAX_TEXT)) == Decide(id="q.1", text="x" * codec.MAX_TEXT)
    assert load(_frames("focus", paths=["a"] * 64)) == Focus(id="q.1", paths=["a"] * 64)
    assert load(_frames("episode.append", episode=_nested(16))) == EpisodeAppend(id="q.1", episode=_nested(16))
    assert load(_frames("lesson.add", lessons=[_nested(16)])) == LessonAdd(id="q.1", lessons=[_nested(16)])
    big = {"a": list(range(10_000))}
    assert load(_frames("episode.append", episode=big)) == EpisodeAppend(id="q.1", episode=big)


def test_errors_keep_the_request_id_so_the_sender_can_match_them() -> None:
    for frames in (_frames("episode.recent", n="3"), [b"ping", _pack({"v": 9, "id": "q.1"}),],
                   _frames("no.such.kind")):
        with pytest.raises(ProtocolError) as caught:
            load(frames)
        assert caught.value.request_id == "q.1"


def test_an_overlong_request_id_is_dropped_not_echoed() -> None:
    assert load([b"ping", _pack({"v": 1, "id": "x" * (codec.MAX_ID + 1)})]) == Ping()


@settings(derandomize=True, max_examples=300)
@given(st.binary(max_size=256), st.sampled_from([b"ping", b"record_tool", b"memory.recall", b"?"]))
def test_random_bytes_raise_only_protocol_errors(body: bytes, kind: bytes) -> None:
    try:
        load([kind, body])
    except ProtocolError as exc:
        assert isinstance(exc.code, ErrorCode)


def test_mutated_golden_bytes_raise_only_protocol_errors() -> None:
    rng = random.Random(1)
    for _msg, kind, body_hex in GOLDEN_REQUESTS:
        good = bytes.fromhex(body_hex)
        for _ in range(300):
            body = bytearray(good)
            for _ in range(rng.randint(1, 3)):
                body[rng.randrange(len(body))] = rng.randrange(256)
            cut = bytes(body[: rng.randint(0, len(body))]) if rng.random() < 0.3 else bytes(body)
            try:
                load([kind, cut])
            except ProtocolError:
                pass


def test_floats_cross_the_wire_bit_exact() -> None:
    for value in (0.1, 1e-300, 5e-324, float(codec.MAX_SAFE_INT), -2.5, 1.7e9):
        decoded = typing.cast(RecordTool, load(dump(RecordTool(run_id="r", tool="t", at=value)))).at
        assert struct.pack(">d", decoded) == struct.pack(">d", value)
    # Past ±MAX_SAFE_INT, infinities and NaN are refused (a stored or summed value must stay
    # representable in every reply).
    for value in (1.7976931348623157e308, math.inf, -math.inf, math.nan, -2.0**60):
        with pytest.raises(ProtocolError) as refused:
            load(dump(RecordTool(run_id="r", tool="t", at=value)))
        assert refused.value.code == ErrorCode.BAD_FIELD
    # A field equal to its default is left out, so -0.0 (== 0.0) arrives as 0.0 (documented).
    assert typing.cast(RecordTool, load(dump(RecordTool(run_id="r", tool="t", at=-0.0)))).at == 0.0


def test_default_request_shapes_are_small() -> None:
    # The hot-path tell stays a few dozen bytes: defaults are never sent.
    assert len(dump(RecordTool(run_id="r1", tool="Read", path="a.py"))[1]) < 40
    assert dump(EpisodeRecent())[1] == b"\x81\xa1v\x01"  # {"v": 1}


# ---------------------------------------------------------------- the document


def _protocol_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("protocol_table", REPO / "clients" / "protocol_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _contract_only(doc: str) -> str:
    """The doc without the kinds table's prose column: a reworded docstring is not a drift of
    the contract (kinds, sockets, fields, types, defaults, caps), so it should not fail CI."""
    lines = []
    for line in doc.splitlines():
        if line.startswith("| `") and line.count(" | ") >= 3:
            line = line.rsplit(" | ", 1)[0]
        lines.append(line)
    return "\n".join(lines)


def test_protocol_doc_generated_tables_are_current() -> None:
    current = DOC.read_text(encoding="utf-8")
    fresh = _protocol_table().regenerate(current)
    assert _contract_only(fresh) == _contract_only(current), (
        "clients/PROTOCOL.md is out of date: run .venv/bin/python clients/protocol_table.py"
    )


def test_protocol_doc_names_every_kind_field_and_error_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    for kind, cls in MESSAGES.items():
        assert f"| `{kind}` |" in text, kind
        row = next(line for line in text.splitlines() if line.startswith(f"| `{kind}` |"))
        for f in dataclasses.fields(cls):
            if f.name not in {"id", "project"}:
                assert f"`{f.name}`" in row, (kind, f.name)
    for code in ErrorCode:
        assert f"| {int(code)} | `{code.name}` |" in text


# ---------------------------------------------------------------- the light client path


def test_client_builds_status_and_ping_exactly_as_the_codec_would(tmp_path: Path) -> None:
    from slmactor import client as client_module
    from slmactor.client import Client

    assert str(Kind.RECORD_TOOL).encode() == client_module._RECORD_TOOL
    assert str(Kind.CLIENT_DROPPED).encode() == client_module._CLIENT_DROPPED
    with Client(tmp_path / "rt", project=tmp_path) as client:
        for kind, fields, msg in (
            ("status", {}, Status()),
            ("ping", {}, Ping()),
            ("ping", {"actor": "recall"}, Ping(actor="recall")),
        ):
            rid, frames = client._raw_frames(kind, fields)
            assert frames == dump(dataclasses.replace(msg, id=rid, project=str(tmp_path.resolve())))


def test_status_and_hook_paths_do_not_build_the_message_classes() -> None:
    # `slmactor status` (and any client that only pings, asks status or records tool calls) must
    # not pay for creating ~60 dataclasses: that alone was ~40 % of the CLI's wall time.
    code = (
        "import sys, slmactor.cli.main, slmactor.cli.daemon_cmds, slmactor.client, slmactor.protocol\n"
        "assert 'slmactor.protocol.messages' not in sys.modules, 'messages imported'\n"
        "assert 'asyncio' not in sys.modules, 'asyncio imported'\n"
        "assert 'dataclasses' not in sys.modules, 'dataclasses imported'\n"
        "from slmactor.protocol import Kind\n"
        "assert Kind.STATUS == 'status' and 'slmactor.protocol.messages' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


def test_a_tell_on_the_wire_is_the_golden_encoding(tmp_path: Path) -> None:
    # What the client's PUSH socket really sends (reused Packer, two frames) decodes to the
    # message, byte for byte the same as the codec's encoding of it.
    import zmq

    from slmactor.client import Client

    rt = Path(tempfile.mkdtemp(prefix="sag-", dir="/tmp"))
    ctx: zmq.Context[Any] = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.LINGER, 0)
    try:
        pull.bind(f"ipc://{rt / 'events.sock'}")
        with Client(rt, project=tmp_path) as client:
            assert client.record_tool("r1", "Bash", command="pytest -q", ok=False, error="1 failed",
                                      at=1700000000.5)
            assert client.decide("r1", "keep the AST")
            assert pull.poll(5000)
            first = pull.recv_multipart()
            assert pull.poll(5000)
            second = pull.recv_multipart()
            project = str(tmp_path.resolve())
            expected = RecordTool(project=project, run_id="r1", tool="Bash", command="pytest -q", ok=False,
                                  error="1 failed", at=1700000000.5, client=client.client_id, seq=1)
            assert load(first) == expected
            assert first[1] == _pack({"v": 1, "run_id": "r1", "tool": "Bash", "command": "pytest -q", "ok": False,
                                      "error": "1 failed", "at": 1700000000.5, "client": client.client_id,
                                      "seq": 1, "project": project})
            assert load(second) == Decide(project=project, run_id="r1", text="keep the AST",
                                          client=client.client_id, seq=2)
    finally:
        pull.close(linger=0)
        ctx.term()
        shutil.rmtree(rt, ignore_errors=True)
