"""Calibration profiles on disk: `~/.slmcode/memory/calibration.json` + `CALIBRATION.md` (S-12.3).

Document: `{version: 1, updated, profiles: [...]}` (one `CalibrationProfile.to_dict()` each,
newest first), at most 50 profiles, expired ones dropped by `prune`. Written atomically; a corrupt
file is moved to `calibration.json.corrupt` with a warning and the book starts empty; a file
edited or removed by hand is reloaded (`sync`) rather than overwritten. Owned by the bandit actor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from slmactor.logic.policy.calibration import CalibrationBook, calibration_markdown
from slmactor.stores.base.layout import UserLayout
from slmactor.stores.base.warnings import WarningLog
from slmactor.stores.base.watched import MirroredBook


class CalibrationStore(MirroredBook[CalibrationBook]):
    """The measured model endpoints."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        mirror: str | os.PathLike[str],
        warnings: WarningLog,
        *,
        read_only: bool = False,
        now: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            path, mirror, "profiles", CalibrationBook.from_records, calibration_markdown,
            warnings, read_only=read_only, now=now,
        )

    @classmethod
    def for_user(cls, layout: UserLayout, warnings: WarningLog, **kwargs: Any) -> CalibrationStore:
        return cls(layout.calibration, layout.calibration_md, warnings, **kwargs)
