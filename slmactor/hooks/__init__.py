"""The generic hook machinery: what `slmactor hook` does for any harness, asking the harness's
room (`slmactor.harnesses`) for everything particular to it.

`dialects` (with `events`) turns a harness's hook JSON into one normalised event and back (pure,
no I/O); `loop` is what a hook does for the self-improvement loop — `session` (the session's
ledger, and `run.finish` at its end), `preflight` (an edit repaired before it runs), `advice` (a
failure's repair as the harness's context); `breaker` and `install` keep the hook fail-open and
installable. `slmactor/cli/hook/` runs them as the `slmactor hook` command.
"""
