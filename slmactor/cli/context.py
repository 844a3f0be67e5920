"""What every command handler gets: parsed options, output helpers, and a connected client.

Exit codes: 0 ok, 1 daemon unreachable, 2 degraded or usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_UNREACHABLE = 1
EXIT_USAGE = 2


def find_project_root(start: Path) -> Path:
    """The git root containing `start`, else `start` itself."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


class CliContext:
    """One command's parsed options and helpers (a plain class: `slmactor status` should not
    pay for importing `dataclasses`)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    @property
    def runtime_dir(self) -> Path:
        if self.args.runtime_dir:
            return Path(self.args.runtime_dir)
        from slmactor.config import default_runtime_dir

        return default_runtime_dir()

    @property
    def project(self) -> Path:
        if self.args.project:
            return Path(self.args.project).resolve()
        return find_project_root(Path.cwd())

    def emit(self, data: Any, text: str | None = None) -> None:
        """Print `data` as JSON under `--json`, else `text` (or the JSON when there is none)."""
        if self.json or text is None:
            import json

            print(json.dumps(data, indent=None if self.json else 2, ensure_ascii=False, default=str))
        else:
            print(text)

    def fail(self, message: str, code: int = EXIT_USAGE) -> int:
        """Report an error (JSON on stdout under --json, else on stderr) and return `code`."""
        if self.json:
            import json

            print(json.dumps({"ok": False, "error": message}))
        else:
            print(f"slmactor: {message}", file=sys.stderr)
        return code

    def call(self, run: Callable[[], int]) -> int:
        """Run a command body that talks to the daemon, mapping its failures to exit codes."""
        from slmactor.client import DaemonUnavailable, RequestFailed

        try:
            return run()
        except DaemonUnavailable as exc:
            return self.fail(str(exc), EXIT_UNREACHABLE)
        except RequestFailed as exc:
            return self.fail(f"request failed: {exc}", EXIT_USAGE)

    def client(self, *, autostart: bool = True, timeout: float | None = None) -> Any:
        """A connected `slmactor.client.Client`, starting the daemon first unless told not to."""
        from slmactor.client import Client

        if autostart and not self.args.no_autostart and not (self.runtime_dir / "ctl.sock").exists():
            from slmactor.cli.autostart import start_daemon

            start_daemon(self.runtime_dir, quiet=True)
        return Client(
            self.runtime_dir,
            project=self.project,
            timeout=timeout if timeout is not None else self.args.timeout,
            retries=2,
        )


def is_tty() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
