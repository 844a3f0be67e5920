"""Secret redaction: the single choke point that keeps credentials out of everything persisted.

Every store runs `redact_obj` over a record, document or Markdown text before writing it (SPEC
C-20, RELIABILITY T14), so a token pasted into a tool error never reaches episodes, lessons,
metrics or mirrors. A secret is replaced by `«redacted:TYPE»`.

What is recognised (the project's own patterns, written from the documented formats):

* provider tokens by their shape: the table in `secret_forms` (clouds, code hosts, package
  registries, chat, payment, mail and AI providers; JWTs, base64 and JSON-escaped PEM blocks,
  a PEM block cut off before its END line, one split one line per list item in `redact_obj`);
* tokens known by their surroundings: a Discord bot token's three dotted parts, a Telegram bot
  token's `<digits>:A…`, a Mailchimp key's `-us<dc>`, an Azure SAS `sig=`, an XML setting
  `<add key="…Password" value="…"/>`, a base64 `user:password` under `auth` (Docker's
  config.json, npm's `_auth`);
* `Authorization: Bearer|Basic|Token …` headers and a bare `Bearer <token>`;
* passwords in commands and URLs (only the password part goes): the user-info of a URL
  (`postgres://u:pw@host`, `https://u:tok@host`), `--password pw` / `--password=pw` (and
  `--db-password`, `--token`, `--secret`, `--api-key`), the MySQL clients' glued `-ppw`,
  `sshpass -p pw`, `redis-cli -a pw`, `curl|wget -u/--user u:pw`, and `.netrc`'s
  `login u password pw`. Here any length counts, but references (`$PW`, `${PW}`, `<password>`,
  `****`) and dummy words stay;
* credentials by their carrier, whatever the provider (`secret_carriers`): single-dash password
  options (`-storepass`, `-passout pass:…`), the password flags of known programs (`sqlcmd -P`,
  `docker login -p`, `ldapsearch -w`, `smbclient -U u%…`, `htpasswd -b`, `sqlplus u/…@db`),
  secret-named XML elements, `Authorization:` with any scheme (`SSWS`, `ApiKey`, …), URL
  passwords holding `#`, `?`, `@` raw, and `.pgpass` lines;
* a compound secret name and a random-looking value of 16+ characters separated by blanks only
  (`aws_secret_access_key wJalr…`, as `aws configure set` takes it);
* assignments `NAME = value` / `NAME: value` / `"name": "value"` where NAME ends in a secret word
  (`password`, `passwd`, `pass`, `pwd`, `secret`, `token`, `api_key`, `private_key`,
  `credentials`, ...; a password, token or secret word needs no separator: `PGPASSWORD`,
  `identitytoken`; camelCase names are read by their words: `clientSecret`), and, in
  `redact_obj`, string values stored under such a key. A quoted value may hold anything but its
  quote (JSON escapes included); an unquoted one runs to the next blank — for a password
  setting that opens its line (YAML `password: …`, INI `passwd = …`), to the end of the line;
* names that hold a secret word anywhere (`secret_key_base`, `APP_KEY`, `X-Amz-Signature`) when
  the value is 16+ characters with a digit and a letter, no blank, not a path or URL; A password-named value counts from 6 characters
  (`DB_PASS=hunter`), any other from 8; `PWD=/path` (the working directory) is not a password.

A command given as a JSON array of its words (`["sqlcmd", "-P", "…"]`, as text or as a parsed list
in `redact_obj`) is read as the command line it makes, so its options' values go as they would.

JSON-escaped text is read as the text it stands for: a `\\n`, `\\t` or `\\r` escape separates
like the blank it encodes (a token after `\\n` starts a word), and the escape is kept as written.

Optionally (`home=`), the user's home directory is written as `~` (C-20); stores leave it off by
default because some stored paths are used again.

Placeholders are not secrets and stay as written: values shorter than 8 characters, values made of
at most 2 distinct characters (`********`, `xxxxxxxx`), references (`$VAR`, `${VAR}`, `<token>`,
`{{ var }}`, `os.environ[...]`, `process.env.X`, anything with a call or subscript), dotted
attribute reads (`settings.api_key`), and a short list of dummy words (`changeme`, `example`, ...).

An OpenAI-style `sk-…` token and a bearer credential must also look random (a digit, or both
upper- and lower-case letters), so a long hyphenated branch or package name is not taken for a
key. Separators never span lines: `api_key:` at the end of a line takes nothing from the next.

Time is linear in the input: a fixed number of passes (the token forms sharing a first character
are one), each tried only when its literals are in the text, each quantifier bounded or followed
by a character it cannot match, so no input makes the engine backtrack quadratically (1 MiB is
redacted for the price of 9–14 one-pass token scans of it, ~0.25 s of CPU on a 2-core VM; see
tests/logic/text/test_redact.py and `python -m bench redact`).
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Mapping
from typing import Any

from slmactor.logic.text.lazy_pattern import lazy
from slmactor.logic.text.secret_carriers import carrier_spans
from slmactor.logic.text.secret_forms import NEEDS_RANDOM, TOKEN_FORMS

#: Containers nested deeper than this are replaced whole rather than walked (C-20: depth ≤ 12).
MAX_DEPTH = 12
#: What replaces a container nested beyond MAX_DEPTH (its content is not inspected, so not kept).
DEPTH_MARKER = "«redacted:too-deep»"

_MIN_SECRET_LEN = 8
_DUMMY_WORDS = frozenset(
    {
        "changeme",
        "change_me",
        "example",
        "examples",
        "placeholder",
        "password",
        "passw0rd",
        "redacted",
        "undefined",
        "optional",
        "required",
        "your_api_key",
        "your-api-key",
        "your_api_key_here",
        "your_token_here",
        "your_password",
        "notasecret",
        "dummy",
        "secret",
        "none",
        "null",
        "true",
        "false",
    }
)

# Provider tokens (`secret_forms`). The forms that start with the same literal character are
# one pass `c(?:(?P<f0>…)|(?P<f1>…))`: the engine scans for `c` as fast as for a substring,
# and the alternatives fail at their second character. The word boundary before a token is
# checked in `_token_replacer` (a leading `\b` would cost that fast path).
_FORM_KINDS: dict[str, str] = {}


def _merged_passes() -> list[tuple[re.Pattern[str], tuple[str, ...]]]:
    by_first: dict[str, list[str]] = {}
    passes: list[tuple[re.Pattern[str], tuple[str, ...]]] = []
    for index, (kind, pattern, needles) in enumerate(TOKEN_FORMS):
        name = f"f{index}"
        _FORM_KINDS[name] = kind
        if _mergeable(pattern):
            by_first.setdefault(pattern[0], []).append(f"(?P<{name}>{pattern[1:]})")
        else:
            passes.append((lazy(f"(?P<{name}>{pattern})"), needles))
    merged = [
        (lazy(re.escape(first) + "(?:" + "|".join(rests) + ")"), ())
        for first, rests in by_first.items()
    ]
    return merged + passes


def _mergeable(pattern: str) -> bool:
    return pattern[0].isalnum() and pattern[1:2] not in ("{", "?", "*", "+") and "(?P<" not in pattern


_TOKEN_PATTERNS = _merged_passes()


def _leading_literal(pattern: str) -> str:
    """The literal characters a pattern starts with (`ghp` of `gh[pousr]_…`, `SG.` of `SG\\.…`)."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            out.append(pattern[index + 1])
            index += 2
            continue
        if not (char.isalnum() or char in "_-:~") or pattern[index + 1 : index + 2] in ("{", "?", "*", "+"):
            break
        out.append(char)
        index += 1
    return "".join(out)


