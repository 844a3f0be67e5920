"""The seed's fingerprint algorithm exactly as SPEC S-9 states it (fingerprint version 1).

Kept only so the improved algorithm (`fingerprint.py`) can be measured against it on the same
corpus (`python -m tests.fixtures.failures.evaluate`).  Its known faults are deliberate here: the
stack-trace cut throws away a Python traceback's error line, quoted identifiers become `<str>`,
IndentationError is `unknown` (H-S-24), the explicit model family is not lowercased (H-S-26).
"""

from __future__ import annotations

import re

from slmactor.logic.failures.fingerprint import Fingerprint
from slmactor.logic.failures.normalize import strip_ansi
from slmactor.logic.text.models import model_family as fold_model_family
from slmactor.logic.text.models import normalize_language
from slmactor.logic.text.strings import cut_bytes, hash_id

SEED_VERSION = 1

_TRACE_MARKERS = ("\ngoroutine ", "\n\tat ", "\nTraceback (most recent call last)", '\n  File "',
                  "\nStack trace:", "\npanic: runtime error")
_STEPS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<ts>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<ts>"),
    (re.compile(r"\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b"), "<dur>"),
    (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+"), "<url>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<addr>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"\b[0-9a-f]{7,}\b"), "<hash>"),
    (re.compile(r"\b[A-Za-z]:\\[^\s:]*"), "<path>"),
    (re.compile(r"(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+|/[\w.-]+"), "<path>"),
    (re.compile(r"--- (FAIL|PASS|SKIP): \S+"), lambda m: f"--- {m.group(1).lower()}: <test>"),  # type: ignore[list-item]
    (re.compile(r"::[\w\[\]-]+"), "::<test>"),
    (re.compile(r"\b(line|lines|col|column|offset|byte|position|pos) #?\d+", re.IGNORECASE),
     r"\1 <line>"),
    (re.compile(r":\d+(?::\d+)?\b"), ":<line>"),
    (re.compile(r"\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|`[^`\n]{0,200}`"), "<str>"),
    (re.compile(r"\b\d+\b"), "<n>"),
    (re.compile(r'file "?<path>"?, <line>', re.IGNORECASE), "file <path>, <line>"),
]
_SPACES = re.compile(r"\s+")


def seed_normalize(message: str) -> str:
    """S-9.2 step by step."""
    text = strip_ansi(message.strip())
    cut = min((i for i in (text.find(m) for m in _TRACE_MARKERS) if i > 0), default=-1)
    if cut > 0:
        text = text[:cut]
    for pattern, repl in _STEPS:
        text = pattern.sub(repl, text)
    return cut_bytes(_SPACES.sub(" ", text.lower()).strip(), 300).rstrip()


