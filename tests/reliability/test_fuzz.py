"""Fuzzing: no agent file, model script or hook answer crashes hookgate or passes when invalid.

Hypothesis draws arbitrary text, and documents a few mistakes away from valid ones
(`generators.py`); readings of the docs that share no code with hookgate
(`agentfile_spec.py`, `script_spec.py`, `reply_spec.py`) say whether each is valid.
The loaders must agree: accept exactly the valid inputs, and refuse the others with a
`ConfigError` naming the file and a line and key path the spec blames (every unknown
key, in a script). tests/hooks/test_properties.py covers the hook config and the reply
schemas; this adds arbitrary payloads, stderr, exit codes and Python hooks' replies.
With atheris installed, the full profile also runs the harnesses of `fuzz/`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from hookgate.config.agentfile import AgentConfig, load_agent_file
from hookgate.errors import ConfigError
from hookgate.hooks import (
    EVENTS,
    FORMATS,
    BadReply,
    HookEngine,
    HookReply,
    ProcessResult,
    callable_hook,
)
from hookgate.hooks.errors import ConfigErrors
from hookgate.models.scripted import ScriptedReply, load_script
from reliability import agentfile_spec, reply_spec, script_spec
from reliability.agentfile_spec import Rendered, plain, render
from reliability.generators import agent_files, mutated, scripts, words
from reliability.profile import FULL, scale
from runtime.project import Project

#: Each property runs its examples within this many seconds, in either profile.
TEST_TIMEOUT_S = scale(120, 1200)
pytestmark = [pytest.mark.reliability("fuzzing"), pytest.mark.timeout(TEST_TIMEOUT_S)]

fuzz = settings(
    max_examples=scale(200, 5000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
#: Seconds each atheris harness runs in the full profile, and the inputs it may try.
ATHERIS_SECONDS = 60
ATHERIS_RUNS = 200_000

#: Lines people write in YAML, and the characters and tags that trip parsers up.
yaml_lines = st.sampled_from(
    ["model: x", "model:", "  name: m", "  nmae: m", "system: hi", "tools: [shell]", "yolo: yes",
     "hooks:", "  preToolCall:", "    - command: x", "      onError: fial", "agents:",
     "  a: {file: x.yaml, timeout: 5m}", "  b: [1]", "mcp_servers:", "  s: {command: uvx}",
     "  t: {url: ftp://x}", "max_steps: " + "9" * 400, "shell_timeout: 1e400", "- ", "? [a]",
     ": b", "&a [*a]", "*a", "!!int", "!!binary x", "!!omap [a: 1]", "{", "}", "[", "]", "'",
     '"', "\t", "\x00", "\ufeff", "%YAML 1.1", "---", "..."]
) | words  # fmt: skip
yaml_texts = st.text() | st.lists(yaml_lines, max_size=8).map("\n".join)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the directories the generators name (`sub`, `tools`)."""
    directory = tmp_path_factory.mktemp("fuzz").resolve()
    (directory / "sub").mkdir()
    (directory / "tools").mkdir()
    return directory


def read_back(text: str) -> Any:
    """The document YAML reads from `text`, as plain values (`None` if it is not YAML)."""
    try:
        return plain(YAML(typ="rt", pure=True).load(text))
    except Exception:
        return None


def attempt(load: Callable[[Path], T], path: Path) -> T | ConfigError:
    """What `load(path)` returns, or the `ConfigError` it raises (anything else escapes)."""
    try:
        return load(path)
    except ConfigError as error:
        return error


def assert_refusal_is_readable(error: ConfigError, file: Path) -> None:
    """Each mistake one line naming the file first, a hint at most after it: what a user
    is shown (all of a file's mistakes at once, `ConfigErrors`, up to a cap)."""
    errors = error.errors if isinstance(error, ConfigErrors) else [error]
    for one in errors:
        lines = str(one).splitlines()
        assert lines[0].startswith(str(file)) or lines[0].startswith("... and "), lines
        assert all(line.startswith("  hint: ") for line in lines[1:]), lines


