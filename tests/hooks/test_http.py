"""http hooks against a real loopback server: what is POSTed, how answers and failures read.

Every test that takes `run_hooks` holds for `run` (the async client) and `run_sync`
(the blocking one).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import ConfigError, HookEngine, Outcome, load_hooks_file
from hookgate.hooks.process import OUTPUT_CAP
from support.hook_server import Answer, HookServer, refused_url

MakeEngine = Callable[..., HookEngine]
RunHooks = Callable[..., Outcome]

SHELL_CALL = {"tool": "shell", "arguments": {"command": "ls"}}
HOOKGATE = [sys.executable, "-m", "hookgate.cli"]
#: Far below any test's own timeout, far above what the loopback server needs.
STALL_TIMEOUT = "300ms"


@pytest.fixture
def server() -> Iterator[HookServer]:
    with HookServer() as running:
        yield running


def http_hook(url: str, **settings: Any) -> dict[str, Any]:
    http = {"url": url, **settings.pop("http", {})}
    return {"name": "policy", "http": http, **settings}


# --- what is sent ----------------------------------------------------------------------------


def test_the_event_is_posted_as_the_bytes_a_process_hook_reads(
    tmp_path: Path, server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    stdin = tmp_path / "stdin"
    engine = make_engine({"preToolCall": [{"command": f"cat > {stdin}"}, http_hook(server.url)]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    (posted,) = server.requests
    assert posted.body == stdin.read_bytes()
    assert posted.json()["arguments"] == {"command": "ls"}
    assert posted.headers["content-type"] == "application/json"


def test_one_engine_reuses_its_connection(server: HookServer, make_engine: MakeEngine) -> None:
    engine = make_engine({"preToolCall": [http_hook(server.url)]})

    async def twice() -> None:
        await engine.run("preToolCall", SHELL_CALL)
        await engine.run("preToolCall", SHELL_CALL)
        await engine.aclose()

    asyncio.run(twice())
    engine.run_sync("preToolCall", SHELL_CALL)
    engine.run_sync("preToolCall", SHELL_CALL)
    engine.close()
    first, second, third, fourth = (posted.client_port for posted in server.requests)
    assert first == second
    assert third == fourth


def test_the_mecatl_format_travels_over_http_too(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer.reply({"mutated": {"command": "ls -l"}}))
    engine = make_engine({"preToolCall": [http_hook(server.url, format="mecatl")]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert server.requests[0].json()["Phase"] == "PreToolUse"
    assert outcome.payload["arguments"] == {"command": "ls -l"}


# --- what a 2xx answer means ---------------------------------------------------------------------


def test_a_2xx_body_is_the_hooks_reply(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer.reply({"action": "deny", "reason": "not from this service"}))
    engine = make_engine({"preToolCall": [http_hook(server.url, onError="fail")]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert outcome.reason == "not from this service"
    assert outcome.blocked_by == "policy"


def test_an_empty_2xx_allows(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer(204))
    engine = make_engine({"preToolCall": [http_hook(server.url, onError="fail")]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.allowed
    assert outcome.errors == ()


def test_a_body_past_the_output_cap_is_a_failure(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer(200, b'{"action": "allow", "reason": "' + b"x" * OUTPUT_CAP + b'"}'))
    engine = make_engine({"preToolCall": [http_hook(server.url, onError="fail")]})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert "output cap" in (outcome.reason or "")


# --- failures: onError decides ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer(500, b"policy database down"), "HTTP 500: policy database down"),
        (Answer(302), "HTTP 302"),
        (Answer(401, b"x" * 100_000), "HTTP 401: xxx"),
    ],
)
def test_a_status_other_than_2xx_fails_the_hook(
    server: HookServer,
    make_engine: MakeEngine,
    run_hooks: RunHooks,
    answer: Answer,
    expected: str,
) -> None:
    server.queue(answer, answer)
    engine = make_engine(
        {
            "preToolCall": [http_hook(server.url, onError="warn")],
            "preGeneration": [http_hook(server.url, onError="fail")],
        }
    )
    warned = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert warned.allowed
    (notice,) = warned.notices
    assert expected in notice
    assert len(notice) < 1000  # a huge error body is quoted, not copied

    failed = run_hooks(engine, "preGeneration", {"prompt": "hi"})
    assert failed.blocked
    assert expected in (failed.reason or "")


def test_a_refused_connection_fails_the_hook(make_engine: MakeEngine, run_hooks: RunHooks) -> None:
    url = refused_url()
    engine = make_engine(
        {
            "preToolCall": [http_hook(url, onError="warn")],
            "preGeneration": [http_hook(url, onError="fail")],
        }
    )
    warned = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert warned.allowed
    assert any(url in notice for notice in warned.notices)
    failed = run_hooks(engine, "preGeneration", {"prompt": "hi"})
    assert failed.blocked
    assert f"hook 'policy' failed: POST {url}" in (failed.reason or "")


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Answer(reset=True), "the server reset the connection"),
        (Answer(hang_up=True), "the server closed the connection without answering"),
    ],
    ids=["reset", "hang-up"],
)
def test_a_connection_lost_before_the_answer_says_so(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks, answer: Answer, said: str
) -> None:
    """A server that drops the connection after the request: the reason says what
    happened, in words, where it was an empty message after the URL."""
    server.queue(answer)
    engine = make_engine({"preGeneration": [http_hook(server.url, onError="fail")]})
    failed = run_hooks(engine, "preGeneration", {"prompt": "hi"})
    assert failed.blocked
    assert failed.reason == f"hook 'policy' failed: POST {server.url}: {said}"


def test_a_refused_connection_says_nothing_listens(
    make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    url = refused_url()
    engine = make_engine({"preGeneration": [http_hook(url, onError="fail")]})
    failed = run_hooks(engine, "preGeneration", {"prompt": "hi"})
    assert (
        failed.reason
        == f"hook 'policy' failed: POST {url}: connection refused: nothing listens there"
    )


def test_a_server_that_never_answers_is_cut_at_the_timeout(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer(stall=True), Answer(stall=True))
    engine = make_engine(
        {
            "preToolCall": [http_hook(server.url, onError="warn", timeout=STALL_TIMEOUT)],
            "preGeneration": [http_hook(server.url, onError="fail", timeout=STALL_TIMEOUT)],
        }
    )
    warned = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert warned.allowed
    assert warned.notices == ("hook 'policy' (preToolCall) failed: timed out after 0.3s",)
    failed = run_hooks(engine, "preGeneration", {"prompt": "hi"})
    assert failed.blocked
    assert failed.reason == "hook 'policy' failed: timed out after 0.3s"


@pytest.mark.timeout(20)  # without the bound, the sync path waited as long as the server trickled
def test_a_server_that_trickles_its_headers_is_cut_at_the_timeout(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    server.queue(Answer(trickle=True))
    engine = make_engine(
        {"preToolCall": [http_hook(server.url, onError="fail", timeout=STALL_TIMEOUT)]}
    )
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.reason == "hook 'policy' failed: timed out after 0.3s"
    engine.close()


# --- headers and the environment ---------------------------------------------------------------


def test_headers_send_only_allowlisted_variables(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    hook = http_hook(
        server.url,
        http={
            "headers": {"Authorization": "Bearer ${POLICY_TOKEN}", "X-Team": "$TEAM-a $$"},
            "env_allowlist": ["POLICY_TOKEN", "TEAM"],
        },
    )
    environ = {"POLICY_TOKEN": "t0k3n", "TEAM": "infra", "AWS_SECRET_ACCESS_KEY": "never"}
    engine = make_engine({"preToolCall": [hook]}, environ=environ)
    run_hooks(engine, "preToolCall", SHELL_CALL)
    (posted,) = server.requests
    assert posted.headers["authorization"] == "Bearer t0k3n"
    assert posted.headers["x-team"] == "infra-a $$"
    assert "never" not in json.dumps(dict(posted.headers)) + posted.body.decode()


def test_an_allowlisted_variable_that_is_unset_fails_the_hook(
    server: HookServer, make_engine: MakeEngine, run_hooks: RunHooks
) -> None:
    hook = http_hook(
        server.url,
        onError="fail",
        http={
            "headers": {"Authorization": "Bearer $POLICY_TOKEN"},
            "env_allowlist": ["POLICY_TOKEN"],
        },
    )
    engine = make_engine({"preToolCall": [hook]}, environ={})
    outcome = run_hooks(engine, "preToolCall", SHELL_CALL)
    assert outcome.blocked
    assert "POLICY_TOKEN is not set" in (outcome.reason or "")
    assert server.requests == []


def test_the_engine_closes_its_clients(server: HookServer, make_engine: MakeEngine) -> None:
    engine = make_engine({"preToolCall": [http_hook(server.url)]})

    async def run_then_close() -> Outcome:
        outcome = await engine.run("preToolCall", SHELL_CALL)
        await engine.aclose()
        return outcome

    assert asyncio.run(run_then_close()).allowed
    assert engine.run_sync("preToolCall", SHELL_CALL).allowed
    engine.close()
    assert len(server.requests) == 2


# --- the config -----------------------------------------------------------------------------------


def config_error(tmp_path: Path, hook: str) -> str:
    path = tmp_path / "hookgate.yaml"
    path.write_text("hooks:\n  preToolCall:\n" + textwrap.indent(textwrap.dedent(hook), "    "))
    with pytest.raises(ConfigError) as caught:
        load_hooks_file(path)
    return str(caught.value)


def test_a_valid_http_hook(tmp_path: Path) -> None:
    path = tmp_path / "hookgate.yaml"
    path.write_text(
        "hooks:\n  preToolCall:\n"
        "    - http:\n"
        "        url: https://policy.example/hook\n"
        "        headers: {Authorization: 'Bearer ${TOKEN}'}\n"
        "        env_allowlist: [TOKEN]\n"
    )
    (hook,) = load_hooks_file(path).for_event("preToolCall")
    assert hook.http is not None
    assert hook.http.url == "https://policy.example/hook"
    assert hook.http.sent_variables() == ("TOKEN",)
    assert hook.name == "https://policy.example/hook"
    assert hook.argv() == ()


@pytest.mark.parametrize(
    ("hook", "expected"),
    [
        (
            """\
            - http:
                url: http://127.0.0.1:9/hook
                headers: {Authorization: 'Bearer $AWS_SECRET_ACCESS_KEY'}
            """,
            "hookgate.yaml:5: hooks.preToolCall[0].http.headers.Authorization: header "
            "'Authorization' sends $AWS_SECRET_ACCESS_KEY, which env_allowlist does not list\n"
            "  hint: add AWS_SECRET_ACCESS_KEY to http.env_allowlist",
        ),
        (
            """\
            - http:
                url: http://127.0.0.1:9/hook
                headers: {X-Key: '${HOME}'}
                env_allowlist: [TOKEN]
            """,
            "header 'X-Key' sends $HOME, which env_allowlist does not list",
        ),
        ("- http: {headers: {}}\n", "hookgate.yaml:3: hooks.preToolCall[0].http: an http hook needs a url"),
        ("- http: {url: 'file:///etc/passwd'}\n", "expected an http:// or https:// URL with a host"),
        ("- http: {url: 'http://'}\n", "expected an http:// or https:// URL with a host"),
        ("- http: {url: 42}\n", "http.url: expected a non-empty string, got a number 42"),
        ("- http: {url: 'http://a', header: {}}\n", "unknown key 'header'\n  hint: did you mean 'headers'?"),
        ("- http: 'http://a'\n", "expected a mapping with url, headers, env_allowlist"),
        ("- http: {url: 'http://a', env_allowlist: ['A B']}\n", "env_allowlist[0]: invalid variable name 'A B'"),
        ("- http: {url: 'http://a', env_allowlist: TOKEN}\n", "expected a list of variable names"),
        ("- http: {url: 'http://a', headers: {'a b': x}}\n", "invalid header name 'a b'"),
        ("- http: {url: 'http://a', headers: {X: \"a\\nb\"}}\n", "expected a one-line string"),
        ("- http: {url: 'http://a'}\n  command: ls\n", "exactly one of command, args, python, http or model; found command and http"),
        ("- http: {url: 'http://a'}\n  cwd: .\n", "'cwd' applies to a process the hook starts; an http hook starts none"),
        ("- http: {url: 'http://a'}\n  env: {A: b}\n", "'env' applies to a process the hook starts"),
    ],
)  # fmt: skip
def test_http_config_errors(tmp_path: Path, hook: str, expected: str) -> None:
    assert expected in config_error(tmp_path, hook)


# --- the hook author's CLI --------------------------------------------------------------------


def test_fire_posts_to_the_service_and_check_shows_what_headers_send(
    tmp_path: Path, server: HookServer
) -> None:
    server.queue(Answer.reply({"action": "deny", "reason": "the service says no"}))
    (tmp_path / "hookgate.yaml").write_text(
        json.dumps(
            {
                "hooks": {
                    "preToolCall": [
                        http_hook(
                            server.url,
                            http={
                                "headers": {"Authorization": "Bearer $POLICY_TOKEN"},
                                "env_allowlist": ["POLICY_TOKEN"],
                            },
                        ),
                        http_hook(
                            "http://policy.example/hook",
                            http={
                                "headers": {"X-Key": "${UNSET_TOKEN_FOR_TEST}"},
                                "env_allowlist": ["UNSET_TOKEN_FOR_TEST"],
                            },
                        ),
                    ]
                }
            }
        )
    )
    env = {**os.environ, "NO_COLOR": "1", "POLICY_TOKEN": "t0k3n"}
    env.pop("UNSET_TOKEN_FOR_TEST", None)
    fired = subprocess.run(
        [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"],
        cwd=tmp_path, input='{"command": "rm -rf /"}', capture_output=True, text=True, env=env,
        timeout=60, check=False,
    )  # fmt: skip
    assert fired.returncode == 2, fired.stderr
    assert json.loads(fired.stdout)["reason"] == "the service says no"
    assert server.requests[0].headers["authorization"] == "Bearer t0k3n"

    checked = subprocess.run(
        [*HOOKGATE, "hooks", "check"], cwd=tmp_path, capture_output=True, text=True, env=env,
        timeout=60, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert f"'policy': POST {server.url} (headers send $POLICY_TOKEN)" in checked.stdout
    assert "http://policy.example/hook: plain http sends every event" in checked.stderr
    assert "UNSET_TOKEN_FOR_TEST is not set here" in checked.stderr
    assert "POLICY_TOKEN is not set" not in checked.stderr
