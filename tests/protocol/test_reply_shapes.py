"""clients/PROTOCOL.md §10 documents what each kind answers: checked against a real daemon.

The same requests `clients/reply_shapes.py` uses to write the table are asked again; every
documented kind must answer with exactly the documented top-level keys, and every sampled request
must succeed (a sample that starts failing means the kind changed its contract).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from slmactor.client import RequestFailed
from slmactor.protocol.messages import MESSAGES
from slmactor.testing import DaemonProcess

SCRIPT = Path(__file__).resolve().parents[2] / "clients" / "reply_shapes.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reply_shapes", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reply_shapes"] = module
    spec.loader.exec_module(module)
    return module


def test_documented_reply_keys_match_what_the_daemon_answers(daemon: DaemonProcess) -> None:
    shapes = _generator()
    documented = shapes.top_keys(shapes.DOC.read_text(encoding="utf-8"))
    with daemon.client(timeout=30.0) as client:
        answers = dict(shapes.ask_all(client))
    sampled = {kind for kind, _sample in shapes.SAMPLES}
    failed = {k: str(v) for k, v in answers.items() if k in sampled and isinstance(v, RequestFailed)}
    assert failed == {}
    for kind, keys in documented.items():
        if kind in shapes.BY_HAND:
            continue
        assert isinstance(answers[kind], dict), kind
        assert list(answers[kind]) == keys, f"{kind}: run python clients/reply_shapes.py"
    assert sampled <= set(documented)  # every sampled kind is in the table
    assert sampled | set(shapes.BY_HAND) <= set(MESSAGES)  # and names a kind that exists
