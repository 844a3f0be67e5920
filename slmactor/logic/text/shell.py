"""A shell line read for what it works on (its target), from its structure: the file of a file tool, the URL of
a web tool, and for a shell command its goal — the program (by any path, version or runner), its
sub-command and its operands.

Two relations are built on it, one narrow and one broad, because they answer different questions:

* `does_what(failed, other)`: `other` does what `failed` tried — the same goal step (same
  program and sub-command, same operands; options, preparation steps before it, a `cd` added or
  dropped, another path to the program or a runner around it may differ). Only then can the
  difference between two calls be a *repair* of the first; another package, another test
  selection, another file or another program is another target, never a repair.
* `reaches(failed, other)`: a later success that got to what `failed` was after, in any of its
  forms (the same program and sub-command on any operands, the same file by another spelling or
  a near one). A failure is "unresolved" only when no later call of its session reaches it.

Also: the paths a command deletes (`rm`, `git rm`, `rmdir`, `unlink`, the source of `mv`), the
steps that only set up a shell (`cd`, `export`, `mkdir` …: never a project fact), and a near
spelling of a path. Pure: no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

#: Steps that do nothing to a target (left out when reading what a command works on).
_NO_TARGET = frozenset({"echo", "printf", "sleep", "true", ":", "pwd", "export", "source", ".",
                        "cd", "pushd", "popd", "set", "unset", "alias", "clear", "wait", "exit"})
#: Steps that change only the state of one shell or working tree for a while: never a project
#: fact ("Run `cd ..` first" is true of one session, not of the project).
SHELL_STATE = frozenset({"cd", "pushd", "popd", "mkdir", "export", "unset", "source", ".", "set",
                         "alias", "touch", "rm", "rmdir", "kill", "pkill", "killall", "git stash",
                         "git checkout", "git switch", "git reset", "git clean", "git restore",
                         "sleep", "echo", "printf", "true", ":", "pwd", "clear", "wait"})
_PREFIX = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin", "stdbuf", "nice",
                     "ionice", "caffeinate"})
#: Programs whose first operand is a sub-command (`git push`, `npm test`, `go test`).
_SUBCOMMANDS = frozenset({"git", "npm", "pnpm", "yarn", "bun", "go", "cargo", "gh", "docker",
                          "kubectl", "make", "uv", "poetry", "dotnet", "mvn", "gradle", "mise",
                          "just", "deno", "helm", "terraform", "pip", "brew", "apt", "apt-get",
                          "systemctl", "rustup", "nx", "turbo", "wrangler", "firebase", "vercel",
                          "supabase", "aws", "gcloud", "az", "flutter", "dart", "swift", "rake",
                          "bundle", "composer", "php", "hatch", "tox", "nox", "conda", "git-lfs"})
#: Runners that run another program (`npx jest`, `uv run pytest`, `pnpm exec tsc`).
_RUNNERS = {"npx": 0, "bunx": 0, "uvx": 0, "pipx": 1, "uv": 1, "poetry": 1, "pnpm": 1, "yarn": 1,
            "bun": 1, "hatch": 1, "pdm": 1, "rye": 1, "pixi": 1, "mise": 1, "conda": 1}
_RUNNER_VERBS = frozenset({"run", "exec", "dlx", "x"})
#: Options whose value selects what a command works on (a package, a test, a directory): their
#: value is an operand. The value of any other option is a setting.
_SELECTORS = frozenset({"--filter", "-F", "-p", "--package", "-k", "--workspace", "-w", "--repo",
                        "-R", "--project", "-C", "--manifest-path", "--test", "--bin", "--example",
                        "-run", "--run", "-t", "--testNamePattern", "--grep", "-g", "--dir",
                        "--cwd", "--prefix", "-f", "--file", "--config", "-c", "--target",
                        "--lib", "--scope", "--branch", "-b", "--namespace", "-n", "--context",
                        "--app", "--env"})
#: Options known to take a value that is a setting (its value is not an operand).
_VALUED = frozenset({"--json", "--jq", "--limit", "--tail", "--timeout", "--format", "-o", "-m",
                     "--message", "--depth", "--since", "--until", "--max-count", "--color",
                     "--output", "-A", "-B", "-e", "--reporter", "--tb", "--log-level", "-j",
                     "--jobs", "--lines", "--head", "--max-old-space-size", "-X", "-H", "-d",
                     "--data", "--header", "--request", "-u", "--user", "--port", "--host",
                     "--query"})
_NUMBER = re.compile(r"^[+-]?\d[\d.,:]*[a-zA-Z%]{0,3}$")
_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?$")
_DELETERS = frozenset({"rm", "rmdir", "unlink", "git rm", "trash"})
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def segments(command: str) -> list[str]:
    """The simple commands of a shell line: split at `&&`, `||`, `;`, `|` and line ends outside
    quotes, with here-document bodies left out (a truncated line just ends)."""
    out: list[str] = []
    current: list[str] = []
    quote = ""
    i, n = 0, min(len(command), 4000)
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < n:
                current.append(command[i:i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
            current.append(c)
        elif c in "'\"":
            quote = c
            current.append(c)
        elif c == "\\" and i + 1 < n:
            current.append(command[i:i + 2])
            i += 2
            continue
        elif c in ";|\n&":
            if c == "&" and command[i + 1:i + 2] != "&":
                current.append(c)  # `2>&1`, a background `&`
                i += 1
                continue
            text = "".join(current)
            out.append(text)
            current = []
            doc = _HEREDOC.search(text)
            if doc and c == "\n":
                # Skip the here-document's body, up to its terminator line.
                end = re.compile(rf"^\s*{re.escape(doc.group(2))}\s*$", re.MULTILINE).search(
                    command, i + 1)
                i = end.end() if end else n
                continue
            i += 2 if command[i:i + 2] in ("&&", "||") else 1
            continue
        else:
            current.append(c)
        i += 1
    out.append("".join(current))
    return [s for s in (s.strip() for s in out) if s]




def words_of(text: str) -> list[str]:
    """A shell step's words as the shell reads them (quotes taken off; plain split when the
    quoting does not close)."""
    try:
        return shlex.split(text, posix=True, comments=False)
    except ValueError:
        return text.split()


def program_name(word: str) -> str:
    """A program by its name, whatever path or version calls it: `.venv/bin/python3.12` → python,
    `/opt/homebrew/bin/gh` → gh; a project's own script keeps its path (`./run.sh`)."""
    low = word.strip().lower()
    base = low.replace("\\", "/").rsplit("/", 1)[-1]
    base = base.removesuffix(".exe")
    if _PYTHON.match(base):
        return "python"
    if low.startswith((".", "/")) and "/bin/" not in low and "node_modules" not in low:
        return low  # a script of the project, named as written
    if base in ("node", "nodejs"):
        return "node"
    return base


