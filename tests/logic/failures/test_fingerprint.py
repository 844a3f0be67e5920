"""Failure fingerprints: classes, needles, normalisation, grouping (SPEC S-9, issue #6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.failures.classify import (
    AGENT_RULES,
    CLASSES,
    CONTENT,
    NEEDLE_RULES,
    STRUCTURAL,
    has_needle,
)
from slmactor.logic.failures.fingerprint import (
    FINGERPRINT_VERSION,
    analyze,
    classify,
    describe,
    normalize,
)
from slmactor.logic.failures.fingerprint_seed import seed_analyze, seed_classify

# One realistic message per class.
CLASS_EXAMPLES = {
    "tool_args": "Parameter `path` is required for command: view",
    "edit_not_found": "No replacement was performed, old_str `x = 1` did not appear verbatim in /a.py.",
    "edit_ambiguous": "Found 3 matches of the string to replace, but replace_all is false.",
    "edit_line_numbers": "old_str still contains ws_read's line-number prefix",
    "edit_empty_old_str": "old_str is empty (or only whitespace)",
    "edit_noop": "No changes to make: old_string and new_string are exactly the same.",
    "file_not_read": "File has not been read yet. Read it first before writing to it.",
    "file_not_found": "cat: notes.txt: No such file or directory",
    "patch_failed": "error: patch failed: src/app.py:12\nerror: src/app.py: patch does not apply",
    "malformed_json": "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 9 (char 8)",
    "truncated_output": "model response was truncated: finish_reason=length",
    "compile_error": "./main.go:5:2: undefined: alpha",
    "test_failure": "FAILED tests/test_calc.py::test_add - assert 4 == 5",
    "lint_error": "app.py:1:8: F401 [*] `os` imported but unused",
    "timeout": "httpx.ReadTimeout: The read operation timed out",
    "context_overflow": "prompt is too long: 208154 tokens > 200000 maximum",
    "provider_error": "anthropic.InternalServerError: Error code: 529 - {'type': 'overloaded_error'}",
    "rate_limit": "openai.RateLimitError: Error code: 429 - {'code': 'rate_limit_exceeded'}",
    "no_progress": "loop detected: repeated identical tool call",
    "permission_denied": "bash: line 1: ./deploy.sh: Permission denied",
    "out_of_scope_write": "out-of-scope write blocked: docs role does not edit files at all",
    "dependency_missing": "ModuleNotFoundError: No module named 'requests'",
    "review_rejected": "review rejected: max retries reached",
    "runtime_error": "Traceback (most recent call last):\n  File \"a.py\", line 2, in <module>\n"
                     "    print(1 / 0)\nZeroDivisionError: division by zero",
    "unknown": "something odd happened",
}


#: The classes the call's structure decides (tests/logic/failures/test_real_classes.py has theirs;
#: the environment's, tests/logic/failures/test_runtimes.py).
CALL_CLASSES = frozenset({"output_too_large", "format_rejected", "policy_denied", "user_rejected",
                          "tool_misuse", "stale_handle", "self_kill", "service_exhausted",
                          "path_not_found", "not_a_failure", "runtime_version",
                          "env_not_activated", "server_no_return"})


def test_every_class_has_an_example_and_a_description() -> None:
    assert set(CLASS_EXAMPLES) == set(CLASSES) - CALL_CLASSES
    assert set(CLASSES) == STRUCTURAL | CONTENT
    assert not STRUCTURAL & CONTENT
    assert len(STRUCTURAL) == 16 + len(CALL_CLASSES - {"path_not_found"})
    for cls in CLASSES:
        assert describe(cls) and describe(cls) != describe("unknown") or cls == "unknown"
    assert describe("edit_not_found") == "old_str did not match the file"
    assert describe("no-such-class") == describe("unknown")


@pytest.mark.parametrize(("cls", "message"), sorted(CLASS_EXAMPLES.items()))
def test_class_table(cls: str, message: str) -> None:
    assert classify(message) == cls


def _needle_cases() -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []
    for rule in (*AGENT_RULES, *NEEDLE_RULES):
        if rule.mode == "any":
            cases.extend((rule.cls, f"zz {needle} zz") for needle in rule.needles)
        else:
            cases.append((rule.cls, "zz " + " zz ".join(rule.needles) + " zz"))
    return cases


@pytest.mark.parametrize(("cls", "message"), _needle_cases())
def test_every_needle_reaches_a_class_no_later_than_its_own(cls: str, message: str) -> None:
    # First match wins: a needle lands in its own class unless an earlier rule also holds it.
    order = [r.cls for r in (*AGENT_RULES, *NEEDLE_RULES)]
    got = classify(message)
    assert got == cls or order.index(got) < len(order) - order[::-1].index(cls)


def test_needles_on_word_boundaries() -> None:
    assert not has_needle("wavetimeout exceeded", "timeout")
    assert has_needle("i/o timeout", "timeout")
    assert not has_needle("thereof", "eof")
    assert has_needle("unexpected eof", "eof")
    assert classify("error: waveTimeout is negative") != "timeout"
    assert classify("error: see thereof") != "provider_error"


def test_seed_misfires_are_fixed() -> None:
    # A compile error naming a variable `timeout` is not a network timeout.
    assert classify("./net.go:9:3: undefined: timeout") == "compile_error"
    assert seed_classify("./net.go:9:3: undefined: timeout") == "timeout"
    # Line 429 is not HTTP 429.
    assert classify("main.c:429:5: error: expected ';' before '}' token") == "compile_error"
    # HTTP clients' "Max retries exceeded with url" is a connection failure, not a review.
    msg = ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=11434): "
           "Max retries exceeded with url: /api/chat (Caused by NewConnectionError('[Errno 111] "
           "Connection refused'))")
    assert classify(msg) == "provider_error"
    assert seed_classify(msg) == "review_rejected"
    # A test about occurrences is not an ambiguous edit.
    assert classify("FAILED tests/test_s.py::test_count - assert count_occurrences('a') == 3") \
        == "test_failure"


def test_indentation_error_is_a_compile_error_h_s_24() -> None:
    msg = 'File "/tmp/x/ty.py", line 6\n    y = 2\nIndentationError: unexpected indent'
    assert seed_classify(msg) == "unknown"
    fp = analyze("python", msg, "python")
    assert fp.cls == "compile_error"
    assert "indentation" in (msg + " " + fp.norm).lower()


def test_model_family_is_lowercased_h_s_26() -> None:
    a = analyze("edit", "old_str not found", "python", model_family="Qwen")
    b = analyze("edit", "old_str not found", "python", model_family="qwen")
    assert a.id == b.id and a.model_family == "qwen"
    assert analyze("edit", "x", model="Qwen2.5-Coder:7B-instruct").model_family == "qwen2.5-coder"


def test_structural_collapse_one_fingerprint_per_tool_whatever_the_language_or_model() -> None:
    messages = [
        "old_str not found in /repo/a.py",
        "old_str not found in C:\\src\\b.py (closest text: 'def f')",
        "ERROR: old_str `return x` not found in src/c.py",
    ]
    ids = {analyze("ws_edit", m, "go", model="qwen2.5-coder:7b").id for m in messages}
    assert len(ids) == 1
    fp = analyze("ws_edit", messages[0], "go", model="qwen2.5-coder:7b")
    assert fp.salient == "" and fp.structural and fp.cls == "edit_not_found"
    assert analyze("other_tool", messages[0], "go", model="qwen2.5-coder:7b").id != fp.id
    # Version 4: the language and the model are the failure's scope, not its identity (a hook
    # knows neither, a transcript names the model, a replay the language: one failure, one id).
    python = analyze("ws_edit", messages[0], "python", model="qwen2.5-coder:7b")
    llama = analyze("ws_edit", messages[0], "go", model="llama3.1:8b")
    assert python.id == llama.id == fp.id
    assert (python.language, llama.model_family) == ("python", "llama3.1")


def test_content_separation_and_collapse() -> None:
    alpha = analyze("go", "./main.go:5:2: undefined: alpha", "go")
    beta = analyze("go", "./main.go:5:2: undefined: beta", "go")
    moved = analyze("go", "./pkg/other/util.go:88:14: undefined: alpha", "go")
    assert alpha.id != beta.id
    assert alpha.id == moved.id
    assert alpha.salient == "undefined: alpha"


def test_python_traceback_keeps_its_last_line() -> None:
    def tb(name: str, path: str, line: int) -> str:
        return (f'Traceback (most recent call last):\n  File "{path}", line {line}, in <module>\n'
                f"    print({name})\n          ^^^^^\nNameError: name '{name}' is not defined")

    a = analyze("python", tb("alpha", "/tmp/a/main.py", 2), "python")
    a2 = analyze("python", tb("alpha", "/home/u/proj/ty.py", 40), "python")
    b = analyze("python", tb("beta", "/tmp/a/main.py", 2), "python")
    assert a.id == a2.id != b.id
    assert a.salient == "nameerror: name 'alpha' is not defined"
    assert "exception line" in a.explain
    # The seed cut the traceback at its first frame, so alpha and beta collided.
    assert seed_analyze("python", tb("alpha", "/tmp/a/main.py", 2), "python").id == \
        seed_analyze("python", tb("beta", "/tmp/a/main.py", 2), "python").id


@pytest.mark.parametrize(("message", "expected"), [
    ("ty.py:6: error: x", "<path>:<line>: error: x"),
    ("at 2026-08-24T10:11:12Z took 350ms", "at <ts> took <dur>"),
    ("GET https://api.example.com/v1/x?a=1 failed", "get <url> failed"),
    ("dial 10.0.0.1:8080 refused", "dial <addr> refused"),
    ("object at 0x7f3b2c1d4e50", "object at <addr>"),
    ("commit 3f9a2b17c0 broke it", "commit <hash> broke it"),
    ("C:\\Users\\dev\\proj\\io.py failed", "<path> failed"),
    ("/tmp/tmpa8x_k2q/ws/a.py failed", "<path> failed"),
    ("request_id: req_011CVbq1aZ2xY3", "request_id: <id>"),
    ("KeyError: 'user'", "keyerror: 'user'"),
    ("bad payload 'hello world'", "bad payload <str>"),
    ("   3 |     x = 1\nerror here", "error here"),
    ("Error code: 429 - slow down", "error code: 429 - slow down"),
    ("line 42, column 7", "line <line>, column <line>"),
    ("\x1b[31mred\x1b[0m text", "red text"),
])
def test_normalize_examples(message: str, expected: str) -> None:
    assert normalize(message) == expected


def test_normalize_is_capped_at_300_bytes() -> None:
    assert len(normalize("word " * 500).encode()) <= 300
    assert normalize("") == "" and normalize("   \n ") == ""


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_normalize_is_idempotent(message: str) -> None:
    once = normalize(message)
    assert normalize(once) == once


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([
    "Traceback (most recent call last):", '  File "/a/b.py", line 3, in f', "    x = y",
    "NameError: name 'y' is not defined", "error: patch failed", "   12 | code", "E   assert 1",
    "FAILED t.py::test_a - x", "at Object.<anonymous> (/a.js:1:2)", "req_abc123def456", "'q r'",
    "0x1f 12ms 2026-01-01", "C:\\x\\y.py:3:4:", "\x1b[1mbold\x1b[0m", "| a | b |",
]), max_size=12))
def test_normalize_is_idempotent_on_tool_output(lines: list[str]) -> None:
    once = normalize("\n".join(lines))
    assert normalize(once) == once


def test_fingerprint_record_shape() -> None:
    fp = analyze(" Pytest ", "FAILED t.py::test_a - assert 1 == 2", "Py", model="gpt-4o")
    data = fp.to_dict()
    assert {"id", "class", "tool", "language", "model_family", "norm", "salient", "version",
            "explain"} <= set(data)
    assert data["class"] == "test_failure" and data["tool"] == "pytest"
    assert data["language"] == "python" and data["version"] == FINGERPRINT_VERSION
    assert fp.id.startswith("fp_") and len(fp.id) == 15
    assert type(fp).from_dict(data) == fp


def test_zero_fingerprint() -> None:
    assert analyze("", "").is_zero and analyze("", "   ").id == ""
    assert not analyze("bash", "").is_zero


@pytest.mark.parametrize(("message", "cls", "salient"), [
    ("src/app.ts(3,5): error TS2304: Cannot find name 'alpha'.", "compile_error",
     "ts2304: cannot find name 'alpha'."),
    (("/w/src/a.js\n  3:7  error  'x' is assigned a value but never used  no-unused-vars\n\n"
     "✖ 1 problem (1 error, 0 warnings)"), "lint_error",
     "'x' is assigned a value but never used no-unused-vars"),
    ("app.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.", "lint_error",
     "f401 [*] `os` imported but unused"),
    ("--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\nFAIL\tex/p\t0.003s",
     "test_failure", "--- fail: testparse | got <n>, want <n>"),
    ("goroutine 1 [running]:\npanic: runtime error: index out of range [5] with length 2",
     "runtime_error", "panic: runtime error: index out of range [<n>] with length <n>"),
    ("patching file a.py\nHunk #1 FAILED at 12.\n1 out of 1 hunk FAILED -- saving rejects",
     "patch_failed", ""),
    ("error: No valid patches in input (allow with \"--allow-empty\")", "patch_failed", ""),
    # aider refusing the reply's edit format: the harness rejected the format (not a patch).
    ("The LLM did not conform to the edit format.", "format_rejected", ""),
    (("ERROR: Could not find a version that satisfies the requirement flaskx==9.9 (from versions: "
     "none)\nERROR: No matching distribution found for flaskx==9.9"), "dependency_missing", None),
    ("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /w/src/a.mjs",
     "dependency_missing", "cannot find package 'zod' imported from <path>"),
    ("bash: line 1: 4242 Segmentation fault      ./a.out", "runtime_error", None),
])
def test_more_real_formats(message: str, cls: str, salient: str | None) -> None:
    fp = analyze("tool", message, "x")
    assert fp.cls == cls
    if salient is not None:
        assert fp.salient == salient


@pytest.mark.parametrize("message", [
    "a." * 4000, "E   " + "a." * 4000, "A." * 4000, "a/" * 4000, "a.b/" * 2000, " 1 |" * 2000,
    "  1:1  error" + "  a" * 2500, "1:" * 4000, "'a " * 3000, "[" * 8000,
])
def test_pathological_messages_stay_fast(message: str) -> None:
    # These took seconds with a backtracking file-name pattern; linear patterns take milliseconds.
    import time

    start = time.perf_counter()
    analyze("tool", message, "python")
    assert time.perf_counter() - start < 1.0
