"""opencode: the names its tools go by, so working memory files its calls by class.

Follows sst/opencode's built-in tools (`packages/opencode/src/tool/`: `list`, `patch`, and
`read`, `edit`, `write`, `bash`, `glob`, `grep`, which are slmcode's own or Claude Code's names
too). slmactor has no hook or transcript reader for opencode yet; its sessions reach the daemon
through the MCP server or a client.
"""

from __future__ import annotations

from slmactor.harnesses.base import EDIT, READ, SEARCH, SHELL, TASK, WEB, Harness


class OpenCode(Harness):
    name = "opencode"
    title = "opencode"
    read_tools = ("list",)
    edit_tools = ("patch",)
    edit_formats = {"patch": "apply_patch"}
    #: opencode's built-in tools (`packages/opencode/src/tool/`).
    families = {"edit": EDIT, "write": EDIT, "patch": EDIT, "multiedit": EDIT, "read": READ,
                "bash": SHELL, "grep": SEARCH, "glob": SEARCH, "list": SEARCH, "webfetch": WEB,
                "todowrite": TASK, "todoread": TASK, "task": TASK}


HARNESS = OpenCode()
