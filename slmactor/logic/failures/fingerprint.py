"""Failure fingerprints: any failure becomes a stable id (SPEC S-9, improved).

`fingerprint(call)` is the one way a failure gets its id: the `ToolCall` its harness's room
built (`slmactor.logic.failures.call`) — its error, command, tool and family. The hook's
`evolve.on_failure`, `run.finish` of the session, `import sessions` of its transcript and
`metrics replay` all build that record through the room and call this, so one failure has one id
whichever way it arrives (the id also travels in the session's ledger and its run report, so
reflection reuses it rather than computing it again). It classifies the message, normalises it
and hashes class + tool family (the tool's name when it has none) + *salient text*:

* structural classes (S-9.6: edit_not_found, timeout, rate_limit, ...) hash no text at all, so
  every `old_str not found` of one tool, language and model family is one fingerprint;
* content classes hash the normalised *key lines* of the message (see `diagnose.py`): the last
  exception line of a traceback, a compiler's error lines without their locations, a pytest
  report's `E` lines and failing node ids.  `undefined: alpha` and `undefined: beta` stay apart,
  the same error in another directory, file or line collapses.

The language and the model are not part of the id (version 4; the seed and versions 1-3 hashed
both): a failure is what failed, whoever made it. A hook's payload names no model while the
transcript does, and a replayed trajectory knows its language while a hook does not, so hashing
them gave one failure two ids. They stay on the fingerprint as the scope a learned rule's trigger
may keep (`language`, `model_family`).

Versioned like Sentry's grouping configs: `FINGERPRINT_VERSION` is part of the hash and of every
fingerprint, so a future algorithm can never silently regroup stored data — stored ids of an older
version simply stop matching exactly and lookups fall back to trigger patterns.  Version 1 is the
seed's algorithm (`fingerprint_seed.py`, kept for comparison).

Fixed seed bugs: the model family is lowercased (H-S-26); IndentationError classifies as a compile
error (H-S-24); a traceback's error line is kept (the seed cut it away with the trace).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from slmactor.logic.failures.classify import BENIGN, CLASSES, CONTENT, STRUCTURAL, describe
from slmactor.logic.failures.diagnose import MAX_KEY_LINES, Diagnosis, classify, diagnose_prepared
from slmactor.logic.failures.normalize import (
    MAX_NORM_LEN,
    normalize,
    normalize_prepared,
    placeholders,
    prepare,
    source_text,
    squash,
)
from slmactor.logic.failures.unwrap import signal_of, unwrap
from slmactor.logic.failures.verdict import fallback, read_call, search_diagnostics
from slmactor.logic.text.models import model_family as fold_model_family
from slmactor.logic.text.models import normalize_language
from slmactor.logic.text.strings import hash_id

if TYPE_CHECKING:
    from slmactor.logic.failures.call import ToolCall

__all__ = [
    "BENIGN", "CLASSES", "CONTENT", "FINGERPRINT_VERSION", "STRUCTURAL", "Fingerprint", "analyze",
    "classify", "describe", "fingerprint", "normalize", "salient_line", "salient_text",
]

#: Version of the grouping algorithm; part of every id.  1 = the seed's (fingerprint_seed.py);
#: 3 reads through the harnesses' wrappers, knows the call's command and hashes the tool family;
#: 4 hashes neither the language nor the model family (one failure, one id on every path).
FINGERPRINT_VERSION = 4
_VERSION_TAG = f"v{FINGERPRINT_VERSION}"  # hashed into every id
#: Cap on the salient text in UTF-8 bytes.
MAX_SALIENT_LEN = 300
_SAME_CAP = MAX_SALIENT_LEN == MAX_NORM_LEN
# Folding a model id is pure and the ids a daemon sees are few: remember the last ones.
_model_family = lru_cache(maxsize=256)(fold_model_family)


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A failure's identity.  `id == ""` is the zero fingerprint (nothing to identify)."""

    id: str
    cls: str
    tool: str
    language: str
    model_family: str
    norm: str
    salient: str
    version: int = FINGERPRINT_VERSION
    explain: str = ""
    #: The misuse of a `tool_misuse` (exists, directory, ...), why a `not_a_failure` is none.
    detail: str = ""

    @property
    def is_zero(self) -> bool:
        return not self.id

    @property
    def benign(self) -> bool:
        """Not a failure at all: record it, never count, learn from or advise on it."""
        return self.cls in BENIGN

    @property
    def structural(self) -> bool:
        return self.cls in STRUCTURAL

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "class": self.cls, "tool": self.tool, "language": self.language,
                "model_family": self.model_family, "norm": self.norm, "salient": self.salient,
                "version": self.version, "explain": self.explain, "detail": self.detail,
                "benign": self.benign}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fingerprint:
        return cls(id=str(data.get("id", "")), cls=str(data.get("class", "unknown")),
                   tool=str(data.get("tool", "")), language=str(data.get("language", "")),
                   model_family=str(data.get("model_family", "")), norm=str(data.get("norm", "")),
                   salient=str(data.get("salient", "")),
                   version=int(data.get("version", FINGERPRINT_VERSION)),
                   explain=str(data.get("explain", "")), detail=str(data.get("detail", "")))


