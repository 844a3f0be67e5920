"""`slmactor import --bundle FILE` (also `slmactor import bundle FILE`): take in a team's bundle.

The bundle (`slmactor export --bundle`) is merged into the project's shared stores against the
previous bundle of the same source, so evidence is counted once however often it is imported.
The files belong to the daemon while it runs: the import takes the project's store lock and,
when a daemon holds it, refuses (stop the daemon first) rather than race its writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext

#: A bundle larger than this is not read (the shared stores are capped far below it).
MAX_BUNDLE_BYTES = 64 * 1024 * 1024


def register(sub: Any) -> None:
    bundle = sub.add_parser("bundle", help="merge a bundle of shared learning (`export --bundle`)")
    bundle.add_argument("file", metavar="FILE", help="the bundle")
    bundle.set_defaults(func=cmd_import_bundle)


def register_group(group: Any, usage: Any) -> None:
    """`--bundle FILE` on the `import` group itself; without it the group shows its usage."""
    group.add_argument("--bundle", metavar="FILE", default=None,
                       help="merge a bundle written by `slmactor export --bundle`")

    def run(ctx: CliContext) -> int:
        if getattr(ctx.args, "bundle", None):
            ctx.args.file = ctx.args.bundle
            return cmd_import_bundle(ctx)
        return int(usage(ctx))

    group.set_defaults(func=run)


def cmd_import_bundle(ctx: CliContext) -> int:
    from slmactor.stores.base.errors import StoreError
    from slmactor.stores.base.layout import ProjectLayout
    from slmactor.stores.base.project_lock import ProjectLocked, ProjectLocks
    from slmactor.stores.shared import Bundle, MergeConflict, import_bundle

    path = Path(ctx.args.file)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except OSError as exc:
        return ctx.fail(f"import: cannot read {path}: {exc.strerror or exc}")
    if len(data) > MAX_BUNDLE_BYTES:
        return ctx.fail(f"import: {path} is larger than {MAX_BUNDLE_BYTES} bytes")
    try:
        bundle = Bundle.from_lines(data)
    except ValueError as exc:
        return ctx.fail(f"import: {path}: {exc}", EXIT_USAGE)
    root = ctx.project
    locks = ProjectLocks()
    try:
        locks.claim(root)
        counts = import_bundle(ProjectLayout(root).slmcode, bundle)
    except ProjectLocked as exc:
        return ctx.fail(f"import: {exc}; stop it (`slmactor stop`) and import again",
                        EXIT_FAILED)
    except (MergeConflict, StoreError, OSError) as exc:
        return ctx.fail(f"import: {exc}", EXIT_FAILED)
    finally:
        locks.release_all()
    result = {"ok": True, "bundle": str(path), "source": bundle.source,
              "stores": {c.kind: {"before": c.before, "after": c.after, "changed": c.changed}
                         for c in counts}}
    text = f"merged {path} (source {bundle.source}): " + ", ".join(
        f"{c.kind} {c.before}→{c.after} ({c.changed} new or changed)" for c in counts
        if c.kind != "memory") + (", MEMORY.md changed" if counts[-1].changed else "")
    ctx.emit(result, text)
    return EXIT_OK
