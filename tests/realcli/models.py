"""A scripted model server on 127.0.0.1 for driving the real agent CLIs offline.

Owns: the scenario (a list of turns, each text and/or tool calls, free to look at the tool
result the CLI sent back), the HTTP server that answers one provider API with it, and the log of
every request body (that log is how a test sees what the model received). The wire shapes of
each API live in `tests/realcli/wire.py`.

A request is a *main turn* when it offers tools (that is how every one of these CLIs asks the
model to act); anything else (titles, routers, Gemini's next-speaker and loop checks, token
counts) is a *side request*, answered with plain text or a minimal JSON object without consuming
a turn. Turns are consumed in order; once the scenario is exhausted every main request gets the
final text and no tool call, so a CLI that keeps asking still ends.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from tests.realcli import wire

Api = Literal["anthropic", "responses", "gemini", "chat"]


@dataclass(frozen=True)
class Call:
    """One tool call the model makes: JSON `args`, or `raw` text for a freeform tool (Codex's
    `apply_patch` custom tool)."""

    name: str
    args: dict[str, Any] | None = None
    raw: str | None = None


@dataclass(frozen=True)
class Turn:
    """What the model answers on one main request."""

    text: str = ""
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Seen:
    """What a scripted step may look at: the request, and the text of the last tool result in
    it (empty when there is none)."""

    body: dict[str, Any]
    last_result: str
    turn: int


Step = Turn | Callable[[Seen], Turn]


@dataclass
class Logged:
    """One request the server received."""

    method: str
    path: str
    body: dict[str, Any]
    main: bool
    turn: int | None
    last_result: str
    answer: Turn | None

    def to_dict(self) -> dict[str, Any]:
        answer = None
        if self.answer is not None:
            answer = {
                "text": self.answer.text,
                "calls": [{"name": c.name, "args": c.args, "raw": c.raw} for c in self.answer.calls],
            }
        return {
            "method": self.method,
            "path": self.path,
            "main": self.main,
            "turn": self.turn,
            "last_result": self.last_result,
            "answer": answer,
            "body": self.body,
        }


@dataclass
class Scenario:
    """Turns in order, then `final` (text only) for every later main request."""

    steps: Sequence[Step]
    final: str = "Done."
    _next: int = field(default=0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def take(self, body: dict[str, Any], last_result: str) -> tuple[int, Turn]:
        with self._lock:
            index = self._next
            self._next += 1
        if index >= len(self.steps):
            return index, Turn(text=self.final)
        step = self.steps[index]
        if isinstance(step, Turn):
            return index, step
        return index, step(Seen(body, last_result, index))

    @property
    def consumed(self) -> int:
        return min(self._next, len(self.steps))


class ModelServer:
    """Answers one API (`anthropic`, `responses`, `gemini` or `chat`) from a scenario on
    127.0.0.1 (an ephemeral port), in a daemon thread. Use as a context manager."""

    def __init__(self, api: Api, scenario: Scenario, model: str = "scripted-model") -> None:
        self.api: Api = api
        self.scenario = scenario
        self.model = model
        self.log: list[Logged] = []
        self._log_lock = threading.Lock()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def main_requests(self) -> list[Logged]:
        with self._log_lock:
            return [entry for entry in self.log if entry.main]

    def results_sent(self) -> list[str]:
        """The last tool result of every main request: what the model was told of each call."""
        return [entry.last_result for entry in self.main_requests() if entry.last_result]

    def save(self, path: Path) -> None:
        with self._log_lock:
            lines = [json.dumps(entry.to_dict()) for entry in self.log]
        path.write_text("".join(line + "\n" for line in lines))

    def record(self, entry: Logged) -> None:
        with self._log_lock:
            self.log.append(entry)

    # -- one request ------------------------------------------------------------------------
    def answer(self, method: str, path: str, body: dict[str, Any]) -> wire.Reply:
        route = urlsplit(path).path
        main = method == "POST" and wire.is_main(self.api, route, body)
        last = wire.last_tool_result(self.api, body) if main else ""
        turn_no: int | None = None
        turn: Turn | None = None
        if main:
            turn_no, turn = self.scenario.take(body, last)
        self.record(Logged(method, path, body, main, turn_no, last, turn))
        return wire.render(self.api, self.model, method, route, body, turn)


def _handler_for(server: ModelServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # the request log is the record; stderr noise helps nobody

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_unparsed": raw.decode(errors="replace")}
            if not isinstance(body, dict):
                body = {"_value": body}
            reply = server.answer(self.command, self.path, body)
            self.send_response(reply.status)
            if reply.events is None:
                data = json.dumps(reply.json).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in wire.sse_chunks(reply.events):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = _serve
        do_POST = _serve

    return Handler


@contextmanager
def serving(api: Api, steps: Sequence[Step], model: str = "scripted-model") -> Iterator[ModelServer]:
    """A started server for `steps`; stopped on exit."""
    with ModelServer(api, Scenario(steps), model) as server:
        yield server
