"""The daemon comes up with every actor running and answers ping and status."""

from __future__ import annotations

from slmactor.testing import DaemonProcess

ACTORS = ["control", "working", "recall", "distiller", "rules", "bandit", "reflector", "graph", "metrics"]


def test_all_actors_running_and_answer_ping(daemon: DaemonProcess) -> None:
    with daemon.client() as client:
        status = client.status()
        assert [row["name"] for row in status["actors"]] == ACTORS
        assert {row["state"] for row in status["actors"]} == {"running"}
        assert status["health"] == "healthy"
        for name in ACTORS:
            assert client.ping(name) == {"actor": name, "pong": True, "state": "running"}
