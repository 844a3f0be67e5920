"""Read a failure message like an engineer would: which tool printed it, and which lines say what
went wrong.

`diagnose(message)` returns the failure class and the *key lines* of the message — the lines a
fingerprint's salient text is built from — together with the name of the part that produced them
(the fingerprint's explanation).  Recognisers, tried in order after the agent-tool needles:

1. pytest reports: the `E   ` lines and the `FAILED node::id` / `ERROR file` summary lines;
2. `go test` failures: `--- FAIL: TestX` and the messages under it;
3. panics: Rust `thread 'main' panicked at` (+ its message line), Go `panic:`, segfaults;
4. exceptions: the *last* exception line of a Python traceback or a Node/provider-SDK error
   (`NameError: name 'alpha' is not defined`, `openai.RateLimitError: ...`), Java's
   `Exception in thread "main" X` / `Caused by: X`;
5. compiler and checker diagnostics: `file:line[:col]: error: msg` (gcc, clang, mypy, javac, go),
   rustc's `error[E0425]: msg`, tsc's `file.ts(l,c): error TS2304: msg`, linker errors, ruff and
   eslint lines;
6. shell errors: `script.sh: line 3: msg` (bash, sh) and `zsh:1: msg`, `(eval):1: msg` (zsh).

Anything else falls back to the general needle table and the first error-looking lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from slmactor.logic.failures.classify import (
    CONNECTION_FAILURE,
    agent_class,
    exception_class,
    is_exception_name,
    is_wrapper_exception,
    needle_class,
)
from slmactor.logic.failures.normalize import _NOISE_LINE, Prepared, prepare, source_text

#: At most this many key lines feed the salient text.
MAX_KEY_LINES = 4


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The class of a failure, its key lines (ANSI-free, original case) and where they came from."""

    cls: str
    lines: tuple[str, ...]
    source: str


# A frozen dataclass's __init__ sets each field through object.__setattr__; every message gets a
# Diagnosis, made by filling the slots directly (0.5 -> 0.3 µs).
_new = object.__new__
_set_cls = Diagnosis.__dict__["cls"].__set__
_set_lines = Diagnosis.__dict__["lines"].__set__
_set_source = Diagnosis.__dict__["source"].__set__


def _diagnosis(cls: str, lines: tuple[str, ...], source: str) -> Diagnosis:
    """`Diagnosis(cls, lines, source)`."""
    diagnosis = _new(Diagnosis)
    _set_cls(diagnosis, cls)
    _set_lines(diagnosis, lines)
    _set_source(diagnosis, source)
    return diagnosis


#: A recogniser reads the lines and may first look at the text they come from (the whole text
#: with the raw lines, the de-noised text with the de-noised ones): each one returns early when
#: the text lacks a substring that every line it recognises must contain (a necessary condition,
#: cheaper than matching every line; any line is a substring of the text).
Lines = tuple[str, ...]
Recognizer = Callable[[Lines, str], "Diagnosis | None"]


def _unique(lines: Sequence[str]) -> tuple[str, ...]:
    seen: list[str] = []
    for line in lines:
        line = line.strip()
        if line and line not in seen:
            seen.append(line)
        if len(seen) == MAX_KEY_LINES:
            break
    return tuple(seen)


#: The only non-ASCII characters that match an ASCII letter case-insensitively (İ ı ſ K) — or
#: lowercase to a string holding an ASCII character (İ K); checked over every code point by
#: tests/logic/failures/test_fingerprint_fast.py.
CASE_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def contains_ignorecase(text: str, pattern: re.Pattern[str], words: tuple[str, ...]) -> bool:
    """`pattern.search(text)` for `pattern` = the IGNORECASE alternation of `words` (lowercase
    ASCII letters and spaces).

    Case-insensitive regex search has no fast scan.  Unless the text holds one of
    `CASE_FOLDS_TO_ASCII`, only its ASCII characters can take part in a match, each as its upper
    or lower case, and they are exactly the ASCII characters of `text.lower()`, in place: so the
    search is a lowercase substring test.
    """
    if text.isascii() or not any(c in text for c in CASE_FOLDS_TO_ASCII):
        low = text.lower()
        for word in words:  # noqa: SIM110 - any() over a generator costs more than the scans
            if word in low:
                return True
        return False
    return pattern.search(text) is not None


