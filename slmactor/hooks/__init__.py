"""Harness hook adapters: `dialects` turns each harness's hook JSON into slmactor requests and back
(pure, no I/O); `slmactor/cli/hook/` runs it as the `slmactor hook` command.
"""
