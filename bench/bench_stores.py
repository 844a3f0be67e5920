"""Store-primitive benchmark: what the safety of `JsonlLog` / `JsonDoc` costs
next to the bare system calls it is built on, measured in the same run on the same file system.

* JSONL append of a ~200-byte record (a typical episode line): `JsonlLog.append` (redaction on,
  and off) vs the same `json.dumps` + one `os.write` on an O_APPEND descriptor. The difference
  is redaction + the fstat/stat identity checks before and after each write.
* durable append (`fsync=True`) vs the same + `os.fdatasync`;
* atomic ~116 KB document save vs the same `json.dumps` + a hand-written mkstemp → write → fsync
  → rename → fsync(dir);
* scanning 10,000 records vs a bare readline + `json.loads` loop;
* redacting 1 MiB of realistic text (code, logs, ~2 % lines with a secret): CPU ms, target
  < 200 ms (RELIABILITY T14).

    .venv/bin/python -m bench stores [--quick]
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slmactor.logic.text.redact import redact
from slmactor.stores import JsonDoc, JsonlLog, WarningLog

Row = dict[str, Any]

RECORD: dict[str, Any] = {
    "id": "ep_3f2a9c1e8b7d",
    "at": "2026-11-29T22:00:00Z",
    "task": "fix the flaky retry in the HTTP client",
    "outcome": "success",
    "files": ["pkg/http/client.go", "pkg/http/retry_test.go"],
    "tags": ["go", "http"],
    "tokens": 1834,
}

TEXT_LINES = [
    "def get_token(self) -> str:",
    "    tokens = self.tokenizer(text, max_tokens=4096)",
    "   Compiling serde v1.0.188",
    "tests/test_auth.py::test_token_refresh PASSED                            [ 12%]",
    "E       AssertionError: assert 'expired' == 'valid'",
    "+    def check(self, token: str) -> bool:",
    "npm WARN deprecated request@2.88.2: request has been deprecated",
    "    api_key = settings.api_key",
    "error[E0308]: mismatched types --> src/main.rs:14:5",
    "export API_KEY=$API_KEY",
]
SECRET_LINES = [
    "Error: 401 for token ghp_Ab3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv3Wx4Y",
    "DB_PASSWORD=hunter2hunter2",
    "curl -H 'Authorization: Bearer abc123def456ghi789jkl'",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
]


def _row(name: str, value: float, unit: str, floor: float | None, floor_name: str,
         target: str) -> Row:  # fmt: skip
    ratio = value / floor if floor else None
    return {"name": name, "value": value, "unit": unit, "floor": floor, "floor_name": floor_name,
            "ratio": ratio, "target": target}  # fmt: skip


def _per_op_us(loop: Callable[[], int], repeats: int) -> float:
    """Median over `repeats` runs of (loop time / operations it performed), in µs."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        operations = loop()
        samples.append((time.perf_counter() - start) / operations * 1e6)
    return statistics.median(samples)


def _raw_append(path: Path, n: int, sync: bool) -> Callable[[], int]:
    """The floor: encode the record the same way, one os.write on an O_APPEND descriptor."""

    def loop() -> int:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            for _ in range(n):
                line = json.dumps(RECORD, ensure_ascii=False, separators=(",", ":")) + "\n"
                os.write(fd, line.encode())
                if sync:
                    os.fdatasync(fd)
        finally:
            os.close(fd)
        return n

    return loop


def _log_append(log: JsonlLog, n: int) -> Callable[[], int]:
    def loop() -> int:
        for _ in range(n):
            log.append(RECORD)
        return n

    return loop


def _raw_atomic_save(path: Path, data: Any, n: int) -> Callable[[], int]:
    """The floor: the same JSON encoding, then the bare atomic-replace system calls."""

    def loop() -> int:
        for _ in range(n):
            payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
            try:
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        return n

    return loop


def _doc_save(doc: JsonDoc, data: Any, n: int) -> Callable[[], int]:
    def loop() -> int:
        for _ in range(n):
            doc.save(data)
        return n

    return loop


def _raw_scan(path: Path) -> Callable[[], int]:
    def loop() -> int:
        count = 0
        with path.open("rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
        return count

    return loop


def _log_scan(log: JsonlLog) -> Callable[[], int]:
    def loop() -> int:
        return sum(1 for _ in log.scan())

    return loop


def _realistic_text(size: int) -> str:
    rng = random.Random(7)
    lines: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(SECRET_LINES) if rng.random() < 0.02 else rng.choice(TEXT_LINES)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def run(quick: bool) -> list[Row]:
    n_fast = 2_000 if quick else 20_000
    n_sync = 50 if quick else 300
    n_save = 20 if quick else 100
    repeats = 3 if quick else 5
    base = Path(tempfile.mkdtemp(prefix="slmactor-bench-stores-", dir=os.environ.get("TMPDIR")))
    rows: list[Row] = []
    try:
        warnings = WarningLog()
        log = JsonlLog(base / "log.jsonl", warnings)
        line = log.encode(RECORD)
        raw = _per_op_us(_raw_append(base / "raw.jsonl", n_fast, False), repeats)
        ours = _per_op_us(_log_append(log, n_fast), repeats)
        plain_log = JsonlLog(base / "plain.jsonl", warnings, redact=False)
        plain = _per_op_us(_log_append(plain_log, n_fast), repeats)
        floor_name = "json.dumps + os.write O_APPEND"
        rows.append(_row(f"JSONL append {len(line)} B (redacted)", ours, "µs", raw,
                         floor_name, "—"))  # fmt: skip
        rows.append(_row(f"JSONL append {len(line)} B (redact=False)", plain, "µs", raw,
                         floor_name, "—"))  # fmt: skip

        durable_log = JsonlLog(base / "durable.jsonl", warnings, fsync=True)
        raw_sync = _per_op_us(_raw_append(base / "raw_sync.jsonl", n_sync, True), repeats)
        ours_sync = _per_op_us(_log_append(durable_log, n_sync), repeats)
        rows.append(_row("JSONL append, fsync=True", ours_sync, "µs", raw_sync,
                         "json.dumps + os.write + fdatasync", "—"))  # fmt: skip

        data = {"rules": [{"id": f"r{i}", "text": "x" * 80, "alpha": i} for i in range(800)]}
        payload = (json.dumps(data, indent=2) + "\n").encode()
        raw_save = _per_op_us(_raw_atomic_save(base / "raw.json", data, n_save), repeats)
        doc = JsonDoc(base / "doc.json", warnings, redact=False)
        ours_save = _per_op_us(_doc_save(doc, data, n_save), repeats)
        rows.append(_row(f"JsonDoc.save {len(payload) // 1024} KB (redact=False)", ours_save,
                         "µs", raw_save, "json.dumps+mkstemp+fsync+rename+fsync(dir)", "—"))  # fmt: skip

        raw_scan = _per_op_us(_raw_scan(base / "log.jsonl"), repeats)
        ours_scan = _per_op_us(_log_scan(log), repeats)
        rows.append(_row("JSONL scan, per record", ours_scan, "µs", raw_scan,
                         "readline + json.loads", "—"))  # fmt: skip

        text = _realistic_text(1 << 20)
        cpu = []
        for _ in range(repeats):
            start = time.process_time()
            redact(text)
            cpu.append((time.process_time() - start) * 1000)
        rows.append(_row("redact 1 MiB realistic text (CPU)", statistics.median(cpu), "ms",
                         None, "", "< 200 ms"))  # fmt: skip
        log.close()
        plain_log.close()
        durable_log.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rows
