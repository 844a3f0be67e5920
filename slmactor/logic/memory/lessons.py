"""Lessons: the prose layer of memory, its Markdown form and its bridge to facts (SPEC S-8).

A `Lesson` is `{task_id, kind, text, at}`. `MEMORY.md` holds one bullet per lesson with a trailing
provenance comment — `- ⚠ text <!-- slm task=T7 kind=failure at=2026-08-24T10:11:12Z -->` — that
`parse_markdown` inverts exactly (H-S-2: provenance used to be dropped at write time); bullets
without provenance still parse, their kind taken from the glyph. `strip_provenance` removes the
bookkeeping before a line reaches a prompt.

Every lesson also becomes a fact (`fact_from_lesson`, subject `lesson: <five significant words>`),
so a lesson seen twice outranks one seen once and a contradicted one fades.

`recent_adaptive_memory_for` picks the lines a prompt sees: relevance first (the shared BM25F
`rank_text`), then recency, whole lines only — never a keyword allow-list (H-S-1: the old
eleven-substring gate silently dropped 4 of 7 real lessons).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slmactor.logic.memory.facts import FactBook, Observation
from slmactor.logic.recall.text_rank import rank_texts
from slmactor.logic.text.strings import clip, cut_bytes, hash_id
from slmactor.logic.text.timefmt import parse_rfc3339, to_rfc3339
from slmactor.logic.text.trust import UNVERIFIED_LABEL, untrusted_text

KINDS = ("success", "failure", "convention")
GLYPHS = {"failure": "⚠", "convention": "⚙", "success": "✓"}
OTHER_GLYPH = "•"
_KIND_OF_GLYPH = {"⚠": "failure", "⚙": "convention", "✓": "success", "•": ""}
MARKER_OPEN = "<!-- slm "
MARKER_CLOSE = " -->"
_VARIATION_SELECTOR = "\ufe0f"


@dataclass(frozen=True, slots=True)
class Lesson:
    """One learned sentence; `at` is kept verbatim (offsets such as `+02:00` survive)."""

    task_id: str = ""
    kind: str = ""
    text: str = ""
    at: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"task_id": self.task_id, "kind": self.kind, "text": self.text, "at": self.at}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], at: str = "") -> Lesson:
        """A lesson from a request; wrong types read as blank, a missing `at` becomes `at`."""

        def text(name: str) -> str:
            value = raw.get(name)
            return value.strip() if isinstance(value, str) else ""

        return cls(text("task_id"), text("kind").lower(), text("text"), text("at") or at)


# --- extraction from a finished task (S-8.2) ---------------------------------------------------

FIRST_SENTENCE_MAX_STOP = 179
FIRST_SENTENCE_CUT = 160


def first_sentence(text: str) -> str:
    """Newlines → spaces; cut after the first `.`/`!` at byte 1..179, else at 160 bytes + `…`."""
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").strip()
    raw = flat.encode("utf-8", "surrogatepass")
    for i, byte in enumerate(raw[: FIRST_SENTENCE_MAX_STOP + 1]):
        if byte in (0x2E, 0x21) and i >= 1:  # '.' or '!'
            return raw[: i + 1].decode("utf-8", "ignore")
    if len(raw) > FIRST_SENTENCE_CUT:
        return cut_bytes(flat, FIRST_SENTENCE_CUT) + "…"
    return flat


@dataclass(frozen=True, slots=True)
class FinishedTask:
    """What a harness knows about a task when it ends (board task of the seed)."""

    id: str
    status: str
    title: str = ""
    output: str = ""
    acceptance: str = ""
    notes: str = ""
    error: str = ""
    review: str = ""


def extract_lessons(task: FinishedTask, at: str) -> list[Lesson]:
    """Lessons for one finished task: success (+ convention, + human note) or failure."""
    status = task.status.strip().lower()
    if status == "done":
        title = f" ({task.title.strip()})" if task.title.strip() else ""
        out = [Lesson(task.id, "success", f"{task.id}{title}: {first_sentence(task.output)}", at)]
        if task.acceptance.strip():
            out.append(
                Lesson(
                    task.id,
                    "convention",
                    f"Acceptance pattern that worked for {task.id}: {task.acceptance.strip()}",
                    at,
                )
            )
        if task.notes.strip():
            out.append(
                Lesson(
                    task.id,
                    "convention",
                    f"Human note honored on {task.id}: {task.notes.strip()}",
                    at,
                )
            )
        return out
    if status in ("blocked", "to_scope", "scoped"):
        why = task.error.strip() or first_sentence(task.review)
        return [Lesson(task.id, "failure", f"Avoid repeating {task.id} failure: {why}", at)]
    return []


# --- Markdown with provenance (S-8.3 – S-8.5) --------------------------------------------------


def _field_ok(value: str) -> bool:
    return bool(value) and " " not in value and "\t" not in value and "--" not in value


def signature(key: bytes, body: str) -> str:
    """The `sig=` of a bullet: HMAC-SHA256 under the user's key of the bullet before its marker
    — a line a repository brought along cannot carry a valid one."""
    return hmac.new(key, body.strip().encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:16]


def provenance(lesson: Lesson, sig: str = "") -> str:
    """`<!-- slm task=… kind=… at=… sig=… -->`, unsafe or empty fields omitted; "" when none
    remain."""
    fields = [
        f"{name}={value}"
        for name, value in (
            ("task", lesson.task_id), ("kind", lesson.kind), ("at", lesson.at), ("sig", sig)
        )
        if _field_ok(value)
    ]
    return f"{MARKER_OPEN}{' '.join(fields)}{MARKER_CLOSE}" if fields else ""


def render_bullet(lesson: Lesson, key: bytes | None = None) -> str:
    """One `MEMORY.md` bullet; line breaks inside the text are folded so the bullet stays one line.
    With the user's `key`, the marker carries the bullet's `signature`."""
    text = " ".join(lesson.text.split())
    glyph = GLYPHS.get(lesson.kind, OTHER_GLYPH)
    body = f"- {glyph} {text}"
    comment = provenance(lesson, signature(key, body) if key else "")
    return f"{body} {comment}" if comment else body


def render_markdown(lessons: Iterable[Lesson], key: bytes | None = None) -> str:
    """One bullet per lesson with text, newline-terminated; "" for no lessons."""
    lines = [render_bullet(lesson, key) for lesson in lessons if lesson.text.strip()]
    return "\n".join(lines) + "\n" if lines else ""


def _split_marker(line: str) -> tuple[str, dict[str, str] | None]:
    """(line without its provenance, fields) — fields None when there is no closed marker."""
    start = line.rfind(MARKER_OPEN)
    if start < 0:
        return line, None
    end = line.find(MARKER_CLOSE, start + len(MARKER_OPEN) - 1)
    if end < 0:
        return line, None
    fields: dict[str, str] = {}
    for token in line[start + len(MARKER_OPEN) : end].split():
        name, sep, value = token.partition("=")
        if sep and name in ("task", "kind", "at", "sig", "adopted", "n"):
            fields[name] = value
    return line[:start].rstrip() + line[end + len(MARKER_CLOSE) :].rstrip(), fields


def strip_provenance(line: str) -> str:
    """The line without its provenance comment and trailing spaces; unchanged without one."""
    stripped, fields = _split_marker(line)
    return line if fields is None else stripped.rstrip()


def parse_bullet(line: str) -> Lesson | None:
    """Inverse of `render_bullet`; also reads legacy bullets (kind from the glyph)."""
    body = line.strip()
    if not body.startswith(("- ", "* ")):
        return None
    body, fields = _split_marker(body[2:])
    body = body.strip()
    glyph_kind = ""
    if body and body[0] in _KIND_OF_GLYPH:
        glyph_kind = _KIND_OF_GLYPH[body[0]]
        body = body[1:].lstrip(_VARIATION_SELECTOR).strip()
    if not body:
        return None
    fields = fields or {}
    kind = fields.get("kind", glyph_kind)
    return Lesson(fields.get("task", ""), kind, body, fields.get("at", ""))


def parse_markdown(markdown: str) -> list[Lesson]:
    """Every lesson bullet of a `MEMORY.md`; headings, prose and blank lines are skipped."""
    out = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        lesson = parse_bullet(stripped)
        if lesson is not None:
            out.append(lesson)
    return out


def json_lessons_to_markdown(text: str, now: float) -> str:
    """Lessons a model answered as JSON (`{"lessons": […]}` or a bare array) → bullets (S-8.6)."""
    items: Any = None
    for open_c, close_c in (("{", "}"), ("[", "]")):
        start, end = text.find(open_c), text.rfind(close_c)
        if start < 0 or end <= start:
            continue
        try:
            parsed = json.loads(text[start : end + 1])
        except ValueError:
            continue
        # A bare array's first element is itself a `{…}`: only a dict holding "lessons" counts.
        items = parsed.get("lessons") if isinstance(parsed, dict) else parsed
        if isinstance(items, list):
            break
    if not isinstance(items, list):
        return ""
    at = to_rfc3339(now)
    lessons = []
    for item in items:
        if not isinstance(item, dict):
            continue
        body = item.get("text")
        if not isinstance(body, str) or not body.strip():
            continue
        kind = item.get("kind")
        task = item.get("task_id", item.get("task"))
        lessons.append(
            Lesson(
                task if isinstance(task, str) else "",
                kind.strip().lower() if isinstance(kind, str) and kind.strip() else "convention",
                body.strip(),
                at,
            )
        )
    return render_markdown(lessons)


# --- lessons → facts (S-8.8) --------------------------------------------------------------------

SUBJECT_WORDS = 5
SUBJECT_PREFIX = "lesson: "
SUBJECT_FALLBACK_BYTES = 120
#: The 30 stopwords of S-8.8 (not the ranker's 35: these decide identity, not relevance).
_STOPWORD_TEXT = (
    "the and for with that this from into was were are is to of in on an at be it its as by"
    " or do not but all we you"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9_\u0080-\U0010ffff]+")
_TASK_ID = re.compile(r"t[0-9]+")


def fact_kind_for(kind: str) -> str:
    """`gotcha` for a failure lesson, `convention` for everything else."""
    return "gotcha" if kind.strip().lower() == "failure" else "convention"


def lesson_subject(text: str) -> str:
    """The first five significant words, so rival wordings of one lesson meet on one fact."""
    words = [
        w
        for w in _WORD.findall(text.lower())
        if len(w) >= 2 and w not in STOPWORDS and not _TASK_ID.fullmatch(w) and not w.isdigit()
    ]
    if words:
        return " ".join(words[:SUBJECT_WORDS])
    return clip(" ".join(text.lower().split()), SUBJECT_FALLBACK_BYTES)


#: The reflector's failure lessons that carry no fix (`logic/loop/reflect.py`): a failure that
#: stayed unresolved, a gate that failed. A record, not a fact to tell a model.
CONTENT_FREE = re.compile(
    r"^(?:\S+ \S+ stayed unresolved: |.+ failed here and stayed unresolved: |Gate \S+ failed\b)")


def fact_from_lesson(lesson: Lesson, run_id: str = "") -> Observation | None:
    """The fact a lesson asserts; None for a blank lesson or a failure lesson without a fix (a
    gotcha with nothing to do instead is noise in a block). Sources: task id, then run id."""
    if not lesson.text.strip():
        return None
    if lesson.kind == "failure" and CONTENT_FREE.search(" ".join(lesson.text.split())):
        return None
    sources = tuple(s.strip() for s in (lesson.task_id, run_id) if s.strip())
    return Observation(
        fact_kind_for(lesson.kind),
        SUBJECT_PREFIX + lesson_subject(lesson.text),
        lesson.text.strip(),
        sources,
    )


def record_facts(book: FactBook | None, lessons: Sequence[Lesson], run_id: str, now: float) -> int:
    """Fold lessons into the fact book; returns the count recorded (0 without a book)."""
    if book is None:
        return 0
    observations = [obs for obs in (fact_from_lesson(le, run_id) for le in lessons) if obs]
    return book.observe_all(observations, now)


def lessons_from_markdown(book: FactBook | None, markdown: str, run_id: str, now: float) -> int:
    return record_facts(book, parse_markdown(markdown), run_id, now)


# --- MEMORY.md files (S-8.9) --------------------------------------------------------------------

GLOBAL_HEADER = "# SLMCode Global Memory\n\n## Lessons\n\n"
PROJECT_HEADER = "# Project memory\n\n## Lessons\n\n"


def global_block(title: str, body: str, now: float) -> str:
    """The text `AppendGlobalMemory(title, body)` appends: `\n\n## <title> (<RFC 3339>)\n\n<body>\n`."""
    return f"\n\n## {title.strip()} ({to_rfc3339(now)})\n\n{body.strip()}\n"


def append_global_block(existing: str, title: str, body: str, now: float) -> str:
    """The global `MEMORY.md` after `AppendGlobalMemory(title, body)` (header when new)."""
    base = existing if existing.strip() else GLOBAL_HEADER
    return base + global_block(title, body, now)


def append_bullets(existing: str, lessons: Sequence[Lesson], header: str = PROJECT_HEADER) -> str:
    """A `MEMORY.md` with new lesson bullets appended (newest last, as recency expects)."""
    bullets = render_markdown(lessons)
    base = existing if existing.strip() else header
    if base and not base.endswith("\n"):
        base += "\n"
    return base + bullets


def join_memory_texts(texts: Iterable[str]) -> str:
    """Non-empty memory files joined by a blank line (`ReadGlobalMemory`)."""
    return "\n\n".join(t for t in texts if t.strip())


# --- selecting lines for a prompt (S-8.10) ------------------------------------------------------

MAX_ADAPTIVE_LINES = 10
DEFAULT_ADAPTIVE_BYTES = 1600
_LEAD_TRIM = "-* !+>~"


#: How a project line that this daemon did not write is shown to a prompt: as unverified
#: repository content, with anything that reads as a command withheld.
FOREIGN_LABEL = f"{UNVERIFIED_LABEL} (project memory not written by slmactor)"


@dataclass(frozen=True, slots=True)
class _Line:
    source: str  # "global" or "project"
    text: str
    at: float
    position: int  # order across global then project files; higher = newer
    foreign: bool = False


def _foreign(key: bytes | None, body: str, fields: dict[str, str] | None) -> bool:
    if key is None:
        return False
    sig = (fields or {}).get("sig", "")
    return not hmac.compare_digest(sig, signature(key, body))


def _memory_lines(project: str, global_: str, key: bytes | None = None) -> list[_Line]:
    out: list[_Line] = []
    seen: set[tuple[str, str]] = set()
    for source, markdown in (("global", global_), ("project", project)):
        for raw in markdown.splitlines():
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            body, fields = _split_marker(stripped)
            text = body.strip().lstrip(_LEAD_TRIM).strip()
            if not text or (source, text) in seen:
                continue
            seen.add((source, text))
            at = parse_rfc3339(fields.get("at", "")) if fields else None
            foreign = source == "project" and _foreign(key, body, fields)
            out.append(_Line(source, text, at or 0.0, len(out), foreign))
    return out


def recent_adaptive_memory_for(
    query: str, project: str, global_: str, now: float, max_bytes: int = 0,
    key: bytes | None = None,
) -> str:
    """Up to 10 memory lines (≤ `max_bytes`, default 1600) for a prompt, most useful first.

    With a query, lines the shared ranker finds relevant lead in relevance order and the rest
    follow newest first; without one (or without any hit) the newest lines win and are shown in
    file order. Lines are dropped whole from the tail, never cut. With the user's `key`, a
    project line without this daemon's valid `sig=` (committed by someone else, edited by hand)
    is labelled `FOREIGN_LABEL` and shown with its commands withheld, so the model can tell it
    apart and is handed nothing to run.
    """
    if max_bytes <= 0:
        max_bytes = DEFAULT_ADAPTIVE_BYTES
    lines = _memory_lines(project, global_, key)
    newest_first = sorted(lines, key=lambda line: -line.position)
    ordered = newest_first
    if query.strip() and lines:
        hits = rank_texts(query, [ln.text for ln in lines], now, at=[ln.at for ln in lines])
        if hits:
            leading = [lines[index] for index, _score in hits]
            chosen = {line.position for line in leading}
            ordered = leading + [ln for ln in newest_first if ln.position not in chosen]
    kept = ordered[:MAX_ADAPTIVE_LINES]
    if not query.strip():
        kept.sort(key=lambda line: line.position)
    rendered = [
        f"- {FOREIGN_LABEL}: {untrusted_text(line.text)}" if line.foreign
        else f"- {line.source} memory: {line.text}"
        for line in kept
    ]
    while rendered and len("\n".join(rendered).encode("utf-8", "surrogatepass")) > max_bytes:
        rendered.pop()
    return "\n".join(rendered)


def line_id(text: str) -> str:
    """The name `slmactor trust` gives a MEMORY.md line (its text without bookkeeping)."""
    return hash_id("mem_", text)


_DIGIT_RUN = re.compile(r"\d+")


def lesson_signature(text: str) -> str:
    """What makes two lessons one line of MEMORY.md: their words, case, spacing and numbers
    aside (the same failure met in another session is the same lesson)."""
    return " ".join(_DIGIT_RUN.sub("#", text.lower()).split())


def fold_into(markdown: str, lessons: Sequence[Lesson], key: bytes | None
              ) -> tuple[str, list[Lesson], bool]:
    """`markdown` (a project MEMORY.md) with `lessons` folded in: a lesson whose signature a
    bullet this user's daemon wrote already has is counted on that bullet (`n=` of its marker,
    its newest task and time), not written again; the others are returned to be appended.
    Returns (the text, the lessons still to append, whether the text changed). Every other
    byte — the user's own lines, a teammate's — is kept."""
    if key is None or not markdown:
        return markdown, list(lessons), False
    todo: dict[str, list[Lesson]] = {}
    order: list[Lesson] = []  # the lessons still to append, in their order
    for lesson in lessons:
        sig = lesson_signature(" ".join(lesson.text.split()))
        todo.setdefault(sig, []).append(lesson)
    out: list[str] = []
    changed = False
    for raw in markdown.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        ending = raw[len(line):]
        stripped = line.strip()
        body, fields = _split_marker(stripped)
        parsed = parse_bullet(stripped)
        text = parsed.text if parsed is not None else ""
        sig = lesson_signature(text)
        if not text or fields is None or sig not in todo or _foreign(key, body, fields) \
                or fields.get("adopted"):
            out.append(raw)
            continue
        met = todo.pop(sig)
        newest = met[-1]
        count = _count(fields.get("n", "")) + len(met)
        kept = {k: v for k, v in fields.items() if k in ("task", "kind", "at") and _field_ok(v)}
        if _field_ok(newest.task_id):
            kept["task"] = newest.task_id
        if _field_ok(newest.at):
            kept["at"] = newest.at
        marker = " ".join([*(f"{k}={v}" for k, v in kept.items()), f"n={count}",
                           f"sig={signature(key, body)}"])
        indent = line[: len(line) - len(line.lstrip())]
        out.append(f"{indent}{body.strip()} {MARKER_OPEN}{marker}{MARKER_CLOSE}{ending}")
        changed = True
    order.extend(met[0] for met in todo.values())
    return "".join(out), order, changed


def own_bullets(markdown: str, key: bytes | None) -> list[tuple[str, Lesson]]:
    """(line, lesson) of each bullet of `markdown` this user's daemon wrote (signed with `key`,
    not adopted from a repository): the lines a claim check may retire."""
    if key is None:
        return []
    out = []
    for raw in markdown.splitlines():
        stripped = raw.strip()
        body, fields = _split_marker(stripped)
        if fields is None or fields.get("adopted") or _foreign(key, body, fields):
            continue
        lesson = parse_bullet(stripped)
        if lesson is not None:
            out.append((raw, lesson))
    return out


def without_lines(markdown: str, lines: set[str]) -> tuple[str, set[str]]:
    """`markdown` without the lines in `lines` (whole lines, as read), and which were found."""
    kept: list[str] = []
    found: set[str] = set()
    for raw in markdown.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        if line in lines:
            found.add(line)
            continue
        kept.append(raw)
    return "".join(kept), found


def _count(value: str) -> int:
    """A bullet's `n=` (how often its lesson was learned): 1 when it has none."""
    return int(value) if value.isdigit() and 0 < int(value) < 10**9 else 1


