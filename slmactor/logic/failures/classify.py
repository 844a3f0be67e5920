"""Failure classes, their descriptions and the needle rules that recognise them (SPEC S-9.3–S-9.6).

The 24 classes of the seed are kept, in the seed's order, plus `runtime_error` (content) for a
program that compiled and then crashed — an uncaught exception, a panic, a segfault.  The seed had
no place for those and filed them under `unknown`, or worse under whatever word of the crash text
happened to match (`KeyError: 'timeout'` became a network timeout).

Needle rules work on the lowercased raw message.  A needle made only of `[A-Za-z0-9_]` must sit on
word boundaries (`waveTimeout` is no `timeout`, `thereof` has no `eof`); any other needle is a
plain substring (S-9.5).  The seed's table is extended with the wording real tools print (Claude
Code's edit tool, str_replace_editor, aider, codex apply_patch, the OpenAI/Anthropic/Ollama SDKs,
HTTP clients, compilers) and narrowed where it misfired on real output:

* `hunk` alone matched any identifier named hunk; now `hunk #`, `hunk failed`, `invalid hunk` ...
* `occurrences` / `replace_all` alone made any test that mentions occurrences an edit failure; now
  they need the edit-tool context (`old_str ... occurrences`, `replace_all is false`).
* `429` matched any message about line 429; now it needs an HTTP context (`error code: 429`,
  `status 429`, `429 too many requests`).
* `max retries` (review_rejected) swallowed `Max retries exceeded with url` of every HTTP client;
  connection failures are matched first, as provider errors.
* IndentationError / TabError / `unexpected indent` are compile errors (H-S-24), so the shipped
  python indentation rule can fire.

The classes real sessions fail with, decided mostly by the call's structure (`verdict.py`, read
through the wrappers by `unwrap.py`): `output_too_large`, `format_rejected`, `policy_denied`,
`user_rejected`, `tool_misuse` (the misuse is the fingerprint's `detail`), `stale_handle`,
`self_kill`, `service_exhausted`, `path_not_found`, and `not_a_failure` (`BENIGN`). Overlaps with
the seed's classes, decided:

* `file_not_found` stays the class of a program or tool saying a file does not exist (the seed's
  rules and tests are keyed to it); `path_not_found` is what structure shows with no such words:
  a silent probe of a missing path (`ls`/`stat` exit 1–2, `grep` exit 2 with no output), a glob
  that matched nothing, a remote 404. Both are "the target is not there".
* `rate_limit` stays the provider throttling a request (wait and retry); `service_exhausted` is a
  quota or credit that is gone (retrying does not help until it comes back).
* `tool_args` stays the seed's wording for slmcode's tools; another tool's missing or invalid
  parameter is `tool_misuse` / `missing_parameter`.
* `timeout` now also covers exit 124 (coreutils `timeout`) and 143 (SIGTERM, how harnesses end a
  command that outlived its limit), whatever the text says; a timeout of a command that serves
  (`npm start`, `uvicorn`, a watcher) or that said it was listening is `server_no_return`.
* `runtime_version` and `env_not_activated` are what a package manager's or version manager's
  own words say (`runtimes.py`): the runtime on PATH is the wrong version (npm's `EBADENGINE`,
  pnpm's `ERR_PNPM_UNSUPPORTED_ENGINE`, Go's toolchain check), or the project's environment is
  not active in this shell (an asdf/mise shim with no version set, nvm not loaded). Both are
  structural; their detail (and salient text) is the runtime, so npm, pnpm and yarn saying
  "wrong Node" are one fingerprint. Before, they were `unknown`, `runtime_error` or
  `dependency_missing`, and advised "report the missing dependency".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Every class, in the seed's `AllClasses` order, with `runtime_error` added before `unknown`.
CLASSES: tuple[str, ...] = (
    "tool_args", "edit_not_found", "edit_ambiguous", "edit_line_numbers", "edit_empty_old_str",
    "edit_noop", "file_not_read", "file_not_found", "patch_failed", "malformed_json",
    "truncated_output", "compile_error", "test_failure", "lint_error", "timeout",
    "context_overflow", "provider_error", "rate_limit", "no_progress", "permission_denied",
    "out_of_scope_write", "dependency_missing", "review_rejected", "runtime_error",
    "output_too_large", "format_rejected", "policy_denied", "user_rejected", "tool_misuse",
    "stale_handle", "self_kill", "service_exhausted", "path_not_found", "runtime_version",
    "env_not_activated", "server_no_return", "not_a_failure", "unknown",
)

#: Classes whose wording is presentational: the message is left out of the hash (S-9.6), so every
#: `old_str not found` of one tool/language/model family is one fingerprint.
STRUCTURAL: frozenset[str] = frozenset({
    "edit_not_found", "edit_ambiguous", "edit_line_numbers", "edit_empty_old_str", "edit_noop",
    "file_not_read", "malformed_json", "truncated_output", "context_overflow", "timeout",
    "no_progress", "rate_limit", "patch_failed", "tool_args", "review_rejected",
    "out_of_scope_write", "output_too_large", "format_rejected", "policy_denied",
    "user_rejected", "tool_misuse", "stale_handle", "self_kill", "service_exhausted",
    "runtime_version", "env_not_activated", "server_no_return", "not_a_failure",
})
#: Not failures at all (a search that found nothing, a probe that answered no): recorded, never
#: counted, learned from or advised on.
BENIGN: frozenset[str] = frozenset({"not_a_failure"})
#: Classes whose (normalised) text is part of the fingerprint: `undefined: alpha` ≠ `undefined: beta`.
CONTENT: frozenset[str] = frozenset(CLASSES) - STRUCTURAL

_DESCRIPTIONS = {
    "tool_args": "the tool call had missing or invalid arguments",
    "edit_not_found": "old_str did not match the file",
    "edit_ambiguous": "old_str matched more than one place in the file",
    "edit_line_numbers": "old_str still carried the read tool's line-number gutter",
    "edit_empty_old_str": "old_str was empty",
    "edit_noop": "the edit would not change anything (old_str equals new_str)",
    "file_not_read": "the file must be read before it can be edited",
    "file_not_found": "a file or path did not exist",
    "patch_failed": "the patch did not apply",
    "malformed_json": "the JSON (tool arguments or data) did not parse",
    "truncated_output": "the model's output was cut off by the token limit",
    "compile_error": "the code did not compile or referred to names that do not exist",
    "test_failure": "a test failed",
    "lint_error": "a linter reported a problem",
    "timeout": "the operation timed out",
    "context_overflow": "the prompt exceeded the model's context window",
    "provider_error": "the model provider or a service failed (connection, auth, server error)",
    "rate_limit": "the provider rate-limited the request",
    "no_progress": "the agent repeated itself without making progress",
    "permission_denied": "the operation was not permitted",
    "out_of_scope_write": "a write outside the allowed files was blocked",
    "dependency_missing": "a command, module or package is missing",
    "review_rejected": "the reviewer rejected the change",
    "runtime_error": "the program crashed at run time (uncaught exception, panic, segfault)",
    "output_too_large": "the output was too large for the harness to show",
    "format_rejected": "the harness rejected the reply's format (no action, several actions)",
    "policy_denied": "the harness's own policy refused the call",
    "user_rejected": "the user refused the call",
    "tool_misuse": "the tool was used the wrong way (the file exists, a directory, several "
                   "commands, a missing parameter)",
    "stale_handle": "the process, shell or session the call named is gone",
    "self_kill": "a pkill/killall ended the agent's own shell",
    "service_exhausted": "a quota, credit or usage limit of a service is used up",
    "path_not_found": "a path, glob or remote resource the call named is not there",
    "runtime_version": "the runtime on PATH is not the version the project requires",
    "env_not_activated": "the project's environment (version manager, virtualenv) is not "
                         "active in this shell",
    "server_no_return": "the command starts a server or watcher that does not return; it ran "
                        "until the harness stopped it",
    "not_a_failure": "not a failure (an empty search, a probe that answered no, a quiet exit)",
    "unknown": "an unrecognised failure",
}


def describe(cls: str) -> str:
    """One-line human description of a failure class (S-9.8); unknown names describe `unknown`."""
    return _DESCRIPTIONS.get(cls, _DESCRIPTIONS["unknown"])


_WORD = re.compile(r"[A-Za-z0-9_]+")


def needle_pattern(needle: str) -> str:
    """Regex source for one needle: word-bounded if it is a bare word (S-9.5), else a substring."""
    escaped = re.escape(needle.lower())
    if _WORD.fullmatch(needle):
        return rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])"
    return escaped


_TOKEN = re.compile(r"[a-z0-9_]+")


# Every byte but those of `[a-z0-9_]` made a space: a character outside the class, ASCII or
# (as its UTF-8 bytes, all >= 0x80) not, ends a run exactly where the regex would.
_NOT_TOKEN_TO_SPACE = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789_" else 0x20
                            for c in range(256))


def tokens_of(text_lower: str) -> frozenset[str]:
    """The maximal `[a-z0-9_]` runs of a lowercased text (the needle prefilter's index).

    `frozenset(_TOKEN.findall(text_lower))`, by a byte translation and a split: the regex scan
    tests a character class at every position and cost twice as much.
    """
    return frozenset(text_lower.encode("utf-8", "surrogatepass").translate(_NOT_TOKEN_TO_SPACE)
                     .decode("ascii").split())


def _anchor(needle: str) -> str:
    """A word that must be a whole token of any text containing `needle`, or "".

    A bare-word needle is its own anchor (it must sit on word boundaries anyway); a phrase of three
    or more words has interior words bounded on both sides.  Checking a set of tokens is much
    cheaper than scanning the text for every one of the ~240 needles.
    """
    if _WORD.fullmatch(needle):
        return needle
    words = _TOKEN.findall(needle)
    return max(words[1:-1], key=len) if len(words) >= 3 else ""


@dataclass(frozen=True, slots=True)
class NeedleRule:
    """`any`: one of the needles (or the extra regex) occurs; `all`: every needle occurs."""

    cls: str
    mode: str
    needles: tuple[str, ...]
    regex: str = ""
    #: A substring that must be present before `regex` is tried (keeps the hot path cheap).
    regex_hint: str = ""
    anchors: tuple[str, ...] = ()
    # The `any` needles split for speed: bare words (one set intersection), phrases indexed by an
    # interior word, and the remaining phrases (plain substring checks).
    words: frozenset[str] = frozenset()
    anchored: dict[str, tuple[str, ...]] = field(default_factory=dict)
    plain: tuple[str, ...] = ()

    def matches(self, text_lower: str, tokens: frozenset[str] | None = None) -> bool:
        if tokens is None:
            tokens = tokens_of(text_lower)
        if self.mode == "all":
            return all(_found(text_lower, tokens, n, a)
                       for n, a in zip(self.needles, self.anchors, strict=True))
        if not self.words.isdisjoint(tokens):
            return True
        for anchor in self.anchored.keys() & tokens:
            if any(phrase in text_lower for phrase in self.anchored[anchor]):
                return True
        if any(phrase in text_lower for phrase in self.plain):
            return True
        return bool(self.regex) and self.regex_hint in text_lower and _regex(self.regex).search(
            text_lower) is not None


class RuleTable:
    """Rules tried in order, compiled so that finding the first match costs far less than trying
    each rule: the same answer as `next(r.cls for r in rules if r.matches(text))`.

    The answer is the smallest index over the needles that are found, so each kind of needle is
    searched for separately, every scan stopping at the best index found so far:

    * with `index_tokens` (worth it for a table with many bare words), the text's token set gives
      the bare words by one intersection and the anchored phrases worth testing (S-9.5: a bare
      word matches exactly when it is a token; an anchored phrase only where its anchor is);
    * the other needles, and the `all` rules, are substring tests grouped under a *gate* — a
      substring every member holds (the start of a word of four or more characters, shared by as
      many members as possible), or a member's own needle — so one test skips a whole group: a
      text holds none of most gates.  A bare word found this way must also be a whole token (a
      boundary pattern, tried only when the substring is there).  A phrase needs no token check:
      its anchor is an interior word, delimited inside the phrase itself, so it is a token
      wherever the phrase occurs.
    """

    __slots__ = ("_anchor_rules", "_anchors", "_groups", "_regex", "_rules", "_word_first",
                 "_words")

    def __init__(self, rules: tuple[NeedleRule, ...], index_tokens: bool = False) -> None:
        self._rules = rules
        word_first: dict[str, int] = {}
        anchor_rules: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        gated: list[_Gated] = []
        for i, rule in enumerate(rules):
            if rule.mode == "all":
                gated.append((i, tuple((n, _token_pattern(n) if a == n else None)
                                       for n, a in zip(rule.needles, rule.anchors, strict=True))))
            elif index_tokens:
                for word in rule.words:
                    word_first.setdefault(word, i)
                for anchor, phrases in rule.anchored.items():
                    anchor_rules.setdefault(anchor, []).append((i, phrases))
                gated.extend((i, ((phrase, None),)) for phrase in rule.plain)
            else:
                gated.extend((i, ((n, _token_pattern(n) if a == n else None),))
                             for n, a in zip(rule.needles, rule.anchors, strict=True))
        self._word_first = word_first
        self._words = frozenset(word_first)
        self._anchor_rules = {a: tuple(v) for a, v in anchor_rules.items()}
        self._anchors = frozenset(anchor_rules)
        self._groups = _gate_groups(gated)
        self._regex = tuple((i, r.regex_hint, _regex(r.regex)) for i, r in enumerate(rules)
                            if r.mode == "any" and r.regex)

    def first(self, text_lower: str) -> str:
        """The class of the first rule that matches, or ""."""
        best = len(self._rules)
        if self._words or self._anchors:
            tokens = tokens_of(text_lower)
            hits = self._words.intersection(tokens)
            if hits:
                best = min(map(self._word_first.__getitem__, hits))
            for anchor in self._anchors.intersection(tokens):
                for i, phrases in self._anchor_rules[anchor]:
                    if i < best:
                        for phrase in phrases:
                            if phrase in text_lower:
                                best = i
                                break
        for lowest, gate, group in self._groups:
            if lowest >= best:
                break
            if gate in text_lower:
                for i, checks in group:
                    if i >= best:
                        break
                    for needle, token in checks:
                        if needle not in text_lower or (token is not None
                                                        and token.search(text_lower) is None):
                            break
                    else:
                        best = i
                        break
        for i, hint, pattern in self._regex:
            if i >= best:
                break
            if hint in text_lower and pattern.search(text_lower) is not None:
                best = i
                break
        return self._rules[best].cls if best < len(self._rules) else ""


def _token_pattern(word: str) -> re.Pattern[str]:
    """Matches where `word` is a whole token of the text (a maximal `[a-z0-9_]` run)."""
    return re.compile(rf"(?<![a-z0-9_]){re.escape(word)}(?![a-z0-9_])")


#: A rule index and the (substring, boundary pattern of a bare word) tests that must all hold:
#: one for a needle of an `any` rule, one per needle for an `all` rule.
_Gated = tuple[int, tuple[tuple[str, "re.Pattern[str] | None"], ...]]


def _gate_groups(entries: list[_Gated]) -> tuple[tuple[int, str, tuple[_Gated, ...]], ...]:
    """(lowest rule index, gate, entries in rule order) groups, lowest first.

    A gate must be a substring of one of each member's needles.  The candidates are the starts
    (four characters or more) of a needle's words of four or more characters: `old_str` gates
    `old_string` too, `fail` gates `failed`.  The most shared goes first (a greedy set cover: fewer
    gates to test), the longer of equally shared ones; an entry sharing none is gated by its
    longest needle.
    """
    starts = [{w[:k] for needle, _ in checks for w in _TOKEN.findall(needle) if len(w) >= 4
               for k in range(4, len(w) + 1)} for _, checks in entries]
    left = list(range(len(entries)))
    groups: list[tuple[str, list[int]]] = []
    while left:
        counts: dict[str, int] = {}
        for e in left:
            for start in starts[e]:
                counts[start] = counts.get(start, 0) + 1
        gate = max(sorted(counts, key=lambda g: (-len(g), g)), key=counts.__getitem__,
                   default="")
        if not gate or counts[gate] == 1:
            groups.extend((max((n for n, _ in entries[e][1]), key=len), [e]) for e in left)
            break
        groups.append((gate, [e for e in left if gate in starts[e]]))
        left = [e for e in left if gate not in starts[e]]
    ordered = [(min(entries[e][0] for e in group), gate,
                tuple(sorted((entries[e] for e in group), key=lambda entry: entry[0])))
               for gate, group in groups]
    return tuple(sorted(ordered, key=lambda g: (g[0], g[1])))


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _regex(source: str) -> re.Pattern[str]:
    pattern = _REGEX_CACHE.get(source)
    if pattern is None:
        pattern = _REGEX_CACHE[source] = re.compile(source)
    return pattern


def _found(text_lower: str, tokens: frozenset[str], needle: str, anchor: str) -> bool:
    if anchor:
        if anchor not in tokens:
            return False
        if anchor == needle:
            return True  # a bare word that is a whole token sits on word boundaries
    return needle in text_lower


def has_needle(text_lower: str, needle: str) -> bool:
    """Whether `needle` occurs in the lowercased text under the S-9.5 boundary rule."""
    needle = needle.lower()
    return _found(text_lower, tokens_of(text_lower), needle, _anchor(needle))


def _any(cls: str, *needles: str, regex: str = "", hint: str = "") -> NeedleRule:
    low = tuple(n.lower() for n in needles)
    anchors = tuple(map(_anchor, low))
    anchored: dict[str, tuple[str, ...]] = {}
    for needle, anchor in zip(low, anchors, strict=True):
        if anchor and anchor != needle:
            anchored[anchor] = (*anchored.get(anchor, ()), needle)
    return NeedleRule(cls, "any", low, regex, hint, anchors,
                      words=frozenset(n for n, a in zip(low, anchors, strict=True) if a == n),
                      anchored=anchored,
                      plain=tuple(n for n, a in zip(low, anchors, strict=True) if not a))


def _all(cls: str, *needles: str) -> NeedleRule:
    low = tuple(n.lower() for n in needles)
    return NeedleRule(cls, "all", low, anchors=tuple(map(_anchor, low)))


#: Failures of the agent's own tools (edit, patch, guard).  They are checked before anything else:
#: their wording is specific and their payload (the old_str, the patch) may contain any code.
AGENT_RULES: tuple[NeedleRule, ...] = (
    _any("out_of_scope_write", "out-of-scope write blocked", "out-of-scope files_changed",
         "does not edit files at all"),
    _any("edit_line_numbers", "line-number prefix", "line number prefix",
         "still contains ws_read's line-number"),
    _any("edit_empty_old_str", "old_str is empty", "empty old_str", "old_string is empty",
         "empty old_string", "old_str must not be empty", "old_string cannot be empty"),
    _any("edit_noop", "no-op edit refused", "old_str and new_str are identical",
         "old_string and new_string are exactly the same", "old_string and new_string are the same",
         "no changes to make:"),
    _any("edit_ambiguous", "found 3 times", "found multiple times", "is not unique",
         "matches multiple", "multiple occurrences", "matches of the string to replace",
         "replace_all is false", "set replace_all"),
    _all("edit_ambiguous", "old_str", "times in"),
    _all("edit_ambiguous", "old_str", "occurrences"),
    _all("edit_not_found", "old_str", "not found"),
    _all("edit_not_found", "old_string", "not found"),
    # Cline ("The SEARCH block: ... does not match anything in the file"), Gemini CLI's edit
    # tool ("Failed to edit, could not find the string to replace", "Expected N occurrences but
    # found M", "0 occurrences found"; 0.61's `getErrorReplaceResult`: "Could not find an exact
    # match for 'old_string' in '<path>'"), Claude Code ("No replacement was performed"), Cline
    # CLI 3.0.65's editor ("Editor operation failed: No replacement performed: text not found
    # in <path>.", seen from the real binary: tests/fixtures/hooks/cline/*-cli3.json).
    _any("edit_not_found", "does not match anything in the file",
         "could not find the string to replace", "0 occurrences found", "failed to edit, expected",
         "no replacement was performed", "could not find an exact match for 'old_string'",
         "no replacement performed: text not found"),
    # Cline's diff.ts opens that message with the block itself, so a long block can push the
    # "does not match" line past what a clipped error keeps: its first line is enough.
    _any("edit_not_found", regex=r"(?m)^the search block:$", hint="the search block:"),
    _any("edit_not_found", "search block not found", "searchreplace block", "did not match anything",
         "no match found for", "string to replace not found", "did not appear verbatim",
         "failed to exactly match", "searchreplacenoexactmatch", "search/replace block failed",
         # aider: "# 2 SEARCH/REPLACE blocks failed to match!"
         "search/replace blocks failed"),
    _any("file_not_read", "must be read first", "has not been read in this session",
         "read the file first", "file has not been read yet", "modified since read",
         "read it first before writing"),
    # Codex's apply_patch on a file that is not there ("apply_patch verification failed: Failed
    # to read file to update <path>: No such file or directory"): the path, not the hunks.
    _any("file_not_found", "failed to read file to update"),
    _any("patch_failed", "hunk #", "hunk failed", "hunks failed", "invalid hunk", "malformed hunk",
         "hunk ignored", "patch does not apply", "malformed patch", "corrupt patch",
         "can't find file to patch", "patch failed", "failed to apply patch",
         "failed to find expected lines", "apply_patch verification failed", "merge conflict in",
         "automatic merge failed", "no valid patches in input",
         "did not conform to the edit format"),
)

#: The general table (seed rows 11–25, extended), tried after the format recognisers.
NEEDLE_RULES: tuple[NeedleRule, ...] = (
    _any("truncated_output", "max_tokens", "finish_reason: length", "finish_reason=length",
         "response was truncated", "truncated by the token limit", "length limit reached",
         "length limit was reached", "lengthfinishreasonerror",
         regex=r"finish_reason['\"]?\s*[:=]\s*['\"]length", hint="finish_reason"),
    _any("malformed_json", "unexpected end of json", "invalid character", "cannot unmarshal",
         "json parse error", "expecting ',' delimiter", "unterminated string",
         "failed to parse tool arguments", "invalid json", "jsondecodeerror", "in json at position",
         "expecting property name enclosed in double quotes", "expecting value: line",
         "error parsing tool call arguments", "is not valid json",
         # Claude Code: "InputValidationError: Edit was called with input that could not be
         # parsed as JSON." (anthropics/claude-code issue #85487)
         "could not be parsed as json"),
    _any("context_overflow", "context length exceeded", "maximum context length",
         "context_length_exceeded", "prompt is too long", "too many tokens",
         "reduce the length of the messages", "context window", "exceeds the context",
         "input is too long", "contextwindowexceedederror"),
    _any("rate_limit", "rate limit", "rate_limit_error", "rate_limit_exceeded", "ratelimiterror",
         "ratelimit", "too many requests", "quota exceeded", "exceeded your current quota",
         "insufficient_quota",
         regex=r"(?:error code|status(?: code)?|http(?:/[\d.]+)?|code)\W{0,3}429\b|\b429 too many",
         hint="429"),
    _any("timeout", "context deadline exceeded", "timed out", "timeout", "deadline exceeded",
         "i/o timeout", "timeouterror", "readtimeout", "connecttimeout", "timeoutexpired",
         "etimedout", "apitimeouterror", "timeoutexception"),
    _any("no_progress", "repeated identical tool call", "same tool call", "no progress",
         "loop detected", "already called this tool with the same arguments"),
    # Not a bare "not permitted": pydantic's "Extra inputs are not permitted" is a tool's input
    # refused by its schema, not a permission.
    _any("permission_denied", "permission denied", "is not permitted", "command is not allowed",
         "blocked by permission", "operation not permitted", "refused by the permission", "eacces",
         "permissionerror", "access is denied", "read-only file system", "erofs"),
    _any("dependency_missing", "command not found", "no such command", "modulenotfounderror",
         "cannot find module", "missing go.sum entry", "package not found",
         "executable file not found", "no module named", "no matching distribution found",
         "could not find a version that satisfies", "unable to locate package",
         "classnotfoundexception", "noclassdeffounderror", "err_module_not_found",
         "cannot find implementation or library stub", "is not installed", "not installed",
         "is not recognized as an internal or external command",
         "is not recognized as the name of a cmdlet"),
    # The shell could not parse the command (bash: "unexpected EOF while looking for matching
    # `''", zsh: "parse error near `end'"), ahead of the provider row's bare "eof".
    _any("compile_error", "unexpected eof while looking for matching", "parse error near",
         "unmatched '"),
    _any("compile_error", "syntax error", "undefined:", "undeclared name", "cannot use",
         "declared and not used", "expected declaration", "compilation failed", "compile error",
         "cannot find package", "type error", "does not implement", "syntaxerror",
         "indentationerror", "taberror", "unexpected indent", "unindent does not match",
         "nameerror", "is not defined", "undeclared", "undefined reference", "cannot find symbol",
         "cannot find value", "cannot find name", "mismatched types", "incompatible types",
         "referenceerror", "unresolved import",
         # A checker's summary (biome, tsc, eslint: "Found 10 errors.").
         regex=r"\bfound \d+ errors?\b", hint="found "),
    # Connection failures come before review_rejected: "Max retries exceeded with url" is HTTP.
    _any("provider_error", "connection refused", "econnrefused", "max retries exceeded with url",
         "failed to connect to", "could not resolve host", "network is unreachable",
         "getaddrinfo", "enotfound", "socket hang up", "ssl certificate problem",
         "failed to establish a new connection", "connection reset", "econnreset", "fetch failed",
         # aider's /web and URL scraping: "Failed to retrieve content from http://…".
         "failed to retrieve content from http",
         "name or service not known", "temporary failure in name resolution"),
    _any("review_rejected", "review rejected", "max retries", "reviewer rejected"),
    _any("test_failure", "--- fail", "=== fail", "assertionerror", "test failed", "tests failed",
         "failed tests/", "assert ", "e   assert", "assertion failed"),
    _any("lint_error", "golangci-lint", "ruff", "eslint", "flake8", "lint error", "vet:", "pylint"),
    _any("file_not_found", "no such file or directory", "file does not exist",
         "cannot find the file", "enoent", "filenotfounderror", "did not match any file(s) known to git",
         "no such file", "unknown revision or path not in the working tree",
         "file not found", "directory not found", "path not found", "could not find file",
         "cannot find the path specified", "did not match any files", "no such directory",
         # Claude Code's Grep/Glob: "Path does not exist: <path>. Note: your current working
         # directory is …" (the 2.1 bundle).
         "path does not exist"),
    # OpenHands' editor: "Invalid `path` parameter: /a. The path /a does not exist."
    _all("file_not_found", "the path", "does not exist"),
    # Whatever is named, a thing that is not there (git's "path 'x' does not exist in 'rev'",
    # aider's "Read-only file x does not exist"): after every row whose words are more specific.
    _any("file_not_found", "does not exist"),
    _any("provider_error", "internal server error", "502 bad gateway", "503 service unavailable",
         "eof", "upstream error", "api error", "unauthorized", "invalid api key",
         "incorrect api key", "invalid_api_key", "authentication_error", "overloaded",
         "service unavailable", "bad gateway", "try pulling it first", "apiconnectionerror"),
    _any("runtime_error", "segmentation fault", "core dumped", "panicked at", "unbound variable",
         "exception in thread", "uncaught exception", "unhandled promise rejection",
         "stack overflow", "nullpointerexception", "zerodivisionerror", "keyerror", "indexerror"),
    _any("tool_args", "is required", "missing required", "unknown argument", "invalid argument",
         "unexpected field"),
)

_AGENT_TABLE = RuleTable(AGENT_RULES)
_NEEDLE_TABLE = RuleTable(NEEDLE_RULES, index_tokens=True)


def agent_class(text_lower: str) -> str:
    """The class of an agent-tool failure (edit, patch, guard), or ""."""
    return _AGENT_TABLE.first(text_lower)


def needle_class(text_lower: str) -> str:
    """The class named by the general needle table, or ""."""
    return _NEEDLE_TABLE.first(text_lower)


# Exception names whose class does not depend on their message.
_STRONG_EXCEPTIONS = {
    **dict.fromkeys(("nameerror", "unboundlocalerror", "syntaxerror", "indentationerror",
                     "taberror", "referenceerror"), "compile_error"),
    # ImportError: the environment does not provide what the code imports (a package that is
    # missing, or a version without the name: "cannot import name X from Y").
    **dict.fromkeys(("modulenotfounderror", "importerror", "classnotfoundexception",
                     "noclassdeffounderror"), "dependency_missing"),
    **dict.fromkeys(("filenotfounderror", "nosuchfileexception", "filenotfoundexception"),
                    "file_not_found"),
    **dict.fromkeys(("permissionerror", "accessdeniedexception", "securityexception"),
                    "permission_denied"),
    **dict.fromkeys(("jsondecodeerror", "jsonexception", "jsonparseexception"), "malformed_json"),
    **dict.fromkeys(("timeouterror", "timeoutexpired", "readtimeout", "connecttimeout",
                     "writetimeout", "pooltimeout", "apitimeouterror", "timeoutexception",
                     "sockettimeoutexception", "timeout"), "timeout"),
    "ratelimiterror": "rate_limit",
    "contextwindowexceedederror": "context_overflow",
    **dict.fromkeys(("internalservererror", "authenticationerror", "apiconnectionerror",
                     "serviceunavailableerror", "overloadederror", "apistatuserror"),
                    "provider_error"),
    "assertionerror": "test_failure",
    **dict.fromkeys(("keyerror", "indexerror", "zerodivisionerror", "attributeerror",
                     "recursionerror", "overflowerror", "memoryerror", "stopiteration",
                     "unicodedecodeerror", "unicodeencodeerror", "rangeerror",
                     "nullpointerexception", "arithmeticexception",
                     "arrayindexoutofboundsexception", "indexoutofboundsexception",
                     "classcastexception", "illegalargumentexception", "illegalstateexception",
                     "numberformatexception", "concurrentmodificationexception"),
                    "runtime_error"),
}
# Exception names too generic to decide alone: the message's needles decide, else this default.
_WEAK_EXCEPTIONS = {
    **dict.fromkeys(("connectionerror", "connecterror", "connectionrefusederror", "urlerror",
                     "httperror", "httpstatuserror", "badrequesterror", "responseerror",
                     "apierror", "remotedisconnected"), "provider_error"),
}


def exception_class(name: str, line_lower: str) -> str:
    """Class of an exception `name` (dotted or short) whose printed line is `line_lower`."""
    short = name.rsplit(".", 1)[-1].lower()
    strong = _STRONG_EXCEPTIONS.get(short)
    if strong == "compile_error" and short == "syntaxerror" and "json" in line_lower:
        return "malformed_json"
    if strong:
        return strong
    return needle_class(line_lower) or _WEAK_EXCEPTIONS.get(short, "runtime_error")


#: Connection failures to a service (checked on provider errors to canonicalise their salient text).
CONNECTION_FAILURE = re.compile(
    r"connection refused|econnrefused|failed to establish a new connection|connection reset|"
    r"econnreset|name or service not known|temporary failure in name resolution")


def is_wrapper_exception(name: str) -> bool:
    """Generic exception names that only wrap a message (`Error`, `ResponseError`, ...)."""
    short = name.rsplit(".", 1)[-1].lower()
    return short in _WEAK_EXCEPTIONS or short in {"error", "exception", "runtimeerror"}


def is_exception_name(name: str) -> bool:
    """Whether a capitalised token looks like an exception type name."""
    short = name.rsplit(".", 1)[-1]
    low = short.lower()
    return (low in _STRONG_EXCEPTIONS or low in _WEAK_EXCEPTIONS
            or short.endswith(("Error", "Exception", "Exit", "Interrupt", "Expired", "Timeout",
                               "Warning", "Fault", "Failure")))
