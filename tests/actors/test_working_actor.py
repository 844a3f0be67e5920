"""The working actor in process: the hot-path batch handler, bad events, read-your-writes, mirrors.

No sockets: the actor gets a context with a fake clock and a warning list, and its `on_events`
gets `[kind, body]` frames exactly as the events loop drains them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.lowlevel
import msgpack
import pytest

from slmactor.actors.working import WorkingActor
from slmactor.config import Settings
from slmactor.protocol import PROTOCOL_VERSION, ErrorCode, RequestError, codec
from slmactor.protocol.messages import (
    ClientDropped,
    Decide,
    Fail,
    Focus,
    RecordTool,
    Resolve,
    RunReset,
    RunStart,
    Summarize,
    WorkingMirror,
    WorkingRender,
    WorkingSnapshot,
)
from slmactor.runtime.actor import ActorContext
from slmactor.runtime.router import Router
from slmactor.runtime.stats import ActorStats

pytestmark = pytest.mark.anyio
NOW = 1_790_000_000.0
#: Two real project directories: the project rule drops tells naming a directory that is not there.
_ROOTS = Path(tempfile.mkdtemp(prefix="sa-wa-"))
atexit.register(shutil.rmtree, _ROOTS, True)
P, Q = str(_ROOTS / "p"), str(_ROOTS / "q")
os.makedirs(P)
os.makedirs(Q)


class Harness:
    def __init__(self, tmp: Path) -> None:
        self.clock = NOW
        self.warnings: list[str] = []
        self.stats = ActorStats("working")
        ctx = ActorContext(
            settings=Settings(runtime_dir=tmp / "rt", home=tmp / "home", log_dir=tmp / "log"),
            router=cast(Router, None),
            stats=self.stats,
            clock=lambda: self.clock,
            warn=lambda actor, text, project="": self.warnings.append(text),
        )
        self.actor = WorkingActor(ctx)

    @property
    def extra(self) -> dict[str, Any]:
        return self.stats.extra


def frame(kind: str, **fields: Any) -> list[bytes]:
    return [kind.encode(), msgpack.packb({"v": PROTOCOL_VERSION, **fields})]


def tool(seq: int, **fields: Any) -> list[bytes]:
    base: dict[str, Any] = {"project": P, "run_id": "r", "tool": "Read", "client": "c1", "seq": seq}
    return frame("record_tool", **{**base, **fields})


async def test_batch_of_record_tool_events_is_applied_in_order(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(i + 1, path=f"f{i}.py", at=NOW + i) for i in range(30)])
    snap = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]
    assert snap["counters"] == {"calls": 30, "errors": 0, "redundant": 0}
    assert [e["path"] for e in snap["events"]] == [f"f{i}.py" for i in range(6, 30)]
    assert snap["files_read"] == [f"f{i}.py" for i in range(18, 30)]
    assert h.extra["events_received"] == 30 and h.extra["events_invalid"] == 0


async def test_runs_are_separate_per_project_and_run_id(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1), tool(2, run_id="other"), tool(3, project=Q), tool(4)])
    for project, run, calls in ((P, "r", 2), (P, "other", 1), (Q, "r", 1)):
        reply = await h.actor._on_render(WorkingRender(project=project, run_id=run))
        assert reply["counters"]["calls"] == calls
    assert h.extra["runs_live"] == 3


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ([b"record_tool"], "one frame"),
        ([b"record_tool", b"\xc1garbage"], "not msgpack"),
        ([b"record_tool", msgpack.packb([1, 2])], "not a map"),
        (frame("record_tool", project=P, run_id="r", tool="Read"), "no client is fine, but"),
        (tool(1, project=""), "no project (it would be filed where no read looks)"),
        (tool(1, project="relative/dir"), "relative project"),
        (tool(1, project=P + "/missing"), "project directory missing"),
        (tool(1, project=P + "\x00"), "NUL in project"),
        (frame("fail", run_id="r", key="k"), "fail without project"),
        (tool(1, v=99), "wrong version"),
        (tool(1, run_id=""), "missing run_id"),
        (tool(1, tool=""), "missing tool"),
        (tool(1, tool="   "), "blank tool"),
        (tool(1, path=7), "wrong-typed path"),
        (tool(1, ok="yes"), "wrong-typed ok"),
        (tool(1, at="now"), "wrong-typed at"),
        (tool(1, args="x" * 16_385), "oversize args"),
        (tool(1, error="e" * 16_385), "oversize error"),
        (tool(1, command="c" * 4_097), "oversize command"),
        (frame("focus", run_id="r", paths="a.py"), "focus paths not a list"),
        (frame("decide", text="no run id"), "decide without run_id"),
        (frame("episode.append"), "not a working tell"),
        (frame("no.such.kind", run_id="r"), "unknown kind"),
        ([b"\xff\xfe", msgpack.packb({"v": 1})], "kind not ascii"),
    ],
)
async def test_bad_events_are_dropped_counted_and_never_raise(
    tmp_path: Path, bad: list[bytes], why: str
) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1, path="before.py"), bad, tool(3, path="after.py")])
    reply = await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r"))
    paths = [e["path"] for e in reply["snapshot"]["events"]]
    if why.startswith("no client is fine"):  # a valid event without (client, seq) is applied
        assert h.extra["events_invalid"] == 0
        return
    assert paths == ["before.py", "after.py"], why
    assert h.extra["events_invalid"] == 1, why
    assert h.extra["events_received"] == 3
    assert len(h.warnings) == 1 and h.warnings[0].startswith("dropped bad event #1: ")


async def test_bad_event_warnings_are_sampled(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(i, run_id="") for i in range(1, 1001)])
    assert h.extra["events_invalid"] == 1000
    assert [w.split(":")[0] for w in h.warnings] == [
        "dropped bad event #1", "dropped bad event #10", "dropped bad event #100", "dropped bad event #1000",
    ]


async def test_event_time_zero_or_garbage_becomes_now(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1, at=0), tool(2, at=float("nan")), tool(3, at=1e300), tool(4, at=NOW - 5)])
    events = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]["events"]
    stamps = [e["at"] for e in events]
    assert stamps[:3] == ["2026-09-21T14:13:20Z"] * 3
    assert stamps[3] == "2026-09-21T14:13:15Z"


async def test_other_tells_on_events_socket_and_on_ctl(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events(
        [
            frame("focus", project=P, run_id="r", paths=["a.py", "b.py"], client="c", seq=1),
            frame("decide", project=P, run_id="r", text="use stdlib\nbecause", client="c", seq=2),
            frame("fail", project=P, run_id="r", key="k", tool="Edit", message="boom", client="c", seq=3),
            frame("summarize", project=P, run_id="r", text="so far so good", client="c", seq=4),
            frame("client.dropped", client="c", count=7),
        ]
    )
    await h.actor._on_tell(Resolve(project=P, run_id="r", key="k", resolution="re-read", resolved_by="rule:x"))
    await h.actor._on_tell(RecordTool(project=P, run_id="r", tool="Bash", command="make", ok=False, error="e"))
    await h.actor._on_tell(Focus(project=P, run_id="r", paths=["c.py"]))
    await h.actor._on_tell(Decide(project=P, run_id="r", text="second"))
    await h.actor._on_tell(Summarize(project=P, run_id="r", text="changed"))
    await h.actor._on_tell(Fail(project=P, run_id="r", key="k2", message="again"))
    await h.actor._on_tell(ClientDropped(client="c", count=3))
    snap = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]
    assert snap["focus"] == ["c.py", "a.py", "b.py"]
    assert snap["decisions"] == ["use stdlib", "second"]
    assert snap["summary"] == "changed"
    assert [f["key"] for f in snap["resolved_failures"]] == ["k"]
    assert [f["message"] for f in snap["open_failures"]] == ["e", "again"]
    assert snap["counters"] == {"calls": 1, "errors": 1, "redundant": 0}
    assert h.extra["client_dropped"] == 10
    assert h.extra["events_invalid"] == 0


async def test_run_start_reset_and_render(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    empty = await h.actor._on_render(WorkingRender(project=P, run_id="r"))
    assert (empty["text"], empty["live"], empty["budget"]) == ("", False, 700)
    started = await h.actor._on_run_start(RunStart(project=P, run_id="r", task="Fix it", role="worker"))
    assert started == {"run_id": "r", "restarted": False,
                       "counters": {"calls": 0, "errors": 0, "redundant": 0}}
    h.actor.on_events([tool(1, path="a.py"), tool(2, path="a.py")])
    reply = await h.actor._on_render(WorkingRender(project=P, run_id="r", budget=50))
    assert reply["text"].startswith("## Working memory (this run)\nCurrent task: Fix it\nRole: worker\n")
    assert reply["tokens"] <= 50 and reply["budget"] == 50
    assert reply["counters"] == {"calls": 2, "errors": 0, "redundant": 1}
    assert await h.actor._on_run_reset(RunReset(project=P, run_id="r")) == {"reset": True, "runs": 1}
    assert await h.actor._on_run_reset(RunReset(project=P, run_id="r")) == {"reset": False, "runs": 0}
    assert (await h.actor._on_render(WorkingRender(project=P, run_id="r")))["live"] is False


async def test_asks_without_run_id_or_with_negative_budget_are_refused(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    with pytest.raises(RequestError) as err:
        await h.actor._on_render(WorkingRender(project=P, run_id=" "))
    assert err.value.code == ErrorCode.BAD_FIELD
    with pytest.raises(RequestError):
        await h.actor._on_render(WorkingRender(project=P, run_id="r", budget=-1))
    with pytest.raises(RequestError):
        await h.actor._on_run_start(RunStart(project=P))


async def test_render_waits_for_its_own_tells(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1, path="one.py")])
    results: dict[str, Any] = {}

    async def ask() -> None:
        results["reply"] = await h.actor._on_render(WorkingRender(project=P, run_id="r", client="c1", seq=3))

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        await anyio.lowlevel.checkpoint()  # the ask is now waiting for seq 3
        assert "reply" not in results
        h.actor.on_events([tool(2, path="two.py")])
        await anyio.lowlevel.checkpoint()
        assert "reply" not in results
        h.actor.on_events([tool(3, path="three.py")])
    reply = results["reply"]
    assert reply["caught_up"] is True
    assert "- three.py" in reply["text"]


async def test_render_wait_is_bounded_when_the_tell_never_comes(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1)])
    with anyio.fail_after(5):
        reply = await h.actor._on_render(WorkingRender(project=P, run_id="r", client="c1", seq=99))
    assert reply["caught_up"] is False
    assert reply["counters"]["calls"] == 1
    ok = await h.actor._on_render(WorkingRender(project=P, run_id="r", client="c1", seq=1))
    assert ok["caught_up"] is True


async def test_mirror_writes_redacted_working_md(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()
    p = str(project)
    await h.actor._on_run_start(RunStart(project=p, run_id="r", task="deploy with token", role="worker"))
    h.actor.on_events(
        [tool(1, project=p, tool="Bash", command="curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz123456' x")]
    )
    reply = await h.actor._on_mirror(WorkingMirror(project=p, run_id="r"))
    path = project / ".slmcode" / "memory" / "WORKING.md"
    assert reply["written"] is True and reply["path"] == str(path)
    text = path.read_text()
    assert text.startswith("# Working memory\n\n_Snapshot from 2026-09-21T14:13:20Z.")
    assert "curl -H" in text
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in text
    gone = await h.actor._on_mirror(WorkingMirror(project=p, run_id="nope"))
    assert (gone["written"], gone["live"]) == (False, False)


async def test_evicted_runs_are_mirrored_by_housekeeping(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.runs.max_runs = 2
    projects = []
    for i in range(3):
        project = tmp_path / f"p{i}"
        project.mkdir()
        projects.append(project)
        h.actor.on_events([tool(i + 1, project=str(project), run_id=f"r{i}", path=f"file{i}.py")])
    assert h.extra["runs_evicted"] == 1
    await h.actor._flush_mirrors()
    mirror = projects[0] / ".slmcode" / "memory" / "WORKING.md"
    assert "- file0.py" in mirror.read_text()
    assert not (projects[1] / ".slmcode").exists()
    await h.actor.on_stop()  # the latest run of every project still live is mirrored at stop
    assert "- file2.py" in (projects[2] / ".slmcode" / "memory" / "WORKING.md").read_text()


def test_record_tool_caps_follow_the_wire_caps() -> None:
    frames = codec.dump(RecordTool(run_id="r", tool="Read", args="a" * 16_384))
    assert codec.load(frames)  # the codec accepts what the actor accepts


async def test_tool_classes_from_a_toml_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tool_classes.toml"
    path.write_text('read = ["peek"]\n[modes.mytool]\nlook = "read"\nchange = "edit"\n')
    monkeypatch.setenv("SLMACTOR_TOOL_CLASSES", str(path))
    h = Harness(tmp_path)
    await h.actor.on_start()
    h.actor.on_events([tool(1, tool="peek", path="a.py"), tool(2, tool="mytool", command="change", path="b.py")])
    snap = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]
    assert (snap["files_read"], snap["files_edited"]) == (["a.py"], ["b.py"])


async def test_broken_tool_classes_file_warns_and_keeps_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tool_classes.toml"
    path.write_text('read = "not a list"\n')
    monkeypatch.setenv("SLMACTOR_TOOL_CLASSES", str(path))
    h = Harness(tmp_path)
    await h.actor.on_start()
    assert len(h.warnings) == 1 and "tool classes not loaded" in h.warnings[0]
    h.actor.on_events([tool(1, tool="Read", path="a.py")])
    snap = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]
    assert snap["files_read"] == ["a.py"]


async def test_project_paths_are_canonical_so_asks_and_tells_meet(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    h.actor.on_events([tool(1, project=str(link) + "/", path="a.py"), tool(2, project=str(real), path="b.py")])
    reply = await h.actor._on_render(WorkingRender(project=str(real), run_id="r"))
    assert reply["counters"]["calls"] == 2
    assert h.extra["runs_live"] == 1


async def test_reset_star_forgets_every_run_of_the_project(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1, run_id="a"), tool(2, run_id="b"), tool(3, project=Q, run_id="a")])
    assert await h.actor._on_run_reset(RunReset(project=P, run_id="*")) == {"reset": True, "runs": 2}
    assert h.actor.runs.keys() == [(Q, "a")]


async def test_a_mirror_that_cannot_be_written_is_counted_and_warned(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    project = tmp_path / "blocked"
    project.mkdir()
    (project / ".slmcode").write_text("a file where the store directory should be")
    h.actor.on_events([tool(1, project=str(project), path="a.py")])
    await h.actor.on_stop()
    assert h.extra["mirror_errors"] == 1 and h.extra["mirrors_written"] == 0
    assert any(w.startswith("WORKING.md not written: ") for w in h.warnings)
    with pytest.raises(RequestError) as err:
        await h.actor._on_mirror(WorkingMirror(project=str(project), run_id="r"))
    assert err.value.code == ErrorCode.STORE_ERROR


async def test_a_client_far_behind_is_answered_without_waiting(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.actor.on_events([tool(1)])
    reply: dict[str, Any] | None = None
    with anyio.CancelScope(deadline=anyio.current_time() - 1):  # any await here is cancelled
        reply = await h.actor._on_render(WorkingRender(project=P, run_id="r", client="c1", seq=1 + 2001))
    assert reply is not None and reply["caught_up"] is False


async def test_a_re_sent_run_start_starts_the_run_over_unless_keep(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    await h.actor._on_run_start(RunStart(project=P, run_id="r", task="first"))
    h.actor.on_events([tool(1, tool="Bash", command="make", ok=False, error="boom"), tool(2, path="a.py")])
    again = await h.actor._on_run_start(RunStart(project=P, run_id="r", task="first"))
    assert again["restarted"] is True
    assert again["counters"] == {"calls": 0, "errors": 0, "redundant": 0}
    snap = (await h.actor._on_snapshot(WorkingSnapshot(project=P, run_id="r")))["snapshot"]
    assert snap["open_failures"] == [] and snap["events"] == []
    h.actor.on_events([tool(3, path="b.py")])
    kept = await h.actor._on_run_start(RunStart(project=P, run_id="r", task="second", keep=True))
    assert kept["restarted"] is False
    assert kept["counters"]["calls"] == 1


async def test_asks_without_a_usable_project_are_refused_the_same_way(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    for project in ("", "relative", P + "/missing"):
        for ask in (h.actor._on_run_start(RunStart(project=project, run_id="r")),
                    h.actor._on_render(WorkingRender(project=project, run_id="r")),
                    h.actor._on_snapshot(WorkingSnapshot(project=project, run_id="r"))):
            with pytest.raises(RequestError) as err:
                await ask
            assert err.value.code == ErrorCode.BAD_PROJECT
