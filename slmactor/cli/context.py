"""What every command handler gets: parsed options, output helpers, and a connected client.

Exit codes, one meaning each (modelled on the LSB init-script convention: 0 running and OK,
1 generic failure / not running, 2 invalid arguments, 150–199 reserved for the application):

    0    ok; for `status`: the daemon is healthy
    1    failed: the daemon is unreachable (down, wedged, or it could not be started), or it
         answered that it could not carry out the request (a store error, say)
    2    usage error: unknown command, bad option or value (also when the daemon rejects a value)
    150  not healthy: `status` — the daemon answers but is degraded (an actor down or restarting,
         a client of another version); `evolve regressions --run` — a check regressed
    151  bad project: `--project` is missing or not a directory
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_UNREACHABLE = 1
EXIT_FAILED = EXIT_UNREACHABLE
EXIT_USAGE = 2
EXIT_DEGRADED = 150
EXIT_BAD_PROJECT = 151
#: What `slmactor --help` and the README say about them.
EXIT_CODES_HELP = (
    "exit codes: 0 ok (status: healthy); 1 daemon unreachable, or the request failed; "
    "2 usage error; 150 not healthy (status: degraded; evolve regressions: a check regressed); "
    "151 bad --project"
)
#: Error replies that mean the request itself was wrong (the user's to fix), by their code
#: number in `slmactor.protocol.errors.ErrorCode` (not imported: `status` must stay cheap).
_USAGE_REPLIES = frozenset({4, 5, 11, 15, 16})  # UNKNOWN_KIND BAD_FIELD NOT_FOUND FORBIDDEN INVALID
_BAD_PROJECT_REPLY = 12


def exit_code_for(error: Any) -> int:
    """The exit code for a `RequestFailed` (an error reply of the daemon)."""
    code = getattr(error, "code", None)
    if code == _BAD_PROJECT_REPLY:
        return EXIT_BAD_PROJECT
    return EXIT_USAGE if code in _USAGE_REPLIES else EXIT_FAILED


class CliError(Exception):
    """A failure the user can cause, reported as one line (no traceback) and an exit code."""

    def __init__(self, message: str, code: int, *, json: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.json = json

    def report(self) -> int:
        _say_error(str(self), self.json)
        return self.code


def _say_error(message: str, as_json: bool) -> None:
    """JSON on stdout under --json, else one `slmactor: …` line on stderr."""
    if as_json:
        import json

        print(json.dumps({"ok": False, "error": message}))
    else:
        print(f"slmactor: {message}", file=sys.stderr)


def silence_stdout() -> None:
    """Point stdout at /dev/null after its reader went away, so no later write or flush fails."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def check_project(path: Path) -> Path:
    """`path` resolved, or the reason it cannot be a project root (ValueError)."""
    resolved = path.expanduser().resolve()
    if not resolved.exists():
        raise ValueError(f"project {path} does not exist")
    if not resolved.is_dir():
        raise ValueError(f"project {path} is not a directory")
    return resolved


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
        self._runtime_dir: Path | None = None

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    @property
    def runtime_dir(self) -> Path:
        """`--runtime-dir`, else where this user's daemon is (`slmactor.locate`), found once."""
        if self.args.runtime_dir:
            return Path(self.args.runtime_dir)
        if self._runtime_dir is None:
            from slmactor.config import client_runtime_dir

            self._runtime_dir = client_runtime_dir()
        return self._runtime_dir

    @property
    def project(self) -> Path:
        """The project root; a `--project` that is no directory is a CliError (exit 151)."""
        if self.args.project:
            try:
                return check_project(Path(self.args.project))
            except ValueError as exc:
                raise CliError(str(exc), EXIT_BAD_PROJECT, json=self.json) from None
        return find_project_root(Path.cwd())

    def emit(self, data: Any, text: str | None = None) -> None:
        """Print `data` as JSON under `--json`, else `text` (or the JSON when there is none).

        A reader that went away (`slmactor status | head -1`) is not an error of the command:
        the rest of the output is dropped and the command still exits with its own status.
        """
        if self.json or text is None:
            import json

            text = json.dumps(data, indent=None if self.json else 2, ensure_ascii=False, default=str)
        try:
            print(text, flush=True)
        except BrokenPipeError:
            silence_stdout()

    def fail(self, message: str, code: int = EXIT_USAGE) -> int:
        """Report an error (JSON on stdout under --json, else on stderr) and return `code`."""
        _say_error(message, self.json)
        return code

    def call(self, run: Callable[[], int]) -> int:
        """Run a command body that talks to the daemon, mapping its failures to exit codes."""
        from slmactor.client import DaemonUnavailable, RequestFailed

        try:
            return run()
        except DaemonUnavailable as exc:
            return self.fail(str(exc), EXIT_UNREACHABLE)
        except RequestFailed as exc:
            return self.fail(f"request failed: {exc}", exit_code_for(exc))

    def client(self, *, autostart: bool = True, timeout: float | None = None) -> Any:
        """A connected `slmactor.client.Client`, starting the daemon first unless told not to."""
        from slmactor.client import Client, listener_alive
        from slmactor.remote import remote_configured

        project = self.project  # a bad --project fails before anything is started
        # A ctl.sock nobody listens on (left by a crash) counts as no daemon: start one (a
        # daemon over tcp is not ours to start).
        if autostart and not self.args.no_autostart and not remote_configured() \
                and not listener_alive(self.runtime_dir / "ctl.sock"):
            from slmactor.cli.autostart import AutostartFailed, StoppedByUser, start_daemon

            try:
                start_daemon(self.runtime_dir, quiet=True)
            except StoppedByUser as exc:
                raise CliError(f"slmactor is not running: {exc}", EXIT_UNREACHABLE,
                               json=self.json) from None
            except AutostartFailed as exc:
                raise CliError(f"cannot start the daemon: {exc}", EXIT_UNREACHABLE,
                               json=self.json) from None
        client = Client(
            self.runtime_dir,
            project=project,
            timeout=timeout if timeout is not None else self.args.timeout,
            retries=2,
        )
        if os.environ.get("SLMACTOR_HOME", "").strip() and not remote_configured() \
                and listener_alive(self.runtime_dir / "ctl.sock"):
            note_other_home(client)
        return client


