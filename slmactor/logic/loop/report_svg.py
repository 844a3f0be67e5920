"""Inline SVG charts and number formats of the HTML metrics report (`report_html`).

`line_chart` draws one metric per run, oldest to newest: each run as a faint point (a run of one
task is a 0 % / 100 % zig-zag on its own), a rolling mean over the last `ROLLING_WINDOW` runs
as the line to read, and a dashed mark where each labelled pass begins (a baseline, then a
learning replay...). `bar_chart` draws horizontal stacked bars (failures by class). Numbers
carry only the digits that mean something: `5,933` tokens, `2.5` calls, `50%`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from slmactor.logic.loop.metrics import Run, per_run_series, sort_runs

WIDTH, HEIGHT = 640, 230
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 52, 16, 26, 34
#: Runs averaged by the rolling mean (fewer at the start of the series).
ROLLING_WINDOW = 5
#: The rolling mean is drawn from this many runs on; below it the points say it all.
MIN_RUNS_FOR_MEAN = 3
PERCENT_KEYS = frozenset({"task_pass_rate", "edit_apply_rate", "memory_resolution_rate",
                          "first_attempt_rate", "gate_pass_rate", "repair_hit_rate",
                          "tool_error_rate", "redundant_rate"})


def plain_number(value: float) -> str:
    """A count or ratio with the digits that mean something: 5,933 · 42.5 · 2.25 · 3."""
    if not math.isfinite(value):
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    text = f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(value: float) -> str:
    """A rate as a percentage without a meaningless `.0`: 50% · 33.3%."""
    text = f"{value * 100:.1f}"
    return (text.removesuffix(".0")) + "%"


def metric_text(key: str, value: float) -> str:
    return percent(value) if key in PERCENT_KEYS else plain_number(value)


def rolling_mean(values: Sequence[float | None], window: int = ROLLING_WINDOW,
                 starts: Sequence[int] = ()) -> list[float | None]:
    """Mean of the runs with data among each run and the `window - 1` before it.

    A window never reaches back past a start in `starts` (a new labelled pass is averaged on
    its own), and the mean is None where the run itself has no data: the mean line breaks
    where the raw one does.
    """
    out: list[float | None] = []
    for i in range(len(values)):
        if values[i] is None:
            out.append(None)
            continue
        begin = max([0, i - window + 1, *(s for s in starts if s <= i)])
        seen = [v for v in values[begin: i + 1] if v is not None]
        out.append(sum(seen) / len(seen) if seen else None)
    return out


def pass_starts(runs: Sequence[Run]) -> list[tuple[int, str]]:
    """(index, label) of each run whose label differs from the run before it, oldest first."""
    starts: list[tuple[int, str]] = []
    previous: str | None = None
    for i, run in enumerate(sort_runs(runs)):
        if run.label != previous:
            starts.append((i, run.label or "no label"))
        previous = run.label
    return starts


def _y_max(key: str, values: Sequence[float | None]) -> float:
    if key in PERCENT_KEYS:
        return 1.0
    top = max((v for v in values if v is not None), default=0.0)
    # Whole-number ceiling divisible by 4, so the five grid lines fall on round values.
    return float(max(4, math.ceil(top * 1.1 / 4) * 4))


def _polylines(points: Sequence[tuple[float, float] | None], attrs: str) -> list[str]:
    """One polyline per run of consecutive points (None breaks the line: no made-up data)."""
    lines: list[str] = []
    segment: list[str] = []
    for point in [*points, None]:
        if point is None:
            if segment:
                lines.append(f'<polyline fill="none" {attrs} points="{" ".join(segment)}"/>')
            segment = []
        else:
            segment.append(f"{point[0]:.1f},{point[1]:.1f}")
    return lines


def line_chart(key: str, title: str, color: str, runs: Sequence[Run]) -> str:
    """One metric per run: faint points, a rolling mean, and a mark where each pass begins."""
    values = per_run_series(runs, key)
    ordered = sort_runs(runs)
    inner_w = WIDTH - PAD_LEFT - PAD_RIGHT
    inner_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    top = _y_max(key, values)
    n = len(values)

    def x(i: int) -> float:
        return PAD_LEFT + (inner_w / 2 if n == 1 else inner_w * i / (n - 1))

    def y(v: float) -> float:
        return PAD_TOP + inner_h * (1 - min(max(v / top, 0.0), 1.0))

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="100%" role="img" aria-label="{escape(title)}">')]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        gy = PAD_TOP + inner_h * (1 - frac)
        parts.append(f'<line x1="{PAD_LEFT}" y1="{gy:.1f}" x2="{WIDTH - PAD_RIGHT}" '
                     f'y2="{gy:.1f}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{PAD_LEFT - 6}" y="{gy + 4:.1f}" text-anchor="end">'
                     f"{escape(metric_text(key, top * frac))}</text>")
    if n == 0 or all(v is None for v in values):
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
                     "no data yet</text></svg>")
        return "".join(parts)
    for i, label in pass_starts(runs):
        # Dashed rule and the label at the top: where a new pass (baseline, replay…) begins.
        parts.append(f'<line class="pass-start" x1="{x(i):.1f}" y1="{PAD_TOP - 4}" '
                     f'x2="{x(i):.1f}" y2="{HEIGHT - PAD_BOTTOM}" stroke="#9ca3af" '
                     f'stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{x(i) + 3:.1f}" y="{PAD_TOP - 8}">{escape(label[:40])}</text>')
    raw = [None if v is None else (x(i), y(v)) for i, v in enumerate(values)]
    parts.extend(_polylines(raw, f'stroke="{color}" stroke-opacity="0.25" stroke-width="1"'))
    if n >= MIN_RUNS_FOR_MEAN:
        mean = rolling_mean(values, starts=[i for i, _ in pass_starts(runs)])
        smooth = [None if v is None else (x(i), y(v)) for i, v in enumerate(mean)]
        parts.extend(_polylines(smooth, f'class="rolling-mean" stroke="{color}" stroke-width="2.5"'))
    for i, value in enumerate(values):
        if value is None:
            continue
        label = escape(f"{ordered[i].run_id or f'run {i + 1}'} ({ordered[i].label or 'no label'})"
                       f": {metric_text(key, value)}")
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="2.5" fill="{color}" '
                     f'fill-opacity="0.45"><title>{label}</title></circle>')
    parts.append(f'<text x="{PAD_LEFT}" y="{HEIGHT - 8}">run 1</text>')
    parts.append(f'<text x="{WIDTH - PAD_RIGHT}" y="{HEIGHT - 8}" text-anchor="end">'
                 f"run {n}</text>")
    parts.append("</svg>")
    return "".join(parts)


#: A bar's segments: (name, count, colour).
Segments = Sequence[tuple[str, int, str]]


def bar_chart(title: str, bars: Sequence[tuple[str, Segments]]) -> str:
    """Horizontal stacked bars, one row per name, the counts written after each bar."""
    row_h, label_w, pad = 22, 170, 8
    width = WIDTH
    height = pad * 2 + row_h * max(1, len(bars))
    top = max((sum(c for _, c, _ in segs) for _, segs in bars), default=0)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="100%" role="img" aria-label="{escape(title)}">')]
    if top == 0:
        parts.append(f'<text x="{width / 2}" y="{height / 2 + 4}" text-anchor="middle">'
                     "no failures recorded yet</text></svg>")
        return "".join(parts)
    scale = (width - label_w - 60) / top
    for row, (name, segments) in enumerate(bars):
        y = pad + row * row_h
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">'
                     f"{escape(name[:28])}</text>")
        x = float(label_w)
        for seg_name, count, color in segments:
            if count <= 0:
                continue
            w = count * scale
            parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                         f'fill="{color}"><title>{escape(name)}: {count} {escape(seg_name)}'
                         "</title></rect>")
            x += w
        total = sum(c for _, c, _ in segments)
        parts.append(f'<text x="{x + 6:.1f}" y="{y + 15}">{total}</text>')
    parts.append("</svg>")
    return "".join(parts)
