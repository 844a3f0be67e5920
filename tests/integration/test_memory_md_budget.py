"""The lessons file harnesses read whole (`aider --read .slmcode/MEMORY.md`, `@.slmcode/MEMORY.md`
in CLAUDE.md / GEMINI.md; clients/ADAPTERS.md) stays within its size budget however much is
learned, keeping the newest lessons and every line the user wrote there."""

from __future__ import annotations

from slmactor.protocol.messages import LessonAdd
from slmactor.stores.lessons import MAX_MEMORY_BYTES
from slmactor.testing import DaemonProcess

USERS_OWN = ("# Project memory\n\nNotes for agents, by hand: the CI runs `make check`.\n\n"
             "- ⚙ never push to main on Fridays\n* keep the changelog in sync\n\n## Lessons\n\n")


def _word(batch: int, i: int) -> str:
    return "".join(chr(ord("a") + int(d)) for d in f"{batch:02d}{i:03d}")


def test_memory_md_stays_within_its_budget_and_keeps_the_users_text(
    daemon: DaemonProcess,
) -> None:
    memory_md = daemon.project / ".slmcode" / "MEMORY.md"
    memory_md.parent.mkdir(exist_ok=True)
    memory_md.write_text(USERS_OWN, encoding="utf-8")
    written = 0
    with daemon.client(timeout=30.0) as client:
        for batch in range(12):
            # Lessons that differ only by their numbers are one lesson (counted on one line):
            # these differ by a word.
            lessons = [{"task_id": f"t{batch}-{i}", "kind": "pitfall",
                        "text": f"lesson {_word(batch, i)}: run the linter on every file the change "
                                f"touched before the tests, or the import order check fails"}
                       for i in range(200)]
            client.ask(LessonAdd(lessons=lessons))
            written += sum(len(lesson["text"]) for lesson in lessons)
    assert written > MAX_MEMORY_BYTES  # more was learned than the file may hold
    size = memory_md.stat().st_size
    assert 0 < size <= MAX_MEMORY_BYTES
    text = memory_md.read_text(encoding="utf-8")
    assert text.startswith(USERS_OWN)  # the user's own lines, byte for byte, in place
    # the oldest went first
    assert f"lesson {_word(11, 199)}:" in text and f"lesson {_word(0, 0)}:" not in text
