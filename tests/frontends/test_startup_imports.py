"""Each entry point imports only what its path uses: start-up is paid on every command.

The real `hookgate` console script runs under `python -X importtime`, which names every
module the process imported; the test fails when a path pulls in a heavy dependency it
does not use (asyncio on a synchronous path, prompt_toolkit without a prompt, the ACP
SDK outside `hookgate acp`, the openai SDK without a real model).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runtime.project import HOOKGATE, RUN_TIMEOUT, Project

#: Never imported by a command that does not run a session with a real model or editor.
SESSION_ONLY = ("prompt_toolkit", "acp", "openai", "httpx2", "mcp", "importlib.metadata")
#: Also absent from the synchronous commands: no event loop runs there.
EVENT_LOOP = ("asyncio", "concurrent.futures", "ssl")
#: The modules of hook kinds and agent-file parts a file of one command hook does not
#: have: http, model, persistent and Claude settings hooks, guardrails, MCP servers, and
#: the tools, messages and model clients a session builds.
UNUSED_PARTS = (
    "hookgate.hooks.kinds.http.run", "hookgate.hooks.kinds.http.target", "hookgate.hooks.kinds.model.target",
    "hookgate.hooks.kinds.model.run", "hookgate.hooks.kinds.model.scripted", "hookgate.hooks.guardrails",
    "hookgate.hooks.kinds.persistent.run", "hookgate.hooks.kinds.persistent.resident",
    "hookgate.hooks.kinds.persistent.lines",
    "hookgate.hooks.claude.settings", "hookgate.hooks.kinds.python", "hookgate.hooks.runs.pins",
    "hookgate.mcp", "hookgate.tools.base", "hookgate.messages", "hookgate.models",
)  # fmt: skip
#: Telemetry off (no `telemetry:` key, no `OTEL_EXPORTER_OTLP_*`): nothing of it loads.
TELEMETRY = (
    "opentelemetry",
    "google.protobuf",
    "hookgate.telemetry.otlp",
    "hookgate.hooks.observe",
)
#: What a file of native hooks read by `hooks fire` does not use: the other reply
#: formats (Claude Code's tool tables), a session's workspace boundaries,
#: and argparse's message catalogue (`locale`).
NATIVE_UNUSED = (
    "hookgate.hooks.formats.claude", "hookgate.hooks.formats.claude_tools",
    "hookgate.hooks.formats.mecatl", "hookgate.tools.sandbox.boundaries", "locale",
)  # fmt: skip
#: argparse (with gettext): the usual `hooks fire` line is read without it.
ARGPARSE = ("argparse", "gettext", "hookgate.commandline")
#: The YAML parser: a file parsed before comes from the parse cache.
PARSER = ("ruamel", "ruamel.yaml")
#: OpenSSL's hashes (`hashlib`, `secrets`): a few sha256 digests do not need it.
OPENSSL_HASHES = ("_hashlib",)
#: A hook started in our directory by path, and its guardian, start through posix_spawn.
SUBPROCESS = ("subprocess",)
#: Slow to import and to use at import: `dataclasses` (with `inspect`, `ast` and `dis`)
#: compiles each class's methods with `exec`; `shutil` (argparse sizes its help with it)
#: imports bz2 and lzma. The engine's and the runtime's records are NamedTuples; the CLI
#: sizes help itself.
SLOW_STDLIB = ("dataclasses", "inspect", "shutil")
#: `typing` (10 M instructions, 6 % of a `hooks fire`): hookgate's modules import
#: its names under `if TYPE_CHECKING:` (`TYPE_CHECKING = False` first), for the checker
#: alone. asyncio and the YAML parser import it themselves: a session and a first parse
#: pay for it.
TYPING = ("typing",)
#: What asyncio itself imports of those (`asyncio.coroutines` imports `inspect`): a
#: session's event loop pays for it whatever hookgate's own modules do.
ASYNCIO_IMPORTS = ("inspect",)


def imported(project: Project, argv: list[str], stdin: str = "", expect_rc: int = 0) -> set[str]:
    """The top-level and dotted names of every module `argv` imported, run for real."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], input=stdin, capture_output=True,
        text=True, env=project.env(), timeout=RUN_TIMEOUT, cwd=project.dir,
    )  # fmt: skip
    assert done.returncode == expect_rc, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def assert_none_of(modules: set[str], forbidden: tuple[str, ...]) -> None:
    found = sorted(name for name in forbidden if name in modules)
    assert not found, f"imported though unused: {found}"