# --- 1. pytest -----------------------------------------------------------------------------
_PYTEST_SUMMARY = re.compile(r"^(FAILED|ERROR)\s+(\S+)(?:\s+-\s+.*)?$")
_PYTEST_E = re.compile(r"^E\s+(\S.*)$")
_PYTEST_BANNER = re.compile(r"^=+ (?:FAILURES|ERRORS|short test summary info) =+$")
# Possessive runs (here and in _EXC_LINE, _DIAG, _SHELL): each run can only end where the
# character after it is one it cannot take, so giving characters back never finds a match and
# only costs a step per character on every line that fails (tests/logic/failures/test_fingerprint_fast.py).
_EXC_IN = re.compile(r"^((?:[A-Za-z_][\w$]*+\.)*[A-Z][\w$]*+)(?::|$)")


def _pytest(lines: Lines, text: str) -> Diagnosis | None:
    # "FAIL" for "FAILED" and "FAILURES": one scan fewer.
    if "FAIL" not in text and "ERROR" not in text and "short test summary info" not in text:
        return None
    summaries = [m for m in map(_PYTEST_SUMMARY.match, lines) if m]
    if not summaries and not any(_PYTEST_BANNER.match(line) for line in lines):
        return None
    e_lines = [m.group(1) for m in map(_PYTEST_E.match, lines) if m]
    if not summaries and not e_lines:
        return None
    cls = "test_failure"
    if not any(m.group(1) == "FAILED" for m in summaries):
        # Only ERROR entries: collection or setup broke; the exception says why (a missing
        # module is a missing dependency, not a failing test).
        for line in e_lines:
            exc = _EXC_IN.match(line)
            if exc and is_exception_name(exc.group(1)):
                cls = exception_class(exc.group(1), line.lower())
                break
    nodes = [f"{m.group(1)} {m.group(2)}" for m in summaries]
    return _diagnosis(cls, _unique(e_lines[:2] + nodes + e_lines[2:]),
                     "pytest report (E lines and summary)")


# --- 2. go test ----------------------------------------------------------------------------
_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)")
_GO_TEST_MSG = re.compile(r"^\s+\S+_test\.go:\d+: (.+)$")


def _go_test(lines: Lines, text: str) -> Diagnosis | None:
    if "--- FAIL: " not in text:
        return None
    fails = [m.group(1) for m in map(_GO_FAIL.match, lines) if m]
    if not fails:
        return None
    msgs = [m.group(1) for m in map(_GO_TEST_MSG.match, lines) if m]
    return _diagnosis("test_failure", _unique([f"--- FAIL: {f}" for f in fails] + msgs),
                     "go test failure")


# --- 3. panics -----------------------------------------------------------------------------
_RUST_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (.*)$")
_GO_PANIC = re.compile(r"^panic: (.+)$")
_SEGV_WORDS = ("segmentation fault", "core dumped")
_SEGV = re.compile("|".join(_SEGV_WORDS), re.IGNORECASE)


def _panic(lines: Lines, text: str) -> Diagnosis | None:
    if "panic" in text:  # for " panicked at " and "panic: ": one scan
        for i, line in enumerate(lines):
            m = _RUST_PANIC.match(line)
            if m:
                rest = m.group(1)
                # Rust ≥ 1.73 prints "panicked at file:l:c:" and the message on the next line.
                if rest.endswith(":") and i + 1 < len(lines):
                    return _diagnosis("runtime_error", ("panicked", lines[i + 1]),
                                     "rust panic message")
                return _diagnosis("runtime_error", (f"panicked at {rest}",), "rust panic message")
            m = _GO_PANIC.match(line)
            if m:
                return _diagnosis("runtime_error", (line,), "go panic line")
    if contains_ignorecase(text, _SEGV, _SEGV_WORDS):
        for line in lines:
            if _SEGV.search(line):
                return _diagnosis("runtime_error", (line,), "crash line")
    return None


# --- 4. exceptions -------------------------------------------------------------------------
_EXC_LINE = re.compile(r"^((?:[A-Za-z_][\w$]*+\.)*[A-Z][\w$]*+)(?: \[[\w-]+\])?(?::\s*(.*))?$")
_STATUS_SUFFIX = re.compile(r"\s*\((?:status(?: code)?|http)[: ]+\d+\)\s*$", re.IGNORECASE)
_JAVA_TOP = re.compile(r'^Exception in thread "[^"]*" ([\w.$]+)(?::\s*(.*))?$')
_JAVA_CAUSE = re.compile(r"^Caused by: ([\w.$]+)(?::\s*(.*))?$")