@dataclass(frozen=True, slots=True)
class Step:
    """One simple command of a shell line, read for its target."""

    text: str
    #: The program by its name (a runner and prefix words taken off), "" for an empty step.
    program: str
    #: Its sub-command (`push` of `git push`, the module of `python -m`), "" when none.
    sub: str
    #: Non-option words and the values of selecting options (`--filter=web`), in order.
    operands: tuple[str, ...]
    #: Options and their setting values, in order.
    options: tuple[str, ...]

    @property
    def head(self) -> str:
        return f"{self.program} {self.sub}".strip()

    @property
    def acts(self) -> bool:
        """Whether the step does something to a target (not `echo`, `cd`, `export` …)."""
        return bool(self.program) and self.program not in _NO_TARGET

    @property
    def shell_state(self) -> bool:
        return self.head in SHELL_STATE or self.program in SHELL_STATE


def read_step(text: str) -> Step:
    """One simple command read for its program, sub-command, operands and options."""
    words = words_of(text.replace("(", " ").replace(")", " "))
    while words and (_ASSIGN.match(words[0]) or words[0] in _PREFIX):
        words = words[1:]
    if words and words[0] == "timeout":
        words = words[1:]
        while words and (words[0].startswith("-") or _NUMBER.match(words[0])):
            words = words[1:]
    if not words:
        return Step(text, "", "", (), ())
    program = program_name(words[0])
    rest = words[1:]
    # A runner running another program: `npx jest`, `uv run pytest`, `pnpm exec tsc`.
    skip = _RUNNERS.get(program)
    if skip is not None and rest:
        if skip == 0 and not rest[0].startswith("-"):
            program, rest = program_name(rest[0]), rest[1:]
        elif skip == 1 and rest[0] in _RUNNER_VERBS and len(rest) > 1 \
                and not rest[1].startswith("-"):
            program, rest = program_name(rest[1]), rest[2:]
    sub = ""
    if program == "python" and len(rest) > 1 and rest[0] == "-m":
        program, sub, rest = program_name(rest[1]), "", rest[2:]
    operands: list[str] = []
    options: list[str] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        if word.startswith("-") and len(word) > 1 and not _NUMBER.match(word):
            name, eq, value = word.partition("=")
            if name in _SELECTORS:
                if not eq and i + 1 < len(rest):
                    value, i = rest[i + 1], i + 1
                operands.append(f"{name}={value}")
            else:
                options.append(word)
                if not eq and name in _VALUED and i + 1 < len(rest):
                    options.append(rest[i + 1])
                    i += 1
        elif word in ("|", ">", ">>", "2>", "<") or word.startswith((">", "2>", "&>")):
            break  # redirections: what the output is written to is not what the step works on
        elif _NUMBER.match(word) and options and options[-1].startswith("-"):
            options.append(word)  # `-n 20`, `--tail 50`: a number after an option is its value
        else:
            operands.append(word)
        i += 1
    if program in _SUBCOMMANDS:
        sub, operands = _take_sub(operands)
        if program in ("npm", "pnpm", "yarn", "bun", "mise") and sub in ("run", "run-script"):
            sub, operands = _take_sub(operands)
    return Step(text, program, sub, tuple(operands), tuple(options))


