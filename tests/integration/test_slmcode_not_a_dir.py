"""`.slmcode` that cannot be created (a regular file): the episode layer keeps working in memory
and says so in `status`, as the facts layer does (issue 16; it answered INTERNAL: FileExistsError).
"""

from __future__ import annotations

from slmactor.protocol.messages import EpisodeAppend, EpisodeGet, EpisodeRecent, MemoryRecall
from slmactor.testing import DaemonProcess


def test_episodes_are_kept_in_memory_and_status_says_so(daemon: DaemonProcess) -> None:
    blocker = daemon.project / ".slmcode"
    blocker.write_text("a file where the store directory should be\n")
    with daemon.client() as client:
        first = client.ask(EpisodeAppend(episode={"query": "fix the parser bug", "success": True}))
        second = client.ask(EpisodeAppend(episode={"query": "add a cli flag", "success": False}))
        assert first["added"] and second["added"]
        assert client.ask(EpisodeRecent(n=5))["total"] == 2
        assert client.ask(EpisodeGet(episode_id=first["id"]))["query"] == "fix the parser bug"
        hits = client.ask(MemoryRecall(query="parser bug"))["hits"]
        assert [h["id"] for h in hits] == [first["id"]]
        warnings = [w["text"] for w in client.status()["warnings"] if w["actor"] == "recall"]
    assert any("kept in memory only" in w and str(blocker / "memory") in w for w in warnings)
    assert blocker.is_file() and blocker.read_text().startswith("a file")
