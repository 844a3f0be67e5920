"""Secrets never leave through any exit: the corpus of secret forms is sent through
every message kind that carries text, to a real daemon; afterwards no secret value is in any file
under the stores (project `.slmcode/`, the user home), in the daemon's log, or in any reply —
and the look-alikes (hashes, UUIDs, `$PASSWORD`, `<token>`) came back intact."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from slmactor.protocol.messages import (
    EpisodeRecent,
    EvolveFingerprint,
    EvolveOnFailure,
    EvolveRegressions,
    EvolveResolved,
    EvolveRules,
    FactList,
    FactObserve,
    LessonAdd,
    LessonsRender,
    MemoryBlock,
    MemoryRecall,
    MetricsShow,
    ProcedureBest,
    ProcedureObserve,
    RunFinish,
)
from slmactor.runtime.logfilter import RedactingFilter
from slmactor.testing import DaemonProcess
from tests.fixtures.secret_corpus import SECRETS, all_text, leaks, lookalikes_missing


def _files_text(*roots: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and not path.name.endswith(".sock"):
                out[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return out


def _report(run_id: str) -> dict[str, Any]:
    lines = [s.line for s in SECRETS]
    return {
        "run_id": run_id, "query": all_text(), "summary": all_text(), "language": "python",
        "model": "qwen2.5-coder:7b", "planned_tasks": 1, "completed_tasks": 1,
        "files_changed": ["app/db.py"], "tools_used": ["bash"], "tags": ["secrets"],
        "commands": [{"cmd": line, "ok": False} for line in lines],
        "failures": [{"tool": "bash", "message": line, "resolved_by": "llm",
                      "failed_args": json.dumps({"command": line}),
                      "fixed_args": json.dumps({"command": "make test"})} for line in lines],
        "decisions": [{"decision": "edit_format", "arm": "search_replace",
                       "outcome": {"applied": True, "gate_passed": True}}],
        "gates": [{"name": "tests", "passed": False, "detail": all_text()}],
    }  # fmt: skip


def test_the_secret_corpus_leaves_through_no_file_log_or_reply(daemon: DaemonProcess) -> None:
    replies: dict[str, Any] = {}
    text = all_text()
    run = "run-secrets"
    with daemon.client(timeout=60) as client:
        replies["run.start"] = client.run_start(run, task=text)
        for i, secret in enumerate(SECRETS):
            key = f"k{i}"
            client.record_tool(run, "bash", path="app/db.py", args={"command": secret.line},
                               command=secret.line, ok=False, error=secret.line, key=key)
            client.fail(run, key=key, tool="bash", path="app/db.py", message=secret.line)
            client.resolve(run, key, resolution=secret.line, resolved_by="llm")
            client.decide(run, secret.line)
        client.summarize(run, text)
        replies["working.render"] = client.working_render(run, budget=4000)
        replies["working.snapshot"] = client.working_snapshot(run)
        replies["working.mirror"] = client.working_mirror(run)
        for i, secret in enumerate(SECRETS):
            replies[f"fact.observe.{i}"] = client.ask(
                FactObserve(kind="convention", subject=secret.line, text=secret.line))
            replies[f"evolve.on_failure.{i}"] = client.ask(EvolveOnFailure(
                run_id=run, tool="bash", message=secret.line,
                args=json.dumps({"command": secret.line})))
            replies[f"evolve.fingerprint.{i}"] = client.ask(
                EvolveFingerprint(tool="bash", message=secret.line))
            replies[f"procedure.observe.{i}"] = client.ask(ProcedureObserve(
                topic="db", option=secret.line, ok=True, note=secret.line))
        replies["evolve.resolved"] = client.ask(EvolveResolved(
            run_id=run, tool="bash", message=SECRETS[0].line, resolution=text,
            failed_args=json.dumps({"command": SECRETS[0].line}),
            fixed_args=json.dumps({"command": SECRETS[1].line})))
        replies["lesson.add"] = client.ask(LessonAdd(lessons=[{"text": s.line} for s in SECRETS]))
        replies["lesson.add.global"] = client.ask(
            LessonAdd(lessons=[{"text": s.line} for s in SECRETS], scope="global", run_id=run))
        replies["run.finish"] = client.ask(RunFinish(report=_report(run), summary=text, wait=True))
        replies["run.finish.2"] = client.ask(
            RunFinish(report=_report("run-secrets-2"), summary=text, wait=True))
        for name, message in {
            "memory.block": MemoryBlock(query=text, run_id=run, budget=4000),
            "memory.recall": MemoryRecall(query=text, n=5),
            "fact.list": FactList(),
            "lessons.render": LessonsRender(query=text, max_bytes=16_000),
            "episode.recent": EpisodeRecent(n=5),
            "metrics.show": MetricsShow(last=0),
            "evolve.rules": EvolveRules(),
            "evolve.regressions": EvolveRegressions(),
            "procedure.best": ProcedureBest(topic="db"),
        }.items():
            replies[name] = client.ask(message)
        replies["status"] = client.status()
    assert daemon.stop() == 0

    leaked_replies = {k: leaks(json.dumps(v, ensure_ascii=False)) for k, v in replies.items()}
    assert {k: v for k, v in leaked_replies.items() if v} == {}
    files = _files_text(daemon.project / ".slmcode", daemon.home)
    assert len(files) >= 8, sorted(files)
    assert {path: leaks(body) for path, body in files.items() if leaks(body)} == {}
    assert leaks(daemon.log()) == []
    # The look-alikes went through untouched where the text is kept whole.
    assert lookalikes_missing(replies["working.snapshot"]["snapshot"]["task"]) == []
    stored = "".join(files.values())
    assert "«redacted:password»" in stored and "«redacted:secret»" in stored


def test_the_log_filter_redacts_messages_arguments_and_tracebacks() -> None:
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    logger = logging.getLogger("slmactor.test.logfilter")
    handler = Keep()
    handler.addFilter(RedactingFilter())
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("store said %s", SECRETS[0].line)
        try:
            raise ValueError(SECRETS[4].line)
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert len(records) == 2
    assert leaks("\n".join(records)) == []
    assert "ValueError" in records[1]
