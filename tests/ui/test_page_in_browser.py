"""`slmactor ui` in a real browser (Debian's Chromium, headless) against a real daemon that holds
imported real sessions (tests/fixtures/sessions: seven harnesses' own formats), a replay's runs
and content a cloned repository brought: the page lists what a model is told with each line's
evidence, a line retired in the page is gone from the next `memory.block`, a session forgotten is
gone, repository content shows as awaiting trust and is adopted from the page.

Screenshots of each step are kept for a person to look at, never committed: under
`$SLMACTOR_UI_SCREENSHOTS`, else `<tmp>/slmactor-ui-screenshots/` (CI keeps that directory as
its artifacts).

And who the page answers: only this launch's token, only on 127.0.0.1, only this user — a wrong
token, a foreign `Host` and another uid with the right token are all refused.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from slmactor.protocol.messages import EpisodeRecent, FactList, FactObserve, MemoryBlock
from slmactor.testing import DaemonProcess, spawn_daemon, stop_quietly, wait_for
from tests.ui.cdp import Browser, chromium

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "tests" / "fixtures" / "sessions"
TRAJECTORIES = ROOT / "slmactor" / "demo_data" / "trajectories"
PLANTED_FACT = "models.py is generated from schema.yml: edit the schema"
PLANTED_RULE = "rule_0000000000bb"
SHOTS = Path(os.environ.get("SLMACTOR_UI_SCREENSHOTS")
             or Path(tempfile.gettempdir()) / "slmactor-ui-screenshots")

pytestmark = pytest.mark.slow


def _cli(daemon: DaemonProcess, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", *args],
        check=False, env=daemon.env, capture_output=True, text=True, timeout=timeout)


def _plant(project: Path) -> None:
    """What a cloned repository's committed `.slmcode/` brings: a rule and a fact nobody here
    learned (unsigned)."""
    evolve, memory = project / ".slmcode" / "evolve", project / ".slmcode" / "memory"
    evolve.mkdir(parents=True)
    memory.mkdir(parents=True)
    rule = {"id": PLANTED_RULE, "successes": 12, "failures": 0, "scope": "project",
            "trigger": {"class": "runtime_error", "tool": "str_replace_editor", "language": "",
                        "model_family": "", "message_contains": []},
            "repair": {"kind": "transform_args", "transform": "strip_line_number_prefix",
                       "retry": True, "guidance": "Strip the line numbers."}}
    (evolve / "rules.json").write_text(json.dumps({"version": 1, "rules": [rule]}))
    fact = {"kind": "gotcha", "subject": "models", "text": PLANTED_FACT, "support": 9,
            "contradict": 0}
    (memory / "facts.json").write_text(json.dumps({"version": 1, "facts": [fact]}))


@pytest.fixture()
def memory_daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = spawn_daemon()
    try:
        _plant(proc.project)
        history = tmp_path / "history"
        shutil.copytree(SESSIONS, history, ignore=shutil.ignore_patterns("*.md"))
        imported = _cli(proc, "--json", "import", "sessions", str(history))
        assert imported.returncode == 0, imported.stderr
        assert json.loads(imported.stdout)["new"] >= 7
        from slmactor import harnesses
        from slmactor.cli.loop.replay_driver import learning_replay
        from slmactor.stores.trajectories import load_trajectories

        with proc.client(timeout=60) as replaying:  # a replay's runs, through the daemon's loop
            learning_replay(replaying, load_trajectories(TRAJECTORIES, harnesses.read_trajectory)[0], "replay")
        with proc.client() as client:
            wait_for(lambda: client.ask(EpisodeRecent(n=0, ids_only=True))["total"] >= 20,
                     "the imported and replayed sessions stored", timeout=120)
        yield proc
    finally:
        stop_quietly(proc)


@contextmanager
def launched(daemon: DaemonProcess) -> Iterator[str]:
    """`slmactor ui` running for the daemon's project; its URL (as it printed it)."""
    ui = subprocess.Popen(
        [sys.executable, "-m", "slmactor", "--runtime-dir", str(daemon.runtime_dir),
         "--project", str(daemon.project), "--no-autostart", "--json", "ui", "--no-open"],
        env=daemon.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert ui.stdout is not None
        line = ui.stdout.readline()
        assert line, ui.stderr.read() if ui.stderr else "ui printed nothing"
        yield str(json.loads(line)["url"])
    finally:
        ui.terminate()
        ui.communicate(timeout=30)  # waits, and closes its pipes


@pytest.fixture()
def page(memory_daemon: DaemonProcess) -> Iterator[tuple[DaemonProcess, str]]:
    with launched(memory_daemon) as url:
        yield memory_daemon, url


def _texts(browser: Browser, selector: str) -> list[str]:
    return browser.evaluate(  # type: ignore[no-any-return]
        f"[...document.querySelectorAll({json.dumps(selector)})].map(e => e.innerText)")


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_shows_memory_with_evidence_and_curates_it(
        page: tuple[DaemonProcess, str]) -> None:
    daemon, url = page
    shots = SHOTS / time.strftime("%Y%m%d-%H%M%S")
    browser = Browser(chromium() or "")
    try:
        browser.open(url)
        browser.screenshot(shots / "1-page.png")
        for part in ("told", "rules", "failures", "sessions", "trust", "charts"):
            browser.screenshot_of(f"#{part}", shots / f"1-{part}.png")
        assert browser.evaluate("document.title").startswith("slmactor — ")
        # What a model is told now: every line of the block, each with an id, evidence, verdict.
        with daemon.client() as client:
            block = client.ask(MemoryBlock())["text"]
        rows = _texts(browser, "#told tr[data-line]")
        assert rows and all("\t" in r for r in rows)
        told = [r.split("\t")[2] for r in rows]
        assert all(text in block for text in told)
        assert any("fact f_" in r for r in rows), "a line shows the fact behind it"
        assert all(r.rstrip().split("\t")[4] == "unchecked" for r in rows)
        # Rules with outcomes and origin; failures that repeat; sessions, imported ones included.
        assert any("worked" in r and "learned here" in r for r in _texts(browser, "#rules tr"))
        assert len(_texts(browser, "#failures tr")) > 2
        sessions = _texts(browser, "#sessions tr[data-session]")
        assert len(sessions) >= 20
        # Repository content awaiting trust, whole.
        pending = " ".join(_texts(browser, "#trust tr[data-pending]"))
        assert PLANTED_RULE in pending and PLANTED_FACT in pending
        # Charts of the runs over time.
        assert browser.evaluate("document.querySelectorAll('#charts svg').length") == 4

        # Retire a line in the page: gone from the next memory.block.
        victim = next(r for r in rows if "fact f_" in r)
        victim_id, victim_text = victim.split("\t")[0], victim.split("\t")[2]
        browser.click_and_wait(f'#told tr[data-line="{victim_id}"] button')
        browser.screenshot(shots / "2-line-retired.png")
        browser.screenshot_of("#told", shots / "2-told-after-retire.png")
        assert "retired 1 line(s)" in browser.evaluate("document.querySelector('#flash').innerText")
        with daemon.client() as client:
            assert victim_text not in client.ask(MemoryBlock())["text"]
        assert victim_id in " ".join(_texts(browser, "#told h3 + table tr"))

        # Search sessions, forget one: gone from the store.
        with daemon.client() as client:
            total = client.ask(EpisodeRecent(n=0, ids_only=True))["total"]
        browser.open(url + "&q=email+field+CustomerDto#sessions")
        found = _texts(browser, "#sessions tr[data-session]")
        assert found and "CustomerDto" in found[0]
        first = browser.evaluate("document.querySelector('#sessions tr[data-session]').dataset.session")
        browser.click_and_wait(f'#sessions tr[data-session="{first}"] button')
        browser.screenshot(shots / "3-session-forgotten.png")
        with daemon.client() as client:
            assert client.ask(EpisodeRecent(n=0, ids_only=True))["total"] == total - 1

        # Adopt the repository's fact from the page: it is this user's now.
        fact_id = browser.evaluate(
            "[...document.querySelectorAll('#trust tr[data-pending]')]"
            f".find(r => r.innerText.includes({json.dumps(PLANTED_FACT)})).dataset.pending")
        browser.click_and_wait(f'#trust tr[data-pending="{fact_id}"] button')
        browser.screenshot(shots / "4-adopted.png")
        browser.screenshot_of("#trust", shots / "4-trust-after-adopt.png")
        with daemon.client() as client:
            facts = {f["text"]: f for f in client.ask(FactList())["facts"]}
        assert facts[PLANTED_FACT]["verified"] is True
        assert PLANTED_FACT not in " ".join(_texts(browser, "#trust tr[data-pending]"))
        assert PLANTED_RULE in " ".join(_texts(browser, "#trust tr[data-pending]"))

        # Across projects: a row of figures per project the daemon has open, each a link.
        other = daemon.base / "other-project"
        other.mkdir()
        with daemon.client(project=other) as client:
            client.ask(FactObserve(kind="command", subject="build", text="build with make all"))
        browser.open(url + "&view=projects")
        browser.screenshot(shots / "5-projects.png")
        rows = {r.split("\t")[0]: r.split("\t") for r in _texts(browser, "#projects tr[data-project]")}
        with daemon.client() as client:
            sessions_now = client.ask(EpisodeRecent(n=0, ids_only=True))["total"]
        mine = rows[str(daemon.project)]
        assert mine[1].endswith("(1 retired)") and mine[3] == str(sessions_now)
        assert rows[str(other)][1] == "1" and rows[str(other)][3] == "0"  # one line, no session
    finally:
        browser.close()
        print(f"screenshots: {shots}")


PROBE = ("import sys, urllib.request, urllib.error\n"
         "try:\n urllib.request.urlopen(sys.argv[1], timeout=30); print(200)\n"
         "except urllib.error.HTTPError as e:\n print(e.code)")


def _get(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_only_its_token_on_loopback_and_this_user(daemon: DaemonProcess) -> None:
    with launched(daemon) as url:
        port = int(url.split(":")[2].split("/")[0])
        assert _get(url) == 200
        assert _get(url.replace("token=", "token=x")) == 403
        assert _get(url.split("?")[0]) == 403
        assert _get(url, host=f"evil.example:{port}") == 403
        # Bound to 127.0.0.1 alone: the kernel's table lists its listening socket so.
        listening = [row.split() for row in Path("/proc/net/tcp").read_text().splitlines()[1:]
                     if row.split()[3] == "0A" and row.split()[1].endswith(f":{port:04X}")]
        assert [r[1] for r in listening] == [f"0100007F:{port:04X}"]
        # Another user on this machine, with the right token: refused.
        # (The system's interpreter: this venv may sit where that user cannot read.)
        system_python = shutil.which("python3", path="/usr/bin:/bin")
        if os.getuid() == 0 and system_python:
            nobody = pwd.getpwnam("nobody").pw_uid
            probe = subprocess.run(
                [system_python, "-I", "-c", PROBE, url],
                user=nobody, group=nobody, capture_output=True, text=True, timeout=60,
                check=False, cwd="/")
            assert probe.stdout.strip() == "403", probe.stderr
        # A form posted without the token, or from another origin, changes nothing.
        body = b"action=adopt-all&project=" + str(daemon.project).encode()
        post = urllib.request.Request(url.split("?")[0] + "action", data=body, method="POST")
        try:
            urllib.request.urlopen(post, timeout=30)
            status: Any = 200
        except urllib.error.HTTPError as exc:
            status = exc.code
        assert status == 403
