"""The carrier corpus (tests/fixtures/carrier_corpus.py) against two well-kept scanners' rule
sets, read from their own sources at run time (nothing of theirs is kept in this repository):

    python -m bench.scanner_compare --gitleaks-toml PATH/config/gitleaks.toml \
        --detect-secrets-python PATH/venv/bin/python [SEED ...]

gitleaks: the default config's rules (`config/gitleaks.toml`), each rule's keyword prefilter,
secret group and entropy threshold, applied with Python's `re` (rules `re` cannot compile are
skipped and counted; rule allowlists are not applied, which can only add to gitleaks' hits).
detect-secrets: its default plugins and filters (`SecretsCollection.scan_file`), each form
written as a file of its carrier's type. A form is caught when a reported secret holds its value
(or 12 characters of it). Prints what each catches, what the redactor catches that they miss and
the look-alikes each flags.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from slmactor.logic.text.redact import redact
from tests.fixtures.carrier_corpus import LOOKALIKES, corpus

#: detect-secrets runs in its own interpreter (it is no dependency of slmactor's).
DS_SCAN = """
import json, os, sys, tempfile
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings
forms = json.load(open(sys.argv[1]))
out = {}
with default_settings():
    d = tempfile.mkdtemp()
    for i, f in enumerate(forms):
        path = os.path.join(d, f"f{i}{f['ext']}")
        open(path, "w").write(f["line"] + "\\n")
        col = SecretsCollection()
        col.scan_file(path)
        out[i] = [s.secret_value for _n, s in col if s.secret_value]
print(json.dumps(out))
"""
_EXT = (("json", ".json"), ("docker config", ".json"), ("yaml", ".yaml"), ("kube", ".yaml"),
        ("toml", ".toml"), ("ini", ".ini"), ("pip.conf", ".conf"), (".pypirc", ".cfg"),
        (".npmrc", ".npmrc"), ("properties", ".properties"), ("xml", ".xml"), ("maven", ".xml"),
        ("env", ".env"), ("laravel", ".env"), (".pgpass", ".pgpass"), (".netrc", ".netrc"),
        ("python", ".py"), ("powershell", ".ps1"))


def _ext(carrier: str) -> str:
    return next((e for key, e in _EXT if key in carrier.lower()), ".sh")


def _entropy(text: str) -> float:
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _gitleaks_rules(path: Path) -> tuple[list[Any], int]:
    rules, skipped = [], 0
    for rule in tomllib.loads(path.read_text())["rules"]:
        if "regex" not in rule:
            continue
        pattern = rule["regex"]
        try:
            compiled = re.compile(pattern)
        except re.error:
            try:  # a global flag written mid-pattern (Go accepts it): move it to the front
                compiled = re.compile("(?i)" + pattern.replace("(?i)", ""))
            except re.error:
                skipped += 1
                continue
        rules.append((rule["id"], compiled, [k.lower() for k in rule.get("keywords", [])],
                      rule.get("entropy"), rule.get("secretGroup")))
    return rules, skipped


def _gitleaks(rules: list[Any], line: str) -> list[tuple[str, str]]:
    low, hits = line.lower(), []
    for rid, compiled, keywords, entropy, group in rules:
        if keywords and not any(k in low for k in keywords):
            continue
        for match in compiled.finditer(line):
            index = group if group else (1 if compiled.groups >= 1 and match.group(1) else 0)
            try:
                secret = match.group(index) or match.group(0)
            except IndexError:
                secret = match.group(0)
            if entropy and _entropy(secret) < entropy:
                continue
            hits.append((rid, secret))
    return hits


def _holds(found: list[str], value: str) -> bool:
    return any(value in s or (len(s) >= 8 and s in value) or (len(value) > 14 and value[:12] in s)
               for s in found)


def _detect_secrets(python: str, items: list[dict[str, str]]) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory() as folder:
        forms, script = Path(folder) / "forms.json", Path(folder) / "scan.py"
        forms.write_text(json.dumps(items))
        script.write_text(DS_SCAN)
        done = subprocess.run([python, str(script), str(forms)], capture_output=True, text=True,
                              check=True)
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gitleaks-toml", type=Path, required=True)
    parser.add_argument("--detect-secrets-python", required=True)
    parser.add_argument("seeds", nargs="*", type=int, default=[1, 2, 3])
    args = parser.parse_args()
    rules, skipped = _gitleaks_rules(args.gitleaks_toml)
    rows = []
    for seed in args.seeds:
        forms = corpus(seed)
        found = _detect_secrets(args.detect_secrets_python,
                                [{"line": f.line, "ext": _ext(f.carrier)} for f in forms])
        for i, form in enumerate(forms):
            shown = redact(form.line)
            ours = form.value not in shown and not (len(form.value) > 14
                                                    and form.value[:12] in shown)
            gl = _holds([s for _r, s in _gitleaks(rules, form.line)], form.value)
            rows.append(((form.carrier, form.name), ours, gl, _holds(found[str(i)], form.value)))
    by: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for key, ours, gl, ds in rows:
        counts = by[key]
        counts[0] += 1
        counts[1] += ours
        counts[2] += gl
        counts[3] += ds
    print(f"gitleaks rules applied: {len(rules)} (skipped {skipped}); "
          f"{len(by)} forms x {len(args.seeds)} draws = {len(rows)}")
    print(f"caught: slmactor {sum(r[1] for r in rows)}, gitleaks {sum(r[2] for r in rows)}, "
          f"detect-secrets {sum(r[3] for r in rows)}")
    gl_set = {k for k, c in by.items() if c[2]}
    ds_set = {k for k, c in by.items() if c[3]}
    print("caught by gitleaks, not by detect-secrets:", sorted(gl_set - ds_set))
    print("caught by detect-secrets, not by gitleaks:", sorted(ds_set - gl_set))
    print("caught by either, missed by slmactor:", sorted(k for k, c in by.items()
                                                          if (c[2] or c[3]) and c[1] < c[0]))
    print("missed by both, caught by slmactor:", len([k for k, c in by.items()
                                                      if not c[2] and not c[3] and c[1]]))
    looks_ds = _detect_secrets(args.detect_secrets_python,
                               [{"line": line, "ext": ".sh"} for line in LOOKALIKES])
    print("look-alikes flagged: gitleaks", [x for x in LOOKALIKES if _gitleaks(rules, x)],
          "detect-secrets", [LOOKALIKES[int(k)] for k, v in looks_ds.items() if v],
          "slmactor", [x for x in LOOKALIKES if redact(x) != x])


if __name__ == "__main__":
    main()