def _exception(lines: Lines, text: str) -> Diagnosis | None:
    java = ([m for m in map(_JAVA_CAUSE.match, lines) if m] if "Caused by: " in text else []) or (
        [m for m in map(_JAVA_TOP.match, lines) if m] if 'Exception in thread "' in text else [])
    if java:
        top = java[-1]
        name = top.group(1)
        line = f"{name}: {top.group(2)}" if top.group(2) else name
        return _diagnosis(exception_class(name, line.lower()), (line,), "java exception line")
    for line in reversed(lines):
        m = _EXC_LINE.match(line)
        if not m or not is_exception_name(m.group(1)):
            continue
        name, msg = m.group(1), m.group(2)
        if msg is None and not name.endswith(("Error", "Exception", "Interrupt")):
            continue
        cls = exception_class(name, line.lower())
        if msg and is_wrapper_exception(name):
            # `Error:`, `ResponseError:`, `httpx.ConnectError:` only wrap the message: the same
            # failure printed by a CLI and by an SDK must not split on the wrapper's name.
            # The suffix starts with "(" (the regex, case-insensitive and \s-led, has no fast scan).
            if "(" in msg:
                msg = _STATUS_SUFFIX.sub("", msg)
            return _diagnosis(cls, (msg,), "exception message")
        return _diagnosis(cls, (line,), "exception line (the last one of the traceback)")
    return None


# --- 5. compiler / checker diagnostics -----------------------------------------------------
_DIAG = re.compile(r"^(?:[A-Za-z]:[\\/])?(?:[^\s:][^:\s]*+):\d+(?::\d+)?:\s*(?:(fatal error|error|warning|note)\s*:\s*)?"
                   r"(.+)$")
_RUSTC = re.compile(r"^(error|warning)(\[[A-Z]+\d+\])?:\s*(.+)$")
_RUST_ARROW = re.compile(r"^\s*--> ")
_TSC = re.compile(r"^\S+\(\d+,\d+\): (error|warning) (TS\d+): (.+)$")
_LINKER = re.compile(r"^\S+:\(\.\w+\+0x[0-9a-fA-F]+\):\s*(.+)$")
_JAVA_SYMBOL = re.compile(r"^\s+symbol:\s+(.+)$")
_ESLINT = re.compile(r"^\s+\d+:\d+\s+(error|warning)\s+(.+?)\s{2,}([\w/@-]+)$")
_LINT_CODE = re.compile(r"^[A-Z]{1,4}\d{2,4}\b")
_DEPENDENCY_WORDS = ("no such file or directory", "cannot find module", "no module named",
                     "library stub", "cannot find package", "command not found",
                     "not installed")
_DEPENDENCY = re.compile("|".join(_DEPENDENCY_WORDS), re.IGNORECASE)


def _compiler(lines: Lines, text: str) -> Diagnosis | None:
    errors: list[str] = []
    warnings: list[str] = []
    lint = False
    has_arrow = "--> " in text and any(_RUST_ARROW.match(line) for line in lines)
    # Formats whose lines hold a fixed substring are not tried on a text without it.
    tsc = _TSC if "): error TS" in text or "): warning TS" in text else None
    linker = _LINKER if ":(." in text else None
    symbol = _JAVA_SYMBOL if "symbol:" in text else None
    for line in lines:
        if _NOISE_LINE.match(line.lower()):
            continue
        m = tsc.match(line) if tsc else None
        if m:
            (errors if m.group(1) == "error" else warnings).append(f"{m.group(2)}: {m.group(3)}")
            continue
        m = _RUSTC.match(line)
        if m and (m.group(2) or has_arrow):
            (errors if m.group(1) == "error" else warnings).append(line)
            continue
        m = linker.match(line) if linker else None
        if m:
            errors.append(m.group(1))
            continue
        m = _ESLINT.match(line)
        if m:
            lint = True
            errors.append(f"{m.group(2)} {m.group(3)}")
            continue
        m = symbol.match(line) if symbol else None
        if m and errors:
            errors.append(f"symbol: {m.group(1)}")
            continue
        m = _DIAG.match(line)
        if m and not line.startswith(("http:", "https:")):
            severity, msg = m.group(1), m.group(2)
            if severity == "note":
                continue
            if _LINT_CODE.match(msg):
                lint = True
            (warnings if severity == "warning" else errors).append(msg)
    found = errors or warnings
    if not found:
        return None
    text = " ".join(found)
    if lint:
        cls = "lint_error"
    elif contains_ignorecase(text, _DEPENDENCY, _DEPENDENCY_WORDS):
        cls = "dependency_missing"
    else:
        cls = "compile_error"
    return _diagnosis(cls, _unique(found), "compiler diagnostics (error lines without locations)")


