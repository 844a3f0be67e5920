"""`slmactor metrics report --html FILE`: one self-contained page people can look at.

Trend charts (task pass rate, edit-format apply rate, failures fixed from memory, LLM calls per
task — each run on its own, oldest to newest, with a rolling mean and a mark where each labelled
pass begins; drawn by `report_svg`), the loop's product — the rules it learned and the failures
it met, by class and by who fixed them — then the latest compare table and a summary. No
scripts, no fonts, no CDN, no external request of any kind: the file opens offline and from a
mail attachment alike. A run without data for a series leaves a gap in that line (no fabricated
zero), and every point has a `<title>` tooltip with the run id and value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from slmactor.logic.loop.metrics import METRICS, MINUS, Metric, Run, aggregate
from slmactor.logic.loop.metrics_compare import Comparison
from slmactor.logic.loop.report_svg import bar_chart, line_chart, plain_number
from slmactor.logic.text.timefmt import to_rfc3339

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
.legend{color:#6b7280;font-size:.85rem;margin:.25rem 0}
.swatch{display:inline-block;width:.8em;height:.8em;margin:0 .25em 0 .75em;vertical-align:-.05em}
"""

#: Colours of the failure-class bars: fixed from memory, fixed otherwise, still open.
FIXED_FROM_MEMORY, FIXED_OTHERWISE, UNRESOLVED = "#059669", "#93c5fd", "#f87171"
#: Rows of the rules table (newest learned first).
MAX_RULE_ROWS = 50
MAX_CLASS_ROWS = 15


@dataclass(frozen=True, slots=True)
class ClassCount:
    """Failures of one class in the remembered episodes, by who fixed them."""

    cls: str
    from_memory: int = 0
    otherwise: int = 0
    unresolved: int = 0

    @property
    def total(self) -> int:
        return self.from_memory + self.otherwise + self.unresolved


def failure_classes(episodes: Iterable[Mapping[str, Any]]) -> list[ClassCount]:
    """Count the failures of episode records by class and outcome, most frequent first."""
    counts: dict[str, list[int]] = {}
    for episode in episodes:
        failures = episode.get("failures")
        for failure in failures if isinstance(failures, list) else []:
            if not isinstance(failure, Mapping):
                continue
            cls = str(failure.get("class") or "unknown")
            by = str(failure.get("resolved_by") or "").strip().lower()
            slot = 2 if not by else 1 if by in ("llm", "human", "retry") else 0
            counts.setdefault(cls, [0, 0, 0])[slot] += 1
    rows = [ClassCount(cls, *c) for cls, c in counts.items()]
    return sorted(rows, key=lambda r: (-r.total, r.cls))


def failures_section(classes: Sequence[ClassCount]) -> str:
    bars = [(c.cls, (("fixed from memory", c.from_memory, FIXED_FROM_MEMORY),
                     ("fixed otherwise", c.otherwise, FIXED_OTHERWISE),
                     ("unresolved", c.unresolved, UNRESOLVED)))
            for c in classes[:MAX_CLASS_ROWS]]
    legend = "".join(f'<span class=swatch style="background:{color}"></span>{name}'
                     for name, color in (("fixed from memory", FIXED_FROM_MEMORY),
                                         ("fixed otherwise", FIXED_OTHERWISE),
                                         ("unresolved", UNRESOLVED)))
    more = len(classes) - MAX_CLASS_ROWS
    note = f'<p class="legend">…and {more} more class(es)</p>' if more > 0 else ""
    return (f'<figure><figcaption>Failures by class</figcaption><p class="legend">{legend}</p>'
            f"{bar_chart('Failures by class', bars)}{note}</figure>")


