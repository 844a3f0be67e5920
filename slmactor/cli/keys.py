"""`slmactor keys create|list|allow|revoke`: the CurveZMQ keys of remote endpoints.

`create NAME` makes a key pair in `$SLMACTOR_HOME/keys/` (files 0600; `server` is the
daemon's, `client` a client's default) and prints its public key — the only part that is ever
shown or copied. `allow WHAT [--name N]` puts a client's public key on the daemon's allow-list
(WHAT: a key name of this user, a `NAME.key` certificate file copied from the client, or the
40-character public key itself); `revoke NAME` takes it off. A running daemon sees the change
at the client's next connection. `list` shows every key pair and allowed key (public parts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slmactor.cli.context import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliContext


def register(sub: Any) -> None:
    create = sub.add_parser("create", help="make a key pair (server: the daemon's)")
    create.add_argument("name", nargs="?", default="client", help="key name (default: client)")
    create.set_defaults(func=cmd_create)
    listing = sub.add_parser("list", help="key pairs and allowed client keys (public parts)")
    listing.set_defaults(func=cmd_list)
    allow = sub.add_parser("allow", help="let a client key reach the daemon over tcp")
    allow.add_argument("what", metavar="KEY",
                       help="a key name, a public certificate file or a z85 public key")
    allow.add_argument("--name", default="", help="the name it is listed under")
    allow.set_defaults(func=cmd_allow)
    revoke = sub.add_parser("revoke", help="take a client key off the allow-list")
    revoke.add_argument("name", help="the name it was allowed under")
    revoke.set_defaults(func=cmd_revoke)


def _home() -> Path:
    from slmactor.config import default_home

    return default_home()


def cmd_create(ctx: CliContext) -> int:
    from slmactor.stores.keys import KeyProblem, create

    try:
        info = create(_home(), ctx.args.name)
    except KeyProblem as exc:
        return ctx.fail(f"keys create: {exc}", EXIT_USAGE)
    except OSError as exc:
        return ctx.fail(f"keys create: {exc}", EXIT_FAILED)
    ctx.emit({"ok": True, **info.to_dict()},
             f"created key {info.name}: public key {info.public}\n(secret: {info.secret_file})")
    return EXIT_OK


def cmd_list(ctx: CliContext) -> int:
    from slmactor.stores.keys import list_keys

    infos = list_keys(_home())
    lines = [f"{i.name:20} {i.public}  {'pair' if i.secret_file else 'public'}"
             f"{'  allowed' if i.allowed else ''}" for i in infos]
    ctx.emit({"keys": [i.to_dict() for i in infos]}, "\n".join(lines) or "no keys")
    return EXIT_OK


def cmd_allow(ctx: CliContext) -> int:
    from slmactor.stores.keys import KeyProblem, allow

    try:
        info = allow(_home(), ctx.args.what, ctx.args.name)
    except KeyProblem as exc:
        return ctx.fail(f"keys allow: {exc}", EXIT_USAGE)
    except OSError as exc:
        return ctx.fail(f"keys allow: {exc}", EXIT_FAILED)
    ctx.emit({"ok": True, **info.to_dict()}, f"allowed {info.name} ({info.public})")
    return EXIT_OK


def cmd_revoke(ctx: CliContext) -> int:
    from slmactor.stores.keys import KeyProblem, revoke

    try:
        removed = revoke(_home(), ctx.args.name)
    except KeyProblem as exc:
        return ctx.fail(f"keys revoke: {exc}", EXIT_USAGE)
    ctx.emit({"ok": True, "name": ctx.args.name, "revoked": removed},
             f"revoked {ctx.args.name}" if removed else f"{ctx.args.name} was not allowed")
    return EXIT_OK
