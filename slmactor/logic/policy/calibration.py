"""Calibration profiles: what a harness measured about a model endpoint up front (SPEC S-12).

The harness owns the model endpoint, so it runs the probes (concurrency levels 1, 2, 4 and 8 if 4
still scales, identical 16-token completions, p50/p95 solo latency, decode rate, context window)
and reports them; the daemon stores them and derives:

* the concurrency **knee**: the highest level whose efficiency wall(1)/wall(n) is ≥ 60 % and whose
  lower levels are all ≥ 60 % (a level that fails ends the search, even if a higher one recovers);
* staleness: a profile older than 30 days, from an older calibrator version, or measured with a
  different context window asks to be re-measured; expired profiles are dropped on prune;
* seeds — and only seeds (H-S-13): a per-call decode rate, and a role latency for each role that has
  **no** observations yet (observed roles are never overwritten). A 16-token probe is evidence
  about speed, not about correctness, so calibration never touches a bandit posterior; nothing in
  this module imports the bandit.

Profiles are keyed by the exact model id and the endpoint's scheme://host:port (paths, queries and
credentials dropped); ≤ 50 are kept, the most recently measured first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from slmactor.logic.text.models import model_family
from slmactor.logic.text.timefmt import SECONDS_PER_DAY, parse_rfc3339, to_rfc3339

KNEE_EFFICIENCY = 0.60
MAX_PROFILES = 50
PROFILE_TTL_DAYS = 30.0
PROBE_TOKENS = 16
SEED_BIAS = 1.5
DEFAULT_ROLE_TOKENS = 512
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def normalize_endpoint(endpoint: str) -> str:
    """`HTTP://Localhost:8080/v1/chat?x=1` → `http://localhost:8080`; default ports made explicit."""
    text = endpoint.strip()
    if not text:
        return ""
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = _DEFAULT_PORTS.get(scheme)
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def knee(efficiency: Mapping[int, float]) -> int:
    """Highest level with efficiency ≥ 60 % whose lower levels are all ≥ 60 %; at least 1."""
    best = 1
    for level in sorted(efficiency):
        if efficiency[level] < KNEE_EFFICIENCY:
            break
        best = max(best, level)
    return best


def _num(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0.0
    try:
        number = float(value)
    except ValueError:
        return 0.0
    return number if math.isfinite(number) and number > 0 else 0.0


def _levels(raw: object) -> dict[int, float]:
    """{level: value} from a map (`{"2": 0.93}`) or a list of `{level, value}` pairs."""
    pairs: Iterable[tuple[object, object]]
    if isinstance(raw, Mapping):
        pairs = raw.items()
    elif isinstance(raw, list):
        pairs = [(p.get("level"), p.get("efficiency", p.get("wall_ms"))) for p in raw
                 if isinstance(p, Mapping)]
    else:
        return {}
    out: dict[int, float] = {}
    for level_raw, value_raw in pairs:
        level = int(_num(level_raw))
        value = _num(value_raw)
        if level >= 1 and value > 0:
            out[level] = value
    return out


@dataclass(frozen=True, slots=True)
class CalibrationProfile:
    """One measured (model id, endpoint)."""

    model: str
    endpoint: str
    efficiency: tuple[tuple[int, float], ...]
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    decode_tps: float = 0.0
    context_window: int = 0
    measured_at: float = 0.0
    calibrator_version: int = 1

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.endpoint)

    @property
    def family(self) -> str:
        return model_family(self.model)

    @property
    def knee(self) -> int:
        return knee(dict(self.efficiency))

    def age_days(self, now: float) -> float:
        return max(0.0, (now - self.measured_at) / SECONDS_PER_DAY) if self.measured_at else math.inf

    def expired(self, now: float) -> bool:
        return self.age_days(now) > PROFILE_TTL_DAYS

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "model_family": self.family,
            "endpoint": self.endpoint,
            "efficiency": {str(level): value for level, value in self.efficiency},
            "knee": self.knee,
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "decode_tps": self.decode_tps,
            "context_window": self.context_window,
            "measured_at": to_rfc3339(self.measured_at) if self.measured_at > 0 else "",
            "calibrator_version": self.calibrator_version,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], now: float = 0.0) -> CalibrationProfile:
        """Read a stored profile or a harness report. Raises ValueError without a model id.

        Efficiency comes from `efficiency` ({level: wall(1)/wall(n)}) or, when only raw walls are
        reported, from `wall_ms` ({level: ms}). A report without `measured_at` is stamped `now`.
        """
        model = data.get("model") or data.get("model_id")
        if not isinstance(model, str) or not model.strip():
            raise ValueError("calibration profile needs a model id")
        efficiency = _levels(data.get("efficiency"))
        if not efficiency:
            walls = _levels(data.get("wall_ms"))
            solo = walls.get(1, 0.0)
            efficiency = {lvl: solo / ms for lvl, ms in walls.items()} if solo > 0 else {}
        efficiency.setdefault(1, 1.0)
        stamp = data.get("measured_at")
        measured = parse_rfc3339(stamp) if isinstance(stamp, str) else None
        if measured is None:
            measured = _num(stamp) or now
        endpoint = data.get("endpoint")
        return cls(
            model=model.strip(),
            endpoint=normalize_endpoint(endpoint if isinstance(endpoint, str) else ""),
            efficiency=tuple(sorted((lvl, round(eff, 6)) for lvl, eff in efficiency.items())),
            p50_ms=_num(data.get("p50_ms")),
            p95_ms=_num(data.get("p95_ms")),
            decode_tps=_num(data.get("decode_tps")),
            context_window=int(_num(data.get("context_window"))),
            measured_at=measured,
            calibrator_version=max(1, int(_num(data.get("calibrator_version")))),
        )


def staleness(
    profile: CalibrationProfile | None,
    now: float,
    *,
    calibrator_version: int = 1,
    context_window: int = 0,
) -> str:
    """Why the harness should (re-)measure, or "" when the profile is current (S-12.2)."""
    if profile is None:
        return "never measured"
    if profile.expired(now):
        return f"older than {PROFILE_TTL_DAYS:.0f} days"
    if profile.calibrator_version < calibrator_version:
        return "measured by an older calibrator"
    if context_window > 0 and profile.context_window and context_window != profile.context_window:
        return "context window changed"
    return ""


class CalibrationBook:
    """The bounded set of profiles (≤ 50), keyed by (model id, endpoint)."""

    def __init__(self, profiles: Iterable[CalibrationProfile] = ()) -> None:
        self._profiles: dict[tuple[str, str], CalibrationProfile] = {}
        for profile in profiles:
            self.put(profile)

    def __len__(self) -> int:
        return len(self._profiles)

    @classmethod
    def from_records(cls, records: Iterable[object]) -> CalibrationBook:
        """Load stored profiles; entries without a model id are skipped."""
        profiles = []
        for raw in records:
            if isinstance(raw, Mapping):
                try:
                    profiles.append(CalibrationProfile.from_dict(raw))
                except ValueError:
                    continue
        return cls(profiles)

    def to_records(self) -> list[dict[str, Any]]:
        return [profile.to_dict() for profile in self.all()]

    def all(self) -> list[CalibrationProfile]:
        """Most recently measured first, then by model id."""
        return sorted(self._profiles.values(), key=lambda p: (-p.measured_at, p.model, p.endpoint))

    def put(self, profile: CalibrationProfile) -> None:
        """Insert or replace; an older measurement never replaces a newer one."""
        current = self._profiles.get(profile.key)
        if current is None or profile.measured_at >= current.measured_at:
            self._profiles[profile.key] = profile

    def get(self, model: str, endpoint: str = "") -> CalibrationProfile | None:
        """Exact (model, endpoint); with a blank endpoint, the newest profile of that model id."""
        wanted = model.strip()
        if endpoint.strip():
            return self._profiles.get((wanted, normalize_endpoint(endpoint)))
        return next((p for p in self.all() if p.model == wanted), None)

    def prune(self, now: float, max_profiles: int = MAX_PROFILES) -> list[CalibrationProfile]:
        """Drop expired profiles, then keep the `max_profiles` most recent; returns the dropped."""
        dropped = [p for p in self._profiles.values() if p.expired(now)]
        kept = [p for p in self.all() if not p.expired(now)]
        dropped += kept[max(0, max_profiles):]
        for profile in dropped:
            self._profiles.pop(profile.key, None)
        return dropped


def seed_role_latencies(
    profile: CalibrationProfile,
    observed: Mapping[str, int],
    role_tokens: Mapping[str, int],
    task_timeout_ms: float = 0.0,
) -> dict[str, int]:
    """Latency seeds (ms) for roles with **no** observations (H-S-13); observed roles get nothing.

    A role call is modelled as the probe's fixed overhead (prefill + network: p95 minus the 16
    probe tokens' decode time) plus the role's expected output tokens at the measured decode
    rate, biased high by 1.5× so a seed errs toward patience, capped at `task_timeout_ms` (> 0).
    """
    solo = profile.p95_ms or profile.p50_ms
    if solo <= 0:
        return {}
    per_token = 1000.0 / profile.decode_tps if profile.decode_tps > 0 else solo / PROBE_TOKENS
    overhead = max(0.0, solo - PROBE_TOKENS * per_token)
    seeds: dict[str, int] = {}
    for role, tokens in role_tokens.items():
        name = role.strip().lower()
        if not name or observed.get(name, 0) > 0:
            continue
        estimate = (overhead + max(1, tokens or DEFAULT_ROLE_TOKENS) * per_token) * SEED_BIAS
        if task_timeout_ms > 0:
            estimate = min(estimate, task_timeout_ms)
        seeds[name] = max(1, math.ceil(estimate))
    return seeds


def calibration_markdown(book: CalibrationBook, now: float) -> str:
    """`CALIBRATION.md`: one row per profile, newest first."""
    lines = [
        "# Calibration",
        "",
        "Measured by the harness, stored by slmactor. Seeds role latency and decode rate only.",
        "",
        (
            "| Model | Endpoint | Knee | Efficiency | p50 ms | p95 ms | Decode tok/s | Context | "
            "Measured | Status |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in book.all():
        eff = ", ".join(f"{lvl}:{value * 100:.0f}%" for lvl, value in p.efficiency)
        status = "expired" if p.expired(now) else "current"
        measured = to_rfc3339(p.measured_at) if p.measured_at > 0 else "–"
        model = p.model.replace("|", "\\|")
        lines.append(
            f"| {model} | {p.endpoint or '–'} | {p.knee} | {eff} | {p.p50_ms:.0f} | "
            f"{p.p95_ms:.0f} | {p.decode_tps:.1f} | {p.context_window or '–'} | {measured} | "
            f"{status} |"
        )
    if len(lines) == 6:
        lines.append("| (no profiles yet) | | | | | | | | | |")
    return "\n".join(lines) + "\n"