def note_other_home(client: Any) -> None:
    """One line on stderr when the user's daemon keeps its user store somewhere else than this
    command's `$SLMACTOR_HOME`: the command uses that daemon (one daemon per user) rather than
    starting a second one that would fight it over the project stores."""
    from slmactor.client import DaemonUnavailable, RequestFailed
    from slmactor.stores.base.layout import default_home

    try:
        status = client.status()
    except (DaemonUnavailable, RequestFailed):
        return  # the command itself reports what is wrong
    theirs = str(status.get("stores", {}).get("user", ""))
    wanted = default_home()
    if theirs and os.path.abspath(theirs) != os.path.abspath(wanted):
        print(f"slmactor: note: using this user's running daemon (pid {status.get('pid')}), whose "
              f"user store is {theirs}, not $SLMACTOR_HOME={wanted}; to use that store, "
              "`slmactor stop` and start the daemon with it", file=sys.stderr)


def is_tty() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def write_text_atomically(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace `path` with `text` (a file for the user to keep or share: a report, a unit).

    Unlike the stores' files (private, 0600, under `.slmcode`) it follows the user's umask — a
    report meant for sharing must be readable like any file the user makes — unless the caller
    needs an exact mode (a unit file is 0644 whatever the umask). Written to a temp file beside
    the target, fsynced, then renamed over it: a reader never sees half a file. Raises OSError.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        # O_CREAT's mode is filtered by the umask, like the mode of any file the user creates.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