# --- the agent file -------------------------------------------------------------------------


def load_rendered(document: dict[Any, Any], directory: Path) -> tuple[Rendered, Path]:
    rendered = render(document)
    path = directory / "hookgate.yaml"
    path.write_text(rendered.text, encoding="utf-8")
    # The rendering itself must say what the document says, or the test proves nothing.
    assert repr(read_back(rendered.text)) == repr(document), rendered.text
    return rendered, path


def blame_prefixes(
    violation: agentfile_spec.Violation, rendered: Rendered, file: Path
) -> list[str]:
    """How a message blaming `violation` may begin: file, line and key path."""
    if not violation.path:
        return [f"{file}: "]
    lines = sorted(rendered.lines.get(violation.path, set()))
    return [f"{file}:{line}: {violation.shown}: " for line in lines]


def assert_agreement(document: dict[Any, Any], directory: Path) -> None:
    """`load_agent_file` accepts `document` exactly when the spec does, and blames rightly."""
    rendered, path = load_rendered(document, directory)
    found = agentfile_spec.violations(document, directory)
    config = attempt(load_agent_file, path)
    if isinstance(config, AgentConfig):
        assert not found, f"an invalid file was accepted: {found}\n{rendered.text}"
        assert_loaded_as_written(config, document)
        return
    assert found, f"a valid file was refused: {config}\n{rendered.text}"
    assert_refusal_is_readable(config, path)
    first = str(config).splitlines()[0]
    blamed = [v for v in found if any(map(first.startswith, blame_prefixes(v, rendered, path)))]
    assert blamed, f"{first!r} blames none of {found}\n{rendered.text}"
    unknown = [v for v in blamed if v.is_unknown_key]
    if unknown and len(blamed) == len(unknown):
        assert f"unknown key {unknown[0].unknown_key!r}" in first, first


def assert_loaded_as_written(config: AgentConfig, document: dict[str, Any]) -> None:
    assert config.max_steps == document.get("max_steps", 50)
    assert config.yolo == document.get("yolo", False)
    assert list(config.tools) == document.get("tools", list(agentfile_spec.BUILTIN_TOOLS))
    assert set(config.agents) == set(document.get("agents") or {})
    assert set(config.mcp_servers) == set(document.get("mcp_servers") or {})
    for event, entries in (document.get("hooks") or {}).items():
        assert len(config.hooks.for_event(event)) == len(entries or [])


@fuzz
@given(text=yaml_texts)
@example(text="model: x\nshell_timeout: " + "9" * 400)
@example(text="model: x\nagents: {a: {file: x, timeout: " + "9" * 400 + "}}")
@example(text='model: x\nmcp_servers: {a: {command: x, cwd: "x\\0y"}}')
@example(text='model: x\nagents: {a: {file: "x\\0y"}}')
def test_any_text_as_agent_file_loads_or_is_refused_with_a_config_error(
    workdir: Path, text: str
) -> None:
    """Arbitrary YAML text: an AgentConfig the spec finds valid, or a readable ConfigError."""
    path = workdir / "hookgate.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    loaded = attempt(load_agent_file, path)
    if isinstance(loaded, ConfigError):
        assert_refusal_is_readable(loaded, path)
    else:
        assert agentfile_spec.violations(read_back(text), workdir) == []


@fuzz
@given(document=mutated(agent_files))
@example(document={"model": {"name": "m", "nmae": "x"}})
@example(document={"model": {"name": "m", "timeout": float("nan")}})
@example(document={"model": "m", 1: 2})
@example(document={"model": "m", "agents": False})
@example(document={"model": "m", "agents": {None: {"file": "a.yaml"}}})
@example(document={"model": "m", "hooks": {"preToolCall": [{"command": "x", 7: 1}]}})
def test_near_valid_agent_files_are_accepted_exactly_when_valid(
    workdir: Path, document: dict[Any, Any]
) -> None:
    """Valid agent files a few mistakes away: refused exactly when invalid, at the right key."""
    assert_agreement(document, workdir)


