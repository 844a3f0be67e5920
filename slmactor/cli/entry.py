"""The `slmactor` command's entry point (`[project.scripts]`, `python -m slmactor`).

A harness runs `slmactor hook <format> <Event>` once per tool call, so that path must not pay
for the argparse CLI: `cli.main` imports argparse, typing and the command context at module
level. This module imports only `sys` and sends a hook event straight to `cli.hook`; everything
else goes to `cli.main.main`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    from slmactor.cli.hook import is_hook_event_call

    if is_hook_event_call(args):
        from slmactor.cli.hook import main as hook_main

        return hook_main(args)
    from slmactor.cli.main import main as cli_main

    return cli_main(args)
