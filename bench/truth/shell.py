"""Shell lines and paths as the truth labeller reads them: text normalisation (the product clips
with `…`, redacts, drops quotes), a quote-aware split of a command into its steps, each step's head
and words, which words are paths, paths made project-relative, and `.gitignore` patterns.

Pure string work: nothing here reads a transcript or knows a rendered line.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_WS = re.compile(r"\s+")


COMMENT = re.compile(r"\s*<!--(.*?)-->\s*$")


_REDACTED = re.compile(r"«redacted:[a-z_]+»|\S*REDACTED\S*")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def norm(text: str) -> str:
    return _WS.sub(" ", _ANSI.sub("", text)).strip()


def fragments(shown: str) -> list[str]:
    """The pieces of a shown text that must occur, in order, in what it quotes: the text split at
    the product's clips (`…`) and redactions, each piece whitespace-normalised."""
    parts = re.split(r"…|«redacted:[a-z_]+»|REDACTED", shown)
    return [p for p in (norm(x) for x in parts) if p]


def quotes(shown: str, actual: str) -> bool:
    """Whether `shown` is a (clipped, redacted) quotation of `actual`."""
    pieces = fragments(shown)
    if not pieces:
        return False
    hay = norm(actual)
    at = 0
    for piece in pieces:
        found = hay.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def cnorm(text: str) -> str:
    """A command's comparable form: line continuations and quote characters dropped (the product
    shows commands with their quotes lost), whitespace collapsed."""
    return norm(re.sub(r"[\"']", "", text.replace("\\\n", " ")))


def begins(shown: str, actual: str) -> bool:
    """`actual` begins with the (clipped, redacted) command `shown`, quotes aside."""
    pieces = [cnorm(p) for p in re.split(r"…|«redacted:[a-z_]+»|REDACTED", shown)]
    pieces = [p for p in pieces if p]
    hay = cnorm(actual)
    if not pieces or not hay.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for piece in pieces[1:]:
        found = hay.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def starts_like(shown: str, actual: str) -> bool:
    """`shown` is `actual` (quotes aside), or its beginning where the product clipped it (`…`, or the
    120-character cap of a command key)."""
    if not begins(shown, actual):
        return False
    clipped = "…" in shown or "REDACTED" in shown or "«redacted" in shown or len(cnorm(shown)) >= 100
    return clipped or cnorm(shown) == cnorm(actual)


def ticks(text: str) -> list[str]:
    """The backticked spans of a line."""
    return re.findall(r"`([^`]+)`", text)


def slash(path: str) -> str:
    return path.replace("\\", "/")


def relative(path: str, cwds: Iterable[str], base: str = "") -> str | None:
    """The project-relative form of a path a session named, or None when it lies outside the
    project (another directory of that machine, a home folder, /tmp). Relative paths resolve
    against `base` (a `cd` the command made), itself relative to the project."""
    p = slash(path.strip().strip("'\"`")).rstrip("/")
    if not p:
        return None
    lowered = p.lower()
    for cwd in cwds:
        c = slash(cwd).rstrip("/")
        variants = {c.lower()}
        if re.match(r"^[a-zA-Z]:/", c):  # Windows: C:/x also spelled /c/x
            variants.add(f"/{c[0].lower()}{c[2:].lower()}")
        for v in variants:
            if lowered == v:
                return "."
            if lowered.startswith(v + "/"):
                return _clean(p[len(v) + 1:])
    if p.startswith(("/", "~")) or re.match(r"^[a-zA-Z]:/", p):
        return None
    return _clean(f"{base}/{p}" if base and base != "." else p)


def _clean(rel: str) -> str | None:
    """A relative path without `.` and `..` parts; None when it climbs out of the project."""
    parts: list[str] = []
    for part in rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or "."


def gitignores(gitdir: Path, commit: str, tree: set[str]) -> list[tuple[str, str]]:
    """(directory, pattern) of every `.gitignore` line of the tree (negations are not read)."""

    out: list[tuple[str, str]] = []
    for path in sorted(p for p in tree if p == ".gitignore" or p.endswith("/.gitignore")):
        done = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"], capture_output=True,
                              check=False)
        if done.returncode != 0:
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "!")):
                out.append((folder, line))
    return out


