"""The page: pure rendering of what `views` read (no I/O), escaped everywhere.

One page per project with six parts — what a model is told now (each line, its evidence and
verdict, a form to retire it), rules (outcomes, origin, retire), the failures that repeat most and
what fixed them, sessions with search (forget), repository content awaiting trust (adopt), and
the run figures over time as charts (`logic.loop.report_svg`, the charts of `metrics report`).
Every link and form carries the launch's token; forms post to `/action` and come back here.
No script, no external request: the policy header forbids both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from slmactor.logic.loop.report_html import CHARTS
from slmactor.logic.loop.report_svg import line_chart

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#111827;
background:#f9fafb}
header{background:#111827;color:#f9fafb;padding:.8rem 1.5rem;display:flex;gap:1.5rem;
align-items:center;flex-wrap:wrap}
header h1{font-size:1.1rem;margin:0}header a{color:#93c5fd}
header form{margin-left:auto}
nav a{color:#d1d5db;margin-right:.9rem;text-decoration:none;font-size:.9rem}
main{max-width:1400px;margin:0 auto;padding:1rem 1.5rem 3rem}
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1.2rem 1rem;
margin-top:1.2rem}
h2{font-size:1.1rem;margin:.6rem 0}
.note{color:#6b7280;font-size:.85rem;margin:.2rem 0 .6rem}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{border-top:1px solid #e5e7eb;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f4f6;font-weight:600}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.8rem}
.id{color:#6b7280}
.verdict{display:inline-block;border-radius:9px;padding:0 .5rem;font-size:.75rem;
background:#e5e7eb;color:#374151}
.verdict.true{background:#d1fae5;color:#065f46}
.verdict.stale,.verdict.contradicted{background:#fee2e2;color:#991b1b}
.ev{color:#374151;font-size:.8rem}
.ok{color:#047857}.bad{color:#b91c1c}.muted{color:#9ca3af}
button{font-size:.8rem;padding:.15rem .6rem;border:1px solid #d1d5db;border-radius:5px;
background:#fff;cursor:pointer}
button.danger{border-color:#fca5a5;color:#991b1b}
button.go{border-color:#6ee7b7;color:#065f46}
input[type=text],input[type=search]{padding:.25rem .5rem;border:1px solid #d1d5db;
border-radius:5px;min-width:18rem}
form.inline{display:inline;margin:0}
.flash{background:#ecfdf5;border:1px solid #a7f3d0;padding:.5rem 1rem;border-radius:6px;
margin-top:1rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}
figure{margin:0;border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1rem 1rem}
figcaption{font-weight:600;margin:.25rem 0 .5rem}
svg text{font-size:11px;fill:#6b7280}
.empty{color:#6b7280;font-style:italic}
"""


def link(token: str, project: str, **params: str) -> str:
    query = {"token": token, "project": project, **{k: v for k, v in params.items() if v}}
    return "/?" + urlencode(query)


def _hidden(token: str, project: str, **fields: str) -> str:
    values = {"token": token, "project": project, **fields}
    return "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">'
                   for k, v in values.items())


def action_button(token: str, project: str, action: str, label: str, css: str = "",
                  **fields: str) -> str:
    return (f'<form class="inline" method="post" action="/action">'
            f'{_hidden(token, project, action=action, **fields)}'
            f'<button class="{css}" type="submit" data-action="{escape(action)}" '
            f'data-id="{escape(fields.get("id", ""))}">{escape(label)}</button></form>')


def _evidence(ev: Sequence[Mapping[str, Any]]) -> str:
    if not ev:
        return '<span class="muted">no record named</span>'
    parts = []
    for e in ev:
        if e.get("kind") == "fact":
            sources = ", ".join(str(s) for s in e.get("sources") or []) or "no run named"
            mark = "" if e.get("verified") else ' <span class="bad">unverified repository content</span>'
            parts.append(f'fact <span class="id">{escape(str(e.get("id")))}</span>: '
                         f'+{int(e.get("support", 0))}/−{int(e.get("contradict", 0))}, '
                         f'confidence {float(e.get("confidence", 0)):.2f}; '
                         f'from {escape(sources)}{mark}')
        elif e.get("kind") == "episode":
            state = '<span class="ok">✓</span>' if e.get("success") else '<span class="bad">✗</span>'
            parts.append(f'session <span class="id">{escape(str(e.get("run_id") or e.get("id")))}'
                         f'</span> {state} {escape(str(e.get("at", "")))}')
        else:
            parts.append(escape(f"{e.get('kind')}: {e.get('id')}"))
    return '<span class="ev">' + "<br>".join(parts) + "</span>"