def foreign_lines(project: str, key: bytes) -> list[tuple[str, str]]:
    """(id, text) of the project lines without this user's valid `sig=` (see `FOREIGN_LABEL`)."""
    return [(line_id(ln.text), ln.text) for ln in _memory_lines(project, "", key) if ln.foreign]


def adopt_lines(project: str, key: bytes, wanted: set[str] | None) -> tuple[str, list[str]]:
    """`project` (a MEMORY.md) with its foreign lines — those in `wanted`, or all for None —
    signed as the user's own (`adopted=yes`: they stay hand-written text that trimming never
    drops), and the ids of the lines adopted. Every other byte of the text is kept."""
    out: list[str] = []
    adopted: list[str] = []
    for raw in project.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        ending = raw[len(line):]
        stripped = line.strip()
        body, fields = _split_marker(stripped)
        text = body.strip().lstrip(_LEAD_TRIM).strip()
        if (not text or stripped.startswith("#") or not _foreign(key, body, fields)
                or (wanted is not None and line_id(text) not in wanted)):
            out.append(raw)
            continue
        kept = [f"{k}={v}" for k, v in (fields or {}).items()
                if k in ("task", "kind", "at") and _field_ok(v)]
        marker = " ".join([*kept, f"sig={signature(key, body)}", "adopted=yes"])
        indent = line[: len(line) - len(line.lstrip())]
        out.append(f"{indent}{body.strip()} {MARKER_OPEN}{marker}{MARKER_CLOSE}{ending}")
        adopted.append(line_id(text))
    return "".join(out), adopted


