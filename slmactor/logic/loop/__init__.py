"""The self-improvement loop: reflection on a finished run and its Markdown (`reflect`,
`reflect_md`), regression checks and the paths they may read (`regressions`, `confine`), run
reports (`run_report`), metrics and their comparison (`metrics`, `metrics_compare`), replays
(`replay`) and the HTML report (`report_html`).

May import: text, failures, evolve, memory, policy, recall.
"""
