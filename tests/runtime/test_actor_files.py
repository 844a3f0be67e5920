"""Files an actor reads from the event loop go through aiofiles, bounded, regular files only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from slmactor.runtime import actor as files

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_small_file_is_read_and_anything_else_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("[classes]\nread = ['view']\n")
    assert await files.read_text(tmp_path / "a.toml") == "[classes]\nread = ['view']\n"
    assert await files.read_text(tmp_path / "missing.toml") is None
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(ValueError, match="larger than 10 bytes"):
        await files.read_text(tmp_path / "big", limit=10)
    os.mkfifo(tmp_path / "fifo")  # a setting naming a FIFO must not hang the loop
    with anyio.fail_after(30), pytest.raises(ValueError, match="not a regular file"):
        await files.read_text(tmp_path / "fifo")
    (tmp_path / "latin").write_bytes(b"caf\xe9")
    with pytest.raises(ValueError, match="not UTF-8"):
        await files.read_text(tmp_path / "latin")


async def test_the_working_actor_reads_its_config_through_aiofiles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aiofiles

    from tests.actors.test_working_actor import Harness  # the actor in process

    opened: list[str] = []
    original = aiofiles.open

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(aiofiles, "open", counting)
    config = tmp_path / "tool_classes.toml"
    config.write_text('read = ["peek"]\n')
    monkeypatch.setenv("SLMACTOR_TOOL_CLASSES", str(config))
    classes = await Harness(tmp_path).actor._load_tool_classes()
    assert classes is not None and classes.classify("peek")[1] == "read"
    assert opened == [str(config)]