@fuzz
@given(document=mutated(agent_files.filter(lambda d: "mcp_servers" in d), under=["mcp_servers"]))
@example(document={"model": "m", "mcp_servers": {"s": {"command": "x", "args": ["\x00"]}}})
@example(
    document={"model": "m", "mcp_servers": {"s": {"url": "http://h/", "headers": {"A": "a\nb"}}}}
)
@example(document={"model": "m", "mcp_servers": {"s": {"command": "x", "timeout": 10**400}}})
def test_near_valid_mcp_servers_are_accepted_exactly_when_valid(
    workdir: Path, document: dict[Any, Any]
) -> None:
    """`mcp_servers:` a few mistakes from valid: refused exactly when invalid, at the right key."""
    assert_agreement(document, workdir)


@fuzz
@given(document=mutated(agent_files.filter(lambda d: "agents" in d), under=["agents"]))
@example(document={"model": "m", "agents": {"a": {"file": "x", "description": ["x"]}}})
@example(document={"model": "m", "agents": {"a": {"file": ""}}})
@example(document={"model": "m", "agents": {"a": {"file": 5}}})
def test_near_valid_agents_entries_are_accepted_exactly_when_valid(
    workdir: Path, document: dict[Any, Any]
) -> None:
    """`agents:` entries a few mistakes from valid: refused exactly when invalid, at the right key."""
    assert_agreement(document, workdir)


#: Agent files the fuzzer found crashing, or passing the loader to fail later, by line blamed.
FOUND = {
    "a misspelt model key": ("model: {name: m, nmae: x}\n", 1),
    "a model timeout of NaN": ("model: {name: m, timeout: .nan}\n", 1),
    "a timeout no float holds": ("model: m\nshell_timeout: " + "9" * 400 + "\n", 2),
    "a NUL in a path": ('model: m\nagents: {a: {file: "x\\0y"}}\n', 2),
    "a control character": ("model: m\nsystem: \x07\n", 2),
}


@pytest.mark.parametrize("case", sorted(FOUND))
def test_the_found_agent_files_stop_hookgate_before_anything_runs(
    tmp_path: Path, case: str
) -> None:
    """What the fuzzer found, through `hookgate -p`: exit 1, one line naming file and line, nothing run."""
    text, line = FOUND[case]
    project = Project(tmp_path / "project", tmp_path / "home")
    project.dir.mkdir()
    started = project.dir / "started"
    hooks = f"hooks:\n  sessionStart:\n    - command: touch {started}\n"
    project.agent_file.write_text(text + hooks, encoding="utf-8")

    run = project.hookgate("-p", "hello")

    assert (run.returncode, run.stdout) == (1, ""), run.stderr
    first, *rest = run.stderr.splitlines()
    assert first.startswith(f"hookgate: {project.agent_file}:{line}: "), run.stderr
    assert all(line.startswith("  hint: ") for line in rest), run.stderr
    assert not started.exists(), "a sessionStart hook ran"
    assert project.session_files() == [], "a session file was created"


# --- the model script -----------------------------------------------------------------------


def script_errors(error: ConfigError) -> list[str]:
    errors = error.errors if isinstance(error, ConfigErrors) else [error]
    return [str(e).splitlines()[0] for e in errors]


@fuzz
@given(text=yaml_texts)
@example(text="- text: !!int\n")
@example(text="- &a [*a]\n")
@example(text="- !!omap [a: 1]\n")
def test_any_text_as_model_script_loads_or_is_refused_with_a_config_error(
    workdir: Path, text: str
) -> None:
    """Arbitrary YAML text as a script: replies the spec finds valid, or a readable ConfigError."""
    path = workdir / "script.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    loaded = attempt(load_script, path)
    if isinstance(loaded, ConfigError):
        assert all(line.startswith(str(path)) for line in script_errors(loaded)), loaded
    else:
        assert script_spec.violations(read_back(text)) == []


