"""How well the failure pipeline reads real failed tool calls, against their labels.

Over `tests/fixtures/real_failures/dev.jsonl` (with `--heldout`, `heldout.jsonl` — measure there,
never tune on it; with `--heldout2`, `heldout2.jsonl`, measured once and a second tuning set
since: that folder's README), every failure is fingerprinted as the daemon does it:
`analyze(tool, error, command=<its shell command>, family=harnesses.tool_family(tool))`, and
compared with its label (the labelling rules are in that folder's README):

1. **class agreement**: the class, folded to the label's vocabulary by `KIND_OF`, equals the
   label's `kind` (target >= 90 %); `tool_misuse` rows also compare the misuse (`detail`).
2. **the same failure, the same fingerprint**: over every pair of failures that are *the same
   failure* — the same label kind (and misuse), the same tool family (the tool's name when no
   room knows it), and the same *error head* (the first line of the unwrapped text that is not a
   stack frame, banner or source echo, normalised: `head()` below) — the share with equal
   fingerprint ids (target >= 95 %).
3. **different kinds apart**: over every pair of failures whose label kinds differ, the share
   with different ids (target >= 99.5 %).
4. **not a failure recognised**: the share of `benign` rows fingerprinted benign (target >= 80 %),
   and the share of real failures called benign (target <= 2 %).
5. per-kind rows: how many, how many agree, and what the others were classed as.

    .venv/bin/python -m bench real [--heldout | --heldout2 | --tuned] [--json FILE]
    .venv/bin/python bench/bench_real.py [--heldout | --heldout2 | --tuned]      (the report and one JSON row per line)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from slmactor import harnesses
from slmactor.logic.failures.fingerprint import Fingerprint, analyze
from slmactor.logic.failures.normalize import normalize, prepare
from slmactor.logic.failures.unwrap import unwrap

Row = dict[str, Any]
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "real_failures"
DEV = FIXTURES / "dev.jsonl"
HELDOUT = FIXTURES / "heldout.jsonl"
#: Gathered after the classifier was tuned on DEV and measured on HELD-OUT (see the README).
HELDOUT2 = FIXTURES / "heldout2.jsonl"
#: Each split's labelled files; `tuned` is every file the classifier was tuned on.
SPLITS: dict[str, tuple[Path, ...]] = {"dev": (DEV,), "heldout": (HELDOUT,),
                                       "heldout2": (HELDOUT2,), "tuned": (DEV, HELDOUT2)}


def add_split_options(parser: argparse.ArgumentParser) -> None:
    """`--heldout` / `--heldout2` / `--tuned`: which labelled files a bench of the real sessions
    reads."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--heldout", action="store_true", help="measure on heldout.jsonl")
    which.add_argument("--heldout2", action="store_true", help="measure on heldout2.jsonl")
    which.add_argument("--tuned", action="store_true",
                       help="measure on every file tuned on (dev.jsonl and heldout2.jsonl)")


def split_of(args: argparse.Namespace) -> str:
    """The split `add_split_options` parsed: tuned, heldout2, heldout, else dev."""
    return ("tuned" if args.tuned else "heldout2" if args.heldout2
            else "heldout" if args.heldout else "dev")


def load_split(split: str) -> list[Row]:
    """The labelled failures of `split`, file after file."""
    return [row for path in SPLITS[split] for row in load(path)]


#: Our class → the label vocabulary's kind. The seed's finer classes fold into the corpus's
#: coarser kinds (an edit tool's "read it first" or "found 2 matches" are misuses of the tool;
#: a patch that does not apply is edit text not found; a missing file is a missing path; an
#: edit that would change nothing is none of the corpus's kinds).
KIND_OF: dict[str, str] = {
    "edit_not_found": "edit_text_not_found", "patch_failed": "edit_text_not_found",
    "edit_line_numbers": "edit_text_not_found", "edit_ambiguous": "tool_misuse",
    "edit_empty_old_str": "tool_misuse", "edit_noop": "other", "file_not_read": "tool_misuse",
    "tool_args": "tool_misuse", "file_not_found": "path_not_found",
    "dependency_missing": "missing_module", "provider_error": "network_error",
    "rate_limit": "service_exhausted", "lint_error": "compile_error",
    "malformed_json": "format_rejected", "truncated_output": "output_too_large",
    "out_of_scope_write": "policy_denied", "unknown": "other", "context_overflow": "other",
    "no_progress": "other", "review_rejected": "other", "server_no_return": "timeout",
}


