"""The OpenHands SDK's own reader of `.openhands/hooks.json` (`HookConfig.load`, from the SDK's
wheel that `install.sh` keeps: the SDK itself needs Python >= 3.12 and is not installed) loads the
user's hooks and ours after `slmactor hook install`, whichever of its formats the file was in.

Only the reader's three modules are taken from the wheel (`openhands/sdk/hooks/config.py`,
`hooks/types.py`, `utils/path.py`: pydantic and the standard library), into a private folder;
nothing of it is kept in this repository.
"""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slmactor.hooks import install
from tests.realcli.harness import realcli_dir

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "settings"
VERSION = "1.58.2"
MODULES = ("openhands/sdk/hooks/config.py", "openhands/sdk/hooks/types.py", "openhands/sdk/utils/path.py")


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    wheels = sorted((realcli_dir() / "openhands-sdk").glob(f"openhands_sdk-{VERSION}-*.whl"))
    if not wheels:
        pytest.skip(f"openhands-sdk {VERSION} wheel not in {realcli_dir() / 'openhands-sdk'} "
                    "(run tests/realcli/install.sh)")
    root = tmp_path_factory.mktemp("openhands-sdk")
    with zipfile.ZipFile(wheels[0]) as wheel:
        for name in MODULES:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(wheel.read(name))
    for package in ("openhands", "openhands/sdk", "openhands/sdk/hooks", "openhands/sdk/utils"):
        (root / package / "__init__.py").touch()
    sys.path.insert(0, str(root))
    try:
        from openhands.sdk.hooks import config, types  # type: ignore[import-not-found]

        yield config.HookConfig, types.HookEventType
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "openhands" or m.startswith("openhands.")]:
            del sys.modules[name]


def _commands(sdk: Any, path: Path, event: str, tool: str | None = None) -> list[str]:
    config_class, events = sdk
    loaded = config_class.load(path)
    return [h.command for h in loaded.get_hooks_for_event(getattr(events, event), tool)]


@pytest.mark.parametrize("original", [
    (FIXTURES / "openhands-hooks.json").read_bytes(),  # the SDK's own format (snake_case fields)
    json.dumps({"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "block_dangerous.sh"}]}]}).encode(),
    json.dumps({"hooks": {"PreToolUse": [{"matcher": "terminal", "hooks": [{"command": "block_dangerous.sh"}]}]}},
               indent=4).encode(),
], ids=["snake-case", "pascal-case", "wrapper"])
def test_the_sdk_loads_the_users_hook_and_ours(sdk: Any, original: bytes, tmp_path: Path) -> None:
    path = tmp_path / ".openhands" / "hooks.json"
    path.parent.mkdir()
    path.write_bytes(original)
    install.apply("openhands", path, "/opt/venv/bin/slmactor", home=tmp_path, env={}, store=tmp_path / "s")
    assert _commands(sdk, path, "PRE_TOOL_USE", "terminal") == ["block_dangerous.sh"]  # the user's safety hook
    assert _commands(sdk, path, "POST_TOOL_USE", "terminal") == ["exec /opt/venv/bin/slmactor hook openhands PostToolUse"]
    assert _commands(sdk, path, "SESSION_START") == ["exec /opt/venv/bin/slmactor hook openhands SessionStart"]
    install.remove("openhands", path, home=tmp_path, env={}, store=tmp_path / "s")
    assert path.read_bytes() == original


def test_a_file_we_create_is_one_the_sdk_loads(sdk: Any, tmp_path: Path) -> None:
    path = tmp_path / ".openhands" / "hooks.json"
    install.apply("openhands", path, "/opt/venv/bin/slmactor", home=tmp_path, env={}, store=tmp_path / "s")
    assert _commands(sdk, path, "SESSION_END") == ["exec /opt/venv/bin/slmactor hook openhands SessionEnd"]
    shutil.rmtree(tmp_path / "s")