@fuzz
@given(script=mutated(scripts))
@example(script=[{"text": "hi", "tool_calls": [{"name": "x", "arguments": {1: 2}}]}])
@example(script=[{"text": "hi", "tool_calls": [{"name": "x", "arguments": {"a": {None: 1}}}]}])
def test_near_valid_scripts_are_accepted_exactly_when_valid(
    workdir: Path, script: list[Any]
) -> None:
    """Scripts a few mistakes from valid: every error is one the spec finds, every unknown key named."""
    rendered = render(script)
    path = workdir / "script.yaml"
    path.write_text(rendered.text, encoding="utf-8")
    assert repr(read_back(rendered.text)) == repr(script), rendered.text
    found = script_spec.violations(script)
    replies = attempt(load_script, path)
    if isinstance(replies, ConfigError):
        assert found, f"a valid script was refused: {replies}\n{rendered.text}"
        assert_errors_blame(script_errors(replies), found, rendered, path)
        return
    assert not found, f"an invalid script was accepted: {found}\n{rendered.text}"
    assert [reply.text for reply in replies] == [reply.get("text", "") for reply in script]
    written = [
        [(call["name"], call.get("arguments", {})) for call in reply.get("tool_calls", [])]
        for reply in script
    ]
    assert repr([_calls(reply) for reply in replies]) == repr(written)  # repr: NaN == NaN


def _calls(reply: ScriptedReply) -> list[tuple[str, Any]]:
    return [(call.name, call.arguments) for call in reply.tool_calls]


def assert_errors_blame(
    reported: list[str], found: list[script_spec.ScriptViolation], rendered: Rendered, path: Path
) -> None:
    """Each error is a violation the spec finds, at its line; each unknown key is reported."""
    prefixes = {
        v: [f"{path}:{line}: {v.where}: " for line in sorted(rendered.lines.get(v.path, {1}))]
        for v in found
    }
    every = [prefix for some in prefixes.values() for prefix in some]
    for line in reported:
        assert any(map(line.startswith, every)), (line, found)
    for violation, some in prefixes.items():
        if violation.unknown_key:
            assert any(line.startswith(p) for line in reported for p in some), violation


# --- hook answers ---------------------------------------------------------------------------

text = st.text(max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
results = st.fixed_dictionaries({"content": text, "is_error": st.booleans()})
#: Payloads as the runtime builds them, each field varied; `odd` ones are not the runtime's.
payload_fields = {
    "prompt": text,
    "question": text,
    "answer": text | st.none(),
    "arguments": st.dictionaries(text, json_values, max_size=3),
    "result": results,
    "conversation": st.lists(st.fixed_dictionaries({"role": text, "content": text}), max_size=2),
    "tool": st.sampled_from(["shell", "read_file", "mcp__s__t"]),
    "call_id": text,
    "agent": st.sampled_from(["reviewer"]),
    "outcome": st.sampled_from(["answered", "blocked"]),
    "continued": st.booleans(),
    "source": st.sampled_from(["startup", "resume"]),
    "error": st.none() | text,
    "team": st.sampled_from(["release"]),
    "task": st.fixed_dictionaries({"id": text, "subject": text, "description": text}),
    "trigger": st.sampled_from(["auto", "manual"]),
    "custom_instructions": text,
    "message": text,
    "notification_type": st.sampled_from(["permission_prompt", "idle_prompt"]),
}
native_fields = {
    "action": st.sampled_from(list(reply_spec.ACTIONS)) | json_values,
    "reason": text | st.none() | json_values,
    "message": text | st.none() | json_values,
    "context": text | st.none() | json_values,
    "prompt": text | json_values,
    "question": text | json_values,
    "answer": text | json_values,
    "arguments": st.dictionaries(text, json_values, max_size=2) | json_values,
    "result": text
    | st.fixed_dictionaries({"content": text}, optional={"is_error": st.booleans() | json_values})
    | json_values,
    "conversation": st.lists(st.fixed_dictionaries({"role": text, "content": text}), max_size=2)
    | json_values,
    "tool": text,
    "mutated": json_values,
}
replies = st.fixed_dictionaries({}, optional=native_fields)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "mutated": st.fixed_dictionaries({"prompt": text})
        | results
        | st.fixed_dictionaries({"content": text})
        | st.dictionaries(text, json_values, max_size=2)
        | json_values,
        "message": text | json_values,
    },
)


