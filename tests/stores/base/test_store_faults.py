"""Fault injection on every write path (RELIABILITY T8, T9a).

T8: for N = 1, 2, ... the Nth file-system call a write operation makes on the store directory
(os.open, os.write, os.fsync, os.fdatasync, os.replace) raises ENOSPC, EIO or EDQUOT, or — for a
write — really writes only half its bytes and returns that short count. After each fault the
operation must have raised StoreWriteError, the file must hold no partial record, the old JSON
document must still be there (unless the fault hit the directory fsync after the rename, when the
new one is), no temp file may be left, and once the fault is gone the next write must succeed.

T9a: a child process with RLIMIT_FSIZE and SIGXFSZ ignored gets a real short write from the
kernel, then EFBIG; the log is cut back to whole records and works again once the limit is gone.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slmactor.stores import JsonDoc, JsonlLog, StoreWriteError, WarningLog, write_markdown

REPO = Path(__file__).resolve().parents[3]
FAULTS = ("ENOSPC", "EIO", "EDQUOT", "short")
REAL = {name: getattr(os, name) for name in ("open", "write", "fsync", "fdatasync", "replace")}


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


class Injector:
    """Counts store-directory syscalls and fails the `fail_at`-th one (1-based) with `fault`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
        self.root = str(root.resolve())
        self.fail_at = 0
        self.fault = "EIO"
        self.calls: list[str] = []
        self.injected = False
        for name in REAL:
            monkeypatch.setattr(os, name, self._wrap(name))

    def arm(self, fail_at: int, fault: str) -> None:
        self.fail_at, self.fault, self.calls, self.injected = fail_at, fault, [], False

    def disarm(self) -> None:
        self.fail_at = 0

    def _ours(self, name: str, args: tuple[Any, ...]) -> bool:
        target = args[0]
        where = _fd_path(target) if isinstance(target, int) else os.fspath(target)
        if not os.path.isabs(where):
            where = os.path.abspath(where)
        return where.startswith(self.root)

    def _wrap(self, name: str) -> Callable[..., Any]:
        real = REAL[name]

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.fail_at <= 0 or not self._ours(name, args):
                return real(*args, **kwargs)
            self.calls.append(name)
            counted = [c for c in self.calls if self.fault != "short" or c == "write"]
            if self.fault == "short" and name != "write":
                return real(*args, **kwargs)
            if len(counted) != self.fail_at:
                return real(*args, **kwargs)
            if self.fault == "short":
                self.injected = True
                data = bytes(args[1])
                return REAL["write"](args[0], data[: max(1, len(data) // 2)])
            self.injected = True
            code = getattr(errno, self.fault)
            raise OSError(code, os.strerror(code))

        return call


def run_fault_loop(
    injector: Injector,
    operation: Callable[[], None],
    check_after_fault: Callable[[], None],
    check_recovery: Callable[[], None],
    *,
    retries_short_writes: bool = False,
) -> int:
    """Run `operation` with the Nth call failing for every N and fault; returns faults injected.

    `retries_short_writes`: the operation writes a private temp file, where a short write is
    simply continued (the kernel's answer to the next write decides), so success is correct.
    """
    injected = 0
    for fault in FAULTS:
        n = 1
        while True:
            injector.arm(n, fault)
            try:
                operation()
                failed = False
            except StoreWriteError:
                failed = True
            injector.disarm()
            if not failed:
                if injector.injected:
                    assert fault == "short" and retries_short_writes, (
                        f"{fault} on call {n} ({injector.calls[-1]}) was acknowledged"
                    )
                    injected += 1
                check_recovery()
                if not injector.injected:
                    break
            else:
                assert injector.injected, f"failed without an injected fault (n={n}, {fault})"
                injected += 1
                check_after_fault()
            n += 1
            assert n < 50, "operation makes an unbounded number of calls"
    return injected


def renamed(injector: Injector) -> bool:
    """True when the fault came after the rename (only the directory fsync failed)."""
    return "replace" in injector.calls and injector.calls[-1] != "replace"


def no_temp_files(directory: Path) -> None:
    leftovers = [p.name for p in directory.rglob("*") if ".tmp-" in p.name]
    assert leftovers == []


@pytest.mark.parametrize("fresh", [True, False], ids=["first-append", "steady-append"])
@pytest.mark.parametrize("durable", [True, False], ids=["fsync", "nofsync"])
def test_jsonl_append_never_keeps_a_partial_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: bool, durable: bool
) -> None:
    path = tmp_path / "store" / "log.jsonl"
    seed = JsonlLog(path, WarningLog())
    old = [{"n": n, "pad": "p" * 40} for n in range(3)]
    for record in old:
        seed.append(record)
    seed.close()
    before = path.read_bytes()
    injector = Injector(monkeypatch, tmp_path)
    warnings = WarningLog()
    steady = JsonlLog(path, warnings, fsync=durable)
    steady.append({"warm": True})
    old.append({"warm": True})
    before = path.read_bytes()
    new = {"n": 99, "pad": "q" * 200}

    def operation() -> None:
        log = JsonlLog(path, warnings, fsync=durable) if fresh else steady
        try:
            log.append(new)
        finally:
            if fresh:
                log.close()

    def check_after_fault() -> None:
        assert path.read_bytes() == before
        reader = JsonlLog(path, WarningLog(), read_only=True)
        assert reader.records() == old
        assert reader.corrupt_lines == 0

    def check_recovery() -> None:
        assert JsonlLog(path, WarningLog(), read_only=True).records() == [*old, new]
        assert path.read_bytes() == before + b'{"n":99,"pad":"' + b"q" * 200 + b'"}\n'
        path.write_bytes(before)  # same inode: the next fault kind starts from the old log

    injected = run_fault_loop(injector, operation, check_after_fault, check_recovery)
    assert injected >= 4  # every errno hit at least the write, plus the short write
    steady.close()


def test_jsonl_short_write_whose_truncate_fails_is_repaired_on_the_next_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.jsonl"
    warnings = WarningLog()
    log = JsonlLog(path, warnings)
    log.append({"n": 1})
    real_write, real_truncate = os.write, os.ftruncate

    def short_write(fd: int, data: bytes) -> int:
        return real_write(fd, bytes(data)[:5])

    def broken_truncate(fd: int, length: int) -> None:
        raise OSError(errno.EIO, "injected")

    monkeypatch.setattr(os, "write", short_write)
    monkeypatch.setattr(os, "ftruncate", broken_truncate)
    with pytest.raises(StoreWriteError):
        log.append({"n": 2, "pad": "x" * 30})
    monkeypatch.setattr(os, "write", real_write)
    monkeypatch.setattr(os, "ftruncate", real_truncate)
    assert path.read_bytes() == b'{"n":1}\n{"n":'  # the torn piece is still there...
    log.append({"n": 3})  # ...and is cut before the next record goes in
    assert path.read_bytes() == b'{"n":1}\n{"n":3}\n'
    assert any("torn final record" in text for text in warnings.texts())


def test_jsonl_rewrite_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.jsonl"
    log = JsonlLog(path, WarningLog())
    old = [{"n": n} for n in range(5)]
    for record in old:
        log.append(record)
    new = [{"n": 3}, {"n": 4}]
    before = path.read_bytes()
    injector = Injector(monkeypatch, tmp_path)

    def operation() -> None:
        log.rewrite(new)

    def check_after_fault() -> None:
        records = JsonlLog(path, WarningLog(), read_only=True).records()
        if renamed(injector):
            assert records == new  # renamed already; only the directory fsync failed
            log.rewrite(old)
        else:
            assert path.read_bytes() == before
        no_temp_files(tmp_path)

    def check_recovery() -> None:
        assert log.records() == new
        log.rewrite(old)  # put the old content back for the next fault kind
        no_temp_files(tmp_path)

    assert run_fault_loop(
        injector, operation, check_after_fault, check_recovery, retries_short_writes=True
    ) >= 4


def test_json_doc_keeps_the_old_document_when_a_save_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "evolve" / "rules.json"
    doc = JsonDoc(path, WarningLog())
    old = {"rules": [{"id": "r1", "alpha": 3}]}
    doc.save(old)
    new = {"rules": [{"id": "r1", "alpha": 4}, {"id": "r2", "alpha": 1}]}
    injector = Injector(monkeypatch, tmp_path)
    saw_fsync_fault = False

    def operation() -> None:
        doc.save(new)

    def check_after_fault() -> None:
        nonlocal saw_fsync_fault
        saw_fsync_fault |= injector.calls[-1] == "fsync"
        loaded = JsonDoc(path, WarningLog(), read_only=True).load()
        assert loaded == (new if renamed(injector) else old)
        no_temp_files(tmp_path)
        if renamed(injector):
            doc.save(old)

    def check_recovery() -> None:
        assert doc.load() == new
        doc.save(old)

    assert run_fault_loop(
        injector, operation, check_after_fault, check_recovery, retries_short_writes=True
    ) >= 10
    assert saw_fsync_fault


def test_markdown_mirror_keeps_the_old_text_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory" / "WORKING.md"
    write_markdown(path, "# old\n")
    injector = Injector(monkeypatch, tmp_path)

    def operation() -> None:
        write_markdown(path, "# new\n" + "line\n" * 100)

    def check_after_fault() -> None:
        text = path.read_text()
        assert text.startswith("# new\n") if renamed(injector) else text == "# old\n"
        no_temp_files(tmp_path)
        write_markdown(path, "# old\n")

    def check_recovery() -> None:
        assert path.read_text().startswith("# new\n")
        write_markdown(path, "# old\n")

    assert run_fault_loop(
        injector, operation, check_after_fault, check_recovery, retries_short_writes=True
    ) >= 10


CHILD = textwrap.dedent(
    """
    import json, resource, signal, sys
    from slmactor.stores import JsonDoc, JsonlLog, StoreWriteError, WarningLog

    log_path, doc_path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    log = JsonlLog(log_path, WarningLog(), redact=False)
    appended, errors = 0, []
    while len(errors) < 2:
        try:
            log.append({"i": appended, "pad": "x" * 950})
            appended += 1
        except StoreWriteError as exc:
            errors.append([exc.reason, exc.errno])
    doc = JsonDoc(doc_path, WarningLog(), redact=False)
    doc.save({"version": 1})
    try:
        doc.save({"version": 2, "pad": "y" * (limit * 2)})
        doc_error = None
    except StoreWriteError as exc:
        doc_error = [exc.reason, exc.errno]
    print(json.dumps({"appended": appended, "errors": errors, "doc_error": doc_error}))
    """
)


def test_real_short_write_under_rlimit_fsize(tmp_path: Path) -> None:
    log_path, doc_path, limit = tmp_path / "log.jsonl", tmp_path / "doc.json", 10_000
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(log_path), str(doc_path), str(limit)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    result = json.loads(done.stdout)
    line_bytes = len(json.dumps({"i": 0, "pad": "x" * 950}, separators=(",", ":"))) + 1
    assert result["appended"] == limit // line_bytes
    # The kernel wrote only what fitted under the limit (a real short write); the log cut it
    # back, so the retry met the same room and was short again rather than EFBIG.
    assert [reason.split(" (")[0] for reason, _errno in result["errors"]] == ["short write"] * 2
    assert result["doc_error"][1] in (errno.EFBIG, None)
    assert result["doc_error"] is not None
    raw = log_path.read_bytes()
    assert raw.endswith(b"\n")
    log = JsonlLog(log_path, WarningLog())
    assert [r["i"] for r in log.records()] == list(range(result["appended"]))
    assert log.corrupt_lines == 0
    # The old document survived the failed save; no temp file was left.
    assert JsonDoc(doc_path, WarningLog()).load() == {"version": 1}
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    # Space is back (no limit in this process): the next record goes in whole.
    offset = log.append({"i": "after", "pad": "z"})
    assert log.read_at(offset) == {"i": "after", "pad": "z"}
