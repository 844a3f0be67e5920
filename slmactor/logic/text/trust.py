"""Trust of learned records: who wrote a record in a project store, and what may be shown of one
nobody here wrote.

A project store travels with its repository: a clone can bring `.slmcode/evolve/rules.json`,
`facts.json` or `regressions.json` that nobody on this machine learned. Every record the daemon
writes therefore carries `sig`, an HMAC-SHA256 under the user's key (the key that signs
`MEMORY.md` bullets) of the record's canonical JSON without `sig`. A record whose `sig` does not
verify is *unverified repository content*: its owner never applies it automatically, labels it
so wherever a model sees it, and shows it without anything that reads like a command to run
(`withhold_commands`). `slmactor trust` adopts such records by signing them.

Pure: the key comes in as bytes, nothing here reads a file.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from typing import Any

SIG_FIELD = "sig"
#: How a record nobody on this machine wrote is introduced to a model.
UNVERIFIED_LABEL = "unverified repository content"
WITHHELD = "[command withheld]"


def _canonical(record: Mapping[str, Any], loose: tuple[str, ...]) -> bytes:
    body = {k: v for k, v in record.items() if k != SIG_FIELD and k not in loose}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False, default=str)
    return text.encode("utf-8", "surrogatepass")


def record_sig(key: bytes, record: Mapping[str, Any], loose: tuple[str, ...] = ()) -> str:
    """The `sig` of `record` under the user's `key`: over every field but `sig` itself and the
    `loose` ones (fields the user is meant to edit by hand, such as a fact's `pinned`)."""
    return hmac.new(key, _canonical(record, loose), hashlib.sha256).hexdigest()[:32]


def signed(key: bytes | None, record: Mapping[str, Any],
           loose: tuple[str, ...] = ()) -> dict[str, Any]:
    """`record` with its `sig` (none without a key: then nothing is marked, nothing trusted)."""
    out = {k: v for k, v in record.items() if k != SIG_FIELD}
    if key is not None:
        out[SIG_FIELD] = record_sig(key, out, loose)
    return out


def unsigned(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` without a `sig`: how an unverified record is written back (never re-signed)."""
    return {k: v for k, v in record.items() if k != SIG_FIELD}


def verified(key: bytes | None, record: Mapping[str, Any], loose: tuple[str, ...] = ()) -> bool:
    """True when `record` carries this user's valid `sig`. Without a key nothing can be checked
    and everything is taken as the user's own (the behaviour before records were signed)."""
    if key is None:
        return True
    sig = record.get(SIG_FIELD)
    if not isinstance(sig, str) or not sig:
        return False
    try:
        return hmac.compare_digest(sig, record_sig(key, record, loose))
    except (TypeError, ValueError):  # not JSON-encodable in canonical form, or non-ASCII sig
        return False


# --- withholding commands -----------------------------------------------------------------

_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`?")
#: A clause reads as a command when it pipes, chains, substitutes or redirects like a shell,
#: or starts a program that fetches, installs, deletes or runs something.
_SHELLISH = re.compile(
    r"(\|\s*(?:ba|z|da|k)?sh\b|\|\||&&|\$\(|\$\{|;\s*\w|\s>{1,2}\s*\S|<\(|\|\s*\w"
    r"|(?:^|[\s(\"'])(?:sudo|curl|wget|bash|sh|zsh|eval|exec|rm|chmod|chown|dd|mkfs|nc|ncat"
    r"|ssh|scp|powershell|iex|iwr|python3?|perl|ruby|node|npm|npx|pip3?|pipx|uv|brew|apt"
    r"|apt-get|yum|dnf|docker|kubectl|git|make|source)\s+\S)",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"(?<=[.!?])\s+|\n+")


def looks_like_command(text: str) -> bool:
    """True when `text` carries something a model could run: a code span or a shell-like clause."""
    return bool(_FENCE.search(text) or "`" in text or _SHELLISH.search(text))


def withhold_commands(text: str) -> str:
    """`text` with every code block, code span and shell-like clause replaced by
    `[command withheld]`: what may be shown of a record nobody here wrote."""
    text = _FENCE.sub(WITHHELD, text)
    text = _CODE_SPAN.sub(WITHHELD, text)
    kept: list[str] = []
    for clause in _CLAUSES.split(text):
        clause = clause.strip()
        if not clause:
            continue
        if _SHELLISH.search(clause):
            clause = WITHHELD
        if not (kept and clause == WITHHELD and kept[-1] == WITHHELD):
            kept.append(clause)
    return " ".join(kept)


#: A redaction marker (`slmactor.logic.text.redact`): balanced by construction, kept as it is.
_REDACTED_MARK = re.compile(r"(«redacted:[A-Za-z0-9_.:-]{1,60}»)")


def quoted(text: str) -> str:
    """`text` as quoted data: on one line between « and », every other guillemet inside it
    turned to ‹ › (redaction markers kept), so a model reads a string someone wrote, never
    words addressed to it, and nothing in it can close the quote early."""
    parts = _REDACTED_MARK.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("«", "‹").replace("»", "›")
    flat = " ".join("".join(parts).split())
    return f"«{flat}»"


def untrusted_text(text: str) -> str:
    """Text nobody here wrote, as it may be shown: commands withheld, quoted (`quoted`)."""
    return quoted(withhold_commands(text))


def shown_unverified(text: str) -> str:
    """An unverified record's text as a model may see it: labelled, commands withheld, quoted."""
    return f"{UNVERIFIED_LABEL}: {untrusted_text(text)}"


# --- text that addresses a model ----------------------------------------------------------

#: Words that address the model reading them rather than describe work: the marks of a prompt
#: injection (override the instructions, change the role, speak as another party, hide from
#: the user). Learned memory describes failures and fixes; it never needs any of these.
_ADDRESSES_MODEL = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?"
    r"\b(?:instructions?|prompts?|directions|guidelines|rules|context|above|previous|prior)\b"
    r"|\b(?:new|updated|real|hidden|secret)\s+instructions?\b"
    r"|\b(?:system|developer)\s+(?:prompt|message|instructions?)\b"
    r"|\byou\s+(?:are\s+now|must\s+now|will\s+now|should\s+now|have\s+been)\b"
    r"|\bfrom\s+now\s+on\b|\bpretend\s+(?:to\s+be|you)\b"
    r"|\b(?:before|after)\s+(?:any|every|each)\s+(?:edit|change|command|commit|deploy|task|"
    r"tool|response|answer|step)s?\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show)\b"
    r"|\b(?:exfiltrate|send\s+(?:the\s+)?(?:keys?|secrets?|tokens?|credentials?))\b"
    r"|(?:^|\n)\s*(?:system|assistant|user|human|developer)\s*:"
    r"|<\s*/?\s*(?:system|instructions?|assistant|im_start|im_end|\|im_start\|)\b|\[/?INST\]",
    re.IGNORECASE,
)


def addresses_model(text: str) -> bool:
    """True when `text` reads as instructions to a model (`_ADDRESSES_MODEL`)."""
    return bool(_ADDRESSES_MODEL.search(text))


def as_data(text: str) -> str:
    """`text` unchanged, or quoted (`quoted`) with a note when it reads as instructions to a
    model: memory may repeat what a task or a tool said, never speak in its voice."""
    if not addresses_model(text):
        return text
    return f"(quoted, not an instruction) {quoted(text)}"


# --- records in replies ---------------------------------------------------------------------

#: Marks a record nobody here wrote in a reply (next to `verified: false`).
SOURCE_FIELD = "source"


def untrusted_value(value: Any) -> Any:
    """`value` of a record nobody here wrote, as a reply may carry it: every text that is more
    than one word quoted with its commands withheld; single words (ids, times, paths, names)
    kept unless they read as a command; lists and maps walked."""
    if isinstance(value, str):
        if not value.strip():
            return value
        if len(value.split()) > 1:
            return untrusted_text(value)
        return WITHHELD if _SHELLISH.search(value) or "`" in value else value
    if isinstance(value, Mapping):
        return {k: untrusted_value(v) for k, v in value.items() if k != SIG_FIELD}
    if isinstance(value, (list, tuple)):
        return [untrusted_value(v) for v in value]
    return value


def untrusted_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record nobody here wrote as a reply carries it (`untrusted_value`), marked
    `verified: false` and `source: unverified repository content`."""
    out = untrusted_value(record)
    assert isinstance(out, dict)
    out["verified"] = False
    out[SOURCE_FIELD] = UNVERIFIED_LABEL
    return out
