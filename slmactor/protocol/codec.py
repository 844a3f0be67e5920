"""The pure codec: `dump(msg) -> frames` and `load(frames) -> msg`, plus the reply shapes.

No sockets here. Decoding enforces explicit limits — frame size, map/array lengths, nesting
depth, per-field caps — and raises `ProtocolError` (never anything else) for bad input, so a
daemon can always answer with an error reply instead of crashing.

A NUL (U+0000) in a text is no reason to refuse it: a Go test's output, a binary file's head
or a hostile transcript carries one, and refusing would drop the call that holds it. Every NUL
in a string or map key is replaced by U+FFFD (`NUL_REPLACEMENT`) as it is decoded, so no store,
Markdown mirror or path call downstream ever sees one. The `project` path alone keeps the rule:
no directory is named with a NUL, so such a path is refused (`BAD_PROJECT`/`BAD_FIELD`).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import msgpack

from .errors import ErrorCode, ProtocolError
from .version import PROTOCOL_VERSION

if TYPE_CHECKING:
    from .messages import Message

# `.messages` is imported where a schema is first built, not here: creating the message classes
# is most of a short-lived client's start-up (`slmactor status` never needs them).

#: Largest frame the daemon accepts (also set as ZMQ_MAXMSGSIZE, which disconnects the sender).
MAX_MESSAGE_BYTES = 1 << 20
#: Largest tell body (fire-and-forget messages). A legal `record_tool` is far smaller (its long
#: fields are capped at 36,864 characters, at most 144 KiB of UTF-8); larger tells are dropped
#: unread on `events.sock` (counted as invalid) and answered TOO_LARGE on `ctl.sock`, so a flood
#: of huge tells costs the daemon no decoding and no queue (docs/DOOR.md).
MAX_TELL_BYTES = 256 * 1024
#: Default cap on one string field, in characters.
MAX_TEXT = 64 * 1024
#: Default cap on the items of one list field.
MAX_LIST = 1024
#: Cap on the items of any map or array inside a body (msgpack amplification guard).
MAX_CONTAINER = 10_000
#: Deepest nesting allowed inside free-form (map/list) fields.
MAX_DEPTH = 16
#: Longest request id accepted.
MAX_ID = 128
#: Largest integer (and float) magnitude a message may carry: 2**53 - 1, the largest integer a
#: JSON reader that uses doubles (JavaScript, jq) reads exactly. Stores keep what a message said
#: as JSON, and a sum of up to 2**10 such values still fits msgpack's int64, so no stored record
#: or reply built from accepted values can overflow the codec.
MAX_SAFE_INT = (1 << 53) - 1
#: Maps and arrays one body may hold in all: bounds the decode cost of a frame of nested empty
#: containers (a 1 MiB frame of empty arrays decodes to ~65 MiB and 2 s of CPU otherwise).
MAX_CONTAINERS = 20_000
#: What a NUL character in a decoded string or key becomes (the Unicode replacement character).
NUL_REPLACEMENT = "\ufffd"
#: The kind frame of every reply.
REPLY_KIND = b"reply"

_RESERVED = frozenset({"v", "id", "project"})

Checker = Callable[[str, Any, int], Any]


def _reject_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack ext type {code} is not allowed")


#: What every body is decoded with (strings as str, no ext types, bounded containers).
_UNPACK_OPTIONS: dict[str, Any] = {
    "raw": False, "strict_map_key": True, "use_list": True, "ext_hook": _reject_ext,
    "max_array_len": MAX_CONTAINER, "max_map_len": MAX_CONTAINER,
}


def _unpack(raw: bytes) -> Any:
    options = _UNPACK_OPTIONS
    if len(raw) <= MAX_CONTAINERS:  # every container takes at least one byte: no count needed
        return msgpack.unpackb(raw, **options)
    left = MAX_CONTAINERS

    def count(value: Any) -> Any:
        nonlocal left
        left -= 1
        if left < 0:
            raise ValueError(f"more than {MAX_CONTAINERS} maps and arrays in one body")
        return value

    return msgpack.unpackb(raw, **options, list_hook=count, object_hook=count)


def pack(value: Any) -> bytes:
    """msgpack-encode a plain value (no ext types)."""
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def _number_ok(value: float) -> bool:
    """An integer or a finite float within ±MAX_SAFE_INT (NaN fails both comparisons)."""
    return -MAX_SAFE_INT <= value <= MAX_SAFE_INT


def _plain_problem(value: Any, depth: int, nul: list[bool]) -> str:
    """Why a free-form value cannot be accepted ("" when it can): nested at most MAX_DEPTH deep,
    plain msgpack values only (msgpack decodes its timestamp extension without calling
    `ext_hook`, so a `Timestamp` can only be refused here), numbers finite and within
    ±MAX_SAFE_INT. Keys are strings and no value is binary: stores keep what a message said as
    JSON, which has neither binary strings nor non-string keys, so such a value is refused here
    rather than failing at the store. A NUL in a string or key is no problem: `nul` gets an
    item, and the caller replaces them (`without_nul`)."""
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH}"
    kind = type(value)
    if kind is str:
        if "\x00" in value:
            nul.append(True)
        return ""
    if kind is int or kind is float:
        return "" if _number_ok(value) else f"a number is not finite or outside ±{MAX_SAFE_INT}"
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"a map key is {type(key).__name__}, not a string"
            if "\x00" in key:
                nul.append(True)
            problem = _plain_problem(item, depth + 1, nul)
            if problem:
                return problem
        return ""
    if kind is list:
        for item in value:
            problem = _plain_problem(item, depth + 1, nul)
            if problem:
                return problem
        return ""
    if kind is bool or value is None:
        return ""
    if kind is bytes:
        return "holds a binary value (send text)"
    return f"holds a {kind.__name__} value"


def without_nul(value: Any) -> Any:
    """`value` with every NUL in its strings and keys replaced by `NUL_REPLACEMENT`."""
    kind = type(value)
    if kind is str:
        return value.replace("\x00", NUL_REPLACEMENT)
    if kind is dict:
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if kind is list:
        return [without_nul(v) for v in value]
    return value


def _bad(name: str, what: str) -> ProtocolError:
    return ProtocolError(ErrorCode.BAD_FIELD, f"field {name!r}: {what}")


def _check_str(name: str, value: Any, cap: int) -> Any:
    if type(value) is not str:
        raise _bad(name, f"expected a string, got {type(value).__name__}")
    if len(value) > cap:
        raise _bad(name, f"longer than {cap} characters")
    if "\x00" in value:
        return value.replace("\x00", NUL_REPLACEMENT)
    return value


def _check_int(name: str, value: Any, cap: int) -> Any:
    if type(value) is not int:
        raise _bad(name, f"expected an integer, got {type(value).__name__}")
    if not _number_ok(value):
        raise _bad(name, f"outside ±{MAX_SAFE_INT}")
    return value


def _check_float(name: str, value: Any, cap: int) -> Any:
    if type(value) is float or type(value) is int:
        if not _number_ok(value):
            raise _bad(name, f"not a finite number within ±{MAX_SAFE_INT}")
        return float(value)
    raise _bad(name, f"expected a number, got {type(value).__name__}")


def _check_bool(name: str, value: Any, cap: int) -> Any:
    if type(value) is not bool:
        raise _bad(name, f"expected a boolean, got {type(value).__name__}")
    return value


def _check_str_list(name: str, value: Any, cap: int) -> Any:
    if type(value) is not list:
        raise _bad(name, f"expected a list of strings, got {type(value).__name__}")
    if len(value) > cap:
        raise _bad(name, f"more than {cap} items")
    for item in value:
        if type(item) is not str or len(item) > MAX_TEXT:
            raise _bad(name, "every item must be a string of at most 64 KiB")
    return without_nul(value) if any("\x00" in item for item in value) else value


def _check_dict_list(name: str, value: Any, cap: int) -> Any:
    if type(value) is not list:
        raise _bad(name, f"expected a list of maps, got {type(value).__name__}")
    if len(value) > cap:
        raise _bad(name, f"more than {cap} items")
    nul: list[bool] = []
    for item in value:
        if type(item) is not dict:
            raise _bad(name, "every item must be a map")
        problem = _plain_problem(item, 1, nul)
        if problem:
            raise _bad(name, problem)
    return without_nul(value) if nul else value


def _check_dict(name: str, value: Any, cap: int) -> Any:
    if type(value) is not dict:
        raise _bad(name, f"expected a map, got {type(value).__name__}")
    nul: list[bool] = []
    problem = _plain_problem(value, 1, nul)
    if problem:
        raise _bad(name, problem)
    return without_nul(value) if nul else value


def _text_size(value: Any, limit: int) -> int:
    """Characters of text in a plain value (keys and strings), counted up to past `limit`."""
    kind = type(value)
    if kind is str:
        return len(value)
    total = 0
    if kind is dict:
        for key, item in value.items():
            total += len(key) + _text_size(item, limit - total)
            if total > limit:
                break
    elif kind is list:
        for item in value:
            total += _text_size(item, limit - total)
            if total > limit:
                break
    return total


def _check_call(name: str, value: Any, cap: int) -> Any:
    """One tool call's map (`messages.CALL_FIELDS`): each known field of its type and within
    its cap, `args` plain and at most `MAX_CALL_ARGS` characters of text; unknown fields are
    dropped (a newer client's), as unknown message fields are."""
    from .messages import CALL_FIELDS, MAX_CALL_ARGS

    _check_dict(name, value, 0)
    out: dict[str, Any] = {}
    for key, item in value.items():
        spec = CALL_FIELDS.get(key)
        if spec is None:
            continue
        tp, limit = spec
        where = f"{name}.{key}"
        if tp is str:
            _check_str(where, item, limit)
        elif tp is bool:
            _check_bool(where, item, 0)
        elif tp is int:
            if item is not None:
                _check_int(where, item, 0)
        elif tp is list:
            _check_str_list(where, item, limit)
        elif type(item) is not dict or len(item) > limit:
            raise _bad(where, f"expected a map of at most {limit} entries")
        elif key == "words" and any(type(v) is not str or len(v) > 200 for v in item.values()):
            raise _bad(where, "every value must be an argument key")
        elif _text_size(item, MAX_CALL_ARGS) > MAX_CALL_ARGS:
            raise _bad(where, f"more than {MAX_CALL_ARGS} characters of text")
        out[key] = item
    return out


def _checker_for(tp: Any) -> tuple[Checker, int]:
    if tp is str:
        return _check_str, MAX_TEXT
    if tp is bool:
        return _check_bool, 0
    if tp is int:
        return _check_int, 0
    if tp is float:
        return _check_float, 0
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args == (str,):
        return _check_str_list, MAX_LIST
    if origin is list:
        return _check_dict_list, MAX_LIST
    if origin is dict:
        return _check_dict, 0
    raise TypeError(f"unsupported field type {tp!r}")  # pragma: no cover - programming error


Schema = dict[str, tuple[Checker, int]]


def _schema(cls: type[Message]) -> Schema:
    import dataclasses
    hints = typing.get_type_hints(cls)
    schema: Schema = {}
    for f in dataclasses.fields(cls):
        if f.name in _RESERVED:
            continue
        checker, cap = _checker_for(hints[f.name])
        if f.name in cls.CALLS:
            checker = _check_call
        schema[f.name] = (checker, cls.CAPS.get(f.name, cap))
    return schema


# Built per kind on first use, not at import: `get_type_hints` over every message class costs a
# short-lived client (`slmactor status`, a hook) ~10 ms of start-up for kinds it never sends.
# `schemas_for_all()` builds them all (the protocol tests call it, so a bad field type still fails).
_SCHEMAS: dict[str, tuple[type[Message], Schema]] = {}
_DEFAULTS: dict[type[Message], dict[str, Any]] = {}


def _entry(kind: str) -> tuple[type[Message], Schema] | None:
    entry = _SCHEMAS.get(kind)
    if entry is None:
        from .messages import MESSAGES

        cls = MESSAGES.get(kind)
        if cls is None:
            return None
        entry = _SCHEMAS[kind] = (cls, _schema(cls))
    return entry


def _defaults(cls: type[Message]) -> dict[str, Any]:
    defaults = _DEFAULTS.get(cls)
    if defaults is None:
        import dataclasses

        defaults = _DEFAULTS[cls] = {
            f.name: (f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
            for f in dataclasses.fields(cls)
        }
    return defaults


def schemas_for_all() -> dict[str, Schema]:
    """The validation schema of every kind (building any not built yet)."""
    from .messages import MESSAGES

    return {kind: entry[1] for kind in MESSAGES if (entry := _entry(kind)) is not None}


def wire_fields(msg: Message) -> dict[str, Any]:
    """The fields of `msg` that differ from their defaults (what goes on the wire)."""
    return {
        name: getattr(msg, name)
        for name, default in _defaults(type(msg)).items()
        if getattr(msg, name) != default
    }


def dump(msg: Message) -> list[bytes]:
    """Encode a message as `[kind, body]`; fields at their default value are left out."""
    body: dict[str, Any] = {"v": PROTOCOL_VERSION, **wire_fields(msg)}
    return [msg.KIND.value.encode("ascii"), pack(body)]


def _request_id(body: dict[str, Any]) -> str:
    rid = body.get("id", "")
    if not rid:
        return ""
    if type(rid) is int:
        return str(rid)
    if type(rid) is str and len(rid) <= MAX_ID:
        return rid
    return ""


def peek_request_id(raw: bytes) -> str:
    """The request id in a body, or "" (not a map, too large, undecodable): what a refusal of
    the whole message can still answer to. Never raises."""
    if len(raw) > MAX_MESSAGE_BYTES:
        return ""
    try:
        body = _unpack(raw)
    except Exception:  # noqa: BLE001 - msgpack raises many unrelated types for bad input
        return ""
    return _request_id(body) if type(body) is dict else ""


def load_body(frames: Sequence[bytes]) -> tuple[str, dict[str, Any]]:
    """Check the frames and decode the body map; returns (kind, body). Raises ProtocolError."""
    if len(frames) != 2:
        raise ProtocolError(ErrorCode.BAD_FRAMES, f"expected 2 frames [kind, body], got {len(frames)}")
    kind_raw, raw = frames
    if len(raw) > MAX_MESSAGE_BYTES:
        raise ProtocolError(ErrorCode.TOO_LARGE, f"body of {len(raw)} bytes exceeds {MAX_MESSAGE_BYTES}")
    try:
        kind = kind_raw.decode("ascii")
    except UnicodeDecodeError:
        raise ProtocolError(ErrorCode.UNKNOWN_KIND, "kind frame is not ASCII") from None
    try:
        body = _unpack(raw)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many unrelated types for bad input
        raise ProtocolError(ErrorCode.BAD_MSGPACK, f"body is not valid msgpack: {exc}") from None
    if type(body) is not dict:
        raise ProtocolError(ErrorCode.BAD_MSGPACK, "body is not a msgpack map")
    return kind, body


def load_fields(frames: Sequence[bytes]) -> tuple[type[Message], dict[str, Any]]:
    """Decode and validate `[kind, body]` without building the record. Raises ProtocolError.

    Returns the message class and its validated fields (only those present on the wire, plus
    `id` and `project`). The hot path uses this to skip the record's construction cost.
    """
    kind, body = load_body(frames)
    rid = _request_id(body)
    version = body.pop("v", None)
    if version != PROTOCOL_VERSION or type(version) is not int:
        raise ProtocolError(
            ErrorCode.BAD_VERSION,
            f"protocol version {version!r} not supported (this daemon speaks {PROTOCOL_VERSION})",
            rid,
        )
    entry = _SCHEMAS.get(kind) or _entry(kind)
    if entry is None:
        raise ProtocolError(ErrorCode.UNKNOWN_KIND, f"unknown message kind {kind[:64]!r}", rid)
    cls, schema = entry
    if cls.TELL and len(frames[1]) > MAX_TELL_BYTES:
        raise ProtocolError(ErrorCode.TOO_LARGE,
                            f"tell body of {len(frames[1])} bytes exceeds {MAX_TELL_BYTES}", rid)
    if "project" in body:
        project = body["project"]
        if type(project) is not str or len(project) > 4096 or "\x00" in project:
            raise ProtocolError(ErrorCode.BAD_FIELD, "field 'project': expected a path string", rid)
    body["id"] = rid
    unknown: list[str] | None = None
    for name, value in body.items():
        spec = schema.get(name)
        if spec is None:
            if name not in _RESERVED:
                unknown = [name] if unknown is None else [*unknown, name]
            continue
        checker, cap = spec
        # Strings and booleans are most fields on the hot path: check them inline.
        if checker is _check_str:
            if type(value) is not str or len(value) > cap:
                raise _with_id(_check_failure(name, value, cap), rid)
            if "\x00" in value:
                body[name] = value.replace("\x00", NUL_REPLACEMENT)
        elif checker is _check_bool:
            if type(value) is not bool:
                raise _with_id(_check_failure(name, value, cap), rid)
        else:
            try:
                body[name] = checker(name, value, cap)
            except ProtocolError as exc:
                raise _with_id(exc, rid) from None
    if unknown:
        for name in unknown:
            del body[name]  # ignored, so newer clients can talk to older daemons
    return cls, body


def _check_failure(name: str, value: Any, cap: int) -> ProtocolError:
    try:
        (_check_str if type(value) is not bool and cap else _check_bool)(name, value, cap)
    except ProtocolError as exc:
        return exc
    return _bad(name, "invalid value")  # pragma: no cover - callers only pass failing values


def _with_id(exc: ProtocolError, rid: str) -> ProtocolError:
    exc.request_id = rid
    return exc


def load(frames: Sequence[bytes]) -> Message:
    """Decode and validate `[kind, body]` into its message record. Raises ProtocolError."""
    cls, values = load_fields(frames)
    return cls(**values)


# ---------------------------------------------------------------- replies


class Reply(NamedTuple):
    """The one reply shape: `{v, id, ok: true, result}` or `{v, id, ok: false, error}`.

    A NamedTuple rather than a dataclass: `dataclasses` (with `inspect`) is ~10 % of a
    short-lived client's start-up, and decoding a reply should not need it.
    """

    id: str
    ok: bool
    result: Any = None
    code: int = 0
    reason: str = ""
    #: For BUSY: milliseconds the daemon suggests waiting before the retry (0 = no hint).
    retry_ms: int = 0


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
#: How deep `encodable` copies a result before it cuts the rest off.
_ENCODABLE_DEPTH = 64


def encodable(value: Any, depth: int = 0) -> Any:
    """`value` as plain msgpack values that always encode: integers saturate at the int64
    bounds, keys become strings, tuples and sets lists, other objects their `str`, and nesting
    past 64 levels is cut to "…"."""
    kind = type(value)
    if kind is int:
        return min(max(value, _INT64_MIN), _INT64_MAX)
    if kind in (str, float, bool, bytes) or value is None:
        return value
    if depth >= _ENCODABLE_DEPTH:
        return "…"
    if isinstance(value, dict):
        return {k if type(k) is str else str(k): encodable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [encodable(v, depth + 1) for v in value]
    if isinstance(value, int):  # bool handled above; an IntEnum and the like
        return encodable(int(value), depth)
    return str(value)


def dump_result(request_id: str, result: Any) -> list[bytes]:
    """A success reply. Always encodable: a result msgpack refuses (an integer past int64, an
    unknown type) is sent as `encodable(result)`; if even that fails, an INTERNAL error."""
    body = {"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result}
    try:
        return [REPLY_KIND, pack(body)]
    except (OverflowError, ValueError, TypeError):
        pass
    try:
        body["result"] = encodable(result)
        return [REPLY_KIND, pack(body)]
    except (OverflowError, ValueError, TypeError, RecursionError) as exc:
        return dump_error(request_id, ErrorCode.INTERNAL, f"the result could not be encoded: {exc}")


def dump_error(request_id: str, code: ErrorCode, reason: str, retry_ms: int = 0) -> list[bytes]:
    """An error reply with a numbered code, a human-readable reason and, for BUSY, a hint of how
    long to wait before retrying."""
    error: dict[str, Any] = {"code": int(code), "name": code.name, "reason": reason[:4096]}
    if retry_ms > 0:
        error["retry_ms"] = int(retry_ms)
    return [REPLY_KIND, pack({"v": PROTOCOL_VERSION, "id": request_id, "ok": False, "error": error})]


def load_reply(frames: Sequence[bytes]) -> Reply:
    """Decode a reply. Raises ProtocolError for anything that is not a well-formed reply."""
    if len(frames) != 2 or bytes(frames[0]) != REPLY_KIND:
        raise ProtocolError(ErrorCode.BAD_FRAMES, "not a reply")
    try:
        # Keys of a result may be integers (a handler's dict); they are read, not refused.
        body = msgpack.unpackb(bytes(frames[1]), raw=False, ext_hook=_reject_ext, strict_map_key=False)
    except Exception as exc:  # noqa: BLE001 - as above: any decode failure is a bad reply
        raise ProtocolError(ErrorCode.BAD_MSGPACK, f"reply is not valid msgpack: {exc}") from None
    if type(body) is not dict or type(body.get("ok")) is not bool:
        raise ProtocolError(ErrorCode.BAD_MSGPACK, "reply is not a map with 'ok'")
    rid = _request_id(body)
    if body["ok"]:
        return Reply(rid, True, body.get("result"))
    error = body.get("error")
    if type(error) is not dict:
        return Reply(rid, False, None, int(ErrorCode.INTERNAL), "malformed error reply")
    code = error.get("code")
    retry = error.get("retry_ms")
    return Reply(rid, False, None, code if type(code) is int else 0, str(error.get("reason", "")),
                 retry if type(retry) is int and retry > 0 else 0)
