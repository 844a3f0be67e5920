"""`slmactor git setup`: share the project's learning through its git repository.

Three things, each idempotent: the `slmactor` merge driver in the repository's own git config
(`merge.slmactor.driver`, run with this installation's interpreter so it works without a
PATH), `.gitattributes` lines routing each shared store file to it, and `.slmcode/.gitignore`
letting through exactly the shared files (`slmactor.stores.shared.SHARED_GITIGNORE`). A
`.gitignore` the user wrote is kept unless `--force`; one slmactor wrote is replaced.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext

DRIVER_NAME = "slmactor"
ATTRIBUTES_HEADER = "# slmactor: merge the shared learning record by record (slmactor git setup)"
#: First line of every `.gitignore` slmactor writes (the private and the shared one).
OURS_MARKER = "# Written by slmactor"


def register(sub: Any) -> None:
    setup = sub.add_parser("setup", help="register the merge driver, .gitattributes, .gitignore")
    setup.add_argument("--force", action="store_true",
                       help="replace a .slmcode/.gitignore slmactor did not write")
    setup.set_defaults(func=cmd_setup)


def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m slmactor merge-driver %O %A %B %P"


def attribute_lines() -> list[str]:
    from slmactor.stores.base.layout import STORE_DIR_NAME
    from slmactor.stores.shared import KINDS

    return [f"/{STORE_DIR_NAME}/{kind.relpath} merge={DRIVER_NAME}" for kind in KINDS]


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          timeout=30, check=False)


def cmd_setup(ctx: CliContext) -> int:
    from slmactor.stores.base.fsutil import atomic_write_bytes, ensure_dir
    from slmactor.stores.base.layout import ProjectLayout
    from slmactor.stores.shared import SHARED_GITIGNORE

    root = ctx.project
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ctx.fail(f"git setup: cannot run git: {exc}", EXIT_FAILED)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return ctx.fail(f"git setup: {root} is not the top of a git repository", EXIT_FAILED)
    for key, value in ((f"merge.{DRIVER_NAME}.name", "slmactor shared-store merge"),
                       (f"merge.{DRIVER_NAME}.driver", driver_command())):
        done = _git(root, "config", "--local", key, value)
        if done.returncode != 0:
            return ctx.fail(f"git setup: git config {key} failed: {done.stderr.strip()}",
                            EXIT_FAILED)
    attributes = root / ".gitattributes"
    try:
        existing = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        return ctx.fail(f"git setup: cannot read {attributes}: {exc}", EXIT_FAILED)
    have = {line.strip() for line in existing.splitlines()}
    missing = [line for line in attribute_lines() if line not in have]
    if missing:
        block = "\n".join([ATTRIBUTES_HEADER, *missing]) if ATTRIBUTES_HEADER not in have \
            else "\n".join(missing)
        sep = "" if not existing or existing.endswith("\n") else "\n"
        attributes.write_text(existing + sep + block + "\n", encoding="utf-8")
    layout = ProjectLayout(root)
    gitignore = layout.gitignore
    try:
        current = gitignore.read_text(encoding="utf-8") if gitignore.exists() else None
    except (OSError, UnicodeDecodeError):
        current = ""
    if current == SHARED_GITIGNORE:
        ignore_state = "unchanged"
    elif current is None or current.startswith(OURS_MARKER) or ctx.args.force:
        ensure_dir(layout.slmcode)
        atomic_write_bytes(gitignore, SHARED_GITIGNORE.encode())
        ignore_state = "written"
    else:
        ignore_state = "kept (not written by slmactor; --force replaces it)"
    result = {"ok": True, "root": str(root), "driver": driver_command(),
              "attributes_added": missing, "gitignore": ignore_state}
    text = (f"git setup in {root}: merge driver registered in .git/config; "
            f"{len(missing)} .gitattributes line(s) added; .slmcode/.gitignore {ignore_state}")
    ctx.emit(result, text)
    return EXIT_OK