def _take_sub(operands: list[str]) -> tuple[str, list[str]]:
    """The sub-command among a step's operands (the first that is no selector's value)."""
    for k, word in enumerate(operands):
        if not word.startswith("-"):
            return word.lower(), operands[:k] + operands[k + 1:]
    return "", operands


def steps(command: str) -> list[Step]:
    """The steps of a shell line, in order: split at `&&`, `||`, `;` and line ends outside quotes
    (a here-document's body is not a step); of a pipeline only its first stage (the later stages
    read what it wrote)."""
    return [read_step(part) for part in _stages(command)]


def _stages(command: str) -> list[str]:
    """The simple commands of a line without the later stages of each pipeline."""
    parts = segments(command)
    # `segments` splits at `|` too: a part that follows a lone `|` in the text is a later stage.
    kept: list[str] = []
    at = 0
    for part in parts:
        found = command.find(part, at)
        if found < 0:
            kept.append(part)
            continue
        before = command[at:found].rstrip()
        at = found + len(part)
        if kept and before.endswith("|") and not before.endswith("||"):
            continue
        kept.append(part)
    return kept


def acting(command: str) -> list[Step]:
    """The steps of a line that do something to a target."""
    return [s for s in steps(command) if s.acts]


def goal(command: str) -> Step | None:
    """What a line is for: its last acting step (the steps before it prepare it)."""
    found = acting(command)
    return found[-1] if found else None


def moved_to(command: str) -> str:
    """The folder a line moves to before its goal (`cd X && …`, `git -C X`), "" when none."""
    folder = ""
    for step in steps(command):
        if step.program in ("cd", "pushd") and step.operands:
            folder = _clean_path(step.operands[0])
    return folder


def _clean_path(path: str) -> str:
    p = path.strip().strip("'\"").replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.rstrip("/") or p


def _same_operand(a: str, b: str) -> bool:
    if a == b:
        return True
    pa, pb = _clean_path(a), _clean_path(b)
    if pa == pb:
        return True
    # One spelling of a path absolute, the other relative to the folder it ran in.
    return ("/" in pa or "/" in pb) and (pa.endswith("/" + pb) or pb.endswith("/" + pa))


