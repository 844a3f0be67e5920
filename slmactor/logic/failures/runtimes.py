"""What a runtime's own tools say about the environment a command ran in: the runtime on PATH is
not the version the project requires (`runtime_version`), the project's environment is not
active in this shell (`env_not_activated`), or the command is a server that never returns
(`server_no_return`).

These are read from *who* speaks, not from the wording of one corpus: the package manager's or
version manager's own error code or prefix (`EBADENGINE`, `ERR_PNPM_UNSUPPORTED_ENGINE`,
`pyenv: version … is not installed`, `mise ERROR`, `Volta error:`), the Go command's toolchain
check, and — for a server — the harness's own verdict that the command ran out of time, on a
command that serves (its head) or that said it was listening. Each pattern names the source it
follows (the texts the tests use are written from those sources:
`tests/fixtures/failures/runtimes.jsonl`):

* npm 7–11: `npm-install-checks` `lib/index.js` (`checkEngine` throws "Unsupported engine",
  code `EBADENGINE`), printed by `lib/utils/error-message.js` ("Not compatible with your
  version of node/npm: <pkg>", "Required: …", "Actual: …") behind `npm ERR!` (≤ 9) or
  `npm error` (10+); npm 6: "notsup Unsupported engine for <pkg>: wanted: {…} (current: {…})";
* pnpm: `config/package-is-installable/src/checkEngine.ts` (`ERR_PNPM_UNSUPPORTED_ENGINE`) as
  `cli/default-reporter/src/reportError.ts` prints it ("Unsupported environment (bad pnpm
  and/or Node.js version)", "Your Node version is incompatible with …", "Your pnpm version is
  incompatible with …");
* yarn 1: `src/reporters/lang/en.js` (`incompatibleEngine`: 'The engine $0 is incompatible
  with this module. Expected version $1. Got $2', `foundIncompatible`);
* Go 1.21+: `src/cmd/go/internal/gover/toolchain.go` (`TooNewError`: "%v requires go >= %v
  (running go %v%v)");
* pip: `UnsupportedPythonVersion` ("Package %r requires a different Python: %s not in %r");
  uv: `crates/uv/src/commands/project/mod.rs` ("… resolved to Python X, which is incompatible
  with the project's Python requirement: `…`");
* pyenv / rbenv / nodenv (`libexec/*-which`, `*-version-name`): "pyenv: version `X' is not
  installed (set by …)", and "pyenv: X: command not found … The `X' command exists in these
  Python versions:" — the version exists, it is just not the active one;
* nvm (`nvm.sh`, `nvm_ensure_version_installed`): 'N/A: version "v20" is not yet installed.';
  `nvm: command not found` — nvm is a shell function, absent from a shell that did not source
  `nvm.sh`;
* asdf 0.16 (`internal/cli`): "No version is set for command X" (nothing selects a version
  here) and "No preset version installed for command X" (the version set is not installed);
* mise (`src/shims.rs`, `src/config`): "mise ERROR No version is set for shim: X", "missing:
  tool@version", "Config files in … are not trusted";
* Volta (`crates/volta-core/src/error/kind.rs`): "Volta error: Node is not available.",
  "Could not find executable";
* conda: "CommandNotFoundError: Your shell has not been properly configured to use 'conda
  activate'".

`head_family(head)` says which runtime a command head runs on (`npm`, `pnpm`, `yarn`, `node`,
`tsc` → node; `python3`, `pip`, `pytest` → python …): a fact about a runtime's version holds
for every command of its family. Pure.
"""

from __future__ import annotations

import re

RUNTIME_VERSION = "runtime_version"
ENV_NOT_ACTIVATED = "env_not_activated"
SERVER_NO_RETURN = "server_no_return"

