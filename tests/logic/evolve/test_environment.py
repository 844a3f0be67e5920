"""Environment facts: learned from a failed call and the call that got past it, told at a failure
and at a session's start, applied before a call only where exact and safe."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slmactor.logic.evolve import env_shapes as sh
from slmactor.logic.evolve.environment import (
    PROVEN,
    Call,
    EnvBook,
    EnvFact,
    advice,
    announce,
    told_line,
)

NOW = 1_800_000_000.0
PNPM_ENGINE = ("ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js "
               "version)")


def _learn(book: EnvBook, failed: str, fixed: str, cls: str = "runtime_version", session: str = "s1",
           at: float = NOW) -> EnvFact | None:
    return book.learn(cls, Call("Bash", failed, session=session, error=PNPM_ENGINE),
                      Call("Bash", fixed, session=session), at)


@pytest.mark.parametrize(("failed", "fixed", "kind", "scope"), [
    ("npm test", "nvm use 20 && npm test", sh.PREFIX, ("family", "node")),
    ("pnpm install", ". ~/.nvm/nvm.sh && nvm use && pnpm install", sh.PREFIX, ("family", "node")),
    ("pytest -q", "source .venv/bin/activate && pytest -q", sh.PREFIX, ("family", "python")),
    ("pytest -q", "uv run pytest -q", sh.WRAP, ("family", "python")),
    ("python3 app.py", ".venv/bin/python app.py", sh.SUBSTITUTE, ("head", "python3 app.py")),
    ("npm start", "npm start > /tmp/server.log 2>&1 &", sh.BACKGROUND, ("head", "npm start")),
    ("npm run dev", "nohup npm run dev > dev.log 2>&1 &", sh.BACKGROUND, ("head", "npm dev")),
    ("npm test", "docker compose up -d db && npm test", sh.PREFIX, ("head", "npm test")),
])
def test_the_shape_of_an_environment_fix(failed: str, fixed: str, kind: str,
                                         scope: tuple[str, str]) -> None:
    shape = sh.shape_of(failed, fixed)
    assert shape is not None and shape.kind == kind
    assert sh.scope_of(shape, failed) == scope
    assert sh.apply(shape, failed) == sh.norm(fixed)
    assert sh.apply(shape, fixed) is None  # already there


@pytest.mark.parametrize(("failed", "fixed"), [
    ("cd x && ls", "ls"),                     # a shell state is not the project's
    ("npm test", "cd web && npm test"),
    ("npm test", "mkdir -p out && npm test"),
    ("git push", "git push --force"),          # what the command does changed
    ("workmux capture x", "workmux status x"),
    ("python app.py", "node app.js"),          # another program, not another interpreter
    ("npm test", "npm test"),
])
def test_what_is_not_an_environment_fix(failed: str, fixed: str) -> None:
    assert sh.shape_of(failed, fixed) is None


def test_a_fix_that_raises_privileges_or_deletes_is_never_applied_without_the_model() -> None:
    for fixed in ("sudo cp a b", "rm -rf node_modules && npm test", "npm test --force"):
        shape = sh.shape_of("npm test", fixed) or sh.Shape(sh.WRAP, "sudo")
        assert not sh.rewrite_safe(shape) or shape.kind != sh.WRAP
    assert not sh.rewrite_safe(sh.Shape(sh.WRAP, "sudo"))
    assert not sh.rewrite_safe(sh.Shape(sh.PREFIX, "rm -rf node_modules &&"))
    assert not sh.rewrite_safe(sh.Shape(sh.ARGS, args={"sandbox_permissions": True}))
    assert sh.rewrite_safe(sh.Shape(sh.PREFIX, "nvm use 20 &&"))


def test_npm_pnpm_yarn_and_node_share_a_node_fact_once_it_is_proven() -> None:
    book = EnvBook()
    fact = None
    for i in range(PROVEN):
        fact = _learn(book, "pnpm install", "nvm use 20 && pnpm install", session=f"s{i}",
                      at=NOW + i)
    assert fact is not None and fact.proven and fact.topic == "runtime"
    assert fact.sessions == PROVEN and len(fact.evidence) == 2 * PROVEN
    for command in ("npm test", "yarn build", "node server.js", "npx tsc"):
        pre = book.preflight(Call("Bash", command))
        assert pre is not None and pre.why == ("proven",)
        assert pre.command == f"nvm use 20 && {command}"
    assert book.preflight(Call("Bash", "python3 app.py")) is None  # another runtime
    assert book.preflight(Call("Bash", "nvm use 20 && npm test")) is None  # already there


def test_the_second_occurrence_is_rewritten_only_to_what_succeeded_right_after_it() -> None:
    book = EnvBook()
    fact = _learn(book, "npm start", "npm start > /tmp/server.log 2>&1 &", "server_no_return")
    assert fact is not None and not fact.proven
    pre = book.preflight(Call("Bash", "npm start"))
    assert pre is not None and pre.why == ("exact",)
    assert pre.command == "npm start > /tmp/server.log 2>&1 &"
    # Another command of the head is not exact, and the fact is not proven yet.
    assert book.preflight(Call("Bash", "npm start -- --port 4000")) is None
    assert "failed here before" in announce(pre, "npm start")


def test_a_fact_that_failed_once_is_advice_never_a_rewrite() -> None:
    book = EnvBook()
    fact = None
    for i in range(PROVEN + 2):
        fact = _learn(book, "npm test", "nvm use 20 && npm test", session=f"s{i}", at=NOW + i)
    assert fact is not None
    book.observe(fact.id, False, NOW + 10)
    assert book.preflight(Call("Bash", "npm test")) is None
    assert book.preflight(Call("Bash", "pnpm install")) is None
    found = book.relevant("runtime_version", Call("Bash", "pnpm install"))
    assert found and found[0].id == fact.id
    text = advice(found[0], Call("Bash", "pnpm install"), PNPM_ENGINE)
    assert "`nvm use 20 && pnpm install`" in text and f"{PROVEN + 2} of {PROVEN + 3}" in text


def test_two_facts_that_disagree_rewrite_nothing() -> None:
    book = EnvBook()
    for i in range(PROVEN):
        _learn(book, "npm test", "nvm use 20 && npm test", session=f"a{i}")
        _learn(book, "npm test", "volta run --node 20 npm test", session=f"b{i}")
    assert book.preflight(Call("Bash", "npm run build")) is None


def test_a_permission_fix_is_told_never_applied() -> None:
    book = EnvBook()
    for i in range(PROVEN + 1):
        book.learn("permission_denied", Call("Bash", "npm test", session=f"s{i}"),
                   Call("Bash", "direnv exec . npm test", session=f"s{i}"), NOW)
    assert book.preflight(Call("Bash", "npm test")) is None
    assert book.relevant("permission_denied", Call("Bash", "npm test"))


def test_a_test_failure_or_a_compile_error_teaches_no_environment_fact() -> None:
    book = EnvBook()
    for cls in ("test_failure", "compile_error", "lint_error"):
        assert _learn(book, "pytest -q", "uv run pytest -q", cls) is None
    assert not book.facts


def test_the_harness_s_own_background_option_stays_with_its_tool() -> None:
    book = EnvBook()
    fact = book.learn("server_no_return", Call("Bash", "npm start", {"command": "npm start"}),
                      Call("Bash", "npm start", {"command": "npm start", "run_in_background": True}),
                      NOW)
    assert fact is not None and fact.shape.kind == sh.ARGS and fact.tool == "Bash"
    pre = book.preflight(Call("Bash", "npm start", {"command": "npm start"}))
    assert pre is not None and pre.args["run_in_background"] is True
    assert book.preflight(Call("run_shell_command", "npm start", {"command": "npm start"})) is None


def test_a_session_start_is_told_the_facts_the_task_names_first() -> None:
    book = EnvBook()
    _learn(book, "pytest", "uv run pytest")
    node = _learn(book, "npm test", "nvm use 20 && npm test")
    assert node is not None
    told = book.told("run the npm test suite")
    assert told[0].id == node.id
    line = told_line(told[0])
    assert "`nvm use 20 &&`" in line and "node commands" in line and "1 of 1" in line


def test_the_hook_s_table_lists_what_may_rewrite_and_the_words_that_trigger_it() -> None:
    book = EnvBook()
    _learn(book, "python3 app.py", ".venv/bin/python app.py", "dependency_missing")
    book.learn("permission_denied", Call("Bash", "cp a b"), Call("Bash", "sudo cp a b"), NOW)
    rows = book.table()
    assert len(rows) == 1
    assert rows[0]["exact"] == ["python3 app.py"] and rows[0]["keys"] == ["python3"]


def test_facts_round_trip_and_a_bad_record_is_dropped() -> None:
    book = EnvBook()
    for i in range(2):
        _learn(book, "npm start", "npm start > s.log 2>&1 &", "server_no_return", f"s{i}")
    again = EnvBook.from_list([*book.to_list(), {"id": 3}, "junk", {"fix": {"kind": "what"}}])
    assert again.to_list() == book.to_list()


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-._/0123456789", min_size=1, max_size=8)


@settings(derandomize=True, max_examples=200)
@given(st.lists(_WORD, min_size=1, max_size=5), st.sampled_from([
    "nvm use 20 &&", "source .venv/bin/activate &&", "uv run", "mise exec --", "X=1"]),
    st.sampled_from(["npm", "python3", "go", "pytest"]))
def test_a_learned_prefix_or_wrapper_makes_the_fixing_command_again(
        rest: list[str], fix: str, head: str) -> None:
    failed = " ".join([head, *rest])
    fixed = f"{fix} {failed}"
    shape = sh.shape_of(failed, fixed)
    assert shape is not None
    assert sh.apply(shape, failed) == sh.norm(fixed)


@settings(derandomize=True, max_examples=300)
@given(st.text(max_size=80), st.text(max_size=80))
def test_shapes_and_application_never_raise(a: str, b: str) -> None:
    shape = sh.shape_of(a, b)
    if shape is not None:
        sh.apply(shape, a)
        sh.scope_of(shape, a)
        assert sh.Shape.from_dict(shape.to_dict()) == shape


def test_a_runtime_s_activation_and_a_server_s_background_make_one_rewrite() -> None:
    book = EnvBook()
    for i in range(PROVEN):
        _learn(book, "pnpm install", "nvm use 20 && pnpm install", session=f"s{i}")
    _learn(book, "npm start", "npm start > s.log 2>&1 &", "server_no_return")
    pre = book.preflight(Call("Bash", "npm start"))
    assert pre is not None and pre.command == "nvm use 20 && npm start > s.log 2>&1 &"
    assert {f.topic for f in pre.facts} == {"runtime", "background"}
    assert set(pre.why) == {"exact", "proven"}
    text = announce(pre, "npm start")
    assert "`nvm use 20 &&` got past the same failure 3 of 3 times" in text


def test_a_path_in_front_of_the_same_program_is_a_substitute_not_a_wrapper() -> None:
    shape = sh.shape_of("python -m pytest tests/a.py", ".venv/bin/python -m pytest tests/a.py")
    assert shape is not None and shape.kind == sh.SUBSTITUTE and shape.words == ".venv/bin/python"
    assert sh.shape_of("npm start", "npm startx &") is None