def recent_adaptive_memory(project: str, global_: str, now: float, max_bytes: int = 0) -> str:
    return recent_adaptive_memory_for("", project, global_, now, max_bytes)


#: The heading of a block `global_block` wrote: `## <title> (<RFC 3339>)`.
_BLOCK_HEADING = re.compile(r"## .*\(\d{4}-\d\d-\d\dT[^()]*\)\s*")


def daemon_written(line: str) -> bool:
    """A bullet this daemon appended: `render_bullet` ends it with its provenance marker (every
    lesson the daemon writes has at least its time). A bullet without one is the user's."""
    if not line.lstrip().startswith(("- ", "* ")):
        return False
    fields = _split_marker(line.rstrip())[1]
    # A line the user adopted (`slmactor trust`) carries a marker for its signature only: it
    # stays the user's text, never trimmed.
    return fields is not None and fields.get("adopted") != "yes"


def trim_oldest_bullets(markdown: str, max_bytes: int) -> str:
    """Drop the oldest daemon-written bullets (first in the file) until it fits `max_bytes`,
    and the `## <title> (<time>)` heading of a global block left with none of its bullets.

    The user's own text (headings, prose, bullets without the daemon's marker) always stays, so
    a file whose user text alone is over `max_bytes` keeps it, and the daemon's newest bullet.
    """
    lines = markdown.splitlines(keepends=True)
    size = len(markdown.encode("utf-8", "surrogatepass"))
    ours = [i for i, line in enumerate(lines) if daemon_written(line)]
    drop: set[int] = set()
    for i in ours[:-1]:
        if size <= max_bytes:
            break
        drop.add(i)
        size -= len(lines[i].encode("utf-8", "surrogatepass"))
    return _without(lines, drop)


def forget_own_bullets(markdown: str, key: bytes | None, header: str) -> tuple[str, int]:
    """`markdown` without the bullets this user's daemon wrote — a project file's signed with
    `key` (a teammate's, which git brought, stay), a global file's (`key` None) every one —
    and how many went. A file left with nothing but `header` becomes "" (delete it)."""
    lines = markdown.splitlines(keepends=True)
    drop = {i for i, line in enumerate(lines)
            if daemon_written(line) and not _foreign(key, *_split_marker(line.strip()))}
    removed = len(drop)
    text = _without(lines, drop)
    return ("" if text.strip() == header.strip() else text), removed


def _without(lines: list[str], drop: set[int]) -> str:
    """The lines not in `drop`, and without a global block's heading left with no bullet."""
    for start, line in enumerate(lines):
        if not _BLOCK_HEADING.fullmatch(line.rstrip("\n")):
            continue
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("#")),
                   len(lines))
        section = range(start + 1, end)
        if any(j in drop for j in section) and all(j in drop or not lines[j].strip()
                                                  for j in section):
            drop.update(range(start, end))
    return "".join(line for i, line in enumerate(lines) if i not in drop)
