"""Credentials known by their carrier, whatever the provider: where a secret sits, not what it
looks like. The redactor (`slmactor.logic.text.redact`) runs these passes beside its provider
table (`secret_forms`) and its assignment pass; each finds the value and leaves the carrier.

* options that take a password, single-dash (Java's and OpenSSL's `-storepass`, `-keypass`,
  `-passout pass:…`, `-password`) and the short flags of programs known to take one
  (`sqlcmd|bcp|osql -P`, `docker|podman|helm login -p`, `mongosh -p`, `zip -P`, `7z -p…`,
  `ldapsearch -w`, `ssh-keygen -N|-P`, `smbclient -U user%…`, `htpasswd -b file user …`,
  `sqlplus user/…@db`) — a program's `-p` is never taken on its own (`ssh -p 22`,
  `mkdir -p`);
* markup: an XML/HTML element whose name is a secret name (`<password>…</password>`, Maven's
  `settings.xml`, `<clientSecret>`);
* HTTP: `Authorization:` (and `Proxy-Authorization:`) with any scheme (`Bearer`, `Basic`,
  `SSWS`, `Token`, `ApiKey`, …);
* URLs: the password of a user-info that holds `#`, `?`, `@` or `/` written raw
  (`amqp://u:p#ss@host`), which the plain user-info pattern stops short of;
* credential files: a `.pgpass` line (`host:port:db:user:password`).

Pure, linear (every quantifier bounded, each pass tried only when its literals are in the text).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from slmactor.logic.text.lazy_pattern import lazy

#: Single-dash options whose value is a password (the name, then a blank, `=` or `:`).
_DASH_OPTION = lazy(
    r"(?<![\w-])-(?:src|dest|new|old|key)?(?:storepass(?:word)?|keypass(?:word)?|passout|passin"
    r"|password|passwd|passphrase|pass|secret|token|apikey)(?:=|:|[ \t]{1,8})"
    r"(\"(?:[^\"\\\n]|\\.){1,256}\"|'[^'\n]{1,256}'|[^\s\"'`|&;]{1,256})",
    re.IGNORECASE,
)
#: OpenSSL's pass-phrase arguments that name where the secret is, not the secret itself.
_OPENSSL_SOURCES = ("env:", "file:", "fd:", "stdin")
_OPENSSL_PASS = "pass:"

#: Programs whose short flag takes a password: (program names, the flag, glued allowed).
_VALUE = r"(\"(?:[^\"\\\n]|\\.){1,256}\"|'[^'\n]{1,256}'|[^\s\"'`|&;]{1,256})"
_PROGRAM_FLAGS = tuple(
    (lazy(r"(?<![\w./-])(?:" + programs + r")(?![\w-])[^\n|;&]{0,256}?[ \t]" + flag
                + (r"[ \t]{0,8}" if glued else r"[ \t]{1,8}") + _VALUE), needles)
    for programs, flag, glued, needles in (
        ("sqlcmd|bcp|osql|isql|sqsh", "-P", True, ("sqlcmd", "bcp", "osql", "isql", "sqsh")),
        ("docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|regctl",
         r"login[^\n|;&]{0,256}?[ \t]-p", True, ("login",)),
        ("mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop",
         "-p", False, ("mongo",)),
        ("zip|unzip|7z|7za|7zr", "-[pP]", True, ("zip", "7z")),
        ("ldapsearch|ldapmodify|ldapadd|ldapdelete|ldappasswd|ldapwhoami|ldapcompare|ldapmodrdn",
         "-w", False, ("ldap",)),
        ("ssh-keygen", "-[NP]", False, ("ssh-keygen",)),
        ("az", "-p", False, ("az ", "az\t")),
    )
)
#: `smbclient -U user%password` (Samba's user%password).
_SAMBA = lazy(
    r"(?<![\w-])(?:smbclient|rpcclient|smbmap|smbget|smbcacls|net|mount\.cifs|crackmapexec|nxc)"
    r"(?![\w-])[^\n|;&]{0,256}?(?:[ \t]-U|--user(?:name)?=|user(?:name)?=)[ \t]{0,8}[\"']?"
    r"[^\s%\"']{1,128}%([^\s\"']{1,256})"
)
#: `htpasswd -b[other flags] FILE USER PASSWORD` (batch mode takes the password last).
_HTPASSWD = lazy(
    r"(?<![\w-])htpasswd(?![\w-])(?:[ \t]{1,8}-[a-zA-Z]{1,8})*?[ \t]{1,8}-[a-zA-Z]{0,6}b[a-zA-Z]{0,6}"
    r"(?:[ \t]{1,8}-[a-zA-Z]{1,8})*[ \t]{1,8}\S{1,256}[ \t]{1,8}\S{1,128}[ \t]{1,8}"
    r"(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|\S{1,256})"
)
#: Oracle's `sqlplus user/password@db` (and `user/password` alone).
_SQLPLUS = lazy(r"(?<![\w-])sqlplus(?![\w-])(?:[ \t]{1,8}-[A-Za-z]{1,10})*[ \t]{1,8}"
                      r"[\"']?[^\s/\"'@]{1,128}/([^\s@\"']{1,256})")

#: An element named like a secret: `<password>…</password>`, `<ns:clientSecret attr>…</…>`.
_ELEMENT = lazy(
    r"<([A-Za-z_][A-Za-z0-9_.:-]{0,63})(?:[ \t][^<>\n]{0,256})?>([^<\n]{1,1024})</\1>"
)

#: `Authorization: <scheme> <credentials>` for any scheme (run on the lowercased text).
_AUTH_ANY_SCHEME = lazy(
    r"authorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?([a-z][a-z0-9_-]{1,30})[ \t]{1,8}"
    r"([^\s\"'<>]{8,4096})"
)

#: A URL user-info whose password holds `#`, `?`, `@` or `/` raw: the password runs to the last
#: `@` that is followed by a host.
_URL_RAW_PASSWORD = lazy(
    r"://([^\s:/?#@'\"<>«\[\]]{1,256}):([^\s'\"<>«]{1,256})@(?=[A-Za-z0-9\[][A-Za-z0-9.\-\[\]]{0,253}"
    r"(?:[:/?#\s'\"<>]|$))"
)
_PORT_AND_PATH = lazy(r"[0-9]{1,5}(?:/.*)?")

#: `.pgpass`: `hostname:port:database:username:password` (port a number or `*`).
#: Found anywhere a word starts (a line of the file, or one quoted in a command or a JSON
#: string): the password runs to the end of its word.
_PGPASS = lazy(
    r"(?:^|(?<=[\s\"'`=]))(?:[A-Za-z*][A-Za-z0-9.*_-]{0,253}|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):"
    r"(?:[0-9]{2,5}|\*):[^\s:\"']{1,256}:[^\s:\"']{1,256}:([^\s\"'`]{1,256})"
)


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def carrier_spans(text: str, low: str, *, is_secret_name: Callable[[str], bool],
                  is_reference: Callable[[str], bool],
                  marker: Callable[[str], str]) -> list[tuple[int, int, str]]:
    """The (start, end, marker) of every credential these carriers hold in `text` (`low`: it
    lowercased, same indices or not). The redactor passes its own predicates in, so the rules
    for names and references are its own in every pass."""
    spans: list[tuple[int, int, str]] = []
    password = marker("password")
    if "-" in text and ("pass" in low or "secret" in low or "token" in low or "apikey" in low):
        for match in _DASH_OPTION.finditer(text):
            start, value = match.start(1), match.group(1)
            inner = _unquoted(value)
            if inner.lower().startswith(_OPENSSL_SOURCES):
                continue
            if inner.lower().startswith(_OPENSSL_PASS):
                start += value.index(":") + 1
                inner = inner[len(_OPENSSL_PASS):]
            if inner and not is_reference(inner):
                spans.append((start, match.end(1), password))
    for pattern, needles in _PROGRAM_FLAGS:
        if any(n in low for n in needles):
            spans += [(m.start(1), m.end(1), password) for m in pattern.finditer(text)
                      if not is_reference(_unquoted(m.group(1)))]
    for pattern, needle in ((_SAMBA, "%"), (_HTPASSWD, "htpasswd"), (_SQLPLUS, "sqlplus")):
        if needle in low:
            spans += [(m.start(1), m.end(1), password) for m in pattern.finditer(text)
                      if not is_reference(_unquoted(m.group(1)))]
    if "</" in text:
        for match in _ELEMENT.finditer(text):
            name = match.group(1).rsplit(":", 1)[-1]
            if is_secret_name(name) and not is_reference(match.group(2).strip()):
                spans.append((match.start(2), match.end(2), marker("secret")))
    if "authorization" in low and len(low) == len(text):
        for match in _AUTH_ANY_SCHEME.finditer(low):
            value = text[match.start(2):match.end(2)]
            if not is_reference(value):
                spans.append((match.start(2), match.end(2), marker("authorization")))
    if "://" in text and "@" in text:
        for match in _URL_RAW_PASSWORD.finditer(text):
            value = match.group(2)
            if _PORT_AND_PATH.fullmatch(value) or is_reference(value):
                continue  # `host:443/@scope/pkg`: a port and a path, no password
            spans.append((match.start(2), match.end(2), password))
    if text.count(":") >= 4:
        spans += [(m.start(1), m.end(1), password) for m in _PGPASS.finditer(text)
                  if not is_reference(m.group(1))]
    return spans