def _trigger() -> re.Pattern[str]:
    """One search for any form's needle (or leading literal), nested by first character
    (`A(?:KIA|SIA|…)|g(?:hp_|…)`): a flat alternation of seventy literals is tried at nearly
    every position, the nested one only where a first character matches."""
    by_first: dict[str, set[str]] = {}
    for _kind, pattern, needles in TOKEN_FORMS:
        for needle in needles or (_leading_literal(pattern),):
            by_first.setdefault(needle[0], set()).add(re.escape(needle[1:]))
    return lazy("|".join(
        re.escape(first) + "(?:" + "|".join(sorted(rests, key=lambda r: (-len(r), r))) + ")"
        for first, rests in sorted(by_first.items())
    ))  # fmt: skip


#: For a short text, one search for any form's needle is cheaper than a call per pass; above
#: `_TOKEN_TRIGGER_MAX_LEN` the passes, each a fast literal scan, are.
_TOKEN_TRIGGER = _trigger()
_TOKEN_TRIGGER_MAX_LEN = 256
_HEADER_NEEDLES = ("authorization", "bearer")
_ASSIGNMENT_NEEDLES = ("key", "secret", "token", "pass", "pwd", "credential", "auth", "signature")
# One C-level search decides whether any word-based pass can apply.
_WORD_TRIGGER = lazy("|".join(_HEADER_NEEDLES + _ASSIGNMENT_NEEDLES))
#: Nothing shorter can hold a recognised secret (`pwd=12345678` is the shortest assignment).
_MIN_TEXT_LEN = 12
#: Above this length the word trigger is skipped: an alternation of literals scans slower than
#: the per-pass `in` tests, which long texts pay anyway.
_TRIGGER_MAX_LEN = 4096

# Credentials in HTTP headers (curl -H, JSON, logs): only the credential is replaced. These two
# run on the lowercased text (`_lower`), so they are written in lower case.
_AUTHORIZATION = lazy(
    r"authorization[\"']?[ \t]{0,8}[:=][ \t]{0,8}[\"']?(?:bearer|basic|token|digest)[ \t]{1,8}"
    r"([a-z0-9._~+/=-]{8,4096})"
)
_BEARER = lazy(r"bearer[ \t]{1,8}([a-z0-9._~+/-]{16,4096}=*)")

# NAME = value, NAME: value, "name": "value" (quoted values may hold spaces). The search starts
# at the last word of NAME; `_replace_assignments` then checks the whole name.
# JSON quoted inside a string (`{\"password\": \"…\"}`, a tool's arguments) counts as quoted,
# its escapes included (a `\\` in the value is the backslash the value held; JSON inside JSON
# doubles each run again: two backslashes of a value are eight there).
_ASSIGNMENT = lazy(
    r"(key|secret|token|pass(?:w(?:or)?d|phrase)?|pwd|credentials?)(?![a-z0-9_])"
    r"\\{0,7}[\"']?[ \t]{0,8}(?::=|:|=(?!=))[ \t]{0,8}"
    r"(?:\"((?:[^\"\\\r\n]|\\[^\r\n]){1,1024}|[^\"\r\n]{1,1024})\"|'([^'\r\n]{1,1024})'"
    r"|\\{1,7}\"((?:[^\"\\\r\n]|\\{1,16}[^\"\\\r\n]){1,1024})\\{1,7}\"|([^\s\"'`]{1,4096}))"
)
#: What an unquoted value may end with that belongs to the text around it (`token=abc,` `…;`).
_VALUE_TAIL = ",;)]}"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MAX_NAME = 64

# The words a name must end in for its value to count as a secret. A name may carry any prefix
# joined with `_`, `-` or `.` (AWS_SECRET_ACCESS_KEY, db.password, x-api-key) but must not be a
# longer word (`monkey`, `tokenizer`, `passwordless`).
_SECRET_WORD = (
    r"(?:api[_-]?key|apikey|api[_-]?secret|access[_-]?key(?:[_-]?id)?|secret[_-]?access[_-]?key"
    r"|secret(?:[_-]?key)?|client[_-]?secret|private[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|(?:access|auth|bearer|refresh|session|id|api|bot|app|oauth)?[_-]?token"
    r"|passw(?:or)?d|pass|passphrase|pwd|credentials?|auth[_-]?key"
    # Azure connection strings join the words without a separator (`AccountKey=`).
    r"|account[_-]?key|shared[_-]?access[_-]?key|accesskey|secretkey|apitoken|authtoken)"
)
# A password word needs no separator before it: PGPASSWORD, dbpassword, MYSQLPASSWD.
_SECRET_KEY_NAME = lazy(
    r"(?i)(?:(?:[A-Za-z0-9_.-]{0,64}[_.-])?" + _SECRET_WORD + r"|[A-Za-z0-9_.-]{0,64}passw(?:or)?d)"
)