def ignored(rel: str, ignores: list[tuple[str, str]]) -> bool:
    """Whether a project-relative path falls under one of the tree's .gitignore patterns."""
    for folder, raw in ignores:
        if folder and not (rel == folder or rel.startswith(folder + "/")):
            continue
        sub = rel[len(folder) + 1:] if folder else rel
        pattern = raw.rstrip("/")
        if not pattern:
            continue
        if "/" in pattern.lstrip("/")[:-1] or pattern.startswith("/"):
            pattern = pattern.lstrip("/")
            parts = sub.split("/")
            if any(fnmatch.fnmatchcase("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1)):
                return True
            if pattern.startswith("**/") and any(fnmatch.fnmatchcase(p, pattern[3:]) for p in parts):
                return True
        elif any(fnmatch.fnmatchcase(part, pattern) for part in sub.split("/")):
            return True
    return False


_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


#: Options whose value names what a command works on (a package, a folder, a test selection).
TARGET_OPTIONS = frozenset({"--filter", "-F", "--package", "-p", "-k", "--workspace", "-w", "--project",
                             "--manifest-path", "--config", "--file", "-f", "--repo", "-R", "-n", "--namespace"})


#: Options that move the working directory (like `cd`).
CD_OPTIONS = frozenset({"-C", "--dir", "--prefix", "--cwd", "--project-dir", "--directory"})


#: Programs whose first word after them is a sub-command (part of what they do).
_SUBCOMMANDS = frozenset({"git", "npm", "pnpm", "yarn", "bun", "npx", "bunx", "uvx", "go", "cargo", "make", "uv",
                          "poetry", "gh", "docker", "kubectl", "mise", "bd", "pip", "pip3", "brew", "apt", "apt-get",
                          "dotnet", "flutter", "dart", "deno", "just", "task", "helm", "terraform", "wrangler"})


_PREFIXES = frozenset({"sudo", "env", "time", "nohup", "command", "exec"})


#: Steps that do nothing to a target (waiting, printing, shell state): left out of what a command works on.
NOISE_HEADS = frozenset({"sleep", "echo", "true", "false", ":", "printf", "wait", "set", "export", "source", ".",
                          "cd", "pushd", "popd", "clear", "unset", "pwd"})


RUNNERS = ("uv run", "npx", "pnpm exec", "poetry run", "bunx", "pipenv run", "npm exec", "yarn dlx", "pnpm dlx",
            "uvx", "pnpm", "yarn", "bun run")


def words_of(segment: str) -> list[str]:
    return re.findall(r"""(?:"[^"]*"|'[^']*'|[^\s"'])+""", segment)


def segments(command: str) -> list[str]:
    """The steps of a shell line (split at `&&`, `||`, `;` and new lines outside quotes), each
    without its pipe's later stages; a here-document's body is not a step (the line that opens it
    is kept, up to its end)."""
    steps: list[str] = []
    cur: list[str] = []
    quote = ""
    depth = 0
    skip_stage = False
    i = 0
    text = command.replace("\\\n", " ")

    def end() -> None:
        nonlocal cur, skip_stage
        seg = "".join(cur).strip()
        if seg:
            steps.append(seg)
        cur, skip_stage = [], False

    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                if not skip_stage:
                    cur.append(text[i:i + 2])
                i += 2
                continue
            if ch == quote:
                quote = ""
            if not skip_stage:
                cur.append(ch)
            i += 1
            continue
        if ch in "'\"":
            quote = ch
        elif text.startswith("$(", i):
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif depth == 0 and text.startswith("<<", i) and not text.startswith("<<<", i):
            line_end = text.find("\n", i)
            if not skip_stage:
                cur.append(text[i:line_end if line_end >= 0 else len(text)])
            end()
            break
        elif depth == 0 and (text.startswith("&&", i) or text.startswith("||", i)):
            end()
            i += 2
            continue
        elif depth == 0 and ch in ";\n":
            end()
            i += 1
            continue
        elif depth == 0 and ch == "|":
            skip_stage = True  # a pipe's later stages filter the output
            i += 1
            continue
        if not skip_stage:
            cur.append(ch)
        i += 1
    if cur:
        end()
    return steps


@dataclass(frozen=True)
class Step:
    head: str
    words: list[str]


def step(segment: str) -> Step:
    """A step's head (program, and sub-command where the program has them; `python -m X`) and the
    words after it."""
    words = [w for w in words_of(segment) if not re.search(r"^\d*[<>]|[<>]&?\d*$", w)]
    i = 0
    while i < len(words):
        w = words[i]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w) or w in _PREFIXES:
            i += 1
        elif w == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            i += 1
        else:
            break
    if i >= len(words):
        return Step("", [])
    program = words[i].strip("'\"")
    name = program.replace("\\", "/").rsplit("/", 1)[-1]
    rest = words[i + 1:]
    if re.fullmatch(r"python[0-9.]*", name) and len(rest) >= 2 and rest[0] == "-m":
        return Step(f"{name} -m {rest[1]}", rest[2:])
    if name in _SUBCOMMANDS:
        j = 0
        kept: list[str] = []
        while j < len(rest):
            w = rest[j]
            if w.startswith("-"):
                flag = w.split("=", 1)[0]
                takes = flag in TARGET_OPTIONS or flag in CD_OPTIONS
                kept += rest[j:j + (1 if "=" in w or not takes else 2)]
                j += 1 if "=" in w or not takes else 2
                continue
            return Step(f"{program} {w.strip(chr(39) + chr(34))}", kept + rest[j + 1:])
        return Step(program, rest)
    return Step(program, rest)


def is_pathlike(word: str) -> bool:
    w = word.strip("'\"")
    if not w or w.startswith(("-", "@")) or "://" in w or " " in w:
        return False
    return "/" in w or "\\" in w or bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,4}$", w))


