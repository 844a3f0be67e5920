"""How a shell command was changed to get past an environment failure, as data: the *shape* of
the fix, and its application to another command.

A fix that the environment needed is rarely a new program; it is the same command run in the
right environment:

* `prefix` — something run first, in the same line: `nvm use 20 && npm test`,
  `source .venv/bin/activate && pytest`, `docker compose up -d db && npm test`;
* `wrap` — a runner put in front: `uv run pytest`, `mise exec -- node x.js`,
  `BUN_TEST_TIMEOUT=15000 bun test`, `corepack pnpm install`;
* `substitute` — another interpreter of the same runtime: `python3 app.py` →
  `.venv/bin/python app.py`, `pytest` → `.venv/bin/python -m pytest`;
* `background` — the same command sent to the background (`npm start > server.log 2>&1 &`,
  `nohup … &`), or the harness's own background option set on the call
  (`run_in_background: true`).

`shape_of(failed, fixed)` reads the shape from the two command lines (None: not an environment
fix — a change of what the command does is the model's work), `apply(shape, command)` makes the
same change to another command (None when it does not fit or is already there), and
`rewrite_safe(shape)` says whether a shape may ever be applied without the model: never one that
raises privileges or forces, deletes or kills anything. Pure.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from slmactor.logic.failures.runtimes import MANAGERS, backgrounds, head_family
from slmactor.logic.failures.verdict import command_heads

PREFIX, WRAP, SUBSTITUTE, BACKGROUND, ARGS = "prefix", "wrap", "substitute", "background", "args"
#: A wrapper or a substitution is at most this many words.
MAX_WORDS = 6
#: Words run first that set up an environment (activate a runtime, a venv, a manager).
_ACTIVATORS = frozenset({"source", ".", "nvm", "fnm", "volta", "asdf", "mise", "rtx", "pyenv",
                         "rbenv", "nodenv", "goenv", "conda", "micromamba", "mamba", "export",
                         "eval", "corepack", "direnv", "sdk", "jenv", "chruby", "rvm", "uv",
                         "poetry", "pipenv", "nix", "workon", "deactivate", "n"})
#: Words run first that start a service the command needs.
_STARTERS = frozenset({"docker", "docker-compose", "podman", "service", "systemctl", "brew",
                       "pg_ctl", "pg_ctlcluster", "redis-server", "mongod", "memcached",
                       "minikube", "colima", "kind", "supabase", "localstack"})
#: Runners put in front of a command that run it in the project's environment.
_WRAPPERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "micromamba",
                       "mise", "rtx", "asdf", "nix", "nix-shell", "direnv", "npx", "pnpm",
                       "pnpx", "bunx", "yarn", "bundle", "corepack", "env", "dotenv", "fnm",
                       "volta", "nvm", "pyenv", "rbenv", "scl", "devbox", "flox", "tox"})
#: Words a shape must never add: a rewrite never raises privileges, forces, deletes or kills.
_UNSAFE = frozenset({"sudo", "doas", "su", "rm", "rmdir", "kill", "pkill", "killall", "chmod",
                     "chown", "--force", "-f", "--no-verify", "--hard", "dd", "mkfs", "shutdown",
                     "reboot", "git", "curl", "wget", "eval", "|", "sh", "bash", "zsh"})
#: Call arguments that ask the harness for more permission: never set by a rewrite.
_ESCALATIONS = frozenset({"sandbox_permissions", "with_escalated_permissions",
                          "dangerouslyDisableSandbox", "dangerously_disable_sandbox"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_SPACE = re.compile(r"\s+")
_BACKGROUND_TAIL = re.compile(r"^(?:(?:\d?>>?|&>>?)\s*\S+\s*)*(?:2>&1\s*)?&\s*$")


@dataclass(frozen=True, slots=True)
class Shape:
    """What changed: `kind` (PREFIX, WRAP, SUBSTITUTE, BACKGROUND, ARGS) and its words.

    `words`: the prefix (with its `&&`/`;`), the wrapper, or the substitute; `was`: the words a
    substitution replaced; `tail`: what a background fix appended (`> x.log 2>&1 &`) and
    `nohup` whether it also put `nohup` in front; `args`: the call's arguments an ARGS fix set.
    """

    kind: str
    words: str = ""
    was: str = ""
    tail: str = ""
    nohup: bool = False
    args: Mapping[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """What makes two shapes one fix (the words, not where they were seen)."""
        args = ",".join(f"{k}={self.args[k]!r}" for k in sorted(self.args))
        return f"{self.kind}|{self.words}|{self.was}|{self.tail}|{int(self.nohup)}|{args}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for name in ("words", "was", "tail"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.nohup:
            out["nohup"] = True
        if self.args:
            out["args"] = dict(self.args)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Shape | None:
        if not isinstance(data, Mapping) or data.get("kind") not in (PREFIX, WRAP, SUBSTITUTE,
                                                                     BACKGROUND, ARGS):
            return None
        args = data.get("args")
        return cls(str(data["kind"]), str(data.get("words") or ""), str(data.get("was") or ""),
                   str(data.get("tail") or ""), data.get("nohup") is True,
                   dict(args) if isinstance(args, Mapping) else {})


def norm(command: str) -> str:
    """A command line with its blanks collapsed (what "the same command" compares)."""
    return _SPACE.sub(" ", command).strip()


def words_of(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def _first(words: str) -> str:
    split = words_of(words)
    return split[0].rsplit("/", 1)[-1] if split else ""


def shape_of(failed: str, fixed: str) -> Shape | None:
    """The environment fix that turned the command `failed` into `fixed`, or None."""
    a, b = norm(failed), norm(fixed)
    if not a or not b or a == b:
        return None
    if b.endswith(a) and b[len(b) - len(a) - 1: len(b) - len(a)].isspace():
        before = b[: len(b) - len(a)].rstrip()
        if before.endswith(("&&", ";")):
            first = _first(before)
            if first in _ACTIVATORS or first in _STARTERS or _ASSIGNMENT.match(before):
                return Shape(PREFIX, before)
            return None  # `cd x &&`, `mkdir -p y &&`: a shell state, not the project's
        pre = words_of(before)
        if not pre or len(pre) > MAX_WORDS:
            return None
        if before == "nohup":
            return None
        if pre[0] in _WRAPPERS or all(_ASSIGNMENT.match(w) for w in pre):
            return Shape(WRAP, before)
        return None
    core = b.removeprefix("nohup ")
    if core.startswith(a) and core[len(a): len(a) + 1].isspace():
        tail = core[len(a):].strip()
        if _BACKGROUND_TAIL.match(tail):
            return Shape(BACKGROUND, tail=tail, nohup=core is not b)
        return None
    return _substitution(a, b)


def _substitution(a: str, b: str) -> Shape | None:
    wa, wb = words_of(a), words_of(b)
    k = 0
    while k < min(len(wa), len(wb)) and wa[-1 - k] == wb[-1 - k]:
        k += 1
    old, new = wa[: len(wa) - k], wb[: len(wb) - k]
    if not k or not old or not new or len(old) > 2 or len(new) > MAX_WORDS:
        return None
    family = head_family(old[0])
    if not family or head_family(new[0]) != family:
        return None  # another program is another command, not another interpreter of it
    return Shape(SUBSTITUTE, " ".join(shlex.quote(w) for w in new),
                 " ".join(shlex.quote(w) for w in old))


def args_shape(failed: Mapping[str, Any], fixed: Mapping[str, Any]) -> Shape | None:
    """A background option the harness takes, set on the same command (`run_in_background`,
    `is_background`): an ARGS shape; None for any other change of arguments."""
    changed = {k: v for k, v in fixed.items() if failed.get(k) != v and k not in ("command", "cmd")}
    if changed and all("background" in k.lower() and v is True for k, v in changed.items()):
        return Shape(ARGS, args=changed)
    return None


def apply(shape: Shape, command: str) -> str | None:
    """`command` with the same change made; None when the shape does not fit it or the command
    already has it."""
    c = norm(command)
    if not c:
        return None
    if shape.kind == PREFIX:
        if c.startswith(shape.words) or _first(shape.words) == _first(c):
            return None
        return f"{shape.words} {c}"
    if shape.kind == WRAP:
        if c.startswith(shape.words + " ") or _first(shape.words) == _first(c):
            return None
        return f"{shape.words} {c}"
    if shape.kind == SUBSTITUTE:
        was, words = words_of(shape.was), words_of(c)
        if words[: len(was)] != was:
            return None
        rest = " ".join(shlex.quote(w) for w in words[len(was):])
        return f"{shape.words} {rest}".strip()
    if shape.kind == BACKGROUND:
        if backgrounds(c):
            return None
        return f"{'nohup ' if shape.nohup else ''}{c} {shape.tail}"
    return None


def applies_to(shape: Shape, command: str) -> bool:
    return apply(shape, command) is not None


def rewrite_safe(shape: Shape) -> bool:
    """Whether the shape may be applied without the model: it adds nothing that raises
    privileges, forces, deletes, kills, fetches or runs a shell of its own, and sets no
    permission of the harness."""
    if shape.kind == ARGS:
        return not (set(shape.args) & _ESCALATIONS)
    added = f"{shape.words} {shape.tail}"
    words = {w.rsplit("/", 1)[-1] for w in words_of(added)} | set(added.split())
    return not (words & _UNSAFE) and "$(" not in added and "`" not in added


def scope_of(shape: Shape, failed: str) -> tuple[str, str]:
    """(scope kind, scope value): where a fix learned on `failed` applies. A runtime's
    activation holds for its whole family (`nvm use 20 &&` before npm, pnpm, yarn, node);
    anything else for the command's head: an interpreter's substitute for the runs it was
    learned on (`python -m pytest`, not `python script.py`; the substitute's words must lead the
    command too), `npm start` in the background is not `npm test`."""
    heads = command_heads(failed)
    head = heads[0] if heads else _first(failed)
    family = head_family(head)
    if shape.kind in (PREFIX, WRAP) and family and _activates(shape):
        return "family", family
    return "head", head


def _activates(shape: Shape) -> bool:
    """A prefix or wrapper that selects a runtime or environment (not a service, not a setting)."""
    first = _first(shape.words)
    if shape.kind == WRAP and all(_ASSIGNMENT.match(w) for w in words_of(shape.words)):
        return any(w.startswith(("PATH=", "VIRTUAL_ENV=", "NODE_VERSION=")) for w in
                   words_of(shape.words))
    return first in _ACTIVATORS or first in MANAGERS or first in ("uv", "poetry", "pipenv",
                                                                  "pdm", "hatch", "rye")


def in_scope(scope: tuple[str, str], command: str) -> bool:
    """Whether a command is one a fact of this scope speaks about."""
    kind, value = scope
    heads = command_heads(command)
    if kind == "family":
        return any(head_family(h) == value for h in heads[:1])
    if kind == "words":
        words = words_of(norm(command))
        was = words_of(value)
        return words[: len(was)] == was
    return bool(heads) and heads[0] == value


def topic_of(shape: Shape, cls: str) -> str:
    """What kind of environment fact a fix is (for its wording and for the block)."""
    if shape.kind in (BACKGROUND, ARGS):
        return "background"
    if shape.kind == SUBSTITUTE:
        return "interpreter"
    first = _first(shape.words)
    if shape.kind == PREFIX and first in _STARTERS:
        return "service"
    if _activates(shape):
        return "runtime"
    if cls in ("timeout", "server_no_return"):
        return "setting"
    return "environment"