#: camelCase word boundaries (`clientSecret` → `client_Secret`), so a name is read by its words.
_CAMEL = lazy(r"(?<=[a-z0-9])(?=[A-Z])")
#: A token or secret word glued to the end of a name (`identitytoken`, `clientsecret`).
_GLUED_SECRET = lazy(r"(?i)[A-Za-z0-9]{0,40}(?:token|secret)")
#: Words that make a name a likely secret's wherever they stand in it (`secret_key_base`,
#: `APP_KEY`, `X-Amz-Signature`): such a name's value counts only when it looks random.
_SECRET_PARTS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "secret", "token",
                           "key", "apikey", "credential", "credentials", "auth", "signature",
                           "privatekey", "accesskey", "secretkey"})
_NAME_SPLIT = lazy(r"[_.\-]+")
#: Values of such names shorter than this are not taken without a secret word at the end.
_MIN_PART_VALUE = 16


def is_secret_name(name: str) -> bool:
    """True when `name` ends in a secret word (`db_password`, `x-api-key`, `clientSecret`,
    `identitytoken`, `PGPASSWORD`)."""
    if _SECRET_KEY_NAME.fullmatch(name) or _GLUED_SECRET.fullmatch(name):
        return True
    split = _CAMEL.sub("_", name)
    return split != name and _SECRET_KEY_NAME.fullmatch(split) is not None


