"""The user's signing key (`slmactor.stores.base.signing`): made once, private, whole."""

from __future__ import annotations

import stat
from pathlib import Path


def test_racing_first_loads_of_the_signing_key_agree(tmp_path: Path) -> None:
    """The daemon's actors load the key at once on a first start: all see one whole key."""
    from concurrent.futures import ThreadPoolExecutor

    from slmactor.stores.base.signing import load_signing_key

    with ThreadPoolExecutor(8) as pool:
        keys = list(pool.map(lambda _i: load_signing_key(tmp_path / "home"), range(32)))
    assert len(set(keys)) == 1 and len(keys[0]) == 64
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == [".memory-key"]
    assert stat.S_IMODE((tmp_path / "home" / ".memory-key").stat().st_mode) == 0o600