ZERO = Fingerprint(id="", cls="unknown", tool="", language="", model_family="", norm="",
                   salient="", explain="empty failure")

# `analyze` makes a Fingerprint per message.  A frozen dataclass's __init__ sets each field through
# object.__setattr__ (1.7 µs for the nine, called with keywords); the slots' own setters, which
# that call ends in, take 0.6 µs.
_new = object.__new__
_set_id = Fingerprint.__dict__["id"].__set__
_set_cls = Fingerprint.__dict__["cls"].__set__
_set_tool = Fingerprint.__dict__["tool"].__set__
_set_language = Fingerprint.__dict__["language"].__set__
_set_model_family = Fingerprint.__dict__["model_family"].__set__
_set_norm = Fingerprint.__dict__["norm"].__set__
_set_salient = Fingerprint.__dict__["salient"].__set__
_set_version = Fingerprint.__dict__["version"].__set__
_set_explain = Fingerprint.__dict__["explain"].__set__
_set_detail = Fingerprint.__dict__["detail"].__set__


def _fingerprint(fid: str, cls: str, tool: str, language: str, model_family: str, norm: str,
                 salient: str, explain: str, detail: str = "") -> Fingerprint:
    """`Fingerprint(fid, cls, tool, language, model_family, norm, salient, explain=explain)`."""
    fp = _new(Fingerprint)
    _set_id(fp, fid)
    _set_cls(fp, cls)
    _set_tool(fp, tool)
    _set_language(fp, language)
    _set_model_family(fp, model_family)
    _set_norm(fp, norm)
    _set_salient(fp, salient)
    _set_version(fp, FINGERPRINT_VERSION)
    _set_explain(fp, explain)
    _set_detail(fp, detail)
    return fp


def salient_text(diagnosis: Diagnosis, norm: str, source: str = "") -> str:
    """Normalised key lines of a content-class failure (the norm when there are none).

    `source` is the text `norm` was made from (`normalize.source_text`): a key line equal to it
    (a one-line message, a traceback whose only kept line is its error) normalises to `norm`
    itself — the same work with the same cap, done once.
    """
    parts: list[str] = []
    for line in diagnosis.lines:
        if source and line == source and _SAME_CAP:
            text = norm
        else:
            text = squash(placeholders(line.lower()), MAX_SALIENT_LEN)
        if text and text not in parts:
            parts.append(text)
    if len(parts) == 1 and "  " not in parts[0] and parts[0][:1] != " ":
        # Squashed and cut already, so squash gives it back as it is — unless the byte cut
        # dropped a lone surrogate between two spaces or before the first word.
        return parts[0]
    return squash(" | ".join(parts), MAX_SALIENT_LEN) if parts else norm


def fingerprint(call: ToolCall, language: str = "", model: str = "") -> Fingerprint:
    """Fingerprint one failed call (S-9.7 with the fixes listed in the module docstring).

    The error is read through its wrappers first (`unwrap`): the class, the norm and the
    salient text come from what the program said, the exit code and signal from the frame (or
    from the call's `exit_code` where the frame names none).
    The call's shell command tells a silent `which x` exiting 1 (no failure) from a test run
    exiting 1 (a test failure); its family (edit, read, shell, search, web, task) is hashed in
    place of the tool's name when it has one, so one failure is one fingerprint in every
    harness's vocabulary. `language` and `model` (a model id) are recorded on the fingerprint as
    its scope; the id does not depend on them.
    """
    return _analyze(call.tool, call.error, language, model, "", call.command, call.family,
                    call.exit_code)