def names_a_secret_part(name: str) -> bool:
    """True when one of `name`'s words is a secret word wherever it stands (`secret_key_base`,
    `APP_KEY`, `signingKeyId`): weaker than `is_secret_name`, so its value must look random."""
    words = [w for w in _NAME_SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    # A bare `key` or `auth` names a dictionary's key or a setting, not a secret: a secret word
    # counts here only beside another word (`APP_KEY`, `secret_key_base`).
    return len(words) >= 2 and any(word in _SECRET_PARTS for word in words)


#: Tags that say how a key is encoded, not part of it (a base64 key may then start with `//`).
_ENCODING_TAGS = ("base64:", "hex:")


def random_value(value: str) -> bool:
    """A value of a secret-part name that is a credential: 16+ characters, no blank, random-
    looking, not a path, a URL or a reference. A value tagged with its encoding (Laravel's
    `base64:…`) is the key that follows, whatever it starts with (`//…` is base64 too)."""
    stripped = value.strip().strip("\"'")
    tagged = stripped.startswith(_ENCODING_TAGS)
    if tagged:  # (a 32-byte base64 key has no digit one time in ~1,500: the tag says what it is)
        stripped = stripped.partition(":")[2]
    return (len(stripped) >= _MIN_PART_VALUE and not any(c.isspace() for c in stripped)
            and (tagged or (not stripped.startswith(("/", "~", "./", "../"))
                            and "://" not in stripped
                            and any(c.isdigit() for c in stripped)
                            and any(c.isalpha() for c in stripped)))
            and not is_placeholder(stripped, quoted=True))


# Templates stand for a secret wherever they appear: `$VAR`, `${VAR}`, `%(name)s`, `{{ x }}`,
# `<token>`, `{name}`, `***`, and environment lookups.
_TEMPLATE = lazy(
    r"^(?:\$|%\(|\{\{|<|\{)|os\.environ|os\.getenv|process\.env|getenv\(|ENV\[|^\*+$"
)
# Code that computes a secret rather than holding one, recognised only in an unquoted value: a
# call or subscript (`getpass()`, `config["token"]`) or a dotted name (`settings.api_key`).
_CODE_NAME = r"(?:[a-z_][a-z0-9_.]{0,64}|[A-Za-z_][A-Za-z_.]{0,64})"  # `get_v2`, `SecretStr`
_CODE_REFERENCE = lazy(
    r"^" + _CODE_NAME + r"(?:\([\w\s,.'\"=:/-]{0,256}\)"
    r"|\[(?:[\"'][^\"'\n]{0,256}[\"']|[0-9]{1,12}|[A-Za-z_][\w.]{0,64})\]"
    r"|\((?:[\"'][^()\n]{0,256})?)[,;)]*$"
    r"|^(?:[a-z_][a-z0-9_]{0,64}|[A-Z_][A-Z0-9_]{0,64})(?:\.(?:[a-z_][a-z0-9_]{0,64}"
    r"|[A-Z_][A-Z0-9_]{0,64}|[A-Za-z][a-z0-9]{0,32}(?:[A-Z][a-z0-9]{0,32}){0,8})){1,8}[,)]*$"
)
_REDACTED = "«redacted:"
_MIN_PASSWORD_LEN = 6
#: A value made only of these is a masked password (`****`, `xxxx`), not a password.
_MASK_CHARS = frozenset("*xX.•")
_PASSWORD_ENDINGS = ("password", "passwd", "pass", "pwd", "passphrase")
_PATH_VARIABLES = frozenset({"pwd", "oldpwd"})

# Credentials written into commands and URLs (the forms `psql`, `mysql`, `curl` and connection
# strings take). Only the password part is replaced; a reference (`$PW`, `<password>`, `${X}`)
# stays. Every quantifier is bounded; a pattern is tried only when its literals are in the text
# (`_COMMAND_PATTERNS`), and where it can, it starts with a literal so the engine skips ahead
# (a lookbehind written after the literal keeps that fast path).
#: `scheme://user:password@host`: the password of a URL's user-info.
_URL_USERINFO = lazy(r"://[^\s:/?#@'\"<>«]{0,256}:([^\s/?#@'\"<>]{1,256})@")
#: `--password pw`, `--password=pw`, `--db-password pw`, `--token pw`, `--api-key pw`, ...
_OPTION_VALUE = lazy(
    r"(?i)--(?<![\w-]--)(?:[a-z0-9]{1,20}-){0,3}(?:password|passwd|pass|passphrase|token|secret"
    r"|api-?key)(?:=|[ \t]{1,8})(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`;|&]{1,256})"
)
#: `mysql -ppw` (the MySQL clients take the password glued to `-p`), `sshpass -p pw`,
#: `redis-cli -a pw`: the option of a program known to take a password that way.
_PROGRAM_PASSWORD = lazy(
    r"(?<![\w-])(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb"
    r"|mariadb-dump)(?![\w-])[^\n|;&]{0,256}?[ \t]-p|(?:sshpass)(?![\w-])[^\n|;&]{0,64}?[ \t]-p"
    r"[ \t]{0,8}|redis-cli(?![\w-])[^\n|;&]{0,256}?[ \t]-a[ \t]{1,8})"
    r"(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'`;|&]{1,256})"
)
#: `curl -u user:pw`, `curl --user user:pw` (`wget --password pw` is _OPTION_VALUE's).
_USER_COLON_PASSWORD = lazy(
    r"(?i)(?<![\w-])(?:curl|wget)(?![\w-])[^\n|;&]{0,512}?[ \t]"
    r"(?:-u|-U|--user|--proxy-user)(?:=|[ \t]{0,8})[\"']?[^\s:\"'«]{1,256}:([^\s\"']{1,256})"
)
#: `.netrc`: `machine host login user password pw`.
_NETRC = lazy(
    r"(?i)login(?<![\w-]login)[ \t]{1,8}\S{1,256}[ \t]{1,8}password[ \t]{1,8}(\S{1,256})"
)
#: `aws_secret_access_key <value>` (`aws configure set`, config dumps): a compound secret name
#: and a random-looking value separated by blanks only.
_BLANK_SEPARATED = lazy(
    r"(key|secret|token|passw(?:or)?d)[ \t]{1,8}([a-z0-9/+=_.~-]{16,256})(?![^\s,;\"'\\\]})])"
)
#: The whole name before a blank-separated value: a compound identifier (`aws_secret_access_key`).
_COMPOUND_NAME = lazy(r"(?:[a-z0-9]{1,20}[_-]){1,4}(?:key|secret|token|passw(?:or)?d)")
_COMMAND_NEEDLES = ("://", "--", "mysql", "mariadb", "sshpass", "redis-cli", "curl", "wget",
                    "login", "key", "secret", "token", "passw")
#: Each command pattern with the lowercase literals a text must hold (all of the first tuple's
#: ... any of them, per tuple) for the pattern to be tried: an `in` test costs far less than a
#: regex pass, and most texts hold none of these forms.
_COMMAND_PATTERNS: tuple[tuple[re.Pattern[str], tuple[tuple[str, ...], ...]], ...] = (
    (_URL_USERINFO, (("://",), ("@",))),
    (_OPTION_VALUE, (("--",), ("pass", "token", "secret", "key"))),
    (_PROGRAM_PASSWORD, (("mysql", "mariadb", "sshpass", "redis-cli"),)),
    (_USER_COLON_PASSWORD, (("curl", "wget"), ("-u", "--user", "--proxy-user"))),
    (_NETRC, (("login",), ("password",))),
)

# Forms recognised by their context rather than a prefix or a secret-named assignment; each is
# tried only when its lowercase literal is in the text.
#: An Azure shared access signature in a URL or connection string: `…&sig=<base64, %-escaped>`.
_SAS_SIGNATURE = lazy(r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/=]{16,512})")
#: An XML setting (`<add key="ClearTextPassword" value="…"/>`, NuGet.Config, .NET appSettings):
#: the value of a key whose name is a secret name.
_XML_KEY_VALUE = lazy(
    r"key=\\{0,3}\"([A-Za-z0-9_.:-]{1,64})\\{0,3}\"[ \t]{1,8}value=\\{0,3}\""
    r"((?:[^\"\\\n]|\\(?!\"))(?:[^\"\\\n]|\\(?!\")){0,1023})"
)
#: A base64 `user:password` pair under an `auth` key: Docker's config.json (`"auth": "…"`) and
#: npm's `_auth=` in .npmrc. Whether the value decodes to `user:password` is checked after.
_BASIC_AUTH_VALUE = lazy(
    r"auth(?<![A-Za-z0-9]auth)\\{0,7}[\"']?[ \t]{0,8}[:=][ \t]{0,8}\\{0,7}[\"']?"
    r"([A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])"
)
#: A Discord bot token: base64 of the bot's id (24 to 28 characters, from `M`, `N` or `O`), a
#: 6-character timestamp and a 27-to-40-character HMAC, dot-separated. The search starts at the
#: first dot (a literal, so the engine skips ahead); the id part is looked back at.
_DISCORD_TAIL = lazy(r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")
_DISCORD_ID = lazy(r"[MNO][A-Za-z0-9_-]{23,27}")
#: A Telegram bot token, `<bot id>:<secret>`: the secret is `A` and 34 more base64url characters
#: (the Bot API docs' own example has 33), the id 5 to 16 digits. Found from the colon.
#: A Mailchimp API key: 32 hex digits, `-us` and the data centre number. Found from the literal
#: `-us` (a lookbehind after it keeps that fast path); the key starts 32 characters before.
_MAILCHIMP_TAIL = lazy(r"-(?<=[0-9a-f]{32}-)us[0-9]{1,2}(?![A-Za-z0-9])")
_TELEGRAM_TAIL = lazy(r":A[A-Za-z0-9_-]{32,34}(?![A-Za-z0-9_-])")
_DISCORD_MIN_LEN = 24 + 1 + 6 + 1 + 27
#: A dotted token is taken for a Discord bot token only near one of these words (as gitleaks'
#: Discord rules ask for `discord`): three dotted base64url parts alone are too common a shape.
_DISCORD_WORDS = ("iscord", "ISCORD", "bot", "Bot", "BOT")
_BASIC_AUTH_KEYS = frozenset({"auth", "_auth", "Auth"})
_URLSAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def marker(kind: str) -> str:
    """The text that replaces a secret of `kind`."""
    return f"«redacted:{kind}»"


def is_placeholder(value: str, *, quoted: bool = False, min_len: int = _MIN_SECRET_LEN) -> bool:
    """True for values that only stand for a secret: short (under `min_len`), repetitive,
    templates, dummies, and (unless `quoted`: a quoted value is a literal string) code that
    computes one."""
    stripped = value.strip().strip("\"'`").rstrip(",;)")
    if len(stripped) < min_len:
        return True
    if len(set(stripped)) <= 2:
        return True
    if stripped.startswith(_REDACTED):
        return True
    if stripped.lower() in _DUMMY_WORDS:
        return True
    if _TEMPLATE.search(stripped):
        return True
    if quoted:
        return False
    whole = value.strip().strip("\"'`")  # (`f(x)` before its `)` was stripped above)
    return _CODE_REFERENCE.search(stripped) is not None or _CODE_REFERENCE.search(whole) is not None


def _looks_random(text: str) -> bool:
    """A digit, or both upper- and lower-case letters: true of real keys and tokens (a random
    16-character base64 string fails with probability ~1e-4), rarely of words in prose."""
    if any(ch.isdigit() for ch in text):
        return True
    return any(ch.isupper() for ch in text) and any(ch.islower() for ch in text)


def _is_jwt(run: str) -> bool:
    """True when a dotted base64url run holds header.payload.signature (header `eyJ…`), or a
    header and a payload that both open a JSON object (`eyJ….eyJ…`: an unsigned token, or one
    whose signature was cut off)."""
    parts = run.split(".")
    for index in range(len(parts) - 1):
        header, payload = parts[index], parts[index + 1]
        if not header.startswith("eyJ") or len(header) < 11:
            continue
        if payload.startswith("eyJ") and len(payload) >= 11:
            return True
        if index + 2 < len(parts) and min(len(payload), len(parts[index + 2])) >= 4:
            return True
    return False


def _starts_word(text: str, pos: int) -> bool:
    return pos == 0 or not text[pos - 1].isalnum()


_BASE64_ONLY = lazy(r"[A-Za-z0-9+/=]*")


def _inside_base64(text: str, start: int, end: int) -> bool:
    """True when text[start:end] is the middle of a longer base64 run (an inline image, a data
    URI): `+` or `/` on both sides and nothing but base64 around it. A token-shaped stretch of
    random base64 is not a token."""
    if start == 0 or end >= len(text) or text[start - 1] not in "+/" or text[end] not in "+/=":
        return False
    around = text[max(start - 24, 0) : start] + text[end : end + 24]
    return _BASE64_ONLY.fullmatch(around) is not None


def _replace_token(match: re.Match[str]) -> str:
    name = match.lastgroup or ""
    kind = _FORM_KINDS[name]
    if "k" in match.re.groupindex:  # group `k` is context that stays, the rest is the secret
        return match.group("k") + marker(kind)
    token = match.group(0)
    text, start = match.string, match.start()
    if not _starts_word(text, start) or _inside_base64(text, start, match.end()):
        return token
    if kind in NEEDS_RANDOM and not _looks_random(token):
        return token
    if kind == "jwt" and not _is_jwt(token):
        return token
    return marker(kind)


def _redact_tokens(text: str) -> str:
    for pattern, needles in _TOKEN_PATTERNS:
        if not needles or any(needle in text for needle in needles):
            text = pattern.sub(_replace_token, text)
    return text


def _lower(text: str) -> str | None:
    """`text` lowercased with every index kept, or None when lowering would shift indices."""
    low = text.lower()
    return low if len(low) == len(text) else None


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end, replacement in spans:
        out.append(text[last:start])
        out.append(replacement)
        last = end
    out.append(text[last:])
    return "".join(out)


def _redact_headers(text: str) -> str:
    for kind, pattern in (("authorization", _AUTHORIZATION), ("bearer_token", _BEARER)):
        low = _lower(text)
        if low is None:
            low, pattern = text, re.compile(pattern.pattern, re.IGNORECASE)
        spans: list[tuple[int, int, str]] = []
        for match in pattern.finditer(low):
            value = text[match.start(1) : match.end(1)]
            if _starts_word(low, match.start()) and _looks_random(value):
                spans.append((match.start(1), match.end(1), marker(kind)))
        text = _splice(text, spans)
    return text


def _is_reference(value: str) -> bool:
    """A command-line or URL password that only stands for one: `$PW`, `${PW}`, `<password>`,
    `****`, `%(pw)s`, an earlier marker, a dummy word."""
    stripped = value.strip("\"'")
    if not stripped or stripped.startswith(_REDACTED) or set(stripped) <= _MASK_CHARS:
        return True
    return stripped.lower() in _DUMMY_WORDS or _TEMPLATE.search(stripped) is not None


def _redact_commands(text: str, low: str) -> str:
    """Passwords in URLs, command options and `.netrc` lines, and blank-separated secrets.
    `low` is `text` lowercased."""
    spans: list[tuple[int, int, str]] = [
        (match.start(1), match.end(1), marker("password"))
        for pattern, needles in _COMMAND_PATTERNS
        if all(any(n in low for n in group) for group in needles)
        for match in pattern.finditer(text)
        if not _is_reference(match.group(1))
    ]
    same = _lower(text) is not None  # indices of `low` are those of `text`
    if same and ("key" in low or "secret" in low or "token" in low or "passw" in low):
        for match in _BLANK_SEPARATED.finditer(low):
            # The whole identifier run before the value must be the compound name (so
            # `x.aws_secret_access_key` or a bare `token` does not count).
            if not _COMPOUND_NAME.fullmatch(_name_before(low, match.start()) + match.group(1)):
                continue
            value = text[match.start(2) : match.end(2)]
            if _looks_random(value) and not is_placeholder(value, quoted=True):
                spans.append((match.start(2), match.end(2), marker("secret")))
    return _splice(text, _disjoint(spans))  # two patterns may find the same value


def _is_basic_pair(value: str) -> bool:
    """True when `value` is base64 of `user:password` (printable text holding a colon)."""
    try:
        decoded = binascii.a2b_base64(value + "=" * (-len(value) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password) and decoded.isprintable()


def _discord_spans(text: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for match in _DISCORD_TAIL.finditer(text):
        start = end = match.start()
        while start > 0 and end - start < 29 and text[start - 1] in _URLSAFE:
            start -= 1
        if (start == 0 or text[start - 1] not in _URLSAFE) and _DISCORD_ID.fullmatch(
            text, start, end
        ):
            spans.append((start, match.end(), marker("discord_token")))
    return spans


def _telegram_spans(text: str) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for match in _TELEGRAM_TAIL.finditer(text):
        start = match.start()
        while start > 0 and match.start() - start < 16 and text[start - 1].isdigit():
            start -= 1
        if match.start() - start >= 5 and (start == 0 or not text[start - 1].isdigit()):
            spans.append((start, match.end(), marker("telegram_bot_token")))
    return spans


def _redact_contexts(text: str) -> str:
    """Secrets known by what surrounds them: a Discord bot token's dotted shape, a Telegram bot
    token's `digits:A…`, an Azure SAS
    `sig=`, an XML key/value setting, a base64 `user:password` under `auth` (the lowercase
    literals are how these formats are written)."""
    spans: list[tuple[int, int, str]] = []
    if len(text) >= _DISCORD_MIN_LEN and any(word in text for word in _DISCORD_WORDS):
        spans += _discord_spans(text)
    if ":A" in text:
        spans += _telegram_spans(text)
    if "-us" in text:
        spans += [(m.start() - 32, m.end(), marker("mailchimp_key")) for m in _MAILCHIMP_TAIL.finditer(text)
                  if m.start() == 32 or not text[m.start() - 33].isalnum()]  # fmt: skip
    if "sig=" in text:
        spans += [(m.start(1), m.end(1), marker("secret")) for m in _SAS_SIGNATURE.finditer(text)
                  if not _is_reference(m.group(1))]  # fmt: skip
    if "value=" in text:
        for match in _XML_KEY_VALUE.finditer(text):
            value = match.group(2)
            if is_secret_name(match.group(1)) and not is_placeholder(
                value, quoted=True, min_len=_MIN_PASSWORD_LEN
            ):
                spans.append((match.start(2), match.end(2), marker("secret")))
    if "auth" in text:
        spans += [(m.start(1), m.end(1), marker("password"))
                  for m in _BASIC_AUTH_VALUE.finditer(text) if _is_basic_pair(m.group(1))]  # fmt: skip
    return _splice(text, _disjoint(spans)) if spans else text


def _disjoint(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`spans` in order, each dropped that overlaps one kept before it."""
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans):
        if kept and span[0] < kept[-1][1]:
            continue
        kept.append(span)
    return kept


def _name_before(text: str, end: int) -> str:
    start = end
    while start > 0 and end - start < _MAX_NAME and text[start - 1] in _NAME_CHARS:
        start -= 1
    return text[start:end]


def _min_len_for(name: str) -> int:
    """A password-named value is a secret from 6 characters (`DB_PASS=hunter`); any other
    secret-named value from 8 (`primary_key=id` is not a key)."""
    low = name.lower()
    return _MIN_PASSWORD_LEN if low.endswith(_PASSWORD_ENDINGS) else _MIN_SECRET_LEN


def _redact_assignments(text: str) -> str:
    low = _lower(text)
    pattern = _ASSIGNMENT
    if low is None:
        low, pattern = text, re.compile(_ASSIGNMENT.pattern, re.IGNORECASE)
    spans: list[tuple[int, int, str]] = []
    for match in pattern.finditer(low):
        group = next(g for g in (2, 3, 4, 5) if match.group(g) is not None)
        name = _name_before(text, match.start()) + text[match.start(1) : match.end(1)]
        start, end = match.start(group), match.end(group)
        value = text[start:end]  # as matched: `f()`, `x[i]` are code, whatever is cut below
        if group == 5:
            end = _rest_of_line(text, match, name, start, end)
            if end > match.end(group):
                value = text[start:end]
        if not is_secret_name(name):
            continue
        if group == 5 and value.rstrip("\\").endswith(("(", "[")) and _QUOTED_ARGUMENT.match(
                text, match.end(5)):
            continue  # `config["token"]`, `os.getenv('X')` cut at their quote: code
        if name.lower() in _PATH_VARIABLES and value.startswith(("/", "~")):
            continue  # `PWD=/home/x` is the working directory, not a password
        if is_placeholder(value, quoted=group != 5, min_len=_min_len_for(name)):
            continue
        spans.append((start, end, marker("secret")))
    if any(part in low for part in _PART_NEEDLES):
        for match in _PART_ASSIGNMENT.finditer(low):
            group = next(g for g in (2, 3, 4) if match.group(g) is not None)
            name = _name_before(text, match.start()) + text[match.start(1) : match.end(1)]
            start, end = match.start(group), match.end(group)
            if group == 4:
                end = start + len(text[start:end].rstrip(_VALUE_TAIL))
            if names_a_secret_part(name) and random_value(text[start:end]):
                spans.append((start, end, marker("secret")))
    return _splice(text, _disjoint(spans))


#: What follows a value cut at a quote when the value is code: a quoted name, then the call's or
#: subscript's end (`"token"]`, `'X')`, `'X', default)`; JSON-escaped `\"token\"]`). A value
#: that ends in `[` where a JSON string closes (`{"command": "export PGPASSWORD=…["}`) is no
#: call: it is the password.
_QUOTED_ARGUMENT = lazy(r"([\"'])[\w.: -]{0,128}\\{0,7}\1[ \t]{0,8}[\]),]")


#: `NAME<sep>value` where a secret word stands anywhere in NAME (`secret_key_base: …`,
#: `APP_KEY=base64:…`); only random-looking values of 16+ characters count (`random_value`).
_PART_ASSIGNMENT = lazy(
    r"((?:key|secret|token|passw(?:or)?d|pwd|auth|signature|credentials?)[a-z0-9_.-]{0,40})"
    r"\\{0,7}[\"']?[ \t]{0,8}(?::=|:|=(?!=))[ \t]{0,8}"
    r"(?:\"([^\"\\\r\n]{16,1024})\"|'([^'\r\n]{16,1024})'|([^\s\"'`]{16,4096}))"
)
_PART_NEEDLES = ("key", "secret", "token", "passw", "pwd", "auth", "signature", "credential")
#: Separators after which a configuration file's value is the rest of its line (YAML `name:`,
#: INI/TOML/properties `name = `): a password there may hold blanks.
_LINE_VALUE_SEPARATORS = (":", " =", "\t=")
#: How far a line's start and end are looked for around a setting.
_LINE_LOOK = 512


#: YAML parent keys before a setting on the same line: its lines joined into one
#: (`database: password: …`, a command's text with its newlines collapsed).
_PARENT_KEYS = lazy(r"(?:[A-Za-z0-9_.-]{1,64}:[ \t]{1,8}){0,7}[A-Za-z0-9_.-]{1,64}:")


def _rest_of_line(text: str, match: re.Match[str], name: str, start: int, end: int) -> int:
    """Where an unquoted value ends: at its first blank, or — for a password setting that opens
    its line (`password: correct horse battery`, `passwd = a b c`, after YAML parent keys joined
    onto it: `database: password: …`) and does not start with a reference — at the end of the
    line (of the JSON string it opens); a trailing `,` `;` `)` belongs to the text around it."""
    name_start = match.end(1) - len(name)
    # Bounded searches: a long line of `key: key: …` must not make each match scan it again.
    window = max(0, name_start - _LINE_LOOK)
    line_start = text.rfind("\n", window, name_start) + 1
    before = text[line_start or window:name_start].strip(" \t-")
    quoted = '"' in before  # the setting opens a JSON string (`{"on": "password: …"}`)
    if quoted:
        before = before.rsplit('"', 1)[-1].strip(" \t-")
    separator = text[match.end(1):start]
    first_word = text[start:end].rstrip(_VALUE_TAIL)
    if (name.lower().endswith(_PASSWORD_ENDINGS)
            and (not before or before in ("export", "set") or _PARENT_KEYS.fullmatch(before))
            and any(sep in separator for sep in _LINE_VALUE_SEPARATORS)
            and not is_placeholder(first_word, min_len=1)):
        line_end = text.find("\n", start, start + _LINE_LOOK)
        stop = min(len(text), start + _LINE_LOOK) if line_end < 0 else line_end
        if quoted:  # to the string's end, not the document line's
            close = text.find('"', start, stop)
            stop = stop if close < 0 else close
            return start + len(text[start:stop].rstrip().rstrip("\\"))
        return start + len(text[start:stop].rstrip())
    return start + len(text[start:end].rstrip(_VALUE_TAIL))


def redact(text: str, *, home: str | None = None) -> str:
    """`text` with every recognised secret replaced by `«redacted:TYPE»`; idempotent.

    With `home` (the user's home directory, e.g. `/home/jane`), paths under it are also written
    as `~/…` (C-20). It is opt-in: a store whose paths are used again (file checks) keeps them.
    """
    if home is not None:
        text = shorten_home(text, home)
    if len(text) < _MIN_TEXT_LEN:
        return text
    glue = _argv_glue(text)
    if glue:
        return _redact_escaped(text.replace(glue, _ARGV_BLANKS[glue])).replace(
            _ARGV_BLANKS[glue], glue)
    return _redact_escaped(text)


def _redact_escaped(text: str) -> str:
    if "\\" in text and _has_escapes(text):
        # Once with the escapes read as the blanks they stand for (a token after `\n` starts a
        # word), once as written (a quoted password may hold a `\n` of its own).
        return _redact(_unescape_blanks(_redact(_escape_blanks(text))))
    return _redact(text)


#: A command given as a JSON array of its words (`["sqlcmd", "-P", "…"]`: Docker's exec form, an
#: `argv` argument, `subprocess.run([...])`): the `", "` between two words is read as the blank
#: it stands for, so an option's value is found as on a command line. Same-length tabs (which
#: JSON text never holds raw) stand in for it and are put back after; tried only when an item
#: opens with a dash.
_ARGV_BLANKS = {'", "': "\t\t\t\t", '","': "\t\t\t"}


def _argv_glue(text: str) -> str:
    """The separator of a JSON array of words whose items hold an option, or ""."""
    if "\t" in text:
        return ""
    for glue in _ARGV_BLANKS:
        if glue + "-" in text:
            return glue
    return ""


#: JSON and shell escapes of blanks (`\n`, `\t`, `\r`) and the same-length text the passes see
#: instead: the backslash and the real blank. In JSON text (a tool's arguments, a
#: service-account file) a token follows `\n`, and `n` glued to it would hide its start.
_ESCAPES = (("\\n", "\\\n"), ("\\t", "\\\t"), ("\\r", "\\\r"))


def _has_escapes(text: str) -> bool:
    """True when `text` holds an escaped blank and no real blank after a backslash (so the
    substitution can be undone exactly)."""
    return any(escaped in text for escaped, _ in _ESCAPES) and not any(
        blank in text for _, blank in _ESCAPES
    )


def _escape_blanks(text: str) -> str:
    for escaped, blank in _ESCAPES:
        text = text.replace(escaped, blank)
    return text


def _unescape_blanks(text: str) -> str:
    for escaped, blank in _ESCAPES:
        text = text.replace(blank, escaped)
    return text


def _redact(text: str) -> str:
    short = len(text) <= _TRIGGER_MAX_LEN
    if len(text) > _TOKEN_TRIGGER_MAX_LEN or _TOKEN_TRIGGER.search(text) is not None:
        text = _redact_tokens(text)
    text = _redact_contexts(text)
    low = text.lower()
    if any(needle in low for needle in _COMMAND_NEEDLES):
        text = _redact_commands(text, low)
        low = text.lower()
    spans = carrier_spans(text, low, is_secret_name=is_secret_name, is_reference=_is_reference,
                          marker=marker)
    if spans:
        text = _splice(text, _disjoint(spans))
        low = text.lower()
    if short and _WORD_TRIGGER.search(low) is None:
        return text
    if any(needle in low for needle in _HEADER_NEEDLES):
        text = _redact_headers(text)
    if ("=" in text or ":" in text) and any(needle in low for needle in _ASSIGNMENT_NEEDLES):
        text = _redact_assignments(text)
    return text


def shorten_home(text: str, home: str) -> str:
    """`home` → `~` wherever it is a whole path prefix (`/home/jane/x` → `~/x`, not
    `/home/janet`). A home of `/` or shorter than 2 characters is left alone."""
    home = home.rstrip("/")
    if len(home) < 2 or home not in text:
        return text
    pattern = re.compile(r"(?<![\w./-])" + re.escape(home) + r"(?=/|$|[^\w.-])")
    return pattern.sub("~", text)


def _redact_under_key(key: str, value: str, home: str | None) -> str:
    if key in _BASIC_AUTH_KEYS and _is_basic_pair(value.strip()):
        return marker("password")  # Docker config.json / .npmrc `auth`: base64 user:password
    if (
        _WORD_TRIGGER.search(key.lower()) is not None
        and is_secret_name(key)
        and not is_placeholder(value, quoted=True)
    ):
        return marker("secret")
    if names_a_secret_part(key) and random_value(value):
        return marker("secret")
    return redact(value, home=home)


def redact_obj(
    obj: object, *, depth: int = 0, home: str | None = None, max_depth: int = MAX_DEPTH
) -> object:
    """A copy of `obj` with `redact` applied to every string (keys included) in dicts and lists.

    Strings stored under a secret-named key (`{"api_key": "..."}`) are replaced whole unless they
    are placeholders. Tuples come back as lists (their JSON form). Other values pass unchanged.
    Containers nested deeper than `max_depth` (default MAX_DEPTH) are replaced by DEPTH_MARKER.
    `home`: as in `redact`.
    """
    if isinstance(obj, str):
        return redact(obj, home=home)
    if isinstance(obj, dict):
        if type(obj) is Redacted and home is None and depth + obj.height <= max_depth:
            return obj  # already what this call would make of its source
        if depth >= max_depth:
            return DEPTH_MARKER
        out: dict[object, object] = {}
        for key, value in obj.items():
            new_key = redact(key, home=home) if isinstance(key, str) else key
            if isinstance(key, str) and isinstance(value, str):
                out[new_key] = _redact_under_key(key, value, home)
            else:
                out[new_key] = redact_obj(value, depth=depth + 1, home=home, max_depth=max_depth)
        return out
    if isinstance(obj, list | tuple):
        if depth >= max_depth:
            return DEPTH_MARKER
        if len(obj) >= 2 and all(type(item) is str for item in obj) and any(
                item.startswith("-") for item in obj):
            obj = _redact_argv(obj)
        out_list = [redact_obj(item, depth=depth + 1, home=home, max_depth=max_depth) for item in obj]
        if any(type(item) is str and item.endswith(_PEM_WORDS) for item in out_list):
            return _redact_pem_lines(out_list)
        return out_list
    return obj


def _redact_argv(words: list[str] | tuple[str, ...]) -> list[str]:
    """A command's words (`["mysql", "-p…", "app"]`) with the values their options carry
    redacted, read as the command line they make (`redact` of the array's JSON text)."""
    text = json.dumps(list(words), ensure_ascii=False)
    shown = redact(text)
    if shown == text:
        return list(words)
    try:
        out = json.loads(shown)
    except ValueError:
        out = None
    if isinstance(out, list) and len(out) == len(words) and all(isinstance(w, str) for w in out):
        return out
    return [marker("secret") if "«redacted:" in shown else w for w in words]  # (never reached)


_PEM_WORDS = "«redacted:private_key»"
_PEM_END = lazy(r"-{4,5} ?END[A-Z0-9 _-]{0,40}PRIVATE KEY")


def _redact_pem_lines(items: list[object]) -> list[object]:
    """A PEM block split one line per item (a tool's output as a list of lines): the header
    item is redacted already; the body lines that follow it, up to the END line, go too."""
    inside = False
    for index, item in enumerate(items):
        if not isinstance(item, str):
            inside = False
        elif inside:
            inside = _PEM_END.search(item) is None
            items[index] = marker("private_key")
        elif item.endswith(_PEM_WORDS):
            inside = True
    return items


#: Replies are redacted like stored records, but nest deeper (graph walks, status).
REPLY_MAX_DEPTH = 64


def redact_reply(obj: object) -> object:
    """What a reply may carry out of the daemon: `obj` with every secret replaced (C-20)."""
    return redact_obj(obj, max_depth=REPLY_MAX_DEPTH)


class Redacted(dict[object, object]):
    """A map that is already `redact_obj` of its source, nested `height` containers deep.

    Nothing nested in it was cut by the depth limit, so `redact_obj` at any depth that keeps all of
    it within the limit (and without `home`) would make exactly this map again: it hands it back
    unchanged. A reply part cached this way (a recalled episode asked for on every prompt) is not
    scanned for secrets again on every reply. Made by `redacted_map`; never mutate one.
    """

    __slots__ = ("height",)

    def __init__(self, redacted: Mapping[Any, object], height: int) -> None:
        super().__init__(redacted)
        self.height = height


def _height(obj: object) -> int:
    """Containers nested in `obj`, itself included (0 for a string or a number)."""
    if isinstance(obj, dict):
        return 1 + max((_height(v) for v in obj.values()), default=0)
    if isinstance(obj, list | tuple):
        return 1 + max((_height(v) for v in obj), default=0)
    return 0


def marked_redacted(obj: dict[str, object], max_depth: int = REPLY_MAX_DEPTH) -> object:
    """`obj` as a `Redacted`, without scanning it: for a map built only from what `redact_obj`
    returned (an episode just stored, read back from its redacted record). Redaction is
    idempotent, so `redact_obj` would make the same map; the reply's pass then skips it."""
    height = _height(obj)
    return Redacted(obj, height) if height < max_depth else redact_obj(obj, max_depth=max_depth)


def redacted_map(obj: dict[str, object], max_depth: int = REPLY_MAX_DEPTH) -> object:
    """`redact_obj(obj, max_depth=max_depth)`, as a `Redacted` when nothing in it was cut by the
    depth limit (a map deeper than that comes back as `redact_obj` makes it, unmarked)."""
    out = redact_obj(obj, max_depth=max_depth)
    if not isinstance(out, dict):
        return out
    height = _height(out)
    return Redacted(out, height) if height < max_depth else out