#: Command head (its first word, without a path) → the runtime it runs on.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "node": ("node", "nodejs", "npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg", "corepack",
             "tsc", "tsx", "ts-node", "vite", "vitest", "jest", "next", "nuxt", "eslint",
             "prettier", "webpack", "nest", "ng", "astro", "turbo", "nx", "lerna", "nodemon",
             "mocha", "playwright", "wrangler", "expo", "react-native", "node-gyp"),
    "python": ("python", "python2", "python3", "pip", "pip3", "pytest", "py.test", "mypy",
               "ruff", "black", "flake8", "pylint", "isort", "uvicorn", "gunicorn", "flask",
               "django-admin", "ipython", "jupyter", "tox", "nox", "coverage", "alembic",
               "celery", "pre-commit", "manage.py", "pyright"),
    "go": ("go", "gofmt", "golangci-lint", "gopls", "dlv"),
    "ruby": ("ruby", "gem", "bundle", "bundler", "rake", "rails", "rspec", "irb", "rubocop"),
    "rust": ("cargo", "rustc", "rustup", "rustfmt", "clippy-driver"),
    "java": ("java", "javac", "javap", "mvn", "mvnw", "gradle", "gradlew", "kotlin", "kotlinc"),
    "php": ("php", "composer", "artisan", "phpunit"),
    "elixir": ("elixir", "mix", "iex", "erl"),
    "dotnet": ("dotnet",),
    "deno": ("deno",),
    "bun": ("bun", "bunx"),
}
_HEAD_FAMILY = {head: family for family, heads in _FAMILIES.items() for head in heads}
#: How version managers and their plugins name the runtimes (`nodejs 20.1.0`, `golang`).
_RUNTIME_NAMES = {"nodejs": "node", "node": "node", "golang": "go", "go": "go",
                  "python": "python", "ruby": "ruby", "java": "java", "rust": "rust",
                  "php": "php", "elixir": "elixir", "erlang": "elixir", "dotnet": "dotnet",
                  "deno": "deno", "bun": "bun", "yarn": "node", "pnpm": "node", "npm": "node"}
#: Version managers: their name → the runtime they manage ("" : many).
MANAGERS = {"nvm": "node", "fnm": "node", "volta": "node", "nodenv": "node", "n": "node",
            "pyenv": "python", "conda": "python", "uv": "python", "poetry": "python",
            "rbenv": "ruby", "rvm": "ruby", "chruby": "ruby", "goenv": "go", "sdk": "java",
            "jenv": "java", "asdf": "", "mise": "", "rtx": "", "corepack": "node"}
_PYTHON_VERSIONED = re.compile(r"^(?:python|pip)\d+(?:\.\d+)*$")


def head_family(head: str) -> str:
    """The runtime a command head runs on ("" when it is not a known runtime's): the first
    word, without its directory (`.venv/bin/python` is python, `node_modules/.bin/tsc` node)."""
    word = head.split(" ", 1)[0].rsplit("/", 1)[-1].lower()
    family = _HEAD_FAMILY.get(word, "")
    if not family and _PYTHON_VERSIONED.match(word):
        family = "python"
    return family


def family_heads(family: str) -> tuple[str, ...]:
    """The command heads that run on a runtime (`node` → npm, pnpm, yarn, node, …)."""
    return _FAMILIES.get(family, ())


def runtime_name(word: str) -> str:
    """A runtime as a version manager or a command names it (`nodejs`, `python3`, `pyenv` →
    python)."""
    low = word.strip().strip("'\"`").lower()
    return _RUNTIME_NAMES.get(low) or head_family(low) or MANAGERS.get(low) or low


