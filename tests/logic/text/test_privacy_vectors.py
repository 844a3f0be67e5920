"""clients/privacy-vectors.json: cases of the private/exclude rules that every client's door
passes (the Node client's test reads the same file). This test keeps the file true to the
Python rules; `python tests/logic/text/test_privacy_vectors.py` rewrites it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from slmactor.logic.text.private import Excluder, parse_patterns, scrub, strip_private
from slmactor.privacy import withheld

VECTORS = Path(__file__).resolve().parents[3] / "clients" / "privacy-vectors.json"
ROOT = "/repo"
PATTERNS = "# team secrets\nsecrets/\n*.pem\nconfig/prod/*.yml\n.env\n"
TEXTS = [
    "use <private>hunter2</private> here",
    "a <PRIVATE>x</Private> b <private>y</private>",
    "multi <private>line\nsecret\n</private> end",
    "open <private>rest of it",
    '{"command": "echo <private>a \\"b\\" c", "x": 1}',
    '["<private>one</private>", "two"]',
    "nothing private <priv> here",
]
PATHS = ["secrets/db.txt", "/repo/secrets/deep/a.txt", "./secrets/db.txt:12", "keys/server.pem",
         "config/prod/app.yml", "config/dev/app.yml", "src/secretsauce.py", "/repo", ".env",
         "app/.env", "/elsewhere/.env", "file:///repo/secrets/x", "~/secrets/k"]
BODIES: list[tuple[str, dict[str, Any]]] = [
    ("record_tool", {"run_id": "r", "tool": "Read", "path": "secrets/k", "ok": True}),
    ("record_tool", {"run_id": "r", "tool": "Bash", "command": "ls <private>x</private>"}),
    ("run.finish", {"report": {"calls": [{"tool": "Read", "args": '{"file_path": "/repo/secrets/k"}'},
                                         {"tool": "Bash", "args": '{"command": "ls src"}'}],
                               "summary": "read secrets/k and fixed <private>it</private>"}}),
    ("fact.observe", {"kind": "gotcha", "subject": "keys", "text": "keys live in server.pem"}),
]


def compute() -> dict[str, Any]:
    excluder = Excluder(ROOT, parse_patterns(PATTERNS))
    return {
        "root": ROOT,
        "patterns": PATTERNS,
        "parsed": list(parse_patterns(PATTERNS)),
        "strip": [{"in": t, "out": strip_private(t)} for t in TEXTS],
        "excludes": [{"path": p, "excluded": excluder.excludes(p)} for p in PATHS],
        "scrub": [{"in": "cat secrets/a.txt && ls src ./x.pem",
                   "out": excluder.scrub("cat secrets/a.txt && ls src ./x.pem")}],
        "withheld": [{"kind": k, "in": b, "out": withheld(k, b, excluder)} for k, b in BODIES],
        "scrub_body": [{"in": b, "out": scrub(b, excluder)} for _, b in BODIES],
    }


def test_the_vectors_are_the_python_rules() -> None:
    assert json.loads(VECTORS.read_text()) == compute()


if __name__ == "__main__":
    VECTORS.write_text(json.dumps(compute(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {VECTORS}", file=sys.stderr)