def kind_of(cls: str) -> str:
    """The label kind a class stands for."""
    return KIND_OF.get(cls, cls)


def load(path: Path) -> list[Row]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def command_of(row: Row) -> str:
    args = row.get("args")
    if not isinstance(args, dict):
        return ""
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return ""


def family_of(tool: str) -> str:
    return harnesses.tool_family(tool) or tool.strip().lower()


def fingerprint(row: Row) -> Fingerprint:
    """The fingerprint the daemon gives this failure."""
    tool = str(row.get("tool") or "")
    return analyze(tool, str(row.get("error") or ""), command=command_of(row),
                   family=harnesses.tool_family(tool))


#: The `go` command's header before a package's compiler or vet output: `# <import path>`, with
#: ` [<path>.test]` for a test build. Every failure of that package starts with it, so it names
#: the package, not the failure.
_GO_PACKAGE_HEADER = re.compile(r"# [\w.~/-]+(?: \[[\w.~/-]+\])?\s*")


#: Lines a build runs before it says anything of the failure: cargo's progress (`Checking x
#: v0.1.0 (…)`), npm/pnpm's script header and its echo of the command (`> app@1.0.0 build`,
#: `> vite build`), a runner's echo of the command it starts (`$ biome check .`). They name the
#: package and the script, so every failure of that build would otherwise be "the same".
_BUILD_BANNER = re.compile(r"\s*(?:(?:Compiling|Checking|Downloaded|Downloading|Updating|Locking|"
                           r"Fresh|Documenting) \S+ v\d\S*.*|> .+|\$ .+)")


def head(error: str) -> str:
    """The error head: the first line of the unwrapped text that is not noise (nor the `go`
    command's package header, nor a build's banner), normalised."""
    lines = [line for line in prepare(unwrap(error).text).lines
             if not _GO_PACKAGE_HEADER.fullmatch(line) and not _BUILD_BANNER.fullmatch(line)]
    return normalize(lines[0]) if lines else ""


@dataclass(frozen=True, slots=True)
class Scored:
    row: Row
    fp: Fingerprint

    @property
    def kind(self) -> str:
        return str(self.row.get("kind"))

    @property
    def label(self) -> tuple[str, str]:
        return self.kind, str(self.row.get("misuse") or "")

    @property
    def agrees(self) -> bool:
        return kind_of(self.fp.cls) == self.kind

    @property
    def same_key(self) -> tuple[str, str, str, str]:
        return (*self.label, family_of(str(self.row.get("tool") or "")),
                head(str(self.row.get("error") or "")))


def score(rows: list[Row]) -> dict[str, Any]:
    scored = [Scored(row, fingerprint(row)) for row in rows]
    agree = sum(s.agrees for s in scored)
    misuse_rows = [s for s in scored if s.kind == "tool_misuse" and s.fp.cls == "tool_misuse"]
    misuse_agree = sum(s.fp.detail == (s.row.get("misuse") or "") for s in misuse_rows)
    groups: dict[tuple[str, str, str, str], list[Scored]] = defaultdict(list)
    for s in scored:
        groups[s.same_key].append(s)
    same_pairs = same_equal = 0
    split: Counter[str] = Counter()
    for members in groups.values():
        for a, b in combinations(members, 2):
            same_pairs += 1
            if a.fp.id == b.fp.id:
                same_equal += 1
            else:
                split[a.kind] += 1
    apart_pairs = apart_equal = 0
    merged: Counter[tuple[str, str]] = Counter()
    for a, b in combinations(scored, 2):
        if a.kind != b.kind:
            apart_pairs += 1
            if a.fp.id == b.fp.id:
                apart_equal += 1
                low, high = sorted((a.kind, b.kind))
                merged[(low, high)] += 1
    benign = [s for s in scored if s.row.get("benign")]
    real = [s for s in scored if not s.row.get("benign")]
    per_kind: dict[str, dict[str, Any]] = {}
    for s in scored:
        entry = per_kind.setdefault(s.kind, {"n": 0, "agree": 0, "as": Counter()})
        entry["n"] += 1
        entry["agree"] += s.agrees
        if not s.agrees:
            entry["as"][s.fp.cls] += 1
    return {
        "n": len(scored), "agree": agree, "misuse_n": len(misuse_rows), "misuse_agree": misuse_agree,
        "same_pairs": same_pairs, "same_equal": same_equal, "split": split,
        "apart_pairs": apart_pairs, "apart_equal": apart_equal, "merged": merged,
        "benign_n": len(benign), "benign_found": sum(s.fp.benign for s in benign),
        "real_n": len(real), "real_benign": sum(s.fp.benign for s in real),
        "per_kind": per_kind, "scored": scored,
    }


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 100.0


