"""The typed repair union of a rule (SPEC S-10.1–S-10.3).

A repair is data the harness can *apply*, not prose to hope a model follows: transform the failed
call's arguments, switch tool, switch edit format, set a config value, run a command, or take a
named action.  `guidance` is the one non-deterministic kind (it costs a model round trip); every
repair carries guidance text anyway, so a harness that cannot apply the deterministic part can
still tell the model what to do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from slmactor.logic.evolve.transforms import TRANSFORMS

#: Repair kinds; every kind except `guidance` is deterministic.
#: Transforms that are only right when the author meant them (see `Repair.needs_intent`).
INTENT_DEPENDENT_TRANSFORMS = frozenset({"set_replace_all", "shrink_old_str"})

#: Typed repairs learned from the call that got past a failure (`typed_repairs.py`): their
#: content is a `Spec` (a precondition on the failed call and what to change).
TYPED_KINDS: tuple[str, ...] = ("substitute_command", "change_args", "correct_path",
                                "bound_output", "precondition", "do_not_retry")
KINDS: tuple[str, ...] = ("guidance", "transform_args", "switch_tool", "edit_format", "config",
                          "shell", "action", *TYPED_KINDS)
#: Actions the harness executes (evolve never executes anything itself).
ACTIONS: tuple[str, ...] = ("reread_file", "compact_context", "shorten_response",
                            "raise_max_tokens", "split_task", "force_different_action",
                            "escalate_model", "backoff_retry")


@dataclass(frozen=True, slots=True)
class Spec:
    """The content of a typed repair: `when`, the precondition on the failed call (its family,
    and per kind what must hold: the command's leading words for a substitution, the path for
    a correction, the keys a setting repairs), and `what` to change. Plain values only, read as
    fields: the rules store is the one place it becomes JSON text (`rules.json`)."""

    when: Mapping[str, Any]
    what: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"when": dict(self.when), "what": dict(self.what)}

    @classmethod
    def from_dict(cls, data: Any) -> Spec | None:
        """The spec a map holds (`{when, what}`, both maps); None for anything else."""
        if not isinstance(data, Mapping):
            return None
        when, what = data.get("when"), data.get("what")
        if not isinstance(when, Mapping) or not isinstance(what, Mapping):
            return None
        return cls(dict(when), dict(what))

    def identity(self) -> str:
        """The spec as a rule's id hashes it: one canonical text (sorted keys), the same a
        rule learned before specs were records stored, so its id does not move."""
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Repair:
    """One repair (S-10.2 json shape)."""

    kind: str
    guidance: str = ""
    transform: str = ""
    tool: str = ""
    edit_format: str = ""
    config_key: str = ""
    config_value: str = ""
    command: str = ""
    action: str = ""
    retry: bool = False
    #: A typed repair's content (None for the other kinds; a `switch_tool` learned from a fix
    #: carries one too).
    spec: Spec | None = None

    @property
    def deterministic(self) -> bool:
        return self.kind != "guidance"

    @property
    def needs_intent(self) -> bool:
        """True for transforms whose rightness depends on what the edit meant.

        `set_replace_all` changes every occurrence and `shrink_old_str` changes which text is
        replaced: one observed fix does not make them right for the next ambiguous edit (which
        may need more context instead), so a learned rule of this kind is suggested, never
        applied automatically.
        """
        return self.kind == "transform_args" and self.transform in INTENT_DEPENDENT_TRANSFORMS

    def problem(self) -> str:
        """Why this repair is invalid, or "" when it is valid (S-10.2 `Validate`)."""
        if self.kind not in KINDS:
            return f"unknown repair kind {self.kind!r}"
        if not self.guidance.strip():
            return "guidance text is required"
        checks = {
            "transform_args": (self.transform in TRANSFORMS, f"unknown transform {self.transform!r}"),
            "switch_tool": (bool(self.tool.strip()), "switch_tool needs a tool"),
            "edit_format": (bool(self.edit_format.strip()), "edit_format needs a format"),
            "config": (bool(self.config_key.strip()), "config needs config_key"),
            "shell": (bool(self.command.strip()), "shell needs a command"),
            "action": (self.action in ACTIONS, f"unknown action {self.action!r}"),
        }
        if self.kind in TYPED_KINDS and self.spec is None:
            return f"{self.kind} needs a spec with when and what"
        ok, why = checks.get(self.kind, (True, ""))
        return "" if ok else why

    @property
    def valid(self) -> bool:
        return not self.problem()

    def __str__(self) -> str:
        return {
            "transform_args": f"transform args: {self.transform}",
            "switch_tool": f"switch tool: {self.tool}",
            "edit_format": f"edit format: {self.edit_format}",
            "config": f"set {self.config_key}={self.config_value}",
            "shell": f"run: {self.command}",
            "action": f"action: {self.action}",
            **{kind: f"{kind.replace('_', ' ')}: {self.spec.identity() if self.spec else ''}"
               for kind in TYPED_KINDS},
        }.get(self.kind, "guidance")

    def to_dict(self) -> dict[str, Any]:
        # `spec` only where there is one (a map): the other kinds keep their shape on the wire.
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "spec"}
        if self.spec is not None:
            out["spec"] = self.spec.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Repair:
        def text(key: str) -> str:
            value = data.get(key, "")
            return value if isinstance(value, str) else str(value)

        return cls(kind=text("kind"), guidance=text("guidance"), transform=text("transform"),
                   tool=text("tool"), edit_format=text("edit_format"),
                   config_key=text("config_key"), config_value=text("config_value"),
                   command=text("command"), action=text("action"),
                   retry=data.get("retry") is True, spec=Spec.from_dict(data.get("spec")))
