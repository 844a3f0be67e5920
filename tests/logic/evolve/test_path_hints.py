"""Where a missing path probably is: the path a real program said was missing, the known paths
it most likely meant (right name under another base > one part mistyped > same file name in a
shared folder), the deepest existing folder's entries, and the one line the model reads.

The error texts are real failed tool calls from `tests/fixtures/real_failures/dev.jsonl` (its
README names each source repository and commit); rows are picked by a piece of their text.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve import path_hints as ph

DEV = Path(__file__).resolve().parents[2] / "fixtures" / "real_failures" / "dev.jsonl"


@cache
def _rows() -> tuple[dict[str, Any], ...]:
    with DEV.open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


def real(piece: str) -> dict[str, Any]:
    """The first `path_not_found` row of dev.jsonl whose error text holds `piece`."""
    for row in _rows():
        if row.get("kind") == "path_not_found" and piece in str(row.get("error") or ""):
            return row
    raise AssertionError(f"no path_not_found row in {DEV.name} holds {piece!r}")


def paths(matches: list[ph.Match]) -> list[str]:
    return [m.path for m in matches]


# --- missing_path: the program's own words -------------------------------------------------

@pytest.mark.parametrize(("piece", "expected"), [
    # coreutils-style `prog: PATH: No such file or directory` (sed, grep, ripgrep, BSD ls)
    ("sed: apps/api/app/lib/validation.ts", "apps/api/app/lib/validation.ts"),
    ("grep: src/template/link_test.go", "src/template/link_test.go"),
    ("rg: packages/sdk/src/evaluate.ts", "packages/sdk/src/evaluate.ts"),
    ("ls: /Users/agurodriguez/Code/torre-ca/docs/ui/: No such",
     "/Users/agurodriguez/Code/torre-ca/docs/ui/"),
    # CPython's own
    ("python: can't open file '/testbed/apply_fix_v6.py'", "/testbed/apply_fix_v6.py"),
    # git's quoted forms
    ("fatal: cannot change to '/home/entity",
     "/home/entity/projects/EntityProcess/agentv__worktrees/results-remote-schema"),
    ("fatal: pathspec 'apps/api/src/shares/shares.service.spec.ts'",
     "apps/api/src/shares/shares.service.spec.ts"),
    # GNU coreutils' quoted forms
    ("ls: cannot access 'build/docs/category'", "build/docs/category"),
    ("rm: cannot remove 'test_uuid_none.py'", "test_uuid_none.py"),
    # bash names itself, the line and the builtin before the path
    ("bash: line 1: gemini-slate/installed_packages.txt", "gemini-slate/installed_packages.txt"),
    ("/usr/bin/bash: line 1: cd: src: No such file", "src"),
    # GNU sed's `can't read`
    ("sed: can't read color/gradient_test.go", "color/gradient_test.go"),
    ("sed: can't read /home/entity/.codex/plugins",
     ("/home/entity/.codex/plugins/cache/compound-engineering-plugin/compound-engineering/3.14.3"
      "/skills/references/branch-creation.md")),
    # zsh's glob that matched nothing: the glob is what was not there
    ("no matches found: /Users/michael/Code/cipher-box/.planning/quick/018-*",
     "/Users/michael/Code/cipher-box/.planning/quick/018-*/SUMMARY.md"),
    # ripgrep's IO error
    ("IO error for operation on packages/core/src/providers", "packages/core/src/providers"),
    # Go's os.Open error (docker compose)
    ("open /opt/cipherbox/docker-compose.staging.yml", "/opt/cipherbox/docker-compose.staging.yml"),
    # A Windows path in a tool's `File not found:` message
    ("File not found: C:\\Users\\Mischa", "C:\\Users\\Mischa\\processes_and_services.txt"),
])
def test_missing_path_is_read_from_a_real_programs_message(piece: str, expected: str) -> None:
    assert ph.missing_path(real(piece)["error"]) == expected


def test_clines_json_escaped_windows_path_is_found_and_compares_as_its_parts() -> None:
    # Cline wraps Node's error object as JSON, so the path's backslashes are doubled.
    row = real("[read_file for 'client/src/App.js']")
    found = ph.missing_path(row["error"])
    assert found.startswith("c:\\") and found.endswith("App.js")
    assert ph.is_absolute(found)
    assert ph.parts(found) == ["c:", "users", "jason", "desktop", "tori", "kha", "client", "src",
                               "app.js"]


def test_the_calls_path_argument_wins_over_the_message() -> None:
    row = real("[read_file for 'client/src/App.js']")
    assert ph.missing_path(row["error"], row["args"]["path"]) == "client/src/App.js"
    row = real("sed: can't read color/gradient_test.go")
    assert ph.missing_path(row["error"], "src/color/gradient_test.go") == \
        "src/color/gradient_test.go"


@pytest.mark.parametrize("piece", [
    "<tool_use_error>File does not exist.</tool_use_error>",  # Claude Code's Read: args name it
    "curl: (22) The requested URL returned error: 404",
    "gh: Not Found (HTTP 404)",
])
def test_a_message_without_a_path_gives_nothing(piece: str) -> None:
    assert ph.missing_path(real(piece)["error"]) == ""


def test_a_missing_interpreter_is_not_a_missing_path() -> None:
    # coreutils `env` running a `#!/usr/bin/env bash` script on a PATH without bash prints this
    # (older coreutils, unquoted; quoted in many public repositories' notes on that failure).
    assert ph.missing_path("/usr/bin/env: bash: No such file or directory") == ""
    assert ph.missing_path("env: sh: No such file or directory") == ""


def test_a_path_argument_is_taken_even_when_the_message_names_none() -> None:
    row = real("<tool_use_error>File does not exist.</tool_use_error>")
    assert ph.missing_path(row["error"], row["args"]["file_path"]) == row["args"]["file_path"]


# --- nearest: the three kinds of slip ------------------------------------------------------

ELSEWHERE = "src/pkg/util.py"     # the missing path under another base
TYPO = "pkg/utils.py"             # one part spelled differently
SAME_NAME = "pkg/sub/util.py"     # the same file name, sharing the `pkg` folder


def test_the_same_path_under_another_base_beats_a_typo_beats_the_same_name() -> None:
    missing = "pkg/util.py"
    everything = [SAME_NAME, TYPO, ELSEWHERE, "unrelated/thing.py"]
    best = ph.nearest(missing, everything)
    assert best == [ph.Match(ELSEWHERE, "elsewhere")]
    assert ph.nearest(missing, [SAME_NAME, TYPO]) == [ph.Match(TYPO, "typo")]
    assert ph.nearest(missing, [SAME_NAME, "unrelated/thing.py"]) == \
        [ph.Match(SAME_NAME, "same name")]


def test_a_wrong_extra_base_finds_the_shorter_path() -> None:
    # git's `could not open directory 'apps/api/apps/api/src/shares/'`: run from the wrong folder.
    found = ph.nearest("apps/api/apps/api/src/shares/a.spec.ts", ["apps/api/src/shares/a.spec.ts"])
    assert found == [ph.Match("apps/api/src/shares/a.spec.ts", "elsewhere")]


def test_a_typo_needs_the_same_depth_and_one_alike_part() -> None:
    assert paths(ph.nearest("src/compnents/App.jsx", ["src/components/App.jsx"])) == \
        ["src/components/App.jsx"]
    # Another base and a typo at once: two slips, not guessed.
    assert ph.nearest("lib/src/compnents/App.jsx", ["src/components/App.jsx"]) == []
    # Two parts differ: not one slip.
    assert ph.nearest("src/compnents/Ap.jsx", ["src/components/App.jsx"]) == []
    # One part differs but not alike: no typo, only the same file name in the shared `src`.
    assert ph.nearest("src/views/App.jsx", ["src/components/App.jsx"]) == \
        [ph.Match("src/components/App.jsx", "same name")]
    assert ph.nearest("lib/views/App.jsx", ["src/components/App.jsx"]) == []


def test_a_common_file_name_in_an_unrelated_folder_is_not_suggested() -> None:
    known = ["vendor/lib/README.md", "tools/gen/README.md", "src/main.py"]
    assert ph.nearest("docs/guide/README.md", known) == []
    # ...but it is when it shares a folder with the missing path.
    assert paths(ph.nearest("docs/guide/README.md", known + ["docs/README.md"])) == \
        ["docs/README.md"]


def test_an_absolute_missing_path_is_not_corrected_to_the_same_tail_relative() -> None:
    # `apply_fix_v6.py` relative to /testbed is the very file that is missing.
    assert ph.nearest("/testbed/apply_fix_v6.py", ["apply_fix_v6.py"]) == []
    assert ph.nearest("/testbed/src/a.py", ["src/a.py", "a.py"]) == []
    # An absolute known path is another place, and is suggested.
    assert paths(ph.nearest("/testbed/apply_fix_v6.py", ["/testbed/tools/apply_fix_v6.py"])) == \
        ["/testbed/tools/apply_fix_v6.py"]
    # A relative missing path still finds the longer relative one.
    assert paths(ph.nearest("a.py", ["src/a.py"])) == ["src/a.py"]


def test_windows_paths_compare_like_slash_paths_and_come_back_as_given() -> None:
    # The same path in the other spelling is the missing path itself, not a suggestion.
    assert ph.nearest("client\\src\\App.js", ["client/src/App.js"]) == []
    assert ph.nearest("client/src/App.js", ["CLIENT\\SRC\\app.js"]) == []
    assert ph.nearest("client\\src\\compnents\\AgentPanel.jsx",
                      ["client/src/components/AgentPanel.jsx"]) == \
        [ph.Match("client/src/components/AgentPanel.jsx", "typo")]
    assert ph.nearest("AgentPanel.jsx", ["client\\src\\components\\AgentPanel.jsx"]) == \
        [ph.Match("client\\src\\components\\AgentPanel.jsx", "elsewhere")]


def test_a_case_slip_is_a_slip_and_the_known_spelling_comes_back() -> None:
    assert ph.nearest("Docs/readme.md", ["site/docs/README.md"]) == \
        [ph.Match("site/docs/README.md", "elsewhere")]


def test_at_most_three_matches_and_the_shortest_first() -> None:
    known = [f"{'d' * (i + 1)}/x.py" for i in range(6)]
    found = ph.nearest("x.py", known)
    assert paths(found) == ["d/x.py", "dd/x.py", "ddd/x.py"]
    assert len(ph.nearest("x.py", known, limit=5)) == 5
    assert paths(ph.nearest("x.py", known, limit=1)) == ["d/x.py"]


def test_only_the_closest_typos_are_named() -> None:
    found = ph.nearest("pkg/utill.py", ["pkg/util.py", "pkg/utils_x.py"])
    assert paths(found) == ["pkg/util.py"]


def test_nothing_missing_or_nothing_known_gives_nothing() -> None:
    assert ph.nearest("", ["a/b.py"]) == []
    assert ph.nearest("./", ["a/b.py"]) == []
    assert ph.nearest("a/b.py", []) == []


# --- folder: what the deepest existing folder holds -----------------------------------------

def test_folder_lists_the_deepest_existing_folder_most_alike_first() -> None:
    known = ["src/pkg/views.py", "src/pkg/model.py", "src/pkg/modle.py", "src/other.py",
             "README.md"]
    place = ph.folder("src/pkg/modle.py", known)
    # `modle.py` itself is the path as it was before it went: not listed.
    assert place == ph.Folder("src/pkg", ("src/pkg/model.py", "src/pkg/views.py"), 0)


def test_folder_goes_as_deep_as_a_known_path_reaches() -> None:
    known = ["src/a.py", "src/pkg/b.py", "src/pkg/c/d.py"]
    assert ph.folder("src/pkg/sub/deep/x.py", known) == \
        ph.Folder("src/pkg", ("src/pkg/b.py", "src/pkg/c"), 0)
    # Most alike the missing part (`pkgs`) first.
    assert ph.folder("src/pkgs/x.py", known) == ph.Folder("src", ("src/pkg", "src/a.py"), 0)
    assert ph.folder("src/a/x.py", known) == ph.Folder("src", ("src/a.py", "src/pkg"), 0)


def test_folder_entries_are_spelled_like_the_missing_path() -> None:
    place = ph.folder("/Proj/SRC/x.py", ["/proj/src/Main.py"])
    assert place == ph.Folder("/Proj/SRC", ("/Proj/SRC/Main.py",), 0)
    # Backslashes are read as folders; the listing joins with `/`.
    place = ph.folder("client\\src\\x.js", ["client/src/y.js"])
    assert place is not None and place.entries == ("client/src/y.js",)


def test_folder_counts_what_it_does_not_list() -> None:
    known = [f"lib/mod{i}.py" for i in range(9)]
    place = ph.folder("lib/mod.py", known)
    assert place is not None
    assert len(place.entries) == ph.MAX_LISTING and place.more == 9 - ph.MAX_LISTING
    assert ph.folder("lib/mod.py", known, limit=2) == \
        ph.Folder("lib", ("lib/mod0.py", "lib/mod1.py"), 7)


def test_folder_is_none_when_no_known_path_shares_a_folder() -> None:
    assert ph.folder("src/pkg/x.py", ["lib/a.py", "README.md"]) is None
    assert ph.folder("x.py", ["x.py", "a.py"]) is None  # no folder to list
    assert ph.folder("src/x.py", []) is None


# --- hint: the line the model reads ---------------------------------------------------------

def test_hint_names_the_match_and_the_kind_of_slip() -> None:
    line = ph.hint("pkg/util.py", [ELSEWHERE, TYPO])
    assert line == ("`pkg/util.py` is not there; `src/pkg/util.py` is "
                    "(the same name under another folder).")
    line = ph.hint("x.py", ["a/x.py", "b/x.py"])
    assert "`a/x.py`, `b/x.py` are" in line
    assert "one part spelled differently" in ph.hint("pkg/utill.py", ["pkg/util.py"])


def test_hint_falls_back_to_what_the_folder_holds() -> None:
    line = ph.hint("src/pkg/gone.py", ["src/pkg/a.py", "src/pkg/b.py"])
    assert line == "`src/pkg/gone.py` is not there; `src/pkg` holds `src/pkg/a.py`, `src/pkg/b.py`."


def test_hint_caps_a_long_folder_listing_and_counts_the_rest() -> None:
    names = [f"src/{chr(ord('a') + i) * 150}.py" for i in range(10)]
    line = ph.hint("src/missing.py", names)
    listed = line.count("`src/") - 1  # one of them is the base folder `src`
    assert 0 < listed < 10
    assert line.endswith(f" and {10 - listed} more.")
    assert len(line) <= ph.MAX_HINT + len(" and 10 more.")


def test_hint_lists_one_entry_even_when_it_alone_is_longer_than_the_cap() -> None:
    long = ["src/" + c * (ph.MAX_HINT * 2) + ".py" for c in "ab"]
    line = ph.hint("src/missing.py", long)
    assert f"`{long[0]}`" in line and long[1] not in line and line.endswith(" and 1 more.")


def test_hint_is_empty_when_nothing_is_near() -> None:
    assert ph.hint("src/pkg/x.py", ["lib/a.py"]) == ""
    assert ph.hint("src/pkg/x.py", []) == ""


# --- properties -----------------------------------------------------------------------------

_part = st.sampled_from(["src", "Src", "pkg", "a.py", "A.py", "b.py", "utils", "util", "x", ".",
                         "README.md", "readme.md"])
_sep = st.sampled_from(["/", "\\"])
_lead = st.sampled_from(["", "/", "C:\\", "~/", "./"])


@st.composite
def _paths(draw: st.DrawFn) -> str:
    items = draw(st.lists(_part, min_size=0, max_size=5))
    return draw(_lead) + draw(_sep).join(items)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(missing=_paths(), known=st.lists(_paths(), max_size=12), limit=st.integers(0, 5))
def test_nearest_returns_known_paths_never_the_missing_one_at_most_limit(
        missing: str, known: list[str], limit: int) -> None:
    found = ph.nearest(missing, known, limit)
    assert len(found) <= limit
    assert all(m.path in known for m in found)
    assert all(ph.parts(m.path) != ph.parts(missing) for m in found)
    assert len({tuple(ph.parts(m.path)) for m in found}) == len(found)
    assert all(m.why in ("elsewhere", "typo", "same name") for m in found)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(missing=_paths(), known=st.lists(_paths(), max_size=12))
def test_folder_lists_only_places_below_the_missing_paths_folders(
        missing: str, known: list[str]) -> None:
    place = ph.folder(missing, known)
    if place is None:
        return
    base = ph.parts(place.path)
    assert base and base == ph.parts(missing)[:len(base)]
    for entry in place.entries:
        got = ph.parts(entry)
        assert got[:len(base)] == base and len(got) == len(base) + 1
        assert got != ph.parts(missing)[:len(got)]  # never the missing part itself


@settings(derandomize=True, max_examples=300, deadline=None)
@given(missing=st.text(max_size=80), known=st.lists(st.text(max_size=40), max_size=8))
def test_hint_never_raises_and_is_empty_without_known_paths(missing: str, known: list[str]) -> None:
    assert isinstance(ph.hint(missing, known), str)
    assert ph.hint(missing, []) == ""


@settings(derandomize=True, max_examples=400, deadline=None)
@given(error=st.text(max_size=300))
def test_missing_path_never_raises_and_takes_only_text_of_the_message(error: str) -> None:
    found = ph.missing_path(error)
    assert found == "" or found in error
    assert ph.missing_path(error, "given/path.py") == "given/path.py"


_plain = st.text(st.sampled_from("abc XYZ 019\n"), max_size=60)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(before=_plain, after=_plain)
def test_a_real_message_among_other_output_still_names_its_path(before: str, after: str) -> None:
    error = real("sed: can't read color/gradient_test.go")["error"]
    assert ph.missing_path(f"{before}\n{error}\n{after}") == "color/gradient_test.go"