# --- 6. shell ------------------------------------------------------------------------------
# `sh: line 3: msg`, and bash -c's `bash: -c: line 8: msg` (two prefixes).
_SHELL = re.compile(r"^(?:[^:\n]++: ){0,2}line \d+: (.+)$")
# zsh words the same errors as `zsh:1: msg`, `(eval):1: msg` (a command run through `eval`, as
# Claude Code runs every Bash call when the user's shell is zsh) or `zsh:cd:1: msg` (a builtin's
# name before the line): zsh's zerrnam/zwarnnam in Src/utils.c. Read as shell lines, not as a
# compiler's `file:line: msg`.
_ZSH = re.compile(r"^(?:zsh|\(eval\)|\(anon\))(?::[\w.-]++)?:\d+: (.+)$")


def _shell(lines: Lines, text: str) -> Diagnosis | None:
    if "line " not in text:
        return None
    msgs = [m.group(1) for m in map(_SHELL.match, lines) if m]
    return _shell_lines(msgs)


def _zsh(lines: Lines, text: str) -> Diagnosis | None:
    if "zsh" not in text and "(eval)" not in text and "(anon)" not in text:
        return None
    return _shell_lines([m.group(1) for m in map(_ZSH.match, lines) if m])


def _shell_lines(msgs: list[str]) -> Diagnosis | None:
    if not msgs:
        return None
    return _diagnosis(needle_class(" ".join(msgs).lower()) or "unknown", _unique(msgs),
                     "shell error lines")


_RECOGNIZERS: tuple[Recognizer, ...] = (_pytest, _go_test, _panic, _exception, _zsh, _compiler,
                                         _shell)
_RAW_READERS = frozenset({_pytest, _compiler, _panic})
#: (recogniser, whether it reads the raw lines), in order.
_READERS = tuple((r, r in _RAW_READERS) for r in _RECOGNIZERS)

_ERRORISH = re.compile(
    r"\b(?:error|err!|fail(?:ed|ure)?|fatal|exception|cannot|can't|unable|denied|refused|"
    r"not found|no such|invalid|missing|unknown|unexpected|timed out|timeout|panic|abort(?:ed)?)\b",
    re.IGNORECASE)


def _generic(lines: Lines) -> tuple[tuple[str, ...], str]:
    errorish = [line for line in lines if _ERRORISH.search(line)]
    if errorish:
        return _unique(errorish[:MAX_KEY_LINES]), "first error lines"
    return _unique(lines[:2]), "first lines"


def diagnose(message: str) -> Diagnosis:
    """Class and key lines of a failure message."""
    return diagnose_prepared(prepare(message))


def diagnose_prepared(prepared: Prepared, source_lower: str | None = None,
                      source: str | None = None) -> Diagnosis:
    """`diagnose` of an already prepared message (`source_lower`, `source`: its `source_text`,
    lowercased and as it is, when the caller has them)."""
    if not prepared.text:
        return _diagnosis("unknown", (), "empty message")
    if source is None:
        source = source_text(prepared)
    # Needles are looked for in the de-noised text: stack frames and source echoes are most of a
    # long trace and only add false hits (`timeout=timeout` in a frame of subprocess.py).
    low = source.lower() if source_lower is None else source_lower
    cls = agent_class(low)
    if cls:
        return _diagnosis(cls, (), "agent-tool failure")
    lines = prepared.lines
    raw_lines = prepared.raw_lines
    found = None
    text = prepared.text
    for recognizer, raw in _READERS:
        # Recognisers that need frames or gutters (pytest E lines sit under source echoes) get
        # the raw lines and the whole text; the rest read the de-noised lines, and the text made
        # of them (shorter, for their substring tests).
        found = recognizer(raw_lines, text) if raw else recognizer(lines, source)
        if found is not None:
            break
    if found is None:
        key, source = _generic(lines or raw_lines)
        found = _diagnosis(needle_class(low) or "unknown", key, source)
    if found.cls == "provider_error" and CONNECTION_FAILURE.search(low):
        # A service that is down is one problem whichever HTTP library reported it.
        return _diagnosis(found.cls, ("connection failure",), "connection failure (wording not hashed)")
    return found


def classify(message: str) -> str:
    """The failure class of a message (one of `classify.CLASSES`)."""
    return diagnose(message).cls
