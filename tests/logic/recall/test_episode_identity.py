"""Episode identity: a run's episode is named by its run id, so a retried or replayed
`run.finish` is stored once and two runs of one task in one second are two episodes."""

from __future__ import annotations

from slmactor.logic.recall.episode import (
    Episode,
    normalize_episode,
    request_episode_id,
    run_episode_id,
)

AT = 1_767_225_600.0


def _episode(run_id: str, at: float = AT) -> Episode:
    return Episode.from_dict(
        {"run_id": run_id, "query": "fix the flaky test", "files_changed": ["a.py"], "at": at}
    )


def test_two_runs_of_one_task_in_one_second_get_two_ids() -> None:
    first = normalize_episode(_episode("run-1"), AT)
    second = normalize_episode(_episode("run-2", AT + 0.4), AT)
    assert first.at == second.at and first.query == second.query
    assert first.id != second.id


def test_a_retry_of_one_run_gets_the_same_id_whenever_it_is_reflected() -> None:
    early = normalize_episode(_episode("run-7", AT), AT)
    late = normalize_episode(_episode("run-7", AT + 3600), AT + 3600)
    assert early.id == late.id == run_episode_id("run-7")


def test_without_a_run_id_the_time_based_id_of_s_2_2_is_kept() -> None:
    a = normalize_episode(_episode(""), AT)
    b = normalize_episode(_episode("", AT + 1), AT + 1)
    assert a.id.startswith("ep_") and a.id != b.id


def test_request_and_run_ids_name_different_episodes() -> None:
    assert request_episode_id("c1.5") != run_episode_id("c1.5")
    assert request_episode_id("c1.5") == request_episode_id(" c1.5 ")