_RULES: list[tuple[str, str, tuple[str, ...]]] = [
    ("out_of_scope_write", "any", ("out-of-scope write blocked", "out-of-scope files_changed",
                                   "does not edit files at all")),
    ("edit_line_numbers", "any", ("line-number prefix", "line number prefix",
                                  "still contains ws_read's line-number")),
    ("edit_empty_old_str", "any", ("old_str is empty", "empty old_str",
                                   "old_str is empty (or only whitespace)")),
    ("edit_noop", "any", ("no-op edit refused", "old_str and new_str are identical")),
    ("edit_ambiguous", "any", ("found 3 times", "occurrences", "found multiple times",
                               "is not unique", "matches multiple", "replace_all")),
    ("edit_ambiguous", "all", ("old_str", "times in")),
    ("edit_not_found", "all", ("old_str", "not found")),
    ("edit_not_found", "any", ("search block not found", "searchreplace block",
                               "did not match anything", "no match found for")),
    ("file_not_read", "any", ("must be read first", "has not been read in this session",
                              "read the file first")),
    ("patch_failed", "any", ("hunk", "patch does not apply", "malformed patch", "corrupt patch",
                             "can't find file to patch")),
    ("truncated_output", "any", ("max_tokens", "finish_reason: length", "response was truncated",
                                 "truncated by the token limit", "length limit reached")),
    ("malformed_json", "any", ("unexpected end of json", "invalid character", "cannot unmarshal",
                               "json parse error", "expecting ',' delimiter", "unterminated string",
                               "failed to parse tool arguments", "invalid json")),
    ("context_overflow", "any", ("context length exceeded", "maximum context length",
                                 "context_length_exceeded", "prompt is too long", "too many tokens",
                                 "reduce the length of the messages")),
    ("rate_limit", "any", ("rate limit", "429", "too many requests", "quota exceeded")),
    ("timeout", "any", ("context deadline exceeded", "timed out", "timeout", "deadline exceeded",
                        "i/o timeout")),
    ("no_progress", "any", ("repeated identical tool call", "same tool call", "no progress",
                            "loop detected", "already called this tool with the same arguments")),
    ("permission_denied", "any", ("permission denied", "not permitted", "command is not allowed",
                                  "blocked by permission", "operation not permitted",
                                  "refused by the permission")),
    ("dependency_missing", "any", ("command not found", "no such command", "modulenotfounderror",
                                   "cannot find module", "missing go.sum entry", "package not found",
                                   "executable file not found")),
    ("compile_error", "any", ("syntax error", "undefined:", "undeclared name", "cannot use",
                              "declared and not used", "expected declaration", "compilation failed",
                              "compile error", "cannot find package", "type error",
                              "does not implement")),
    ("review_rejected", "any", ("review rejected", "max retries", "reviewer rejected")),
    ("test_failure", "any", ("--- fail", "=== fail", "assertionerror", "test failed",
                             "tests failed", "failed tests/", "assert ", "e   assert")),
    ("lint_error", "any", ("golangci-lint", "ruff", "eslint", "flake8", "lint error", "vet:")),
    ("file_not_found", "any", ("no such file or directory", "file does not exist",
                               "cannot find the file", "enoent")),
    ("provider_error", "any", ("internal server error", "502 bad gateway",
                               "503 service unavailable", "connection refused", "eof",
                               "upstream error", "api error", "unauthorized", "invalid api key")),
    ("tool_args", "any", ("is required", "missing required", "unknown argument", "invalid argument",
                          "unexpected field")),
]
_WORDY = re.compile(r"[A-Za-z0-9_]+")
_STRUCTURAL = frozenset({
    "edit_not_found", "edit_ambiguous", "edit_line_numbers", "edit_empty_old_str", "edit_noop",
    "file_not_read", "malformed_json", "truncated_output", "context_overflow", "timeout",
    "no_progress", "rate_limit", "patch_failed", "tool_args", "review_rejected",
    "out_of_scope_write",
})


def _has(low: str, needle: str) -> bool:
    if not _WORDY.fullmatch(needle):
        return needle in low
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(needle)}(?![A-Za-z0-9_])", low) is not None


def seed_classify(message: str) -> str:
    """S-9.4 on the lowercased raw message; first match wins."""
    low = message.lower()
    if not low.strip():
        return "unknown"
    for cls, mode, needles in _RULES:
        hits = [_has(low, n) for n in needles]
        if (mode == "any" and any(hits)) or (mode == "all" and all(hits)):
            return cls
    return "unknown"


def seed_analyze(tool: str, message: str, language: str = "", model: str = "",
                 model_family: str = "") -> Fingerprint:
    """S-9.7 exactly (family not lowercased, no version in the hash)."""
    tool = tool.strip().lower()
    lang = normalize_language(language)
    family = model_family.strip() or (fold_model_family(model) if model.strip() else "")
    norm = seed_normalize(message)
    cls = seed_classify(message)
    if cls == "unknown" and not norm and not tool:
        return Fingerprint("", "unknown", "", "", "", "", "", SEED_VERSION)
    salient = "" if cls in _STRUCTURAL else norm
    fid = hash_id("fp_", cls, tool, lang, family, salient)
    return Fingerprint(fid, cls, tool, lang, family, norm, salient, SEED_VERSION, "seed algorithm")
