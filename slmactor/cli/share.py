"""`slmactor merge-driver` and `slmactor export --bundle`: a team's learning leaves this machine.

`merge-driver O A B [PATH]` is what git runs (registered by `slmactor git setup`) when both
branches changed a shared store file: it merges the three versions record by record
(`slmactor.stores.shared`) and writes the result over A, git's contract for a merge driver:
exit 0 merged, 1 conflict (A is left as it was, so git shows ours and the user decides). It
reads and writes only those files and never talks to the daemon.

`export --bundle FILE` writes the project's shared records to one JSONL bundle for a team
without a shared repository (`slmactor import --bundle FILE` on the other side).
"""

from __future__ import annotations

import hashlib
import os
import socket
import time
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext

#: Exit status that tells git the merge left a conflict.
EXIT_CONFLICT = 1


def register(sub: Any) -> None:
    driver = sub.add_parser(
        "merge-driver", help="git merge driver for the shared stores (set up by `git setup`)",
        description="Merge git's ancestor, ours and theirs of one shared store file into ours.")
    driver.add_argument("ancestor", metavar="O", help="the common ancestor's version (%%O)")
    driver.add_argument("ours", metavar="A", help="ours; the result is written here (%%A)")
    driver.add_argument("theirs", metavar="B", help="theirs (%%B)")
    driver.add_argument("path", metavar="PATH", nargs="?", default="",
                        help="the file's path in the repository (%%P); names its kind")
    driver.set_defaults(func=cmd_merge_driver)
    export = sub.add_parser("export", help="write the project's shared learning to a bundle")
    export.add_argument("--bundle", required=True, metavar="FILE",
                        help="the bundle to write (JSONL; `-` for stdout)")
    export.set_defaults(func=cmd_export)


def _signing_key() -> bytes | None:
    """This user's signing key, if it exists (the merge driver never creates one)."""
    from slmactor.config import default_home
    from slmactor.stores.base.signing import KEY_NAME, load_signing_key

    home = default_home()
    if not (home / KEY_NAME).is_file():
        return None
    try:
        return load_signing_key(home)
    except OSError:
        return None


def cmd_merge_driver(ctx: CliContext) -> int:
    from slmactor.stores.shared import MergeConflict, kind_for_path, merge_texts, read_bytes

    args = ctx.args
    kind = kind_for_path(args.path or args.ours)
    if kind is None:
        return ctx.fail(f"merge-driver: {args.path or args.ours} is not a shared slmactor store "
                        "file", EXIT_CONFLICT)
    ours = Path(args.ours)
    key = _signing_key()
    try:
        merged = merge_texts(kind, read_bytes(Path(args.ancestor)), read_bytes(ours),
                             read_bytes(Path(args.theirs)), key)
    except (MergeConflict, OSError) as exc:
        return ctx.fail(f"merge-driver: {args.path or ours}: {exc}; left for you to resolve",
                        EXIT_CONFLICT)
    # Git reads the result back from A: write it in place (keeping A's mode), not renamed over.
    with open(ours, "wb") as handle:
        handle.write(merged)
    if ctx.json:
        ctx.emit({"ok": True, "kind": kind.name, "path": args.path, "bytes": len(merged)})
    return EXIT_OK


def bundle_source(root: Path) -> str:
    """This machine's name for the project: stable across exports, different per host/checkout."""
    digest = hashlib.sha256(f"{socket.gethostname()}\0{root}".encode()).hexdigest()[:16]
    return f"src_{digest}"


def cmd_export(ctx: CliContext) -> int:
    from slmactor.stores.base.layout import ProjectLayout
    from slmactor.stores.shared import MergeConflict, read_bundle_of

    root = ctx.project
    try:
        bundle = read_bundle_of(ProjectLayout(root).slmcode, bundle_source(root), time.time())
    except MergeConflict as exc:
        return ctx.fail(f"export: {exc}", EXIT_FAILED)
    data = bundle.to_lines()
    target = ctx.args.bundle
    if target == "-":
        os.write(1, data)
        return EXIT_OK
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        return ctx.fail(f"export: cannot write {target}: {exc.strerror or exc}", EXIT_USAGE)
    counts = {name: len(records) for name, (_top, records) in bundle.stores.items()}
    result = {"ok": True, "bundle": str(target), "source": bundle.source, "records": counts,
              "memory_lines": len(bundle.memory.splitlines())}
    text = (f"wrote {target}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            + f", {result['memory_lines']} MEMORY.md line(s) (source {bundle.source})")
    ctx.emit(result, text)
    return EXIT_OK
