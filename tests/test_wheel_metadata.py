"""The wheel a user installs says what it is: license file, classifiers (Linux and macOS only,
as the README's platforms say), every extra a user may want — and not the repository's own
`test` tooling, which an editable checkout still has (`hatch_build.py`)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_built_wheel_has_its_license_classifiers_and_no_test_extra(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path),
                    str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("slmactor-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert zf.testzip() is None
    lines = metadata.splitlines()
    assert "License-Expression: MIT" in lines and "License-File: LICENSE" in lines
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "Classifier: Operating System :: POSIX :: Linux" in lines
    assert "Classifier: Operating System :: MacOS" in lines
    assert not any("Windows" in line for line in lines if line.startswith("Classifier: "))
    extras = {line.split(": ", 1)[1] for line in lines if line.startswith("Provides-Extra: ")}
    assert extras == {"daemon", "mcp", "mini-swe-agent", "bench"}
    assert not any("extra == 'test'" in line or 'extra == "test"' in line for line in lines)
    assert any(n.startswith("slmactor/ui/") for n in names)


def test_an_editable_checkout_keeps_the_test_extra() -> None:
    extras = importlib.metadata.metadata("slmactor").get_all("Provides-Extra") or []
    assert "test" in extras


def test_the_readme_names_the_supported_platforms() -> None:
    text = (ROOT / "README.md").read_text()
    assert "**Platforms**: Linux and macOS" in text and "Windows is\nnot supported" in text