def _repair_text(repair: Mapping[str, Any]) -> str:
    for field in ("transform", "command", "action", "edit_format", "tool", "config_key"):
        if repair.get(field):
            return f"{repair.get('kind', '')}: {repair[field]}"
    return str(repair.get("kind", "")) or "–"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def rules_section(rules: Sequence[Mapping[str, Any]]) -> str:
    """The rules the loop learned (and shipped ones it used), newest first."""
    if not rules:
        return '<p class="empty">No rules learned yet.</p>'
    ordered = sorted(rules, key=lambda r: str(r.get("created_at", "")), reverse=True)
    rows = []
    for rule in ordered[:MAX_RULE_ROWS]:
        trigger = _mapping(rule.get("trigger"))
        repair = _mapping(rule.get("repair"))
        origin = "shipped" if rule.get("seeded") else str(rule.get("scope", "")) or "learned"
        confidence = rule.get("confidence")
        rows.append(
            f"<tr><td>{escape(str(rule.get('id', '')))}</td>"
            f"<td>{escape(str(trigger.get('class', '')) or '–')}</td>"
            f"<td>{escape(str(trigger.get('tool', '')) or 'any')}</td>"
            f"<td>{escape(_repair_text(repair))}</td><td>{escape(origin)}</td>"
            f"<td>{int(rule.get('successes', 0) or 0)} / {int(rule.get('failures', 0) or 0)}</td>"
            f"<td>{plain_number(float(confidence)) if isinstance(confidence, (int, float)) else '–'}"
            f"</td><td>{escape(str(rule.get('created_at', '')) or '–')}</td></tr>")
    more = len(ordered) - MAX_RULE_ROWS
    tail = f'<p class="legend">…and {more} more</p>' if more > 0 else ""
    return ("<table><thead><tr><th>Rule</th><th>Failure class</th><th>Tool</th><th>Repair</th>"
            "<th>Origin</th><th>Worked / failed</th><th>Confidence</th><th>Learned</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>{tail}")


def _value(metric: Metric, value: float | None) -> str:
    """`metric.format`, without the decimals a count per task does not have (5,933 not 5933.33)."""
    if value is None or metric.unit != "number":
        return metric.format(value)
    return plain_number(value)


def _change(metric: Metric, delta: float) -> str:
    if metric.unit != "number":
        return metric.format_change(delta)
    text = plain_number(abs(delta))
    return text if delta == 0 else ("+" if delta > 0 else MINUS) + text


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
        change = _change(row.metric, 0.0 if row.judgement == "same" else delta)
        css = {"better": "better", "worse": "worse"}.get(row.judgement, "")
        # Text glyphs, not emoji: they render without an emoji font (headless, minimal hosts).
        mark = {"better": " ✓", "worse": " ⚠"}.get(row.judgement, "")
        rows.append(
            f"<tr><td>{escape(row.metric.name)}</td>"
            f"<td>{escape(_value(row.metric, row.baseline))}</td>"
            f"<td>{escape(_value(row.metric, row.current))}</td>"
            f'<td class="{css}">{escape(change)}{mark}</td></tr>'
        )
    rows.append("</tbody></table>")
    verdict = "Verdict: improved." if cmp.improved() else "Verdict: no net improvement."
    return head + "".join(rows) + f'<p class="verdict">{verdict}</p>'


def render_html(runs: Sequence[Run], comparison: Comparison | None, *, project: str,
                generated_at: float, rules: Sequence[Mapping[str, Any]] = (),
                failures: Sequence[ClassCount] = (), compared: str = "") -> str:
    """The whole page (`rules`: rule records as `evolve rules` lists them; `failures`: see
    `failure_classes`)."""
    summary = aggregate(runs)
    charts = "".join(
        f"<figure><figcaption>{escape(title)}</figcaption>"
        f"{line_chart(key, title, color, runs)}</figure>"
        for key, title, color in CHARTS
    )
    legend = ('<p class="legend">Faint: each run on its own · bold: mean of the last 5 runs of '
              "the same pass · dashed: where a labelled pass begins</p>")
    if comparison is None:
        table = '<p class="empty">Compare needs at least two recorded runs.</p>'
    else:
        table = compare_table(comparison)
    if compared:
        table = f'<p class="meta">Compares {escape(compared)}.</p>' + table
    summary_rows = "".join(
        f"<tr><td>{escape(m.name)}</td><td>{escape(_value(m, m.value(summary)))}</td></tr>"
        for m in METRICS
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>slmactor metrics — {escape(project)}</title><style>{_CSS}</style></head><body>"
        f"<h1>slmactor metrics</h1><p class=meta>{escape(project)} · "
        f"{summary.runs} run(s), {summary.total('tasks')} task(s) · generated "
        f"{to_rfc3339(generated_at)}</p>"
        f"<h2>Trends over runs</h2>{legend}<div class=charts>{charts}</div>"
        f"<h2>What the loop learned</h2><div class=charts>{failures_section(failures)}</div>"
        f"<h3>Rules</h3>{rules_section(rules)}"
        f"<h2>Latest comparison</h2>{table}"
        f"<h2>All runs, pooled</h2><table><thead><tr><th>Metric</th><th>Value</th></tr>"
        f"</thead><tbody>{summary_rows}</tbody></table>"
        "</body></html>\n"
    )
