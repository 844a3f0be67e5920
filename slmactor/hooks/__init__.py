"""Harness hook adapters. `dialects` (with `events`, `responses`) turns each harness's hook JSON
into slmactor requests and back (pure, no I/O); `loop` is what a hook does for the
self-improvement loop — `session` (the session's ledger, and `run.finish` at its end),
`preflight` with `edit_tools` (an edit repaired before it runs), `advice` (a failure's repair as
the harness's context); `breaker` and `install` keep the hook fail-open and installable.
`slmactor/cli/hook/` runs them as the `slmactor hook` command.
"""
