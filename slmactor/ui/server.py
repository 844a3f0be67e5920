"""The HTTP door of `slmactor ui`: checks each request (`access`), reads the page through the
daemon's asks (`views`), renders it (`html`), and carries out the page's actions — each the ask
the CLI sends for the same thing:

    retire-line     memory.retire            (`memory forget --line ID`)
    restore-line    memory.retire undo
    retire-rule     evolve.retire            (`memory forget --rule ID`)
    forget-session  episode.drop             (`memory forget --session ID`)
    adopt           evolve/fact/regressions.trust with the id   (`trust ID`)
    adopt-all       the same, every record   (`trust --all`)

`http.server.ThreadingHTTPServer`: one thread per request, each with its own client (a `Client`
serves one thread at a time). Request lines are not logged: their URLs carry the token.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from slmactor.ui import html, views
from slmactor.ui.access import Gate

#: Largest form body read.
MAX_FORM_BYTES = 64 << 10
HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "Cache-Control": "no-store",
    # Not no-referrer: with it a browser posts forms with `Origin: null`, which is refused.
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
#: action → the page part it came from (where the redirect lands).
SECTIONS = {"retire-line": "told", "restore-line": "told", "retire-rule": "rules",
            "forget-session": "sessions", "adopt": "trust", "adopt-all": "trust"}


class UiServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, gate: Gate, project: Path, client_factory: Callable[[str], Any]) -> None:
        self.gate = gate
        self.project = project
        self.client_factory = client_factory
        self.seen_projects: list[str] = [str(project)]
        self.lock = threading.Lock()
        super().__init__((gate.host, gate.port), Handler)


def _first(params: dict[str, list[str]], name: str) -> str:
    values = params.get(name) or [""]
    return values[0]


class Handler(BaseHTTPRequestHandler):
    server: UiServer
    server_version = "slmactor-ui"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # URLs carry the token: nothing about requests is written anywhere

    # ---------------------------------------------------------------- answers

    def _send(self, status: HTTPStatus, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        for name, value in {**HEADERS, **(headers or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self, status: HTTPStatus = HTTPStatus.FORBIDDEN) -> None:
        self._send(status, html.refused("This page answers only its own launch's link."))

    def _allowed(self, token: str) -> bool:
        gate = self.server.gate
        host = self.client_address[0]
        if host != gate.host or not gate.peer_ok((host, int(self.client_address[1]))):
            return False
        return gate.host_ok(self.headers.get("Host")) and gate.token_ok(token)

    def _project(self, given: str) -> Path | None:
        from slmactor.cli.context import check_project

        if not given:
            return self.server.project
        try:
            return check_project(Path(given))
        except ValueError:
            return None

    # ---------------------------------------------------------------- GET: the page

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        if not self._allowed(_first(params, "token")):
            self._refuse()
            return
        if url.path != "/":
            self._send(HTTPStatus.NOT_FOUND, html.refused("no such page"))
            return
        project = self._project(_first(params, "project"))
        if project is None:
            self._send(HTTPStatus.BAD_REQUEST, html.refused("no such project directory"))
            return
        if _first(params, "view") == "projects":
            self._projects(project)
            return
        self._page(project, _first(params, "task"), _first(params, "q"), _first(params, "done"))

    def _projects(self, current: Path) -> None:
        """The page across projects: one row of figures per project the page knows."""
        from slmactor.client import DaemonUnavailable, RequestFailed

        token = self.server.gate.token
        try:
            with self.server.client_factory(str(current)) as client:
                open_projects = views.projects(client)
        except (DaemonUnavailable, RequestFailed) as exc:
            self._send(HTTPStatus.BAD_GATEWAY, html.refused(f"slmactor daemon: {exc}"))
            return
        with self.server.lock:
            known = list(dict.fromkeys([*self.server.seen_projects, *open_projects]))
        rows: list[tuple[str, Any]] = []
        for root in known:
            try:
                with self.server.client_factory(root) as client:
                    rows.append((root, views.overview(client)))
            except (DaemonUnavailable, RequestFailed) as exc:
                rows.append((root, f"not readable: {exc}"))
        self._send(HTTPStatus.OK, html.page(project=str(current), projects=known, token=token,
                                            body=html.projects_section(rows, token)))

    do_HEAD = do_GET

    def _page(self, project: Path, task: str, search: str, flash: str) -> None:
        from slmactor.cli.trust import _describe
        from slmactor.client import DaemonUnavailable, RequestFailed

        token = self.server.gate.token
        root = str(project)
        try:
            with self.server.client_factory(root) as client:
                told = views.told(client, task)
                rules = views.rules(client)
                parts = [
                    html.told_section(told, token, root, task),
                    html.rules_section(rules, views.origin_of, token, root),
                    html.failures_section(views.failures(client, rules)),
                    html.sessions_section(views.sessions(client, search), search, token, root),
                    html.pending_section(views.pending(client), _describe, token, root),
                    html.charts_section(views.runs(client)),
                ]
                open_projects = views.projects(client)
        except (DaemonUnavailable, RequestFailed) as exc:
            self._send(HTTPStatus.BAD_GATEWAY, html.refused(f"slmactor daemon: {exc}"))
            return
        except Exception as exc:
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR,
                       html.refused(f"this page failed: {type(exc).__name__}: {exc}"))
            raise
        with self.server.lock:
            if root not in self.server.seen_projects:
                self.server.seen_projects.append(root)
            known = list(dict.fromkeys([*self.server.seen_projects, *open_projects]))
        self._send(HTTPStatus.OK, html.page(project=root, projects=known, token=token,
                                            body="".join(parts), flash=flash))

    # ---------------------------------------------------------------- POST: actions

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if urlsplit(self.path).path != "/action" or not 0 < length <= MAX_FORM_BYTES:
            self._refuse(HTTPStatus.BAD_REQUEST)
            return
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        if not self._allowed(_first(form, "token")) \
                or not self.server.gate.origin_ok(self.headers.get("Origin")):
            self._refuse()
            return
        project = self._project(_first(form, "project"))
        action = _first(form, "action")
        if project is None or action not in SECTIONS:
            self._send(HTTPStatus.BAD_REQUEST, html.refused("unknown action or project"))
            return
        from slmactor.client import DaemonUnavailable, RequestFailed

        try:
            with self.server.client_factory(str(project)) as client:
                done = act(client, action, _first(form, "id"), _first(form, "text"))
        except (DaemonUnavailable, RequestFailed) as exc:
            done = f"{action} failed: {exc}"
        back = {"token": self.server.gate.token, "project": str(project),
                "task": _first(form, "task"), "q": _first(form, "q"), "done": done}
        location = "/?" + urlencode({k: v for k, v in back.items() if v}) + f"#{SECTIONS[action]}"
        self.send_response(HTTPStatus.SEE_OTHER)
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def act(client: Any, action: str, item: str, text: str) -> str:
    """Carry out one action of the page; what happened, in words."""
    from slmactor.cli.memory.forget_items import forget_items
    from slmactor.cli.trust import _messages
    from slmactor.protocol.messages import MemoryRetire

    if action == "retire-line":
        reply = client.ask(MemoryRetire(texts=[text]) if text else MemoryRetire(ids=[item]))
        return f"retired {len(reply['retired'])} line(s)"
    if action == "restore-line":
        reply = client.ask(MemoryRetire(ids=[item], undo=True))
        return f"restored {len(reply['restored'])} line(s)"
    if action == "retire-rule":
        out = forget_items(client, sessions=[], rules=[item], lines=[])
        return f"retired rule {', '.join(out['rules']['retired']) or '(none: unknown id)'}"
    if action == "forget-session":
        out = forget_items(client, sessions=[item], rules=[], lines=[])
        return f"forgot {out['sessions']['episodes_removed']} session(s)"
    every = action == "adopt-all"
    adopted: list[str] = []
    for key, message in _messages([] if every else [item], every, True):
        reply = client.ask(message)
        adopted += [str(i) for i in reply.get("adopted") or []]
        if key == "facts":
            for sub in ("lessons", "memory_md"):
                adopted += [str(i) for i in (reply.get(sub) or {}).get("adopted") or []]
    return f"adopted {len(adopted)} record(s)"
