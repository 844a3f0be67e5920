"""`slmactor ui`: the page to see and curate what slmactor remembers (`slmactor.ui`).

Serves on 127.0.0.1 only, on a free port (or `--port`), with a token drawn for this launch: the
one URL printed (and opened in a browser unless `--no-open`) is the way in. Runs until ^C. Reads
and acts only through the daemon's asks, which it starts first when it is down.
"""

from __future__ import annotations

import sys
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, CliContext


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ui", help="a local page to see and curate memory (loopback only, a token per launch)",
        description="Serve a page on 127.0.0.1 showing what a model would be told now (each "
        "line with its evidence), the rules and where they came from, the failures that repeat "
        "and what fixed them, sessions with search, repository content awaiting trust, and the "
        "run figures over time; retire lines, rules and sessions and adopt repository content "
        "from it. Stops with ^C.")
    p.add_argument("--port", type=int, default=0, metavar="N",
                   help="the port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-open", action="store_true", help="only print the URL, open no browser")
    p.set_defaults(func=cmd_ui)


def cmd_ui(ctx: CliContext) -> int:
    from slmactor.client import Client
    from slmactor.ui.access import Gate, new_token
    from slmactor.ui.server import UiServer

    if not 0 <= ctx.args.port <= 65535:
        return ctx.fail("ui: --port must be 0 (a free port) to 65535")
    project = ctx.project
    runtime_dir = ctx.runtime_dir
    ctx.client().close()  # start the daemon now when it is down, and fail here if it cannot be

    def client(root: str) -> Any:
        return Client(runtime_dir, project=root, timeout=ctx.args.timeout, retries=1)

    try:
        server = UiServer(Gate(new_token(), "127.0.0.1", ctx.args.port), project, client)
    except OSError as exc:
        return ctx.fail(f"ui: cannot listen on 127.0.0.1:{ctx.args.port}: {exc.strerror or exc}",
                        EXIT_FAILED)
    port = server.server_address[1]
    server.gate = Gate(server.gate.token, "127.0.0.1", int(port))
    url = f"http://127.0.0.1:{port}/?token={server.gate.token}"
    ctx.emit({"url": url, "project": str(project), "port": port},
             f"slmactor ui for {project}: {url}\n(only this user, on this machine; ^C stops it)")
    if not ctx.args.no_open and not ctx.json:
        import webbrowser

        try:
            webbrowser.open(url)
        except webbrowser.Error:
            pass
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_OK