def told_section(data: Mapping[str, Any], token: str, project: str, task: str) -> str:
    lines = data.get("lines") or []
    rows = []
    for line in lines:
        verdict = str(line.get("verdict") or "unchecked")
        where = " · ".join(escape(p) for p in (line.get("section"), line.get("heading")) if p)
        rows.append(
            f'<tr data-line="{escape(line["id"])}"><td class="id">{escape(line["id"])}</td>'
            f"<td>{where}</td><td>{escape(line['text'])}</td>"
            f"<td>{_evidence(line.get('evidence') or [])}</td>"
            f'<td><span class="verdict {escape(verdict)}">{escape(verdict)}</span></td>'
            f"<td>{action_button(token, project, 'retire-line', 'Retire', 'danger', id=line['id'], text=line['text'], task=task)}</td></tr>")
    table = ("<table><tr><th>id</th><th>where</th><th>line</th><th>evidence</th><th>verdict</th>"
             "<th></th></tr>" + "".join(rows) + "</table>") if rows else \
        '<p class="empty">Nothing is told yet for this project.</p>'
    retired = data.get("retired") or []
    back = ""
    if retired:
        items = "".join(
            f'<tr><td class="id">{escape(str(r["id"]))}</td><td>{escape(str(r.get("text", "")))}</td>'
            f'<td>{escape(str(r.get("at", "")))}</td>'
            f"<td>{action_button(token, project, 'restore-line', 'Restore', 'go', id=str(r['id']), task=task)}</td></tr>"
            for r in retired)
        back = (f"<h3>Retired ({len(retired)})</h3><table><tr><th>id</th><th>line</th>"
                f"<th>retired at</th><th></th></tr>{items}</table>")
    form = (f'<form method="get" action="/">{_hidden(token, project)}'
            f'<input type="text" name="task" value="{escape(task)}" '
            f'placeholder="a task (empty: the project\'s block)"> <button>Show</button></form>')
    what = f"for the task “{escape(task)}”" if task else "at the start of a session (no task)"
    return (f'<section id="told"><h2>What a model would be told now</h2>'
            f'<p class="note">The memory block {what}, one line each, with the records behind '
            f"it. Verdict: what the line's check says (“unchecked” until claims carry checks). "
            f"Retire takes a line out of every later block (undo: Restore).</p>{form}{table}{back}"
            "</section>")


def _repair(repair: Mapping[str, Any]) -> str:
    for key in ("transform", "command", "action", "edit_format", "tool", "config_key"):
        if repair.get(key):
            return f"{repair.get('kind', '')}: {repair[key]}"
    return str(repair.get("kind", "")) or "–"


def rules_section(rules: Sequence[Mapping[str, Any]], origin: Any, token: str,
                  project: str) -> str:
    if not rules:
        return ('<section id="rules"><h2>Rules</h2><p class="empty">No rules learned yet.</p>'
                "</section>")
    rows = []
    for rule in rules:
        trig = rule.get("trigger") or {}
        when = "/".join(str(trig.get(k) or "*") for k in ("class", "tool", "language"))
        ok, bad = int(rule.get("successes", 0)), int(rule.get("failures", 0))
        rows.append(
            f'<tr data-rule="{escape(str(rule["id"]))}"><td class="id">{escape(str(rule["id"]))}</td>'
            f"<td><code>{escape(when)}</code></td>"
            f"<td>{escape(_repair(rule.get('repair') or {}))}<br>"
            f'<span class="note">{escape(str((rule.get("repair") or {}).get("guidance", "")))}</span></td>'
            f'<td><span class="ok">{ok} worked</span> / <span class="bad">{bad} failed</span><br>'
            f'confidence {float(rule.get("confidence", 0)):.2f}</td>'
            f"<td>{escape(origin(rule))}</td>"
            f"<td>{action_button(token, project, 'retire-rule', 'Retire', 'danger', id=str(rule['id']))}</td></tr>")
    return ('<section id="rules"><h2>Rules</h2><p class="note">Repair rules, most used first: '
            "what triggers each, what it does, how often it worked, and where it came from. A "
            "retired rule is never applied or advised again.</p><table><tr><th>id</th>"
            "<th>when (class/tool/language)</th><th>repair</th><th>outcomes</th><th>origin</th>"
            "<th></th></tr>" + "".join(rows) + "</table></section>")


