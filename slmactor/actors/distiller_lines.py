"""`memory.lines`, `memory.retire` and `memory.projects` of the distiller actor: the block as lines a user can point
at, with the records behind each, and lines taken back.

A mixin of `DistillerActor` beside `memory.block` (`distiller_block.py`). `memory.lines` renders
the block exactly as `memory.block` would for the same request, then names each line
(`logic.memory.block_lines`) and attaches its evidence: the fact it renders (its sources — the
runs that observed it — support, contradictions, confidence, and whether this user signed it),
or the past run a "similar work" line stands for. Every line's verdict is "unchecked" until
claims carry checks of their own. `memory.retire` keeps retired ids in `memory/retired.json`
(`stores.facts.RetiredLines`); `memory.block` leaves them out from the next ask on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from slmactor.logic.text.timefmt import to_rfc3339
from slmactor.logic.text.trust import UNVERIFIED_LABEL, withhold_commands
from slmactor.protocol import ErrorCode, RequestError
from slmactor.protocol.messages import (
    MemoryBlock,
    MemoryLines,
    MemoryProjects,
    MemoryRecall,
    MemoryRetire,
)
from slmactor.runtime.actor import Actor, handles
from slmactor.stores.base.errors import StoreError
from slmactor.stores.base.layout import ProjectLayout
from slmactor.stores.facts import RetiredLines

if TYPE_CHECKING:  # the block's logic loads with the first block, not at the daemon's start
    from slmactor.logic.memory.block_lines import BlockLine


class BlockLinesMixin(Actor):
    """`memory.lines`, `memory.retire`; the host provides `block` (the `memory.block` handler)
    and `_project(msg)`."""

    _retired: dict[Path, RetiredLines]

    def retired_for(self, root: Path) -> RetiredLines:
        if not hasattr(self, "_retired"):
            self._retired = {}
        store = self._retired.get(root)
        if store is None:
            if len(self._retired) >= 256:
                self._retired.clear()
            store = self._retired[root] = RetiredLines(ProjectLayout(root).memory_dir,
                                                       self.store_warnings())
        store.sync()
        return store

    def retired_ids(self, root: Path) -> frozenset[str]:
        return self.retired_for(root).ids

    @handles(MemoryLines)
    async def lines(self, msg: MemoryLines) -> dict[str, Any]:
        project: Any = self._project(msg)  # type: ignore[attr-defined]
        ask = MemoryBlock(project=msg.project, role=msg.role, budget=msg.budget, query=msg.query,
                          files=list(msg.files), tags=list(msg.tags), run_id=msg.run_id,
                          language=msg.language, model=msg.model)
        from slmactor.logic.memory.block_lines import block_lines, line_meaning

        reply = await self.block(ask)  # type: ignore[attr-defined]
        facts = {line_meaning(f.text): f for f in project.facts.book}
        # A repository's unverified fact is told labelled, its commands withheld.
        facts.update({line_meaning(f"{UNVERIFIED_LABEL}: {withhold_commands(f.text)}"): f
                      for f in project.facts.book if not f.verified})
        episodes = await self._episodes_by_task(msg) if msg.query.strip() or msg.files else {}
        lines = [self._with_evidence(line, facts, episodes) for line in block_lines(reply["text"])]
        retired = self.retired_for(project.root)
        return {"text": reply["text"], "sections": reply["sections"], "role": reply["role"],
                "lines": [line.to_dict() for line in lines],
                "retired": [{"id": i, **v} for i, v in retired.lines.items()]}

    @staticmethod
    def _with_evidence(line: BlockLine, facts: dict[str, Any],
                       episodes: dict[str, list[dict[str, Any]]]) -> BlockLine:
        from slmactor.logic.memory.block_lines import BlockLine, line_meaning

        fact = facts.get(line_meaning(line.text))
        evidence: list[dict[str, Any]] = []
        if fact is not None:
            evidence.append({"kind": "fact", "id": fact.id, "fact_kind": fact.kind,
                             "subject": fact.subject, "sources": list(fact.sources),
                             "support": fact.support, "contradict": fact.contradict,
                             "confidence": round(fact.confidence, 4),
                             "verified": fact.verified, "pinned": fact.pinned})
        evidence.extend({"kind": "episode", **episode}
                        for episode in episodes.get(_task_of(line.text), []))
        return BlockLine(line.id, line.section, line.heading, line.text, tuple(evidence),
                         line.verdict)

    async def _episodes_by_task(self, msg: MemoryLines) -> dict[str, list[dict[str, Any]]]:
        """The runs a "similar work" line stands for, by their task's words."""
        try:
            reply = await self.ask(MemoryRecall(project=msg.project, query=msg.query,
                                                files=list(msg.files), n=9))
        except RequestError:
            return {}
        found: dict[str, list[dict[str, Any]]] = {}
        for hit in reply.get("hits", []) if isinstance(reply, dict) else []:
            episode = hit.get("episode") if isinstance(hit, dict) else None
            if isinstance(episode, dict):
                key = " ".join(str(episode.get("query", "")).lower().split())
                found.setdefault(key, []).append({
                    "id": episode.get("id", ""), "run_id": episode.get("run_id", ""),
                    "at": episode.get("at", ""), "success": episode.get("success") is True})
        return found

    @handles(MemoryProjects)
    async def open_projects(self, msg: MemoryProjects) -> dict[str, Any]:
        projects = self.projects.items()  # type: ignore[attr-defined]
        return {"projects": sorted(str(root) for root, _ in projects)}

    @handles(MemoryRetire)
    async def retire(self, msg: MemoryRetire) -> dict[str, Any]:
        project: Any = self._project(msg)  # type: ignore[attr-defined]
        from slmactor.logic.memory.block_lines import line_id

        retired = self.retired_for(project.root)
        entries = {i.strip(): "" for i in msg.ids if i.strip()}
        entries.update({line_id(t): t.strip().removeprefix("- ") for t in msg.texts if t.strip()})
        if not entries:
            raise RequestError(ErrorCode.BAD_FIELD, "memory.retire: name lines by id or text")
        if msg.undo:
            changed = retired.restore(list(entries))
        else:
            changed = retired.retire(entries, to_rfc3339(self.now()))
        if changed:
            try:
                await self.run_sync(retired.save)
            except (StoreError, OSError) as exc:
                raise RequestError(ErrorCode.STORE_ERROR, f"memory.retire: {exc}") from exc
        key = "restored" if msg.undo else "retired"
        return {key: changed, "unchanged": [i for i in entries if i not in changed],
                "total": len(retired.lines)}


def _task_of(text: str) -> str:
    """The task words of a "similar work" line (`✓ fix the flaky test — …`)."""
    body = text.lstrip("✓✗⚠~ ").split(" — ")[0]
    return " ".join(body.lower().split())
