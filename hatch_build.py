"""The wheel a release publishes carries no `test` extra.

`pip install -e '.[daemon,test]'` (the README's test command, CI, every developer's checkout)
needs the extra in an editable install; a published wheel must not advertise it (it would install
linters and type checkers into users' environments on request, and the extra is this
repository's tooling, not a feature of the package). Hatchling builds both from one metadata, so
this build hook rewrites a standard (non-editable) wheel's `METADATA` after the build: the
`Provides-Extra: test` line and the requirements marked `extra == "test"` go, and the wheel's
`RECORD` gets the new file's hash and size (PEP 376/427).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import tempfile
import zipfile
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

EXTRA = "test"
_MARKED = re.compile(r"""^Requires-Dist: .*;.*\bextra\s*==\s*["']""" + EXTRA + r"""["']\s*$""")


def without_extra(metadata: str, extra: str = EXTRA) -> str:
    lines = [line for line in metadata.splitlines(keepends=True)
             if line.rstrip("\r\n") != f"Provides-Extra: {extra}"
             and not _MARKED.match(line.rstrip("\r\n"))]
    return "".join(lines)


def _record_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def rewrite_wheel(path: str) -> None:
    """Drop the extra from the wheel at `path` (rewritten in place, entries in the same order)."""
    with zipfile.ZipFile(path) as wheel:
        infos = wheel.infolist()
        contents = {info.filename: wheel.read(info.filename) for info in infos}
    metadata_name = next(n for n in contents if n.endswith(".dist-info/METADATA"))
    record_name = next(n for n in contents if n.endswith(".dist-info/RECORD"))
    new_metadata = without_extra(contents[metadata_name].decode("utf-8")).encode("utf-8")
    contents[metadata_name] = new_metadata
    rows = []
    for row in contents[record_name].decode("utf-8").splitlines():
        name = row.split(",", 1)[0]
        rows.append(_record_row(name, new_metadata) if name == metadata_name else row)
    contents[record_name] = ("\n".join(rows) + "\n").encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".whl")
    os.close(fd)
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as out:
        for info in infos:
            out.writestr(info, contents[info.filename])
    shutil.move(tmp, path)


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self.target_name == "wheel" and version == "standard":
            rewrite_wheel(artifact_path)
