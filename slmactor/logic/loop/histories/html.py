"""`metrics replay --learn --html FILE`: the replay as one self-contained page.

The per-harness table of `report`, a bar per harness (derivable repeats: repaired before the
call, on the failure, advice naming the fix, missed; and wrong rewrites), and every failure memory
answered or could have: the failed call, what memory would have done or told, the fix the
session made. Inline SVG and CSS; no script, no network. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from slmactor.logic.loop.histories.engine import ADVICE, BEFORE, ON_FAILURE, Failure, Replayed
from slmactor.logic.loop.histories.report import (
    ALL,
    COLUMNS,
    figures,
    headline,
    table_rows,
    verdict,
)
from slmactor.logic.loop.report_html import _CSS
from slmactor.logic.loop.report_svg import bar_chart

#: Failures listed on the page (the rest are counted).
MAX_LISTED = 300

_COLORS = {"before": "#2e7d32", "on": "#66bb6a", "advice": "#42a5f5", "missed": "#bdbdbd",
           "wrong": "#e53935"}


def _call(c: object) -> str:
    tool = getattr(c, "tool", "")
    args = getattr(c, "args", {})
    text = f"{tool} {json.dumps(dict(args), ensure_ascii=False)}"
    return text if len(text) <= 300 else text[:299] + "…"


def _row(f: Failure) -> str:
    verdict = "right" if f.right else "wrong" if f.wrong else "—"
    what = {BEFORE: "rewritten before the call", ON_FAILURE: "repaired on the failure",
            ADVICE: "told"}.get(f.answer, "nothing")
    said = _call(f.rewritten) if f.rewritten is not None else f.text
    kinds = ", ".join(k for k, on in (("repeat", f.repeat), ("call-derivable", f.from_call),
                                     ("memory-derivable", f.from_memory)) if on)
    return (f"<tr><td>{escape(f.harness)}</td><td>{escape(f.session[:12])}#{f.index}</td>"
            f"<td><code>{escape(_call(f.call))}</code><br><small>{escape(f.error[:200])}</small></td>"
            f"<td>{escape(kinds)}</td><td>{escape(what)}<br><small>{escape(said[:400])}</small></td>"
            f"<td><code>{escape(_call(f.fix)) if f.fix is not None else '(never got past it)'}</code></td>"
            f"<td>{verdict}</td></tr>")


def render_html(result: Replayed, *, sources: Sequence[str] = ()) -> str:
    table = figures(result)
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>"
                   for row in table_rows(table))
    bars = []
    for name, f in table.items():
        if name == ALL:
            continue
        missed = f.derivable - f.derivable_right
        derivable = [x for x in result.failures if x.harness == name and x.derivable and x.right]
        bars.append((name, [
            ("repaired before the call", sum(1 for x in derivable if x.answer == BEFORE), _COLORS["before"]),
            ("repaired on the failure", sum(1 for x in derivable if x.answer == ON_FAILURE), _COLORS["on"]),
            ("advice naming the fix", sum(1 for x in derivable if x.answer == ADVICE), _COLORS["advice"]),
            ("derivable, missed", missed, _COLORS["missed"]),
            ("wrong rewrites", f.wrong_rewrites, _COLORS["wrong"])]))
    shown = [f for f in result.failures if f.derivable or f.right or f.wrong][:MAX_LISTED]
    listed = "".join(_row(f) for f in shown)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>slmactor replay — what memory would have done</title><style>{_CSS}</style></head><body>"
        "<h1>What memory would have done</h1>"
        f"<p class=meta>{escape(headline(result, table[ALL]))}<br>{escape(', '.join(sources))}</p>"
        f"<p>{escape(verdict(table[ALL]))}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        "<h2>Derivable repeats, per harness</h2>"
        f"<figure>{bar_chart('derivable repeats per harness', bars)}</figure>"
        '<p class="legend">green: repaired before the call · light green: repaired on the failure · '
        "blue: advice naming the fix · grey: derivable, missed · red: wrong rewrites</p>"
        f"<h2>Failures memory answered or could have ({len(shown)} shown)</h2>"
        "<table><thead><tr><th>harness</th><th>session#call</th><th>failed call</th><th>kind</th>"
        "<th>memory</th><th>the fix the session made</th><th>verdict</th></tr></thead>"
        f"<tbody>{listed}</tbody></table></body></html>\n"
    )