def failures_section(rows: Sequence[Any]) -> str:
    if not rows:
        return ('<section id="failures"><h2>Failures that repeat</h2>'
                '<p class="empty">No failures remembered.</p></section>')
    body = []
    for row in rows:
        fixes = "<br>".join(f"{escape(fix)} <span class=\"muted\">({n}×)</span>"
                            for fix, n in row.fixes.most_common(3))
        if not fixes:
            fixes = '<span class="muted">nothing fixed it yet</span>'
        if row.rules:
            fixes += "<br>" + ", ".join(f'rule <span class="id">{escape(r)}</span>' for r in row.rules)
        body.append(
            f"<tr><td><code>{escape(row.cls)}</code><br><span class=\"note\">{escape(row.tool)}</span></td>"
            f"<td>{escape(row.example)}</td><td>{row.times}× in {row.sessions} session(s)"
            f"{'<br><span class=bad>' + str(row.unresolved) + ' unresolved</span>' if row.unresolved else ''}</td>"
            f"<td>{fixes}</td></tr>")
    return ('<section id="failures"><h2>Failures that repeat</h2><p class="note">The failures '
            "met most across the remembered sessions, and what fixed them (as the sessions "
            "recorded it; the rules learned for the same failure).</p><table><tr><th>kind</th>"
            "<th>what it said</th><th>seen</th><th>what fixed it</th></tr>"
            + "".join(body) + "</table></section>")


def sessions_section(items: Sequence[Mapping[str, Any]], search: str, token: str,
                     project: str) -> str:
    form = (f'<form method="get" action="/#sessions">{_hidden(token, project)}'
            f'<input type="search" name="q" value="{escape(search)}" '
            f'placeholder="search sessions by task, file, failure"> <button>Search</button></form>')
    if not items:
        table = '<p class="empty">No sessions' + (" match." if search else " remembered yet.") + "</p>"
    else:
        rows = []
        for ep in items:
            state = '<span class="ok">✓</span>' if ep.get("success") else '<span class="bad">✗</span>'
            failures = ep.get("failures") or 0  # a count in listings, the notes in a recall
            failures = len(failures) if isinstance(failures, list) else int(failures)
            files = ", ".join(str(f) for f in (ep.get("files_changed") or ep.get("files") or [])[:4])
            rows.append(
                f'<tr data-session="{escape(str(ep.get("id")))}"><td class="id">{escape(str(ep.get("id")))}<br>'
                f'{escape(str(ep.get("run_id", "")))}</td><td>{escape(str(ep.get("at", "")))}</td>'
                f"<td>{state} {escape(str(ep.get('query', '')))}<br>"
                f'<span class="note">{escape(str(ep.get("summary", ""))[:200])}</span></td>'
                f"<td>{escape(files)}</td><td>{failures}</td>"
                f"<td>{action_button(token, project, 'forget-session', 'Forget', 'danger', id=str(ep.get('id')), q=search)}</td></tr>")
        table = ("<table><tr><th>session</th><th>when</th><th>task</th><th>files changed</th>"
                 "<th>failures</th><th></th></tr>" + "".join(rows) + "</table>")
    what = f"recalled for “{escape(search)}”, best first" if search else "newest first"
    return (f'<section id="sessions"><h2>Sessions</h2><p class="note">Sessions (episodes) '
            f"{what}. Forget removes a session's episode; what others taught stays.</p>"
            f"{form}{table}</section>")


_PENDING_LABELS = (("rules", "repair rules"), ("facts", "facts"), ("lessons", "do/don't lessons"),
                   ("memory_md", "MEMORY.md lines"), ("regressions", "regression checks"))