@pytest.fixture
def answered(project: Project) -> Project:
    """A trusted agent file whose turn waits on nothing: the scripted model answers
    without a tool, and its one hook (`preToolCall`) has no call to screen."""
    project.write_agent(
        project.script({"text": "hello"}), hooks={"preToolCall": [{"command": "true"}]}
    )
    project.trust()
    return project


@pytest.fixture
def hooked(project: Project) -> Project:
    """A trusted agent file with a scripted model and one command hook."""
    project.write_agent(
        project.script({"text": "hello"}),
        hooks={"preToolCall": [{"command": "true"}], "preGeneration": [{"command": "true"}]},
    )
    project.trust()
    return project


@pytest.mark.parametrize(
    "args",
    [
        ["hooks", "fire", "preToolCall", "--tool", "shell"],
        ["hooks", "check"],
        ["hooks", "schema", "preToolCall"],
    ],
    ids=["fire", "check", "schema"],
)
def test_hooks_commands_import_no_event_loop_and_no_session(
    hooked: Project, args: list[str]
) -> None:
    modules = imported(hooked, [str(HOOKGATE), *args], stdin="{}")
    assert "hookgate.hooks.runner" in modules or args[1] != "fire"
    assert_none_of(modules, EVENT_LOOP + SESSION_ONLY)


def test_hooks_fire_imports_only_the_parts_its_file_uses(hooked: Project) -> None:
    fire = [str(HOOKGATE), "hooks", "fire", "preToolCall", "--tool", "shell"]
    first = imported(hooked, fire, stdin="{}")
    assert "ruamel.yaml" in first  # never parsed before: the parser reads it, once
    assert_none_of(first, (*UNUSED_PARTS, "hookgate.hooks.author.lint"))
    again = imported(hooked, fire, stdin="{}")
    assert_none_of(
        again, PARSER + UNUSED_PARTS + OPENSSL_HASHES + SUBPROCESS + SLOW_STDLIB + TYPING
    )
    assert_none_of(again, NATIVE_UNUSED + ARGPARSE)


def test_print_mode_with_a_scripted_model_imports_no_prompt_editor_sdk_or_acp(
    hooked: Project,
) -> None:
    modules = imported(hooked, [str(HOOKGATE), "-p", "hi"])
    assert "hookgate.models.scripted" in modules
    assert_none_of(modules, SESSION_ONLY + TELEMETRY)
    again = imported(hooked, [str(HOOKGATE), "-p", "hi"])  # the agent file and script cached
    unused = (
        "hookgate.handoff", "hookgate.team", "hookgate.mcp", "hookgate.hooks.kinds.http.run",
        "hookgate.hooks.kinds.http.target", "hookgate.hooks.kinds.python", "hookgate.hooks.kinds.persistent.run",
        "hookgate.hooks.claude.settings", *OPENSSL_HASHES,
        "concurrent.futures.thread",  # the hooks' checks at start run on the loop, no thread
        "uuid",  # it imports `platform`; a transcript line's id needs neither
        "hookgate.tools.webfetch",  # offered only where `tools:` lists it
        "datetime", "glob",  # a session's timestamps are `time`'s; a rule's glob is ours
    )  # fmt: skip
    slow = tuple(name for name in SLOW_STDLIB if name not in ASYNCIO_IMPORTS)
    assert_none_of(again, PARSER + SESSION_ONLY + unused + slow)


def test_print_mode_answered_without_waiting_imports_no_event_loop(answered: Project) -> None:
    """asyncio (with ssl, concurrent.futures and logging) costs more than Python's own
    start: a turn that waits on nothing never imports it (`hookgate.hooks.loop`)."""
    imported(answered, [str(HOOKGATE), "-p", "hi"])  # the agent file and script cached
    modules = imported(answered, [str(HOOKGATE), "-p", "hi"])
    assert "hookgate.runtime.turn" in modules
    assert_none_of(modules, EVENT_LOOP)


