"""How many lines `hook install` changes in users' settings files (the fixtures of
`tests/fixtures/settings/`): prints `+added -removed` per file for the slmactor on PYTHONPATH.

    PYTHONPATH=. python tests/hooks/measure_install_diff.py
    # an older tree, for comparison:
    git archive <commit> slmactor | tar -x -C /tmp/old && PYTHONPATH=/tmp/old python tests/hooks/measure_install_diff.py
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
from pathlib import Path

from slmactor.hooks import install

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "settings"
FILES = [("claude", "claude-settings.json"), ("claude", "claude-settings-4space.json"),
         ("gemini", "gemini-settings.jsonc"), ("openhands", "openhands-hooks.json")]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        kw = {"store": base / "store", "home": base, "env": {}} \
            if "store" in inspect.signature(install.apply).parameters else {}
        for harness, name in FILES:
            path = base / harness / name
            path.parent.mkdir(exist_ok=True)
            shutil.copyfile(FIXTURES / name, path)
            try:
                change = install.apply(harness, path, "/opt/venv/bin/slmactor", **kw)  # type: ignore[arg-type]
            except ValueError as exc:
                print(f"{name:30} refused: {str(exc).split('(')[0].strip()}")
                continue
            lines = [line for line in change.diff.splitlines()
                     if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            added = sum(line.startswith("+") for line in lines)
            print(f"{name:30} +{added} -{len(lines) - added}")


if __name__ == "__main__":
    main()