# (substring every match holds — a cheap gate —, pattern, class, runtime: a fixed name, or the
# pattern's group 1 read by `runtime_name`). Patterns run on the lowercased text.
_RULES: tuple[tuple[str, re.Pattern[str], str, str], ...] = (
    # npm's engine check (EBADENGINE with engine-strict, npm 6's notsup), and npm itself on a
    # Node it does not support.
    ("ebadengine", re.compile(r"\bebadengine\b"), RUNTIME_VERSION, "node"),
    ("unsupported engine", re.compile(r"notsup unsupported engine for \S+: wanted:"),
     RUNTIME_VERSION, "node"),
    ("does not support node", re.compile(r"\bnpm (?:v\S+ )?does not support node\.js v\d"),
     RUNTIME_VERSION, "node"),
    # pnpm's engine check: the reporter names the engine that failed.
    ("unsupported_engine", re.compile(r"err_pnpm_unsupported_engine[\s\S]{0,400}?your (node|pnpm) "
                                      r"version is incompatible"), RUNTIME_VERSION, ""),
    ("unsupported_engine", re.compile(r"err_pnpm_unsupported_engine"), RUNTIME_VERSION, "node"),
    # yarn 1.
    ("incompatible with this module",
     re.compile(r'the engine "([\w.-]+)" is incompatible with this module'), RUNTIME_VERSION, ""),
    # The Go command's toolchain check (and its older "note: module requires Go").
    ("requires go", re.compile(r"requires go >= \S+ \(running go "), RUNTIME_VERSION, "go"),
    ("requires go", re.compile(r"^note: module requires go \d", re.MULTILINE), RUNTIME_VERSION, "go"),
    # pip and uv on a Python the project does not allow.
    ("requires a different python", re.compile(r"requires a different python: \S+ not in"),
     RUNTIME_VERSION, "python"),
    ("python requirement", re.compile(r"incompatible with the (?:project's|locked) python "
                                      r"requirement"), RUNTIME_VERSION, "python"),
    ("no interpreter found", re.compile(r"no interpreter found for python"), RUNTIME_VERSION,
     "python"),
    # *env shims: the version the project names is not installed / exists but is not active.
    ("is not installed (set by", re.compile(r"\b(pyenv|rbenv|nodenv|goenv): version [`'\"]?\S+ "
                                            r"is not installed \(set by"), RUNTIME_VERSION, ""),
    ("command exists in these", re.compile(r"the `\S+' command exists in these (\w+) versions"),
     ENV_NOT_ACTIVATED, ""),
    # nvm: a version that is not installed; nvm itself missing from this shell.
    ("is not yet installed", re.compile(r"n/a: version \"\S+\" is not yet installed"),
     RUNTIME_VERSION, "node"),
    ("nvm: command not found", re.compile(r"\bnvm: command not found|command not found: nvm\b"),
     ENV_NOT_ACTIVATED, "node"),
    # asdf: a version set but not installed; nothing selects a version in this directory.
    ("no preset version installed", re.compile(r"no preset version installed for command (\S+)"),
     RUNTIME_VERSION, ""),
    ("no version is set for", re.compile(r"no version is set for (?:command|shim:) (\S+)"),
     ENV_NOT_ACTIVATED, ""),
    # mise: the project's tool is not installed; the project's config is not trusted.
    ("missing:", re.compile(r"mise (?:error|warn)\s+missing: ([\w.-]+)@"), RUNTIME_VERSION, ""),
    ("not trusted", re.compile(r"mise error config files? in \S+ (?:is|are) not trusted"),
     ENV_NOT_ACTIVATED, ""),
    # Volta: no Node (or package manager) selected for this project.
    ("volta error", re.compile(r"volta error: (node|yarn|pnpm|npm) is not available"),
     ENV_NOT_ACTIVATED, ""),
    ("volta error", re.compile(r"volta error: could not find executable"), ENV_NOT_ACTIVATED,
     "node"),
    # conda without its shell hook.
    ("properly configured to use 'conda activate'",
     re.compile(r"your shell has not been properly configured to use 'conda activate'"),
     ENV_NOT_ACTIVATED, "python"),
)
_GATES = tuple(sorted({gate for gate, _, _, _ in _RULES}))