def test_print_mode_moves_onto_an_event_loop_for_a_hook(project: Project) -> None:
    """The same turn with a preGeneration hook: the hook runs on a loop, and its
    context reaches the model (the scripted model expects it)."""
    hook = project.hook("context.sh", 'echo \'{"context": "the hook ran"}\'')
    project.write_agent(
        project.script({"expect": "the hook ran", "text": "hello"}),
        hooks={"preGeneration": [{"command": hook}]},
    )
    project.trust()
    modules = imported(project, [str(HOOKGATE), "-p", "hi"])
    assert {"asyncio", "hookgate.hooks.process.aio"} <= modules


def test_a_command_that_starts_no_process_imports_no_ctypes(project: Project) -> None:
    """The `hookgate` command becomes the subreaper of its hooks' orphans (through
    `_ctypes`) when it starts its first process: `-p` answered without a hook or a
    tool running starts none; `hooks fire` runs its hook."""
    project.write_agent(
        project.script({"text": "hello"}), hooks={"preToolCall": [{"command": "true"}]}
    )
    project.trust()
    assert "_ctypes" not in imported(project, [str(HOOKGATE), "-p", "hi"])
    fire = [str(HOOKGATE), "hooks", "fire", "preToolCall", "--tool", "shell"]
    modules = imported(project, fire, stdin="{}")
    assert "_ctypes" in modules
    assert "ctypes" not in modules  # its C part alone: two libc calls need no more


def test_acp_imports_no_prompt_editor(hooked: Project) -> None:
    modules = imported(hooked, [str(HOOKGATE), "acp"])  # stdin at end of file: it ends
    assert "acp" in modules
    unused = ("hookgate.handoff", "hookgate.team.rounds", "hookgate.mcp")
    assert_none_of(modules, ("prompt_toolkit", "openai", *unused))


def test_run_sync_embedder_imports_no_event_loop(hooked: Project, tmp_path: Path) -> None:
    embedder = tmp_path / "embed.py"
    embedder.write_text(
        textwrap.dedent("""
        from pathlib import Path
        from hookgate.hooks import HookEngine, load_hooks_file

        engine = HookEngine(load_hooks_file(Path("hookgate.yaml")), session_id="s")
        outcome = engine.run_sync("preToolCall", {"tool": "shell", "arguments": {}})
        engine.close()
        assert outcome.hooks_run == 1 and not outcome.blocked, outcome
    """)
    )
    modules = imported(hooked, [str(embedder)])
    assert_none_of(modules, EVENT_LOOP + SESSION_ONLY + SLOW_STDLIB)


#: Modules of the standard library and of other projects each path imports beyond those
#: of `python -c pass`, as counted for issue 34 (Python 3.11). hookgate's own modules are
#: not counted: splitting one in two or moving it into a package costs a file read, not a
#: library's start. A new module on either path is a decision: raise the count with the
#: reason, or import it where it is used. `hooks fire` 51 -> 40: its usual line is read
#: without argparse (and gettext), libc's prctl reached through _ctypes alone (not ctypes,
#: struct, _struct, ctypes._endian), signal's numbers from _signal, and no contextlib,
#: math, fcntl or importlib package on a hook's path. `-p` answers without an event
#: loop: 124 with one.
FIRE_MODULES = 40
PRINT_MODULES = 49


@pytest.mark.parametrize(
    ("args", "stdin", "most"),
    [
        (["hooks", "fire", "preToolCall", "--tool", "shell"], "{}", FIRE_MODULES),
        (["-p", "hi"], "", PRINT_MODULES),
    ],
    ids=["fire", "print"],
)
def test_hooks_fire_and_print_mode_import_no_more_modules_than_counted(
    answered: Project, args: list[str], stdin: str, most: int
) -> None:
    interpreter = imported(answered, ["-c", "pass"])
    imported(answered, [str(HOOKGATE), *args], stdin=stdin)  # the parse cache filled
    added = imported(answered, [str(HOOKGATE), *args], stdin=stdin) - interpreter
    others = {name for name in added if name.partition(".")[0] != "hookgate"}
    assert len(others) <= most, sorted(others)
