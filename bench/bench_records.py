"""What one failed call costs the daemon in text handling: counts, not times.

One `evolve.on_failure` (a hook's failed call, decoded from the wire frames the hook sends) and
one `evolve.resolved` are answered in process by the rules actor, with memory holding a learned
typed repair and a learned transform (each confirmed three times, so a rewrite is offered). While
each ask runs, every call of these is counted wherever a module holds it:

* `json` — texts the JSON decoder reads (a call's arguments, a rule's spec, anything);
* `unwrap` — the harness wrapper peeled off an error (`logic/failures/unwrap.unwrap`);
* `redact` — the redactor run over a text (`logic/text/redact.redact`);
* `analyze` — the failure fingerprinted (`logic/failures/fingerprint`).

and the **walk**: the slmactor modules Python enters on the event loop's thread while the ask
runs (`sys.setprofile` call events, a run of calls inside one module is one stop), how many
distinct modules, and how many stops go back to a module the walk had already left. (The counts
include the rules store's save, which runs in a worker thread: `resolved`'s redactions are the
store redacting every rule it writes; the walk does not follow that thread.)

The file runs against any checkout (`python bench/bench_records.py` with that checkout's
interpreter): where the house has no `ToolCall` record it sends the older fields (the tool, the
arguments as JSON text, the error), as hooks of that version did — so the figure before a change
is measured by the same code as the figure after it.

    .venv/bin/python -m bench records
    (cd OTHER_CHECKOUT && .venv/bin/python "$OLDPWD/bench/bench_records.py")   # same counts there
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

NOW = 1_790_000_000.0
BASH_FAILED = ({"command": "pytest -q", "description": "tests"},
               "Exit code 127\n/bin/bash: line 1: pytest: command not found")
BASH_FIXED = {"command": "uv run pytest -q", "description": "tests"}
EDIT_FAILED = ({"file_path": "a.py", "old_string": "  7| x = 1", "new_string": "  7| x = 2"},
               "<tool_use_error>String to replace not found in file.\nString:   7| x = 1</tool_use_error>")
EDIT_FIXED = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}


class _Router:
    owners = {"fail": "working", "resolve": "working"}

    def deliver(self, owner: str, client: bytes, kind: bytes, body: bytes) -> bool:
        return True


def _has_records() -> bool:
    try:
        import slmactor.logic.failures.call  # noqa: F401
    except ImportError:
        return False
    return True


def _on_failure(tool: str, args: dict[str, Any], error: str, project: Path) -> Any:
    from slmactor.protocol import codec
    from slmactor.protocol.messages import EvolveOnFailure

    if _has_records():
        from slmactor import harnesses

        call = harnesses.get("claude").tool_call(tool, args, ok=False, error=error)
        msg = EvolveOnFailure(project=str(project), run_id="r9", call=call.to_wire(),
                              model="claude-sonnet-4-5")
    else:
        msg = EvolveOnFailure(project=str(project), run_id="r9", tool=tool, message=error,
                              args=json.dumps(args), model="claude-sonnet-4-5")
    return codec.load(codec.dump(msg))


def _resolved(tool: str, failed: dict[str, Any], error: str, fixed: dict[str, Any], run: str,
              project: Path) -> Any:
    from slmactor.protocol import codec
    from slmactor.protocol.messages import EvolveResolved

    if _has_records():
        from slmactor import harnesses

        room = harnesses.get("claude")
        msg = EvolveResolved(project=str(project), run_id=run,
                             failed=room.tool_call(tool, failed, ok=False, error=error).to_wire(),
                             fixed=room.tool_call(tool, fixed).to_wire())
    else:
        msg = EvolveResolved(project=str(project), run_id=run, tool=tool, message=error,
                             failed_args=json.dumps(failed), fixed_args=json.dumps(fixed))
    return codec.load(codec.dump(msg))


@contextmanager
def _counting(counts: Counter[str]) -> Iterator[None]:
    """Count json decodes, unwraps, redactions and fingerprint analyses, wherever a module holds
    the function (a module-level `from … import` keeps its own reference)."""
    from slmactor.logic.failures import fingerprint, unwrap
    from slmactor.logic.text import redact

    analyze_name = "_analyze" if hasattr(fingerprint, "_analyze") else "analyze"
    targets = {"unwrap": unwrap.unwrap, "redact": redact.redact,
               "analyze": getattr(fingerprint, analyze_name)}
    patched: list[tuple[Any, str, Any]] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*a: Any, **k: Any) -> Any:
            counts[name] += 1
            return fn(*a, **k)
        return counted

    wrappers = {name: wrap(name, fn) for name, fn in targets.items()}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("slmactor"):
            continue
        for attr, value in list(vars(module).items()):
            for name, fn in targets.items():
                if value is fn:
                    patched.append((module, attr, value))
                    setattr(module, attr, wrappers[name])
    original = json.JSONDecoder.decode

    def decode(self: json.JSONDecoder, s: str, *a: Any, **k: Any) -> Any:
        counts["json"] += 1
        return original(self, s, *a, **k)

    json.JSONDecoder.decode = decode  # type: ignore[method-assign]
    try:
        yield
    finally:
        json.JSONDecoder.decode = original  # type: ignore[method-assign]
        for module, attr, value in patched:
            setattr(module, attr, value)


@contextmanager
def _walking(stops: list[str]) -> Iterator[None]:
    """The slmactor modules entered, one stop per run of calls in one module."""

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = str(frame.f_globals.get("__name__", ""))
        if name.startswith("slmactor") and (not stops or stops[-1] != name):
            stops.append(name)

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def _walk_figures(stops: list[str]) -> dict[str, int]:
    seen: set[str] = set()
    back = 0
    for name in stops:
        if name in seen:
            back += 1
        seen.add(name)
    return {"stops": len(stops), "modules": len(seen), "returns": back}


def _now() -> float:
    return NOW


def _quiet(actor: str, text: str, project: str = "") -> None:
    return None


async def _measure() -> dict[str, dict[str, int]]:
    import anyio

    from slmactor.actors.rules import RulesActor
    from slmactor.config import Settings
    from slmactor.runtime.actor import ActorContext
    from slmactor.runtime.router import Router
    from slmactor.runtime.stats import ActorStats

    out: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "repo"
        project.mkdir()
        base = Settings(runtime_dir=home / "rt", home=home / "home", log_dir=home / "log")
        ctx = ActorContext(settings=base, router=cast(Router, _Router()), stats=ActorStats("rules"),
                           clock=_now, warn=_quiet)
        actor = RulesActor(ctx)
        async with anyio.create_task_group() as tg:
            actor._attach(tg)
            await actor.on_start()
            for tool, (failed, error), fixed in (("Bash", BASH_FAILED, BASH_FIXED),
                                                  ("Edit", EDIT_FAILED, EDIT_FIXED)):
                for run in ("r1", "r2", "r3"):
                    await actor.resolved(_resolved(tool, failed, error, fixed, run, project))
            asks: list[tuple[str, Callable[[Any], Any], Any]] = [
                ("on_failure typed repair (Bash)", actor.on_failure,
                 _on_failure("Bash", *BASH_FAILED, project)),
                ("on_failure transform (Edit)", actor.on_failure,
                 _on_failure("Edit", *EDIT_FAILED, project)),
                ("resolved (Bash)", actor.resolved,
                 _resolved("Bash", *BASH_FAILED, BASH_FIXED, "r4", project)),
            ]
            for label, ask, request in asks:
                counts: Counter[str] = Counter()
                stops: list[str] = []
                with _counting(counts), _walking(stops):
                    answer = await ask(request)
                assert answer, label
                out[label] = {**{k: counts[k] for k in ("json", "unwrap", "redact", "analyze")},
                              **_walk_figures(stops)}
            await actor.on_stop()
            tg.cancel_scope.cancel()
    return out


def measure() -> dict[str, dict[str, int]]:
    import anyio

    return anyio.run(_measure)


def run(quick: bool) -> list[dict[str, Any]]:
    rows = []
    for label, figures in measure().items():
        for key, value in figures.items():
            rows.append({"name": f"{label}: {key}", "value": value, "unit": "count",
                         "target": "0" if key == "json" else ""})
    return rows


if __name__ == "__main__":
    for label, figures in measure().items():
        print(f"{label:<34} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