def analyze(tool: str, message: str, language: str = "", model: str = "",
            model_family: str = "", *, command: str = "", family: str = "") -> Fingerprint:
    """`fingerprint` of a call given by its parts (the CLI's `evolve fingerprint`, the seed's
    helpers, tests): the same id as the call with that tool, error, command and family."""
    return _analyze(tool, message, language, model, model_family, command, family)


def _analyze(tool: str, message: str, language: str, model: str, model_family: str,
             command: str, family: str, exit_code: int | None = None) -> Fingerprint:
    tool = tool.strip().lower()
    lang = normalize_language(language)
    mfamily = model_family.strip().lower() or (_model_family(model) if model.strip() else "")
    family = family.strip().lower()
    inner = unwrap(message)
    if inner.exit_code is None and exit_code is not None:
        # The status a harness gave as a field where its text names none (a transcript keeps
        # the output and the exit code apart; a hook's text may carry both): the same call.
        inner = replace(inner, exit_code=exit_code, signal=inner.signal or signal_of(exit_code))
    prepared = prepare(inner.text)
    source = source_text(prepared)
    source_lower = source.lower()
    norm = normalize_prepared(prepared, source_lower)
    verdict = read_call(inner, command, family, named_tool=bool(tool))
    detail = ""
    if verdict is not None:
        cls, detail, reason = verdict.cls, verdict.detail, verdict.why
        diagnosis = None
    else:
        diagnosis = diagnose_prepared(prepared, source_lower, source)
        cls, reason = diagnosis.cls, diagnosis.source
        late = fallback(inner, command, cls, family)
        if late is not None:
            cls, detail, reason = late.cls, late.detail, late.why
    if cls == "unknown" and not norm and not tool and inner.exit_code is None:
        return ZERO
    own = search_diagnostics(command, prepared.lines) if cls not in STRUCTURAL else ()
    if own:
        # What the search said of itself is the failure; its matches are the project's text.
        diagnosis = Diagnosis(cls, own[:MAX_KEY_LINES], "the search's own messages")
    if cls in STRUCTURAL:
        # A misuse is part of what failed; why a call was no failure is not (nothing is
        # learned from those, one id per tool family is enough).
        salient = "" if cls in BENIGN else detail
        explain = f"structural class {cls}: the wording is not hashed ({reason})"
    elif diagnosis is not None and diagnosis.cls == cls:
        salient = salient_text(diagnosis, norm, source)
        where = diagnosis.source if diagnosis.lines else "whole normalised message"
        explain = f"salient text from the {where}"
    else:
        salient = norm
        explain = f"{reason}; salient text from the whole normalised message"
    fid = hash_id("fp_", _VERSION_TAG, cls, family or tool, salient)
    return _fingerprint(fid, cls, tool, lang, mfamily, norm, salient, explain, detail)


_WRAPPER_TAG = re.compile(r"</?[a-z_]+_error>", re.IGNORECASE)
#: Lines that only label what follows (never the salient line when another line exists).
_LABEL = re.compile(r"(?:exit code:? -?\d+|errors?:?|traceback \(most recent call last\):?|"
                    r"std(?:err|out):?|output:?)", re.IGNORECASE)


def salient_line(message: str) -> str:
    """The line of a failure that says what went wrong, as written (for people to read).

    The key line the fingerprint's salient text comes from (a traceback's error, a compiler's
    diagnostic, a failing test); for an agent tool's own error, the first line that shows its
    class ("No replacement was performed, …" rather than "ERROR:"). Never a bare label such as
    "Exit code 1" or "Traceback (most recent call last):" when a better line exists. Wrapper tags
    such as `<tool_use_error>` are dropped. Pure, not on the hot path.
    """
    prepared = prepare(message)
    source = source_text(prepared)
    diagnosis = diagnose_prepared(prepared, source.lower(), source)
    for key_line in diagnosis.lines:
        text = _WRAPPER_TAG.sub("", key_line).strip()
        if text and not _LABEL.fullmatch(text):
            return text
    lines = [text for text in (_WRAPPER_TAG.sub("", line).strip() for line in prepared.lines)
             if text]
    lines = [line for line in lines if not _LABEL.fullmatch(line)] or lines
    if diagnosis.cls != "unknown":
        for line in lines:
            if classify(line) == diagnosis.cls:
                return line
    return next((line for line in lines if len(line.split()) >= 3), lines[0] if lines else "")