def environment_class(text_lower: str) -> tuple[str, str] | None:
    """(class, runtime) when a package manager's or version manager's own words say the
    runtime is the wrong version or the project's environment is not active; else None.
    `text_lower` is the failure's inner text, lowercased."""
    if not any(gate in text_lower for gate in _GATES):
        return None  # the usual case: a few substring tests
    for gate, pattern, cls, runtime in _RULES:
        if gate not in text_lower:
            continue
        m = pattern.search(text_lower)
        if m is None:
            continue
        name = runtime or (runtime_name(m.group(1)) if m.groups() and m.group(1) else "")
        return cls, name
    return None


#: Heads (with their sub-command) that start a server or a watcher: they never return. (`npm`,
#: `pnpm`, `yarn` and `bun` scripts named start/dev/serve/watch/preview are servers too.)
_SERVER_HEADS = frozenset({
    "next dev", "next start", "nuxt dev", "vite", "vite dev", "vite preview", "nodemon",
    "uvicorn", "gunicorn", "flask run", "python manage.py", "python3 manage.py", "rails server",
    "rails s", "bundle exec", "php artisan", "hugo server", "jekyll serve", "watch",
    "http-server", "serve", "live-server", "webpack serve", "webpack-dev-server", "ng serve",
    "astro dev", "remix dev", "wrangler dev", "expo start", "mkdocs serve", "python http.server",
    "python3 http.server", "jupyter notebook", "jupyter lab", "streamlit run", "air",
    "cargo watch", "dotnet watch", "dotnet run", "go run", "mix phx.server", "deno serve"})
#: Heads that serve only with one of these words (`manage.py runserver`, `rails server` through
#: `bundle exec`, `php artisan serve`).
_NEEDS_SERVING_WORD = frozenset({"python manage.py", "python3 manage.py", "bundle exec",
                                 "php artisan", "dotnet run", "go run"})
_SERVING_WORDS = frozenset({"runserver", "server", "s", "serve", "up", "start", "dev", "watch",
                            "preview", "--watch", "-w"})
_SCRIPT_SERVERS = frozenset({"start", "dev", "serve", "watch", "preview"})
#: What a server prints once it listens (Node/Vite/Next/uvicorn/Flask/Django/http.server/…).
_LISTENING = re.compile(
    r"listening (?:on|at)\b|server (?:is )?(?:running|started|listening) (?:at|on)\b|"
    r"local:\s+https?://|serving http on|running on https?://|started (?:the )?server on|"
    r"ready in \d|ready on https?://|watching for (?:file )?changes|"
    r"press ctrl\+c to (?:quit|stop)|uvicorn running on|development server at|"
    r"http server started|app listening|started server process")


def is_server_command(command: str, heads: list[str]) -> bool:
    """Whether a shell line runs a server or a watcher (a command that does not return) in the
    foreground: one of its heads is a serving command, and it is not sent to the background."""
    if backgrounds(command):
        return False
    words = command.split()
    for head in heads:
        if head in _SERVER_HEADS:
            if head in _NEEDS_SERVING_WORD and not set(words) & _SERVING_WORDS:
                continue
            return True
        if head.startswith(("npm ", "pnpm ", "yarn ", "bun ")) and head.split(" ", 1)[1] in (
                _SCRIPT_SERVERS):
            return True
    if "tail" in heads and {"-f", "-F", "--follow"} & set(words):
        return True
    if _COMPOSE_UP.search(command) and not {"-d", "--detach", "--wait"} & set(words):
        return True  # `docker compose up` stays attached to its services
    return "--watch" in words


_COMPOSE_UP = re.compile(r"\bdocker(?:-compose| compose)\b[^;&|]*\bup\b")


def says_listening(text_lower: str) -> bool:
    """Whether the output says a server started listening (and so would not return)."""
    return _LISTENING.search(text_lower[:8000]) is not None


_NOT_BACKGROUND = re.compile(r"&&|\d?>&\d?|&>>?|\|&")


def backgrounds(command: str) -> bool:
    """Whether a shell line sends something to the background (a `&` that is no `&&`, `2>&1`,
    `&>` or `|&`): its own servers return, and an exit 143 there is its own `kill`."""
    return "&" in _NOT_BACKGROUND.sub(" ", command)
