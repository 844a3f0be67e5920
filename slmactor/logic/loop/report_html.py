"""`slmactor metrics report --html FILE`: one self-contained page people can look at.

Trend charts (task pass rate, edit-format apply rate, failures fixed from memory, LLM calls per
task — each run on its own, oldest to newest) drawn as inline SVG, followed by the latest compare
table and a summary. No scripts, no fonts, no CDN, no external request of any kind: the file opens
offline and from a mail attachment alike. A run without data for a series leaves a gap in that
line (no fabricated zero), and every point has a `<title>` tooltip with the run id and value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from slmactor.logic.loop.metrics import METRICS, Run, aggregate, per_run_series, sort_runs
from slmactor.logic.loop.metrics_compare import Comparison
from slmactor.logic.text.timefmt import to_rfc3339

WIDTH, HEIGHT = 640, 220
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 52, 16, 16, 34

CHARTS: tuple[tuple[str, str, str], ...] = (
    ("task_pass_rate", "Task pass rate", "#2563eb"),
    ("edit_apply_rate", "Edit-format apply rate", "#7c3aed"),
    ("memory_resolution_rate", "Failures fixed from memory", "#059669"),
    ("llm_calls_per_task", "LLM calls per task", "#dc2626"),
)

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1400px;padding:0 1rem;color:#111827;background:#fff}
h1{font-size:1.5rem;margin-bottom:.25rem}h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#6b7280;font-size:.9rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:1rem}
figure{margin:0;border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1rem 1rem}
figcaption{font-weight:600;margin:.25rem 0 .5rem}
svg text{font-size:11px;fill:#6b7280}
table{border-collapse:collapse;margin-top:.5rem}
th,td{border:1px solid #e5e7eb;padding:.35rem .7rem;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f9fafb}
.better{color:#047857}.worse{color:#b91c1c}.nodata{color:#9ca3af}
.verdict{font-weight:700;margin-top:.75rem}
.empty{color:#6b7280;font-style:italic}
"""


def _y_max(key: str, values: Sequence[float | None]) -> float:
    if key != "llm_calls_per_task":
        return 1.0
    top = max((v for v in values if v is not None), default=0.0)
    # Whole-number ceiling divisible by 4, so the five grid lines fall on round values.
    return float(max(4, math.ceil(top * 1.1 / 4) * 4))


def _fmt(key: str, value: float) -> str:
    return f"{value:.2f}" if key == "llm_calls_per_task" else f"{value * 100:.1f}%"


def _tick(key: str, value: float) -> str:
    return f"{value:g}" if key == "llm_calls_per_task" else f"{value * 100:.0f}%"


def chart_svg(key: str, title: str, color: str, runs: Sequence[Run]) -> str:
    """One line chart; consecutive runs with data are joined, a run without data breaks the line."""
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

    parts = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="100%" role="img" aria-label="{escape(title)}">')
    ]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        gy = PAD_TOP + inner_h * (1 - frac)
        parts.append(f'<line x1="{PAD_LEFT}" y1="{gy:.1f}" x2="{WIDTH - PAD_RIGHT}" '
                     f'y2="{gy:.1f}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{PAD_LEFT - 6}" y="{gy + 4:.1f}" text-anchor="end">'
                     f"{escape(_tick(key, top * frac))}</text>")
    if n == 0 or all(v is None for v in values):
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
                     "no data yet</text></svg>")
        return "".join(parts)
    segment: list[str] = []
    segments: list[list[str]] = []
    for i, value in enumerate(values):
        if value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(value):.1f}")
    if segment:
        segments.append(segment)
    parts.extend(
        f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(s)}"/>'
        for s in segments
    )
    for i, value in enumerate(values):
        if value is None:
            continue
        label = escape(f"{ordered[i].run_id or f'run {i + 1}'} ({ordered[i].label or 'no label'})"
                       f": {_fmt(key, value)}")
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="{color}">'
                     f"<title>{label}</title></circle>")
    parts.append(f'<text x="{PAD_LEFT}" y="{HEIGHT - 8}">run 1</text>')
    parts.append(f'<text x="{WIDTH - PAD_RIGHT}" y="{HEIGHT - 8}" text-anchor="end">'
                 f"run {n}</text>")
    parts.append("</svg>")
    return "".join(parts)


def compare_table(cmp: Comparison) -> str:
    """The compare result as an HTML table with the same cells and verdict as the Markdown."""
    head = (f"<p>{cmp.baseline.runs} baseline run(s) → {cmp.current.runs} current run(s)</p>")
    if not cmp.enough_runs:
        return head + '<p class="empty">Not enough runs on one side to compare.</p>'
    rows = [("<table><thead><tr><th>Metric</th><th>Baseline</th><th>Current</th>"
            "<th>Change</th></tr></thead><tbody>")]
    for row in cmp.rows:
        if not row.known:
            rows.append(f"<tr><td>{escape(row.metric.name)}</td><td class=nodata>–</td>"
                        "<td class=nodata>–</td><td class=nodata>no data</td></tr>")
            continue
        delta = row.change or 0.0
        change = row.metric.format_change(0.0 if row.judgement == "same" else delta)
        css = {"better": "better", "worse": "worse"}.get(row.judgement, "")
        # Text glyphs, not emoji: they render without an emoji font (headless, minimal hosts).
        mark = {"better": " ✓", "worse": " ⚠"}.get(row.judgement, "")
        rows.append(
            f"<tr><td>{escape(row.metric.name)}</td>"
            f"<td>{escape(row.metric.format(row.baseline))}</td>"
            f"<td>{escape(row.metric.format(row.current))}</td>"
            f'<td class="{css}">{escape(change)}{mark}</td></tr>'
        )
    rows.append("</tbody></table>")
    verdict = "Verdict: improved." if cmp.improved() else "Verdict: no net improvement."
    return head + "".join(rows) + f'<p class="verdict">{verdict}</p>'


def render_html(runs: Sequence[Run], comparison: Comparison | None, *, project: str,
                generated_at: float) -> str:
    """The whole page."""
    summary = aggregate(runs)
    charts = "".join(
        f"<figure><figcaption>{escape(title)}</figcaption>"
        f"{chart_svg(key, title, color, runs)}</figure>"
        for key, title, color in CHARTS
    )
    if comparison is None:
        table = '<p class="empty">Compare needs at least two recorded runs.</p>'
    else:
        table = compare_table(comparison)
    summary_rows = "".join(
        f"<tr><td>{escape(m.name)}</td><td>{escape(m.format(m.value(summary)))}</td></tr>"
        for m in METRICS
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>slmactor metrics — {escape(project)}</title><style>{_CSS}</style></head><body>"
        f"<h1>slmactor metrics</h1><p class=meta>{escape(project)} · "
        f"{summary.runs} run(s), {summary.total('tasks')} task(s) · generated "
        f"{to_rfc3339(generated_at)}</p>"
        f"<h2>Trends over runs</h2><div class=charts>{charts}</div>"
        f"<h2>Latest comparison</h2>{table}"
        f"<h2>All runs, pooled</h2><table><thead><tr><th>Metric</th><th>Value</th></tr>"
        f"</thead><tbody>{summary_rows}</tbody></table>"
        "</body></html>\n"
    )