def rows_of(result: dict[str, Any], name: str) -> list[Row]:
    r = result
    return [
        {"name": f"{name}: class agreement", "value": _pct(r["agree"], r["n"]), "unit": "%",
         "floor": None, "ratio": None, "target": ">= 90 %", "n": r["n"]},
        {"name": f"{name}: same failure, same fingerprint", "unit": "%",
         "value": _pct(r["same_equal"], r["same_pairs"]), "floor": None, "ratio": None,
         "target": ">= 95 %", "n": r["same_pairs"]},
        {"name": f"{name}: different kinds apart", "unit": "%",
         "value": _pct(r["apart_pairs"] - r["apart_equal"], r["apart_pairs"]), "floor": None,
         "ratio": None, "target": ">= 99.5 %", "n": r["apart_pairs"]},
        {"name": f"{name}: not-a-failure recognised", "unit": "%",
         "value": _pct(r["benign_found"], r["benign_n"]), "floor": None, "ratio": None,
         "target": ">= 80 %", "n": r["benign_n"]},
        {"name": f"{name}: real failures called benign", "unit": "%",
         "value": _pct(r["real_benign"], r["real_n"]), "floor": None, "ratio": None,
         "target": "<= 2 %", "n": r["real_n"]},
        {"name": f"{name}: tool misuse named right", "unit": "%",
         "value": _pct(r["misuse_agree"], r["misuse_n"]), "floor": None, "ratio": None,
         "target": "", "n": r["misuse_n"]},
    ]


def report(result: dict[str, Any], name: str) -> str:
    lines = [f"## {name}: {result['n']} labelled failures", "",
             f"{'kind':<22} {'n':>4} {'agree':>6}  classed otherwise as"]
    for kind, entry in sorted(result["per_kind"].items(), key=lambda kv: -kv[1]["n"]):
        others = ", ".join(f"{cls} {n}" for cls, n in entry["as"].most_common(4))
        lines.append(f"{kind:<22} {entry['n']:>4} {_pct(entry['agree'], entry['n']):>5.0f}%  {others}")
    if result["split"]:
        lines.append("same failures split, by kind: " + ", ".join(
            f"{k} {n}" for k, n in result["split"].most_common(6)))
    if result["merged"]:
        lines.append("different kinds merged: " + ", ".join(
            f"{a}+{b} {n}" for (a, b), n in result["merged"].most_common(6)))
    return "\n".join(lines)


def run(quick: bool = False, split: str = "dev") -> list[Row]:
    result = score(load_split(split))
    print(report(result, split), file=sys.stderr)
    return rows_of(result, split)


def run_args(quick: bool, argv: list[str]) -> list[Row]:
    """`run` with this bench's own options (`--heldout`, `--heldout2`, `--tuned`)."""
    parser = argparse.ArgumentParser(prog="bench real")
    add_split_options(parser)
    return run(quick, split_of(parser.parse_args(argv)))


if __name__ == "__main__":
    for out in run_args(False, sys.argv[1:]):
        print(json.dumps(out))
