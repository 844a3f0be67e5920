"""The `memory.block` ask of the distiller actor (SPEC S-7.4, S-7.5; H-S-21 fixed).

A mixin of `DistillerActor`, kept apart because it is the one ask that combines every layer: it
asks the working actor for the run's block (`working.render`, and `working.snapshot` for the run's
task when the request brings no query), renders the semantic section from the facts, asks the
recall actor for similar episodes (`memory.recall`) and renders the procedural section; the
semantic section ends with the project's do/don't lessons for the task when there are any — each
within what `logic.memory.block.BlockBuilder` allows, leftovers flowing on to later sections.
Another actor failing costs its section, never the block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slmactor.logic.memory.block_items import BlockItem
from slmactor.logic.text.models import model_family, normalize_language
from slmactor.logic.text.strings import count_tokens_chars
from slmactor.protocol import ErrorCode, Message, RequestError
from slmactor.protocol.messages import MemoryBlock, MemoryRecall, WorkingRender, WorkingSnapshot
from slmactor.runtime.actor import Actor, ActorDead, handles
from slmactor.stores.procedures import ProcedureStore

#: The share of the semantic section's allowance the do/don't lessons may use.
BLOCK_SHARE = 0.5


class MemoryBlockMixin(Actor):
    """`memory.block`; the host actor provides `procedures`, `_project(msg)` and
    `lessons_block_items` (the polar-lessons mixin)."""

    procedures: ProcedureStore
    #: The host actor's project lookup (its `_project` method).
    _project: Callable[[Message], Any]

    def retired_ids(self, root: Any) -> frozenset[str]:
        """Ids of the lines the user retired from this project's blocks (the lines mixin's)."""
        return frozenset()

    async def lessons_block_items(self, project: Any, query: str, run_id: str,
                                  allowance: int) -> list[BlockItem]:
        """The do/don't lessons of the semantic section (the polar-lessons mixin's)."""
        return []

    def keep_fact(self, project: Any) -> Callable[[Any], bool]:
        """The facts' claim check for one render (the claims mixin's)."""
        return lambda fact: True

    def checked_items(self, project: Any, items: list[BlockItem]) -> list[BlockItem]:
        """The items whose claims pass now (the claims mixin's)."""
        return items

    @handles(MemoryBlock)
    async def block(self, msg: MemoryBlock) -> dict[str, Any]:
        from slmactor.logic.memory import block as block_logic

        if msg.budget < 0:
            raise RequestError(ErrorCode.BAD_FIELD, "budget must be 0 (default) or positive")
        project = self._project(msg)
        self.procedures.sync()
        now = self.now()
        budget = msg.budget or self.ctx.settings.memory_tokens
        builder = block_logic.BlockBuilder(msg.role, budget)
        root = str(project.root)
        language = normalize_language(msg.language)  # episodes store `go`, a harness may say golang
        working = ""
        if msg.run_id.strip() and builder.allowance("working") > 0:
            reply = await self._quiet_ask(
                WorkingRender(project=root, run_id=msg.run_id, budget=builder.allowance("working"))
            )
            working = reply.get("text", "") if isinstance(reply, dict) else ""
        # Working memory's renderer writes lines of its own (the working actor's): taken as
        # its lines, never compared with the other sections' wording.
        builder.add("working", block_logic.lines_as_items("working", working))
        query_text, files = msg.query, list(msg.files)
        if msg.run_id.strip() and not (query_text.strip() or files or msg.tags):
            # S-7.3: without an explicit task, the run's own task and focus files condition
            # the semantic and episodic sections.
            query_text, files = await self._run_context(root, msg.run_id)
        query = " ".join([query_text, *files, *msg.tags]).strip()
        # The semantic section: facts, then the do/don't lessons for the task (at most half of
        # the section's allowance, whole lines; none → the facts alone, byte-identical).
        allowance = builder.allowance("semantic")
        lessons = await self.lessons_block_items(
            project, query, msg.run_id, int(allowance * BLOCK_SHARE))
        # Each fact is a claim: only one whose check passes now is told (`distiller_claims`).
        keep = self.keep_fact(project)
        semantic = block_logic.semantic_section(
            lambda tokens: project.facts.book.items_for(query, tokens, now, keep=keep), lessons,
            allowance)
        builder.add("semantic", semantic)
        episodic: list[BlockItem] = []
        if (query_text.strip() or files or msg.tags) and builder.allowance("episodic") > 0:
            reply = await self._quiet_ask(
                MemoryRecall(
                    project=root,
                    query=query_text,
                    files=files,
                    tags=list(msg.tags),
                    language=language,
                    model=msg.model,
                    n=block_logic.RECALL_CANDIDATES,
                )
            )
            episodic = block_logic.episodic_items(
                block_logic.episodes_of(reply), builder.allowance("episodic"), shown=semantic
            )
        builder.add("episodic", episodic)
        family = model_family(msg.model) if msg.model.strip() else ""
        allowance = builder.allowance("procedural")
        builder.add("procedural", self.procedures.book.render_items(family, language, allowance)
                    if allowance else [])
        # Said once: a fix learned as a gotcha, a convention and a lesson is one line to read
        # (their keys and fixes compared, as the renderers set them).
        items = self.checked_items(project, block_logic.said_once(builder.items()))
        retired = self.retired_ids(project.root)
        if retired:  # lines the user took back (`memory.retire`) are not said again
            from slmactor.logic.memory.block_lines import without_retired

            items = without_retired(items, retired)
        text = block_logic.render(items)
        self.ctx.stats.extra["blocks"] += 1
        return {
            "text": text,
            # The block as items: a hook renders them for its harness and tells each key once.
            "items": [item.to_dict() for item in items],
            "tokens": count_tokens_chars(text),
            "budget": budget,
            "role": msg.role,
            "sections": builder.sizes,
        }

    async def _run_context(self, root: str, run_id: str) -> tuple[str, list[str]]:
        """(task, focus files) of a live run, or ("", []) when the working actor has none."""
        reply = await self._quiet_ask(WorkingSnapshot(project=root, run_id=run_id))
        snap = reply.get("snapshot") if isinstance(reply, dict) else None
        if not isinstance(snap, dict):
            return "", []
        task = snap.get("task")
        focus = snap.get("focus")
        files = [f for f in focus if isinstance(f, str)] if isinstance(focus, list) else []
        return (task if isinstance(task, str) else ""), files

    async def _quiet_ask(self, msg: Message) -> Any:
        """Another actor's answer, or None: a missing section must not fail the block."""
        try:
            return await self.ask(msg)
        except (RequestError, ActorDead) as exc:
            self.ctx.stats.record_error(f"{msg.KIND}: {exc}")
            return None
