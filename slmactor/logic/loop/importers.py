"""The parts of reading a trajectory that every format shares, and slmactor's own format.

A trajectory file is recognised from its own shape, never guessed from a file name: slmactor's
`{"id", "query", "steps": [...]}` (SPEC S-17.1, `logic.loop.replay`) here; each harness's own
format (mini-swe-agent, SWE-agent `.traj`, OpenHands events and SDK events) in that harness's
room (`slmactor/harnesses/`), which the registry's `read_trajectory` tries in turn. Anything else
raises `UnknownTrajectoryFormat`, so a foreign file is refused instead of being replayed as an
empty run. A failed call whose next call of the same tool and program succeeded is given that
call's arguments as its fix (`pair_fixes`). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from slmactor.logic.loop.replay import Step, Trajectory

#: Characters of a task text kept as the trajectory's query.
QUERY_CHARS = 2000
#: Characters of an observation kept as a failed step's error.
ERROR_CHARS = 2000


class UnknownTrajectoryFormat(ValueError):
    """The data is none of the trajectory formats slmactor reads."""


def message_text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI-style content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] if isinstance(part.get("text"), str) else ""
                         for part in content if isinstance(part, Mapping))
    return ""


def program(args: str) -> str:
    """The first word of a command (the program it runs)."""
    words = args.split()
    return words[0] if words else ""


def pair_fixes(steps: list[Step]) -> list[Step]:
    """Give each failed tool step the arguments of the next successful call of the same tool
    and program (the call that got past the failure), when there is one."""
    out = list(steps)
    for i, step in enumerate(out):
        if step.kind != "tool" or step.ok or step.fixed_args:
            continue
        for later in out[i + 1:]:
            if later.kind == "tool" and later.tool == step.tool and \
                    program(later.args) == program(step.args):
                if later.ok:
                    out[i] = Step(kind="tool", tool=step.tool, args=step.args, ok=False,
                                  error=step.error, fixed_args=later.args,
                                  edit_attempt=step.edit_attempt)
                break
    return out


def trajectory_format(data: Any) -> str:
    """"slmactor" for slmactor's own format, else ""."""
    return "slmactor" if isinstance(data, Mapping) and isinstance(data.get("steps"), list) else ""


def own_trajectory(data: Mapping[str, Any], default_id: str) -> Trajectory:
    """slmactor's own format as a trajectory."""
    return Trajectory.from_dict(data, default_id=default_id)


def unknown(data: Any, hints: Sequence[str]) -> UnknownTrajectoryFormat:
    """The error for data in no known format, naming the formats that are known."""
    shape = (f"an object with keys {sorted(data)[:8]}" if isinstance(data, Mapping)
             else f"a JSON {type(data).__name__}")
    return UnknownTrajectoryFormat(
        f"not a trajectory this tool reads ({shape}); known: slmactor (steps), " + ", ".join(hints))
