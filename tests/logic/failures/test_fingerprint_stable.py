"""Fingerprints never change by accident: every output is pinned to a golden file.

`FINGERPRINT_VERSION` promises that one message always gets one fingerprint; a speed-up or a
refactoring of `normalize`/`classify`/`diagnose`/`fingerprint` that changes a single byte of an
`id`, `class`, `norm` or `salient` would silently regroup stored failures.  The golden file was
generated from the algorithm as it was before any performance work and holds:

* `corpus`: id, class, norm and salient of every message of `tests/fixtures/failures/corpus.jsonl`
  (with its tool, language and model), in full, so a failure shows what changed;
* `derived`: a SHA-256 digest of the same four fields for ~3k inputs derived deterministically from
  the corpus — every distinct line on its own, the upper-cased message, CRLF line endings, pairs of
  lines, and random windows cut anywhere (mid-path, mid-quote, mid-number).  These reach the
  one-line fast paths and the half-tokens that cheap guards in front of regexes could get wrong.

Regenerate ONLY together with a `FINGERPRINT_VERSION` bump (an intended change of the algorithm):

    .venv/bin/python -m tests.logic.failures.test_fingerprint_stable --write
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slmactor.logic.failures.fingerprint import FINGERPRINT_VERSION, Fingerprint, analyze

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "failures"
CORPUS = FIXTURES / "corpus.jsonl"
GOLDEN = FIXTURES / "fingerprint_golden.json"
#: Seed of the derived inputs; part of the golden file's meaning, never change it alone.
DERIVED_SEED = 20261129
WINDOWS_PER_MESSAGE = 4


def _load() -> list[dict[str, Any]]:
    with CORPUS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _fields(fp: Fingerprint) -> dict[str, str]:
    return {"id": fp.id, "class": fp.cls, "norm": fp.norm, "salient": fp.salient}


def _digest(fp: Fingerprint) -> str:
    blob = json.dumps(_fields(fp), ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def derived_inputs(records: list[dict[str, Any]]) -> Iterator[tuple[str, str, str, str, str]]:
    """(name, tool, message, language, model) of every derived input, in a fixed order.

    Only `Random.random()` is used (its sequence is guaranteed across Python versions; `randrange`
    and `choice` are not).
    """
    rng = random.Random(DERIVED_SEED)
    seen: set[str] = set()
    for i, rec in enumerate(records):
        tool, msg, lang, model = rec["tool"], rec["message"], rec["language"], rec["model"]
        yield f"upper/{i}", tool, msg.upper(), lang, model
        yield f"crlf/{i}", tool, msg.replace("\n", "\r\n"), lang, model
        lines = [line for line in msg.splitlines() if line.strip()]
        for j, line in enumerate(lines):
            if line not in seen:
                seen.add(line)
                yield f"line/{i}/{j}", "tool", line, "", ""
            if j + 1 < len(lines):
                yield f"pair/{i}/{j}", tool, f"{line}\n{lines[j + 1]}", lang, ""
        for k in range(WINDOWS_PER_MESSAGE):
            start = int(rng.random() * len(msg))
            length = 1 + int(rng.random() * min(400, len(msg)))
            yield f"window/{i}/{k}", tool, msg[start:start + length], lang, model


def compute() -> dict[str, Any]:
    records = _load()
    corpus = [_fields(analyze(r["tool"], r["message"], r["language"], r["model"]))
              for r in records]
    derived = {name: _digest(analyze(tool, msg, lang, model))
               for name, tool, msg, lang, model in derived_inputs(records)}
    return {"version": FINGERPRINT_VERSION, "corpus": corpus, "derived": derived}


def test_golden_file_matches_the_current_corpus() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert golden["version"] == FINGERPRINT_VERSION
    assert len(golden["corpus"]) == len(_load()), "corpus changed: regenerate with a version bump"


def test_every_corpus_fingerprint_is_byte_identical_to_the_golden_file() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    records = _load()
    changed = []
    for i, (rec, want) in enumerate(zip(records, golden["corpus"], strict=True)):
        got = _fields(analyze(rec["tool"], rec["message"], rec["language"], rec["model"]))
        if got != want:
            diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
            changed.append(f"{i} {rec['bug']} v{rec['variant']}: {diff}")
    assert not changed, "\n".join(changed[:20])


def test_every_derived_fingerprint_is_byte_identical_to_the_golden_file() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["derived"]
    changed = []
    count = 0
    for name, tool, msg, lang, model in derived_inputs(_load()):
        count += 1
        fp = analyze(tool, msg, lang, model)
        if golden.get(name) != _digest(fp):
            changed.append(f"{name}: {msg[:120]!r} -> {_fields(fp)}")
    assert count == len(golden) > 2000
    assert not changed, f"{len(changed)} changed:\n" + "\n".join(changed[:20])


def test_a_changed_output_would_be_caught() -> None:
    # The digest covers every pinned field: one byte more in any of them changes it.
    fp = analyze("python", "NameError: name 'alpha' is not defined", "python")
    for field in ("id", "cls", "norm", "salient"):
        other = Fingerprint(**{**{f: getattr(fp, f) for f in Fingerprint.__slots__},
                               field: getattr(fp, field) + "x"})
        assert _digest(other) != _digest(fp)


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python -m tests.logic.failures.test_fingerprint_stable --write")
    GOLDEN.write_text(json.dumps(compute(), ensure_ascii=False, indent=0, sort_keys=False) + "\n",
                      encoding="utf-8")
    print(f"wrote {GOLDEN}")
