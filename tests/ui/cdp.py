"""A real headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
NUL-terminated JSON on the child's fds 3 and 4), stdlib only: navigate, read the DOM, click, and
take screenshots of what a user would see.

Protocol: https://chromedevtools.github.io/devtools-protocol/ (Target.attachToTarget with
`flatten`, Page.navigate / loadEventFired, Runtime.evaluate, Page.captureScreenshot,
Emulation.setDeviceMetricsOverride).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

#: Seconds a page may take to load: generous, for a machine whose load is 10 (not a timing
#: claim: a page that loads later fails the test with this message).
LOAD_TIMEOUT = 90.0


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, binary: str, width: int = 1400, height: int = 1000) -> None:
        self.profile = tempfile.mkdtemp(prefix="slm-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--mute-audio",
                f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}', binary, *args],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # ---------------------------------------------------------------- the pipe

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + LOAD_TIMEOUT
        while True:
            got = self._read_message(deadline)
            if got.get("id") == self._next:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                result: dict[str, Any] = got.get("result", {})
                return result
            self.events.append(got)

    def _wait_event(self, method: str) -> None:
        deadline = time.monotonic() + LOAD_TIMEOUT
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    del self.events[: i + 1]
                    return
            self.events.append(self._read_message(deadline))

    # ---------------------------------------------------------------- what a user does

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self._wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        reply = self.call("Runtime.evaluate", session=True, expression=expression,
                          returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click_and_wait(self, selector: str) -> None:
        """Click the element (a form's button): the form posts and the next page loads."""
        self.events.clear()
        found = self.evaluate(f"(() => {{ const b = document.querySelector({json.dumps(selector)});"
                              " if (!b) return false; b.click(); return true; })()")
        assert found, f"nothing matches {selector}"
        self._wait_event("Page.loadEventFired")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def screenshot_of(self, selector: str, path: Path) -> Path:
        """Only the element (its box on the whole page), at its size."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, "
            "r.height]; })()")
        x, y, w, h = box
        data = self.call("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=True,
                         clip={"x": x, "y": y, "width": w, "height": min(h, 1600), "scale": 1})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