def program_of(head: str) -> str:
    first = head.split(" ", 1)[0].replace("\\", "/").rsplit("/", 1)[-1]
    return re.sub(r"(?:\.exe)?[0-9.]*$", "", first)


def moves(command: str) -> bool:
    """Whether a command changes its folder (`cd`, `pushd`, `-C DIR`)."""
    return any(words_of(seg)[:1] in (["cd"], ["pushd"]) or re.search(r"\s(?:-C|--cwd|--dir|--prefix)\s", f" {seg} ")
               for seg in segments(command))


_MASK = re.compile(r"^\s*(?:(?:&&|;|\|\|)\s*(?:echo\b[^|;&]*|true|:|printf\b[^|;&]*|exit 0)\s*|2>&1\s*|"
                   r"2>\s*/dev/null\s*)+$")


def masks(added: str) -> bool:
    """Words added to a command that do nothing to what it does (`&& echo done`), or hide how it
    ended (`|| true`, `; true`): never a repair."""
    added = added.strip()
    return bool(added) and bool(_MASK.match(added)) and not re.fullmatch(r"2>&1|2>\s*/dev/null", added)


#: Steps whose operands need not exist (they create, delete or move to them).
_CREATES = frozenset({"rm", "rmdir", "unlink", "mkdir", "touch", "tee", "git rm", "git mv", "mktemp", "ln", "git clone",
                      "curl", "wget"})


def command_paths(command: str) -> list[tuple[str, str]]:
    """(path, cd base) of the paths a command uses as existing: operands that look like paths (a
    slash and no URL, package scope or owner/name without a file extension), not the ones a step
    creates, deletes or writes (`rm`, `mkdir`, `-o X`, the target of `cp`/`mv`)."""
    out: list[tuple[str, str]] = []
    base = ""
    for segment in segments(command):
        words = words_of(segment)
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) > 1:
            out.append((words[1].strip("'\""), base))
            base = words[1].strip("'\"") if not base else f"{base}/{words[1].strip(chr(39) + chr(34))}"
            continue
        st = step(segment)
        if st.head in _CREATES or st.head.split(" ", 1)[0] in _CREATES:
            continue
        operands = list(st.words)
        if st.head in ("cp", "mv", "rsync", "scp") and operands:
            operands = operands[:-1]
        prev = ""
        for w in operands:
            bare = w.strip("'\"")
            if prev in ("-o", "--output", "--out", "-O") or w.startswith("-") or re.search(r"[<>*?$`{}\[\]]", bare):
                prev = w
                continue
            prev = w
            if "/" not in bare or not is_pathlike(bare) or "..." in bare or re.match(r"^[\w.-]+:", bare):
                continue  # not a path (an API route, a package, `./...`, host:path)
            out.append((bare, base))
    return out
