"""Claims checked when told, and `memory.audit`, in the distiller actor.

A mixin of `DistillerActor`. Every line memory hands out is a claim (`logic.memory.claims`): the
block's facts, lessons and past work, `MEMORY.md`'s bullets. Their checks read the project's
records as they are now (`ProjectRecords`): the paths the runs deleted and wrote (the
distiller's last pass over the episodes) and the project's tree on disk (a path is looked up,
never opened; `.gitignore`d paths a fresh clone lacks are not "gone"). A fact whose check fails
is not told (`keep_fact`, the next fact of its kind takes its place), a block item neither
(`checked_items`); `memory.audit` lists every claim the project holds with its evidence and
verdict, and with `fix` retires what fails: facts are dropped, this daemon's `MEMORY.md`
bullets are taken out, and each retired line is kept in `memory/retired.json` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.logic.memory.claims import TRUE, Claim, Verdict, check
from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.protocol.messages import MemoryAudit
from slmactor.runtime.actor import Actor, handles
from slmactor.stores.base.project_paths import ProjectRecords

if TYPE_CHECKING:
    from slmactor.logic.memory.block_items import BlockItem
    from slmactor.logic.memory.facts import Fact

class ClaimsMixin(Actor):
    """Checks of what the distiller tells, and `memory.audit`; the host provides `_project`,
    `retired_for` (the lines mixin) and the project's stores."""

    _project: Callable[..., Any]

    def records_for(self, project: Any) -> ProjectRecords:
        return ProjectRecords(Path(project.root), getattr(project, "paths", None))

    def fact_claim(self, fact: Fact) -> Claim:
        from slmactor.logic.memory.facts import fact_uses

        # The records behind a fact: the runs it was distilled from, else its own observation
        # (a fact a client told this user's daemon, signed as theirs).
        return Claim(fact.kind, fact.text, tuple(fact.sources) or (fact.id,),
                     uses=fact_uses(fact), free=fact.pinned)

    def keep_fact(self, project: Any) -> Callable[[Fact], bool]:
        """The facts' check for one render: a fact is told only when its claim holds now."""
        records = self.records_for(project)
        return lambda fact: check(self.fact_claim(fact), records).passes

    def checked_items(self, project: Any, items: Sequence[BlockItem]) -> list[BlockItem]:
        """`items` without the bullets whose claim fails now (and headings left empty)."""
        from slmactor.logic.memory.block import said_once

        records = self.records_for(project)
        kept = [item for item in items if not item.bullet
                or check(item_claim(item), records).passes]
        return said_once(kept) if len(kept) != len(items) else list(items)

    def lesson_verdicts(self, project: Any, markdown: str) -> list[tuple[str, Claim, Verdict]]:
        """This daemon's MEMORY.md bullets, each as a claim with its verdict now."""
        from slmactor.logic.memory.lessons import own_bullets

        records = self.records_for(project)
        key = project.lessons.signing_key
        out = []
        for line, lesson in own_bullets(markdown, key):
            claim = lesson_claim(lesson)
            out.append((line, claim, check(claim, records)))
        return out

    @handles(MemoryAudit)
    async def audit(self, msg: MemoryAudit) -> dict[str, Any]:
        project = self._project(msg)
        records = self.records_for(project)
        project.facts.sync()
        rows: list[dict[str, Any]] = []
        failing_facts = []
        for fact in list(project.facts.book):
            if not fact.verified:
                continue
            claim = self.fact_claim(fact)
            verdict = check(claim, records)
            rows.append(_row("fact", fact.id, claim, verdict))
            if not verdict.passes:
                failing_facts.append((fact, verdict))
        markdown = await self.run_sync(project.lessons.read_project)
        failing_lines = []
        for line, claim, verdict in self.lesson_verdicts(project, markdown):
            rows.append(_row("memory_md", lesson_line_id(line), claim, verdict))
            if not verdict.passes:
                failing_lines.append((line, verdict))
        told = await self._told(project, records, rows)
        retired: list[dict[str, str]] = []
        if msg.fix and (failing_facts or failing_lines):
            retired = await self._retire(project, failing_facts, failing_lines)
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
        return {"claims": rows, "counts": counts, "retired": retired,
                "passing": counts.get(TRUE, 0), "total": len(rows), "told": told}

    async def _told(self, project: Any, records: ProjectRecords,
                    rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What the recorded runs' models were told, line by line, each judged now: a line that
        is one of the claims above gets that claim's verdict, any other line its own check
        (the records it named when it was told, the paths its fix presents)."""
        from slmactor.logic.memory.block_lines import line_meaning
        from slmactor.protocol.messages import EpisodeGet, EpisodeRecent

        by_meaning = {line_meaning(str(r["says"])): r for r in rows}
        try:
            reply = await self.ask(EpisodeRecent(project=str(project.root), n=120, ids_only=True))
        except Exception as exc:  # noqa: BLE001 - recall down: the audit still lists the claims
            self.ctx.stats.record_error(f"memory.audit: {exc}")
            return []
        ids = reply.get("ids") if isinstance(reply, dict) else None
        out: list[dict[str, Any]] = []
        for episode_id in ids if isinstance(ids, list) else []:
            try:
                episode = await self.ask(EpisodeGet(project=str(project.root),
                                                    episode_id=str(episode_id)))
            except Exception:  # noqa: BLE001, S112 - pruned meanwhile: nothing to check
                continue
            told = episode.get("told") if isinstance(episode, dict) else None
            for line in told if isinstance(told, list) else []:
                if not isinstance(line, dict) or not isinstance(line.get("text"), str):
                    continue
                text = line["text"].strip()
                known = by_meaning.get(line_meaning(text.removeprefix("- ")))
                verdict: dict[str, str]
                if known is not None:
                    verdict = {k: str(known[k]) for k in ("verdict", "why") if k in known}
                    evidence = known.get("evidence", [])
                else:
                    evidence = [str(episode.get("run_id", "")), *(
                        e for e in line.get("evidence") or [] if isinstance(e, str))]
                    claim = Claim("told", text, tuple(e for e in evidence if e),
                                  uses=told_uses(text, str(line.get("channel", ""))),
                                  free=line.get("channel") == "block")
                    verdict = check(claim, records).to_dict()
                out.append({"run_id": episode.get("run_id", ""), "channel": line.get("channel"),
                            "says": text, "evidence": evidence, **verdict})
        return out

    async def _retire(self, project: Any, facts: Iterable[tuple[Fact, Verdict]],
                      lines: Sequence[tuple[str, Verdict]]) -> list[dict[str, str]]:
        from slmactor.logic.memory.block_lines import line_id
        from slmactor.logic.memory.lessons import strip_provenance

        done: list[dict[str, str]] = []
        entries: dict[str, str] = {}
        for fact, verdict in facts:
            if project.facts.book.remove(fact.id):
                done.append({"kind": "fact", "id": fact.id, "text": fact.text,
                             "why": f"{verdict.status}: {verdict.why}"})
                entries[line_id(f"- {fact.text}")] = f"{fact.text} ({verdict.status}: {verdict.why})"
        if done:
            self._changed(project.facts, project.root)  # type: ignore[attr-defined]
        if lines:
            drop = {line for line, _ in lines}
            removed = await self.run_sync(project.lessons.remove_own, drop)
            for line, verdict in lines:
                if line in removed:
                    text = strip_provenance(line).removeprefix("- ").strip()
                    done.append({"kind": "memory_md", "id": lesson_line_id(line), "text": text,
                                 "why": f"{verdict.status}: {verdict.why}"})
                    entries[line_id(text)] = f"{text} ({verdict.status}: {verdict.why})"
        if entries:
            retired = self.retired_for(project.root)  # type: ignore[attr-defined]
            retired.retire(entries, to_rfc3339(self.now()))
            await self.run_sync(retired.save)
        return done


def _row(source: str, ident: str, claim: Claim, verdict: Verdict) -> dict[str, Any]:
    return {"source": source, "id": ident, **claim.to_dict(), **verdict.to_dict()}


def item_claim(item: BlockItem) -> Claim:
    """The claim a block bullet makes: its line, the records it rests on, what it presents."""
    kind = "task" if item.section == "episodic" else "fact"
    return Claim(kind, item.text.strip(), tuple(item.evidence), uses=item.uses,
                 free=item.section in ("working", "procedural"))


def lesson_claim(lesson: Any) -> Claim:
    """The claim of one MEMORY.md bullet: its text, the run it was learned in, its fix."""
    from slmactor.logic.memory.facts import fix_of

    evidence = (lesson.task_id,) if lesson.task_id else ()
    return Claim("lesson", lesson.text, evidence, uses=fix_of(lesson.text))


def told_uses(text: str, channel: str) -> str:
    """What a told line presents as there to use: of failure advice ("`X` failed here with …;
    FIX worked …"), its fix; of a block line, nothing beyond its claim (matched above)."""
    if channel != "advice":
        return ""
    if _NOT_THERE in text:
        # A path hint presents the path that is there; the one it says is missing is not used.
        return text.split(_NOT_THERE, 1)[1]
    return text.split("; ", 1)[1] if " failed here" in text and "; " in text else text


#: How a path hint says the path the call named is missing (`logic.evolve.path_hints`).
_NOT_THERE = "` is not there; "


def lesson_line_id(line: str) -> str:
    from slmactor.logic.memory.lessons import line_id, strip_provenance

    return line_id(strip_provenance(line).strip().removeprefix("- ").strip())
