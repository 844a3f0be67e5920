"""The OpenHands SDK adapter against a real daemon.

The callback is fed the events of an OpenHands SDK conversation in the SDK's own JSON shape
(tests/fixtures/trajectories/openhands-sdk-events.jsonl, SDK 1.43.1), as dicts and as objects
with `model_dump` like the SDK's pydantic events — twice, as two runs of one task: the second
run's block remembers the first, and its repeated failure gets the remembered advice, sent to
the conversation once the response's calls are all observed. The SDK itself (Python ≥ 3.12) is
driven in process by tests/integration/test_openhands_sdk.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slmactor.harnesses.openhands.sdk import MemoryCallback
from slmactor.protocol.messages import MetricsShow
from slmactor.testing import DaemonProcess
from tests.integration.test_runtime import wait_for

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories" / \
    "openhands-sdk-events.jsonl"


class _Conversation:
    """What the callback sends advice to: `send_message(text, sender=...)`."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def send_message(self, message: str, sender: str | None = None) -> None:
        self.messages.append((str(sender), message))


class _Pydantic:
    """What the SDK hands a callback: a model whose `model_dump(mode="json")` is the event."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        assert mode == "json"
        return {k: v for k, v in self._data.items() if k != "kind"}  # the class name says it


def _events(as_objects: bool) -> list[Any]:
    events = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    if not as_objects:
        return events
    return [type(e["kind"], (_Pydantic,), {})(e) for e in events]


def _memory(daemon: DaemonProcess) -> MemoryCallback:
    return MemoryCallback(daemon.project, "Make tests/test_dates.py pass: parse_date() must "
                          "accept ISO dates with a trailing Z", runtime_dir=daemon.runtime_dir,
                          model="litellm_proxy/claude-sonnet-4-5", language="python")


def _conversation(daemon: DaemonProcess, as_objects: bool) -> MemoryCallback:
    memory = _memory(daemon)
    memory.block()
    memory.attach(_Conversation())
    for event in _events(as_objects):
        memory(event)
    memory.finish()
    return memory


def test_two_conversations_the_second_remembers_the_first(daemon: DaemonProcess) -> None:
    first = _conversation(daemon, as_objects=False)
    assert first.errors == [] and first.agent_finished
    assert first.finished is not None and first.finished.success
    assert first.advice == []  # nothing known yet
    with daemon.client() as c:  # run.finish learns in the background: wait until it has
        runs = wait_for(lambda: c.ask(MetricsShow(last=0))["runs"], "the first run recorded")
    assert [(r["tool_calls"], r["tool_errors"], r["failures"], r["resolved_from_llm"])
            for r in runs] == [(3, 1, 1, 1)]

    second = _conversation(daemon, as_objects=True)
    assert second.errors == []
    assert "parse_date" in second.block_text
    assert [a.tool for a in second.advice] == ["terminal"]
    # How the first run fixed it: the edit it made before the test passed.
    assert "str_replace /workspace/project/dates.py" in second.advice[0].guidance
    # ... told to the agent once, as a message from slmactor; nothing told in the first run.
    assert first.attached.messages == []
    assert second.attached.messages == [("slmactor", second.sent[0])]
    assert second.advice[0].observation() in second.sent[0]
    first.close()
    second.close()


def test_advice_waits_for_the_whole_response_and_is_not_sent_after_finish(
    daemon: DaemonProcess,
) -> None:
    _conversation(daemon, as_objects=False).close()  # learns how the failing test was fixed
    with daemon.client() as c:
        wait_for(lambda: c.ask(MetricsShow(last=0))["runs"], "the first run recorded")
    by_id = {e["id"]: e for e in _events(as_objects=False)}
    # One response with two calls: the failing test run (a2) and the edit (a4). A message
    # between their results would split the tool results the next request must send together.
    memory = _memory(daemon)
    memory.attach(_Conversation())
    for event_id in ("m1", "a2", "a4", "o3"):
        memory(by_id[event_id])
    assert len(memory.advice) == 1 and memory.attached.messages == []
    memory(by_id["o5"])
    assert memory.attached.messages == [("slmactor", memory.sent[0])]
    memory.close()
    # The failing call beside `finish`: the conversation is over, nothing is sent.
    done = _memory(daemon)
    done.attach(_Conversation())
    for event_id in ("m1", "a2", "a9", "o3", "o10"):
        done(by_id[event_id])
    assert len(done.advice) == 1 and done.attached.messages == [] and done.agent_finished
    done.close()


def test_the_callback_never_raises_and_runs_without_a_daemon(tmp_path: Path) -> None:
    nowhere = tmp_path / "rt"
    nowhere.mkdir()
    memory = MemoryCallback(tmp_path, "task", runtime_dir=nowhere)
    assert memory.block() == ""
    for event in [*_events(as_objects=False), object(), {"kind": 3}, None]:
        memory(event)
    assert memory.finish() is None and memory.errors
    memory.close()


def test_leaving_the_block_finishes_the_run_not_a_success_when_it_raised(
    daemon: DaemonProcess,
) -> None:
    with pytest.raises(RuntimeError), _memory(daemon) as memory:
        memory.block()
        raise RuntimeError("the conversation broke")
    assert memory.finished is not None and memory.finished.success is False
    with _memory(daemon) as finished:
        for event in _events(as_objects=False):
            finished(event)
    assert finished.finished is not None and finished.finished.success is True
