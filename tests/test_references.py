"""Every reference in the repository resolves inside it.

Code, tests and docs cite behaviour ids (`SPEC S-3.7`, `C-10`, `H-S-20`, `RELIABILITY T14`,
`RELIABILITY (b) 3`); each must be described in `docs/SPEC.md`, so a reader who clones the
repository can follow every citation. No file names another machine's paths or documents that
live outside the repository.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "docs" / "SPEC.md"
#: where citations are looked for
SCANNED = ("slmactor", "tests", "bench", "clients", "docs", "deploy", "README.md", ".ci")
TEXT_SUFFIXES = {".py", ".md", ".toml", ".service", ".socket", ".plist", ".sh", ".ts", ".js", ""}

SPEC_ID = re.compile(r"(?<![\w-])(H-[SC]-\d+|[SC]-\d+(?:\.\d+)?)(?![\w.-]*\w)")
RELIABILITY_TEST = re.compile(r"RELIABILITY T(\d+)")
RELIABILITY_RULE = re.compile(r"RELIABILITY \(b\) ((?:\d+(?:, | and )?)+)")
OUTSIDE_DOCS = re.compile(
    r"(?:ARCHITECTURE|INTEGRATIONS|FINDINGS|PERFORMANCE|STYLE|RELIABILITY)\.md"
    r"|shared/(?:spec|design|seeds)"
)
MACHINE_PATHS = re.compile(r"(?<![\w.])/(?:work|root)/[\w.-]+")  # this workplace's own paths


def _tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *SCANNED],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    me = Path(__file__).resolve()
    return [
        REPO / name for name in listed
        if name and (REPO / name).is_file() and (REPO / name).suffix in TEXT_SUFFIXES
        and (REPO / name).resolve() != me and "fixtures" not in Path(name).parts
    ]


def _defined_ids() -> set[str]:
    text = CATALOGUE.read_text()
    ids = set(re.findall(r"^(?:###|\*) ((?:H-[SC]-|[SC]-)\d+(?:\.\d+)?)\b", text, flags=re.MULTILINE))
    ids |= {f"T{n}" for n in re.findall(r"^\| T(\d+) \|", text, flags=re.MULTILINE)}
    section = text.split("## 7. File-store write rules", 1)[1].split("\n## ", 1)[0]
    ids |= {f"(b) {n}" for n in re.findall(r"^(\d+)\. ", section, flags=re.MULTILINE)}
    return ids


def _cited() -> dict[str, set[str]]:
    cited: dict[str, set[str]] = {}
    for path in _tracked_files():
        if path == CATALOGUE:
            continue
        text = path.read_text(errors="replace")
        found = set(SPEC_ID.findall(text))
        found |= {f"T{n}" for n in RELIABILITY_TEST.findall(text)}
        for group in RELIABILITY_RULE.findall(text):
            found |= {f"(b) {n}" for n in re.findall(r"\d+", group)}
        for ident in found:
            cited.setdefault(ident, set()).add(str(path.relative_to(REPO)))
    return cited


def test_the_catalogue_defines_the_ids_it_is_known_for() -> None:
    defined = _defined_ids()
    assert {"S-3.7", "S-14.1", "C-10", "H-S-20", "H-C-1", "T14", "(b) 3"} <= defined


def test_every_cited_behaviour_id_is_described_in_docs() -> None:
    defined = _defined_ids()
    missing = {ident: sorted(files)[:3] for ident, files in _cited().items() if ident not in defined}
    assert missing == {}, f"add these ids to docs/SPEC.md (or drop the citation): {missing}"


@pytest.mark.parametrize("pattern", [OUTSIDE_DOCS, MACHINE_PATHS], ids=["outside-docs", "machine-paths"])
def test_no_file_points_outside_the_repository(pattern: re.Pattern[str]) -> None:
    offences = []
    for path in _tracked_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                offences.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert offences == []


ISSUE_CITATION = re.compile(r"\b[Ii]ssues? #?\d+")


def test_module_docstrings_say_what_a_module_owns_not_which_issue_brought_it() -> None:
    # An issue number tells a reader of the repository nothing they can look up.
    import ast

    offences = []
    for path in sorted((REPO / "slmactor").rglob("*.py")) + sorted((REPO / "bench").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(), filename=str(path))) or ""
        offences.extend(f"{path.relative_to(REPO)}: {m.group(0)}" for m in ISSUE_CITATION.finditer(doc))
    assert offences == []
