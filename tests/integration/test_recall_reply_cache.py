"""Recall replies built from cached, once-redacted hits say exactly what they said before.

The recall actor keeps its hits' maps redacted between asks. A user who edits the episode log by
hand (a secret pasted into a summary) still never gets the secret back, on the first ask or from
the cache; and an episode forgotten and stored again under the same id is recalled as stored
the second time, not as cached the first time.
"""

from __future__ import annotations

from typing import Any

from slmactor.protocol.messages import EpisodeAppend, EpisodeForget, MemoryRecall
from slmactor.testing import spawn_daemon, stop_quietly

TOKEN = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0dF3gH6"


def _episode(summary: str) -> dict[str, Any]:
    return {"query": "speed up the tokenizer", "summary": summary, "files_changed": ["src/tok.py"],
            "success": True, "run_id": "run-7"}


def test_a_secret_edited_into_the_log_never_leaves_in_a_recall_reply(tmp_path: Any) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    first = spawn_daemon(home=home, project=project)
    try:
        with first.client() as client:
            client.ask(EpisodeAppend(episode=_episode("cached the vocabulary")))
        assert first.stop() == 0
    finally:
        stop_quietly(first)
    log = project / ".slmcode" / "memory" / "episodes.jsonl"
    log.write_text(log.read_text().replace("cached the vocabulary", f"cached the vocabulary, key {TOKEN}"))
    second = spawn_daemon(home=home, project=project)
    try:
        with second.client() as client:
            replies = [client.ask(MemoryRecall(query="tokenizer", n=3)) for _ in range(3)]
        # Edited by hand, the line no longer carries the user's signature: recalled quoted.
        assert replies[0]["hits"] and replies[0]["hits"][0]["episode"]["summary"].startswith(
            "«cached the vocabulary, key «redacted:")
        assert all(TOKEN not in str(reply) for reply in replies)
        unscored = [[{k: v for k, v in hit.items() if k != "score"} for hit in reply["hits"]]
                    for reply in replies]  # the score decays with the clock (recency)
        assert unscored[1] == unscored[0] and unscored[2] == unscored[0]
    finally:
        stop_quietly(second)


def test_an_episode_stored_again_under_its_id_is_recalled_as_stored_again(tmp_path: Any) -> None:
    daemon = spawn_daemon(home=tmp_path / "home", project=tmp_path / "project")
    try:
        with daemon.client() as client:
            client.ask(EpisodeAppend(episode=_episode("cached the vocabulary")))
            before = client.ask(MemoryRecall(query="tokenizer", n=3))["hits"]
            assert client.ask(EpisodeForget())["episodes_removed"] == 1
            client.ask(EpisodeAppend(episode=_episode("split on whitespace first")))
            after = client.ask(MemoryRecall(query="tokenizer", n=3))["hits"]
        assert before[0]["id"] == after[0]["id"]
        assert before[0]["episode"]["summary"] == "cached the vocabulary"
        assert after[0]["episode"]["summary"] == "split on whitespace first"
        assert after[0]["entry"]["summary"] == "split on whitespace first"
    finally:
        stop_quietly(daemon)