def wrapped(document: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """JSON as a hook may print it: padded, with a BOM or trailing bytes, or cut short."""
    return st.tuples(
        document.map(lambda value: json.dumps(value, ensure_ascii=False).encode()),
        st.sampled_from([b"", b" ", b"\n", b"\xef\xbb\xbf", b"\t\r\n"]),
        st.sampled_from([b"", b"\n", b"\n\n", b" trailing", b"\x00", b"\xff"]),
        st.booleans(),
    ).map(lambda p: p[1] + (p[0][: len(p[0]) // 2] if p[3] else p[0]) + p[2])


stdouts = st.binary(max_size=200) | wrapped(replies) | wrapped(envelopes) | wrapped(json_values)
exit_codes = st.sampled_from([0, 0, 0, 2, 2, 1, 3, 126, 127, 255, -9, -15]) | st.integers()


def payload_for(event: str, data: st.DataObject) -> dict[str, Any]:
    fields = {name: data.draw(payload_fields[name]) for name in EVENTS[event].payload}
    return {"event": event, "session_id": "s", "cwd": "/", **fields}


def as_decision(reply: HookReply) -> reply_spec.Decision:
    return reply_spec.Decision(
        reply.block, reply.reason, dict(reply.changes), reply.context, reply.message
    )


@fuzz
@given(
    fmt=st.sampled_from(["native", "mecatl"]),
    event=st.sampled_from(sorted(EVENTS)),
    stdout=stdouts,
    stderr=st.binary(max_size=40),
    code=exit_codes,
    truncated=st.booleans(),
    data=st.data(),
)
def test_a_hook_answer_means_what_the_docs_say_whatever_its_payload(
    fmt: str,
    event: str,
    stdout: bytes,
    stderr: bytes,
    code: int,
    truncated: bool,
    data: st.DataObject,
) -> None:
    """Any stdout, stderr and exit status, on any payload: the documented decision, or a failure."""
    spec = EVENTS[event]
    if not FORMATS[fmt].supports(spec):
        return
    payload = payload_for(event, data)
    result = ProcessResult(code, stdout, stderr, truncated, False, False, 0.0)
    expected = (reply_spec.expected_native if fmt == "native" else reply_spec.expected_mecatl)(
        event, payload, stdout, stderr, code
    )
    try:
        reply: HookReply | BadReply = FORMATS[fmt].decode(spec, payload, result)
    except BadReply as error:
        reply = error
    if isinstance(reply, BadReply):
        assert expected == reply_spec.FAILED, f"refused: {reply}; expected {expected}"
        assert str(reply), "a failure says why"
        return
    decision = as_decision(reply)
    assert expected != reply_spec.FAILED, f"accepted as {decision}"
    assert isinstance(expected, reply_spec.Decision)
    if code == 2 and expected.block and expected.reason is None:
        assert decision.reason, "an exit 2 that blocks always gives a reason"
        decision = reply_spec.Decision(**{**decision.__dict__, "reason": None})
    assert decision == expected


class Raise(Exception):
    """What a Python hook raises when the fuzzer says so."""


hook_replies = (
    st.none()
    | replies
    | json_values
    | st.builds(
        HookReply,
        block=st.booleans(),
        reason=text | st.none() | st.integers(),
        changes=st.dictionaries(st.sampled_from(sorted(native_fields)), json_values, max_size=2),
        context=text | st.none(),
        message=text | st.none() | st.integers(),
        permission=st.none() | st.sampled_from(["allow", "ask"]),
        stop=st.none() | text,
        go_on=st.none() | text,
    )
    | st.just(Raise())
)


def reply_valid(event: str, answer: Any) -> bool:
    """A Python hook's answer passes the same validation as a process's (docs: Python hooks)."""
    if answer is None:
        return True
    if isinstance(answer, HookReply):
        if answer.permission or answer.stop is not None or answer.go_on:
            return False  # no native reply field says them yet (docs: Python hooks)
        fields = {"reason": answer.reason, "context": answer.context, "message": answer.message}
        if set(answer.changes) & {"action", *fields}:
            return False
        native = {**answer.changes, "action": "block" if answer.block else "allow"}
        native.update({key: value for key, value in fields.items() if value is not None})
        return reply_spec.native_reply_valid(event, native)
    return isinstance(answer, dict) and reply_spec.native_reply_valid(event, answer)


@fuzz
@given(
    event=st.sampled_from(sorted(EVENTS)),
    answer=hook_replies,
    on_error=st.sampled_from(["warn", "fail", "ignore"]),
    data=st.data(),
)
def test_a_python_hooks_answer_is_applied_only_when_valid(
    event: str, answer: Any, on_error: str, data: st.DataObject
) -> None:
    """Whatever a Python hook returns or raises: applied if valid, else its onError, never a crash."""
    payload = {k: v for k, v in payload_for(event, data).items() if k in EVENTS[event].payload}

    def hook(_: Any) -> Any:
        if isinstance(answer, Raise):
            raise answer
        return answer

    engine = HookEngine(
        None, session_id="s", extra=[callable_hook(event, hook, on_error=on_error, name="fuzz")]
    )
    outcome = asyncio.run(engine.run(event, payload))
    can_block = event in reply_spec.CAN_BLOCK
    assert set(outcome.changed) <= set(reply_spec.MUTABLE.get(event, ()))
    if not isinstance(answer, Raise) and reply_valid(event, answer):
        assert outcome.errors == ()
        blocks = bool(answer.get("action") in ("block", "deny", "stop") if isinstance(answer, dict)
                      else isinstance(answer, HookReply) and answer.block)  # fmt: skip
        assert outcome.blocked == (blocks and can_block)
        return
    assert outcome.payload == payload, "an invalid answer changed the payload"
    assert outcome.changed == ()
    assert len(outcome.errors) == (0 if on_error == "ignore" else 1)
    assert outcome.blocked == (on_error == "fail" and can_block)


# --- atheris --------------------------------------------------------------------------------


def harnesses() -> Iterator[Path]:
    return iter(sorted((ROOT / "fuzz").glob("fuzz_*.py")))


@pytest.mark.skipif(not FULL, reason="the full profile runs the atheris harnesses")
@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris is not installed")
@pytest.mark.timeout(ATHERIS_SECONDS * 3)
@pytest.mark.parametrize("harness", list(harnesses()), ids=lambda path: path.stem)
def test_atheris_harness_finds_no_crash(harness: Path, tmp_path: Path) -> None:
    """Coverage-guided fuzzing for a bounded time: no input crashes a loader or a reply reader."""
    words = harness.with_name(harness.stem.removeprefix("fuzz_") + ".dict")
    run = subprocess.run(
        [sys.executable, str(harness), f"-runs={ATHERIS_RUNS}", f"-dict={words}",
         f"-max_total_time={ATHERIS_SECONDS}", f"-artifact_prefix={tmp_path}/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=ATHERIS_SECONDS * 2, check=False,
    )  # fmt: skip
    crashes = sorted(path.name for path in tmp_path.glob("crash-*"))
    assert crashes == [], run.stderr[-4000:]
    assert run.returncode == 0, run.stderr[-4000:]