def _same_operands(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if len(a) != len(b):
        return False
    rest = list(b)
    for word in a:
        match = next((w for w in rest if _same_operand(word, w)), None)
        if match is None:
            return False
        rest.remove(match)
    return True


def same_step(a: Step, b: Step) -> bool:
    """The same program and sub-command on the same operands (options may differ)."""
    return bool(a.program) and a.program == b.program and a.sub == b.sub \
        and _same_operands(a.operands, b.operands)


def does_what(failed: str, other: str) -> bool:
    """Whether shell line `other` does what `failed` tried: the same goal step (program, sub-command,
    operands), with other preparation, options, program path or runner; a `cd` added or dropped,
    but never a move to another folder."""
    a, b = goal(failed), goal(other)
    if a is None or b is None or not same_step(a, b):
        return False
    fa, fb = moved_to(failed), moved_to(other)
    return not (fa and fb) or _same_operand(fa, fb)


def reaches(failed: str, other: str) -> bool:
    """Whether shell line `other` got to what `failed` was after, in any of its forms: a step of
    it runs the program and sub-command of `failed`'s goal (on any operands)."""
    a = goal(failed)
    if a is None:
        return False
    # A project's own script (named by its path) is reached by any path to it: `scripts/x.sh`
    # that was not there, then `/home/u/skills/scripts/x.sh` that ran.
    name = basename(a.program)
    return any((s.program == a.program or ("/" in a.program + s.program
                                            and basename(s.program) == name)) and s.sub == a.sub
               for s in acting(other))


def only_shell_state(command: str) -> bool:
    """Whether every step of a line only sets up a shell or a working tree for a while."""
    found = [s for s in steps(command) if s.program]
    return bool(found) and all(s.shell_state for s in found)


def deleted_paths(command: str) -> list[str]:
    """The paths a shell line deletes (`rm`, `git rm`, `rmdir`, `unlink`, the source of `mv`)."""
    out: list[str] = []
    for step in steps(command):
        if step.head in _DELETERS or step.program in _DELETERS:
            out.extend(_clean_path(w) for w in step.operands if not w.startswith("-")
                       and "=" not in w)
        elif step.head in ("git mv",) or step.program == "mv":
            words = [w for w in step.operands if "=" not in w]
            out.extend(_clean_path(w) for w in words[:-1])
    return [p for p in out if p and not any(c in p for c in "*?$`")]


def created_paths(command: str) -> list[str]:
    """The paths a shell line creates or writes (`mkdir`, `touch`, the target of `cp`/`mv`,
    `> file`)."""
    out: list[str] = []
    for step in steps(command):
        if step.program in ("mkdir", "touch"):
            out.extend(_clean_path(w) for w in step.operands)
        elif step.program in ("cp", "mv", "ln") or step.head in ("git mv",):
            words = [w for w in step.operands if "=" not in w]
            out.extend(_clean_path(w) for w in words[-1:])
    out.extend(_clean_path(m.group(1))
               for m in re.finditer(r"(?<![<>&\d])>>?\s*([^\s;&|<>]+)", command))
    return [p for p in out if p]


#: Programs whose output, sent to a file, is that file's new content (`cat > a.py <<EOF`).
_WRITERS = frozenset({"cat", "echo", "printf", "tee"})


def edited_paths(command: str) -> list[str]:
    """The files a shell line edits in place or writes whole: `sed -i` / `perl -i` operands
    after the script, and the file a writer's output goes to (`cat > a.py <<EOF`, `tee a.py`) —
    an agent's edit made in the shell, as an edit tool's would be."""
    out: list[str] = []
    for step in steps(command):
        in_place = any(o == "-i" or o.startswith(("-i", "--in-place")) or (
            step.program == "perl" and o.startswith("-") and "i" in o[1:]) for o in step.options)
        if step.program in ("sed", "perl") and in_place:
            # The script is the first operand unless given by `-e`.
            scripted = any(o in ("-e", "--expression") for o in step.options)
            files = step.operands if scripted else step.operands[1:]
            out.extend(_clean_path(w) for w in files)
        elif step.program == "tee":
            out.extend(_clean_path(w) for w in step.operands)
        if step.program in _WRITERS:
            out.extend(_clean_path(m.group(1)) for m in re.finditer(
                r"(?<![<>&\d])>>?\s*([^\s;&|<>]+)", step.text))
    return [p for p in dict.fromkeys(out) if p and p != "/dev/null"
            and not any(c in p for c in "*?$`")]


def basename(path: str) -> str:
    return _clean_path(path).rsplit("/", 1)[-1].lower()


def same_path(a: str, b: str) -> bool:
    """One file by two spellings: equal, or one the other's tail under a folder (an absolute
    path and a relative one), slashes either way, case aside."""
    pa, pb = _clean_path(a).lower(), _clean_path(b).lower()
    if not pa or not pb:
        return False
    return pa == pb or pa.endswith("/" + pb) or pb.endswith("/" + pa)


def near_spelling(a: str, b: str) -> bool:
    """Another spelling of a missing path that names the file meant: the same folder (or one a
    tail of the other), and the names equal case aside, one a suffix of the other, or ≤ 2 edits
    apart."""
    pa, pb = _clean_path(a).lower(), _clean_path(b).lower()
    if not pa or not pb or pa == pb:
        return bool(pa) and pa == pb
    da, _, na = pa.rpartition("/")
    db, _, nb = pb.rpartition("/")
    if not (da == db or not da or not db or da.endswith("/" + db) or db.endswith("/" + da)):
        return False
    if na == nb or na.endswith(nb) or nb.endswith(na):
        return True
    return _edits_within(na, nb, 2)


def _edits_within(a: str, b: str, limit: int) -> bool:
    if abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit
