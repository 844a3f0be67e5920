"""The pre-flight gate: a POSIX shell script a harness runs before every shell and read call, so
that Python starts only for the calls slmactor may change.

A `PreToolUse` hook on every call costs its whole process (34–40 ms of Python for ours against
4–7 ms for `cat`), and most calls are nothing a learned fix speaks of. The gate reads the
payload, looks for the project's table of trigger words (`.slmcode/evolve/preflight.keys`,
written by the daemon with the environment facts, `stores/environment`) from the harness's
project directory up, and hands the payload to `slmactor hook <format> <event>` only when

* one of those words is in the payload, as a word (`grep -wF -f`): a command some fact speaks of; or
* the call reads a file (the payload's read key, e.g. Claude Code's `file_path`) larger than the
  harness's limit (`find -size +Nc`): it would be refused or cut.

Otherwise it answers the harness's neutral output at once. The gate holds no logic of its own
beyond that test: what matches exactly, and what the call becomes, Python and the daemon decide.
Fail-open: a missing table, a payload without the key, a `find` or `grep` that is missing all end
in the neutral answer, exit 0.

`gate_text(command)` is the script (written beside the user's entry point by `hook install`,
`GATE_POINT`), `gate_args(...)` the arguments a harness's settings pass it. The file names are
the store's (`stores/environment`), spelled here so a hook imports no store (a test keeps them
equal).

Past the gate, the hook reads the table itself (`read_rows`, `matching`): per fact that may
rewrite a call, the exact commands it was seen failing on, whether it is proven, its tool (a
harness's own option) and the first words of the commands it speaks of. A call matches a row
when it is a command seen failing, exactly, or its first word is one a proven fact speaks of;
only then the hook asks the daemon (`evolve.preflight`), which decides what the call becomes. A
row that matches wrongly costs one ask, never a wrong rewrite. Stdlib only and total: a missing,
unreadable or odd table is no rows.
"""

from __future__ import annotations

import json
import os
import re
import shlex

#: Each user's gate, beside the entry point (`hooks/install.py` ENTRY_POINT).
GATE_POINT = ".local/share/slmactor/bin/slmactor-gate"
#: The trigger words and the table, under a project's root (`stores/environment`).
KEYS_FILE = ".slmcode/evolve/preflight.keys"
TABLE_FILE = ".slmcode/evolve/preflight.json"


def project_vars() -> tuple[str, ...]:
    """Environment variables by which harnesses name the project to their hooks, tried first
    (each room's `project_env`)."""
    from slmactor import harnesses

    return tuple(dict.fromkeys(r.project_env for r in harnesses.every() if r.project_env))