def pending_section(pending: Mapping[str, Sequence[Mapping[str, Any]]], describe: Any,
                    token: str, project: str) -> str:
    total = sum(len(v) for v in pending.values())
    if not total:
        return ('<section id="trust"><h2>Repository content awaiting trust</h2>'
                '<p class="empty">Nothing: every record in this project\'s store is your own.'
                "</p></section>")
    parts = []
    for key, label in _PENDING_LABELS:
        records = pending.get(key) or []
        if not records:
            continue
        rows = "".join(
            f'<tr data-pending="{escape(str(r.get("id", "")))}"><td class="id">{escape(str(r.get("id", "")))}</td>'
            f"<td>{escape(describe(key, r))}</td>"
            f"<td>{action_button(token, project, 'adopt', 'Adopt', 'go', id=str(r.get('id', '')))}</td></tr>"
            for r in records)
        parts.append(f"<h3>{escape(label)} ({len(records)})</h3><table><tr><th>id</th>"
                     f"<th>what it says (whole, commands included)</th><th></th></tr>{rows}</table>")
    adopt_all = action_button(token, project, "adopt-all", f"Adopt all {total}", "go")
    return ('<section id="trust"><h2>Repository content awaiting trust</h2><p class="note">'
            "Memory this repository's <code>.slmcode/</code> brought that nobody on this machine "
            "learned: never applied, shown to a model only labelled, commands withheld, until "
            f"adopted (as <code>slmactor trust ID</code>). {adopt_all}</p>" + "".join(parts)
            + "</section>")


def charts_section(runs: Sequence[Any]) -> str:
    if not runs:
        return ('<section id="charts"><h2>Figures over time</h2><p class="empty">No runs '
                "measured yet (run a harness, or <code>slmactor metrics replay</code>).</p></section>")
    figures = "".join(f"<figure><figcaption>{escape(title)}</figcaption>"
                      f"{line_chart(key, title, color, runs)}</figure>"
                      for key, title, color in CHARTS)
    return ('<section id="charts"><h2>Figures over time</h2><p class="note">One point per run '
            f"({len(runs)} runs, oldest first), a rolling mean, a mark where each labelled pass "
            f'(a replay) begins.</p><div class="charts">{figures}</div></section>')


def projects_section(rows: Sequence[tuple[str, Mapping[str, Any] | str]], token: str) -> str:
    """Every project the page knows: its figures, or why they could not be read."""
    from slmactor.logic.text.timefmt import to_rfc3339

    body = []
    for project, figures in rows:
        name = f'<a href="{escape(link(token, project))}">{escape(project)}</a>'
        if isinstance(figures, str):
            body.append(f'<tr data-project="{escape(project)}"><td>{name}</td>'
                        f'<td colspan="6" class="bad">{escape(figures)}</td></tr>')
            continue
        last = to_rfc3339(figures["last_run"]) if figures["last_run"] else "–"
        body.append(
            f'<tr data-project="{escape(project)}"><td>{name}</td><td>{figures["lines"]}'
            f'{" (" + str(figures["retired"]) + " retired)" if figures["retired"] else ""}</td>'
            f'<td>{figures["rules"]}</td><td>{figures["sessions"]}</td>'
            f'<td>{figures["pending"]}</td><td>{figures["runs"]}</td><td>{escape(last)}</td></tr>')
    return ('<section id="projects"><h2>Across projects</h2><p class="note">Every project this '
            "page was opened on and every one the daemon has open (used recently); open one for "
            "its lines, rules, failures, sessions, trust and figures.</p><table><tr><th>project"
            "</th><th>lines told</th><th>rules</th><th>sessions</th><th>awaiting trust</th>"
            "<th>runs measured</th><th>newest run</th></tr>" + "".join(body) + "</table></section>")


def page(*, project: str, projects: Sequence[str], token: str, body: str, flash: str = "") -> str:
    others = " ".join(f'<a href="{escape(link(token, p))}">{escape(p)}</a>'
                      for p in projects if p != project)
    across = f'<span class="note">other projects: {others}</span>' if others else ""
    everywhere = f'<a href="{escape(link(token, project, view="projects"))}">All projects</a>'
    here = escape(link(token, project))
    nav = everywhere + "".join(f'<a href="{here}#{anchor}">{label}</a>' for anchor, label in (
        ("told", "Told now"), ("rules", "Rules"), ("failures", "Failures"),
        ("sessions", "Sessions"), ("trust", "Awaiting trust"), ("charts", "Figures")))
    note = f'<div class="flash" id="flash">{escape(flash)}</div>' if flash else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>slmactor — {escape(project)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>slmactor memory</h1><span>{escape(project)}</span><nav>{nav}</nav>"
            f"{across}</header><main>{note}{body}</main></body></html>")


def refused(reason: str) -> str:
    return (f"<!doctype html><html><head><meta charset=utf-8><title>refused</title></head>"
            f"<body><p>{escape(reason)}</p></body></html>")
