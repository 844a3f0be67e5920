"""`slmactor import lessons FILE.jsonl [--project DIR] [--json]`: bring an existing lesson corpus.

The file is the second seed's `memory.jsonl`: one lesson object per line (`{ts, type, trigger,
fix, confidence, used, polarity, tags, source_task}`; unknown keys are ignored). Lines go to the
daemon in batches (`lessons.import`), which keeps them — deduplicated against each other and
against what the project already holds, redacted, capped — in `.slmcode/memory/lessons.jsonl`.
A line that is not a lesson (not JSON, not UTF-8, no trigger, …) is skipped and counted; nothing
else is lost. Progress goes to stderr on a terminal; the summary says how many lines were read,
imported (new lessons), merged (into an existing lesson) and bad.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_OK, EXIT_USAGE, CliContext

#: Lines per `lessons.import` ask, and the bytes one batch may carry (frames are ≤ 1 MiB).
BATCH_LINES = 500
BATCH_BYTES = 512 * 1024
#: A longer line cannot be a lesson the store would keep (its records are ≤ 32 KiB).
MAX_LINE_BYTES = 32 * 1024


def register(sub: Any) -> None:
    lessons = sub.add_parser("lessons", help="import a lesson corpus (the seed's JSONL format)")
    lessons.add_argument("file", metavar="FILE.jsonl", help="one lesson object per line")
    lessons.set_defaults(func=cmd_import_lessons)


def batches(handle: Any) -> Iterator[tuple[list[str], int]]:
    """(lines to send, lines already known to be bad) per batch; blank lines are skipped."""
    batch: list[str] = []
    size = bad = 0
    for raw in handle:
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            line = ""
        if not line or len(raw) > MAX_LINE_BYTES:
            bad += 1
            continue
        batch.append(line)
        size += len(raw)
        if len(batch) >= BATCH_LINES or size >= BATCH_BYTES:
            yield batch, bad
            batch, size, bad = [], 0, 0
    if batch or bad:
        yield batch, bad


def summary_text(result: dict[str, Any]) -> str:
    return (f"read {result['read']} line(s) of {result['file']}: {result['imported']} imported, "
            f"{result['merged']} merged into existing lessons, {result['bad']} bad (skipped); "
            f"the project now holds {result['total']} do/don't lesson(s)")


def cmd_import_lessons(ctx: CliContext) -> int:
    from slmactor.protocol.messages import LessonsImport

    path = Path(ctx.args.file)
    try:
        handle = path.open("rb")
    except OSError as exc:
        return ctx.fail(f"import lessons: cannot read {path}: {exc.strerror or exc}")
    progress = sys.stderr.isatty() and not ctx.json
    totals = {"read": 0, "imported": 0, "merged": 0, "bad": 0, "total": 0}

    def run() -> int:
        with handle, ctx.client(timeout=max(ctx.args.timeout, 30.0)) as client:
            for lines, bad in batches(handle):
                totals["bad"] += bad
                totals["read"] += bad + len(lines)
                if lines:
                    reply = client.ask(LessonsImport(lines=lines))
                    totals["imported"] += reply["added"]
                    totals["merged"] += reply["merged"]
                    totals["bad"] += reply["bad"]
                    totals["total"] = reply["total"]
                if progress:
                    print(f"\rimporting lessons: {totals['read']} line(s) read, "
                          f"{totals['bad']} bad", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
        result = {"file": str(path), **totals}
        ctx.emit(result, summary_text(result))
        # Every line bad: most likely not a lesson corpus at all.
        all_bad = totals["read"] > 0 and totals["bad"] == totals["read"]
        return EXIT_USAGE if all_bad else EXIT_OK

    return ctx.call(run)