def gate_text(command: str, variables: tuple[str, ...] | None = None) -> str:
    """The gate script, running `command` (this installation's `slmactor`) when a call passes;
    `variables`: the environment variables by which harnesses name the project to their hooks
    (the rooms' `project_env`, by default), tried before the working directory.

    Arguments: FORMAT EVENT NEUTRAL [READ_KEY READ_LIMIT_BYTES [ALWAYS]]."""
    names = tuple(v for v in (project_vars() if variables is None else variables)
                  if v.replace("_", "").isalnum())
    # In an assignment nothing is split or globbed: no quotes needed around the expansions.
    project = "".join(f"${{{v}:-" for v in names) + "$PWD" + "}" * len(names)
    return (
        "#!/bin/sh\n"
        "# slmactor's pre-flight gate: Python runs only for a call a learned fix may speak of.\n"
        "# Written by `slmactor hook install`; arguments: FORMAT EVENT NEUTRAL [READ_KEY BYTES\n"
        "# [ALWAYS]] (ALWAYS: payload fragments, `|` between them, that always pass: an edit).\n"
        'fmt=$1 ev=$2 neutral=${3:-"{}"} rkey=$4 rmax=$5 always=$6\n'
        f"d={project}\n"
        "keys=\n"
        'while [ -n "$d" ]; do\n'
        f'  if [ -f "$d/{KEYS_FILE}" ]; then keys=$d/{KEYS_FILE}; break; fi\n'
        '  case $d in /|.) break ;; esac\n'
        '  d=${d%/*}; [ -n "$d" ] || d=/\n'
        "done\n"
        'if [ -z "$keys" ] && [ -z "$rkey" ] && [ -z "$always" ]; then\n'
        "  cat >/dev/null; printf '%s\\n' \"$neutral\"; exit 0\n"
        "fi\n"
        "payload=$(cat)\n"
        "go=\n"
        'if [ -n "$always" ]; then\n'
        "  set -f; saved=$IFS; IFS='|'\n"
        '  for pat in $always; do case $payload in *"$pat"*) go=1 ;; esac; done\n'
        "  IFS=$saved; set +f\n"
        "fi\n"
        # A word of the table anywhere in the payload, by the shell alone (no process), then
        # as a whole word by grep: most calls name none, and pay no fork.
        'if [ -z "$go" ] && [ -n "$keys" ]; then\n'
        "  hit=\n"
        '  while IFS= read -r k || [ -n "$k" ]; do\n'
        '    case $k in "") ;; *) case $payload in *"$k"*) hit=1; break ;; esac ;; esac\n'
        '  done <"$keys"\n'
        '  if [ -n "$hit" ] && printf \'%s\' "$payload" | grep -qwF -f "$keys" 2>/dev/null; then go=1; fi\n'
        "fi\n"
        'if [ -z "$go" ] && [ -n "$rkey" ] && [ -n "$rmax" ]; then\n'
        '  p=${payload#*\\"$rkey\\":\\"}\n'
        '  [ "$p" = "$payload" ] && p=${payload#*\\"$rkey\\": \\"}\n'
        '  if [ "$p" != "$payload" ]; then\n'
        '    p=${p%%\\"*}\n'
        '    if [ -f "$p" ] && [ -n "$(find "$p" -prune -size +"$rmax"c 2>/dev/null)" ]; then go=1; fi\n'
        "  fi\n"
        "fi\n"
        'if [ -n "$go" ]; then\n'
        f'  exec {command} hook "$fmt" "$ev" <<SLMACTOR_GATE_PAYLOAD\n'
        "$payload\n"
        "SLMACTOR_GATE_PAYLOAD\n"
        "fi\n"
        "printf '%s\\n' \"$neutral\"\n")


def gate_args(fmt: str, event: str, neutral: str, read_key: str = "", read_limit: int = 0,
              always: tuple[str, ...] = ()) -> str:
    """The arguments of a harness's gate command line, quoted for a shell."""
    args = [fmt, event, neutral]
    if (read_key and read_limit > 0) or always:
        args += [read_key if read_limit > 0 else "", str(read_limit) if read_key else ""]
    if always:
        args.append("|".join(always))
    return " ".join(shlex.quote(a) for a in args)


#: The table is small by construction; anything larger is not ours.
MAX_TABLE_BYTES = 1 << 20
_SPACE = re.compile(r"\s+")
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "nice", "timeout"})


def read_rows(project: str) -> list[dict[str, object]]:
    """The project's pre-flight rows (none when there is no table)."""
    path = os.path.join(project, TABLE_FILE)
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(MAX_TABLE_BYTES + 1)[:MAX_TABLE_BYTES])
    except (OSError, ValueError):
        return []
    rows = data.get("rows") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def norm(command: str) -> str:
    return _SPACE.sub(" ", command).strip()


def first_word(command: str) -> str:
    """The program a shell line runs first: past `cd x &&`, assignments and `sudo`/`env`-style
    prefixes, without its directory."""
    for segment in _SEPARATORS.split(command):
        words = segment.split()
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIX_WORDS
                         or words[0].startswith("-") or words[0][:1].isdigit()):
            words = words[1:]
        if not words or words[0] == "cd":
            continue
        return words[0].strip("'\"").rsplit("/", 1)[-1]
    return ""


def matching(rows: list[dict[str, object]], command: str, tool: str = "") -> list[str]:
    """The ids of the facts whose row speaks of this call (the daemon decides the rest)."""
    text = norm(command)
    if not text:
        return []
    word = first_word(text)
    found: list[str] = []
    for row in rows:
        fact = row.get("fact")
        if not isinstance(fact, str):
            continue
        row_tool = row.get("tool")
        if isinstance(row_tool, str) and row_tool and tool and row_tool != tool:
            continue
        exact = row.get("exact")
        keys = row.get("keys")
        if (isinstance(exact, list) and text in exact) or (
                row.get("proven") is True and isinstance(keys, list) and word in keys):
            found.append(fact)
    return found
