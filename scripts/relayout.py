#!/usr/bin/env python3
"""Move hookgate's modules into the rooms of its layout, and every reference with them.

    python3 scripts/relayout.py plan    # what would move, and what it cannot place
    python3 scripts/relayout.py apply   # git mv, rewrite references, new packages,
                                        # README's layout, the import contracts,
                                        # CHANGELOG's entry; then prints the checks
    python3 scripts/relayout.py check   # exit 1 while anything is left to do

Apply it on a clean, merged tree, then run the commands `apply` prints (`VERIFY` below):
setup (import-linter), ruff's import sort and format, ruff, mypy, lint-imports, `check`,
the whole suite, one commit.

`MOVES` is the whole table: old dotted name -> new, for a module or a package (a package
moves whole, modules nobody listed included). Every reference in src/, tests/, bench/,
scripts/, docs/, fuzz/, .ci/, README.md and pyproject.toml is rewritten: dotted names
(`from hookgate.turn import`, `import hookgate.turn`, "hookgate.turn.run_turn" in a
monkeypatch, `python -m hookgate.x`), a `from hookgate.hooks import parsecache` whose
name is a moved module (split in two), and file paths (`src/hookgate/turn.py`,
`hooks/scriptedchecker.py`, `` `toolcall.py` ``). Longest name first, whole names only
(`hookgate.hooks.http` is not `hookgate.hooks.httptarget`). CHANGELOG.md is history: left
alone. Golden files are not rewritten, only checked.

Re-runnable: a move already made is skipped, and no new name contains an old one, so a
second `apply` changes nothing; run it again after merging a branch written against the
old layout and it moves that branch's references too. Stdlib only.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

#: Old dotted name -> new, module or package. Kept where it is: everything not listed.
MOVES: dict[str, str] = {
    # The runtime: one session assembled, its turn loop and the gate every call passes.
    "hookgate.agent": "hookgate.runtime.agent",
    "hookgate.turn": "hookgate.runtime.turn",
    "hookgate.toolcall": "hookgate.runtime.toolcall",
    "hookgate.consent": "hookgate.runtime.consent",
    "hookgate.approvals": "hookgate.runtime.approvals",
    "hookgate.interrupts": "hookgate.runtime.interrupts",
    "hookgate.callcaps": "hookgate.runtime.caps",
    "hookgate.compaction": "hookgate.runtime.compaction",
    "hookgate.history": "hookgate.runtime.history",
    "hookgate.resume": "hookgate.runtime.resume",
    "hookgate.envfile": "hookgate.runtime.envfile",
    # What a session leaves on disk.
    "hookgate.session": "hookgate.store.session",
    "hookgate.sessionlock": "hookgate.store.lock",
    "hookgate.transcript": "hookgate.store.transcript",
    "hookgate.home": "hookgate.store.home",
    # The agent file.
    "hookgate.agentfile": "hookgate.config.agentfile",
    "hookgate.agentrefs": "hookgate.config.agentrefs",
    "hookgate.ruletext": "hookgate.config.ruletext",
    # What is allowed to run: trust, the permission policy, the rules' check.
    "hookgate.trust": "hookgate.security.trust",
    "hookgate.policy": "hookgate.security.policy",
    "hookgate.rulecheck": "hookgate.security.rulecheck",
    # The tools' own settings and the sandbox that confines them (tools.base reads both).
    "hookgate.toolsettings": "hookgate.tools.settings",
    "hookgate.sandbox": "hookgate.tools.sandbox",
    # Front ends: every way a person or a parent agent drives a turn.
    "hookgate.output": "hookgate.frontends.output",
    "hookgate.demo": "hookgate.frontends.demo",
    "hookgate.starter": "hookgate.frontends.starter",
    "hookgate.handoff.asked": "hookgate.frontends.asked",
    "hookgate.handoff.command": "hookgate.frontends.askcommand",
    "hookgate.frontends.acp": "hookgate.frontends.acp.agent",
    "hookgate.frontends.acp_session": "hookgate.frontends.acp.session",
    "hookgate.frontends.acp_wire": "hookgate.frontends.acp.wire",
    # The engine: one room per hook kind, its config shape, run and limits together.
    "hookgate.hooks.http": "hookgate.hooks.kinds.http.run",
    "hookgate.hooks.httptarget": "hookgate.hooks.kinds.http.target",
    "hookgate.hooks.cappedhttp": "hookgate.hooks.kinds.http.capped",
    "hookgate.hooks.modelcheck": "hookgate.hooks.kinds.model.run",
    "hookgate.hooks.modeltarget": "hookgate.hooks.kinds.model.target",
    "hookgate.hooks.scriptedchecker": "hookgate.hooks.kinds.model.scripted",
    "hookgate.hooks.apikey": "hookgate.hooks.kinds.model.apikey",
    "hookgate.hooks.persistent": "hookgate.hooks.kinds.persistent.run",
    "hookgate.hooks.process.resident": "hookgate.hooks.kinds.persistent.resident",
    "hookgate.hooks.pyimport": "hookgate.hooks.kinds.python",
    "hookgate.hooks.neterrors": "hookgate.hooks.kinds.neterrors",
    "hookgate.hooks.kindkeys": "hookgate.hooks.kinds.keys",
    "hookgate.hooks.yamlfile": "hookgate.hooks.files.yamlfile",
    "hookgate.hooks.parsecache": "hookgate.hooks.files.parsecache",
    "hookgate.hooks.digest": "hookgate.hooks.files.digest",
    "hookgate.hooks.whatruns": "hookgate.hooks.runs.whatruns",
    "hookgate.hooks.pins": "hookgate.hooks.runs.pins",
    "hookgate.hooks.cmdwords": "hookgate.hooks.runs.cmdwords",
    "hookgate.hooks.claude_settings": "hookgate.hooks.claude.settings",
    "hookgate.hooks.claude_permissions": "hookgate.hooks.claude.permissions",
    "hookgate.hooks.cli": "hookgate.hooks.author.cli",
    "hookgate.hooks.lint": "hookgate.hooks.author.lint",
    "hookgate.hooks.schema": "hookgate.hooks.author.schema",
    "hookgate.hooks.reference": "hookgate.hooks.author.reference",
}

#: The first docstring of each package the table creates.
NEW_PACKAGES: dict[str, str] = {
    "hookgate.runtime": """The agent runtime: one session assembled (`agent`), its turn (`turn.run_turn`),
and the one gate every tool call passes (`toolcall`): consent, approvals, the per-reply
caps, compaction of the history, the signals that cancel a step.

Front ends call it; it calls the tools, the models and the hook engine below it.""",
    "hookgate.store": """What a session keeps on disk, under `$HOOKGATE_HOME` (`home`): its append-only
session file (`session`), held by one writer (`lock`), and the transcript hooks read
(`transcript`).""",
    "hookgate.config": """The agent file (`hookgate.yaml`), read once and strictly: `agentfile` the whole,
`agentrefs` the other agents it may ask or lead, `ruletext` a permission rule as written.""",
    "hookgate.security": """What may run: `trust` (nothing an agent file names runs until its owner trusts
it, as it was then), `policy` (which tool calls run, need consent, never run) and
`rulecheck` (what is said about permission rules that cannot match).

The OS sandbox confines the tools' processes: it is `hookgate.tools.sandbox`, since the
tools read its settings.""",
    "hookgate.frontends.acp": """The Agent Client Protocol front end (`hookgate acp`): `agent` answers the
editor's requests, `session` runs each ACP session's turns, `wire` turns a turn into
session updates.""",
    "hookgate.hooks.kinds": """The hook kinds, one room each: what its config says (`target`), how it runs
(`run`) and its limits. `process` hooks run through `hookgate.hooks.process`; `persistent`
ones stay resident, `python` ones are imported once, `http` ones POST the event, `model`
ones ask a checker model. `keys` reads the keys of an entry that belong to its kind.""",
    "hookgate.hooks.kinds.http": """`http:` hooks: the event POSTed to a URL (`run`), the target as configured
(`target`), response bodies read to a cap (`capped`, which the model client uses too).""",
    "hookgate.hooks.kinds.model": """`model:` hooks: a checker model asked for a verdict (`run`), what it is asked
(`target`), the offline `scripted:` checker, and which variable is sent as its API key
(`apikey`).""",
    "hookgate.hooks.kinds.persistent": """`persistent: true` hooks: one process per hook and session, asked event after
event (`run`), by a `resident` process's drivers (sync and asyncio) over its pipes, a
line at a time (`lines`).""",
    "hookgate.hooks.files": """The files hooks come from: strict YAML that remembers where each value was
(`yamlfile`), parsed files cached by digest (`parsecache`), and `sha256` (`digest`).""",
    "hookgate.hooks.runs": """What a hook runs: the files and programs of its line, args or module
(`whatruns`), the words of its command line as the shell reads them (`cmdwords`), and
the pins that stop a hook whose files changed since they were trusted (`pins`).""",
    "hookgate.hooks.claude": """Claude Code's files as hookgate's: the hooks of its settings files
(`settings`, `claude_settings:` in a config file) and its permission rules
(`permissions`).""",
    "hookgate.hooks.author": """The hook author's tools: `hookgate hooks check | fire | schema` (`cli`), the
checks run beyond the config's own (`lint`), the JSON Schemas of every event
(`schema`), and the tables of docs/hooks.md that come from code (`reference`).""",
}

#: Packages whose docstring the layout changes, when it is still the one it replaces.
DOCSTRING_EDITS: dict[str, tuple[str, str]] = {
    "hookgate/frontends/__init__.py": (
        '"""Front ends: each reads questions, calls `turn.run_turn`, and shows what it reports."""',
        '"""Front ends: each reads questions, calls `runtime.turn.run_turn`, and shows what it\n'
        "reports: line mode (`line`), `-p` (`printmode`), `--ask` (`askmode`) and `/ask-<name>`\n"
        "(`askcommand`), an asked agent's side (`asked`), ACP (`acp`), the browser window\n"
        "(`window`), `hookgate demo` and `hookgate init` (`demo`, `starter`). stdout carries the\n"
        'product alone (`output`); `terminal` and `markdown` draw on a terminal."""',
    ),
}

#: Prose the rewrite of names cannot reach: (file, old text, new text), applied once.
TEXT_EDITS: list[tuple[str, str, str]] = [
    (
        "src/hookgate/hooks/__init__.py",
        'start-up where PID 1 may not reap.\n"""\n',
        "start-up where PID 1 may not reap.\n\n"
        "Its rooms: the core here (events, config, runner, chain, outcome, replies); `kinds/`,\n"
        "one per hook kind (persistent, python, http, model; a process hook is the runner's\n"
        "own); `formats/`, the reply formats; `claude/`, Claude Code's files; `author/`, the\n"
        "hook author's commands; `files/`, `runs/`, `process/` and `shell/` beneath them.\n"
        '"""\n',
    ),
    (
        "src/hookgate/tools/__init__.py",
        "`tools:` lists it. MCP tools implement the same `Tool` protocol.\n",
        "`tools:` lists it. MCP tools implement the same `Tool` protocol. `settings` reads the\n"
        "agent file's `workspace`, `shell` and per-reply caps; `sandbox` is the OS sandbox of\n"
        "the processes the tools start, and the workspace boundaries the file tools check.\n",
    ),
    (
        "src/hookgate/handoff/__init__.py",
        "its own file and hooks (`child`), speaking the stream of `protocol` (`asked` is its",
        "its own file and hooks (`child`), speaking the stream of `protocol`\n"
        "(`hookgate.frontends.asked` is its",
    ),
]

#: Top-level modules that stay loose: the command, and the vocabulary every layer speaks.
TOP_LEVEL_MODULES = {"__init__", "cli", "errors", "messages", "view"}
#: README's "Layout": every package (and the loose modules), top layer first; a
#: sub-package's line follows its parent's, indented.
LAYOUT: list[tuple[str, str]] = [
    ("cli.py", "the `hookgate` command: its arguments, then a front end or a subcommand"),
    (
        "frontends/",
        "line mode (`line`, `markdown`, `status`), `-p` (`printmode`), `--ask` and "
        "`/ask-<name>` (`askmode`, `askcommand`), an asked agent's side (`asked`), `demo`, `init`",
    ),
    ("frontends/acp/", "`hookgate acp`: the Agent Client Protocol (`wire`: no line kills it)"),
    ("frontends/window/", "`hookgate window`: the page, its guard, sessions, SSE events"),
    (
        "policytest/",
        "`hookgate hooks test`: policy as tested code, through the session's real gate",
    ),
    ("policytest/replay/", "`hookgate hooks replay`: recorded calls of other agents, replayed"),
    ("serve/", "`hookgate serve`: one agent file's hooks as an HTTP policy service"),
    (
        "adapters/",
        "the same hooks around LangChain, Pydantic AI, OpenAI Agents and Claude Agent "
        "SDK agents (`gate`: what all four ask the engine)",
    ),
    (
        "agents/",
        "hookgate as the hooks of Claude Code, Codex CLI and Gemini CLI: one module "
        "each, `hookrun` (one event, trust checked, fail closed), `install`",
    ),
    (
        "runtime/",
        "one session: `turn` (preGeneration → model ⇄ tools → postGeneration), "
        "`toolcall` (preToolCall → policy → consent → tool → postToolCall), `agent`, consent, "
        "approvals, caps, history and its compaction",
    ),
    ("team/", "agent teams: the task board, rounds of hand-offs, the supervisor's tools"),
    (
        "handoff/",
        "`ask_agent` and the child process it asks through: one `delegate`, preAsk/postAsk",
    ),
    ("security/", "what may run: the permission `policy`, `rulecheck` (rules that match nothing)"),
    (
        "security/trust/",
        "nothing an agent file names runs until trusted: closure, check (every "
        "start), summary, store",
    ),
    (
        "config/",
        "the agent file (`hookgate.yaml`), read once, strictly: `agentfile`, "
        "`agentrefs`, `ruletext`",
    ),
    ("view.py", "what a turn shows: the interface each front end implements; `visible`"),
    ("mcp/", "MCP servers' tools, behind the same tool wrapper"),
    (
        "models/",
        "the OpenAI-compatible client (`chat_stream` checks the stream), the scripted model",
    ),
    ("store/", "`session` files (one writer: `lock`), the Claude-shaped `transcript`, `home`"),
    ("telemetry/", "OpenTelemetry of every decision (`otlp`), the engine's observer"),
    (
        "tools/",
        "the `Tool` protocol and the built-in tools: shell (under `reaper`), files, "
        "search, paths, web_fetch; their `settings`",
    ),
    (
        "tools/sandbox/",
        "the OS sandbox of the model's commands: `settings`, `boundaries` (the "
        "table the file tools read too), `bwrap`, `report`",
    ),
    ("messages.py", "the conversation: messages, tool calls, tool specs"),
    ("errors.py", "the runtime's exceptions, under the engine's `HookgateError`"),
    (
        "hooks/",
        "the engine, a library of its own: `events` (the table), `config`, "
        "`configfile`, `runner` (+ `steps`), `chain` folding replies into `outcome`, `replies`, "
        "`wording`, `guardrails`, `observe`",
    ),
    (
        "hooks/kinds/",
        "one room per hook kind; `keys` reads an entry's kind-specific keys, "
        "`python` imports python hooks",
    ),
    ("hooks/kinds/http/", "`http:` hooks: `target`, `run` (pooled connections), `capped`"),
    (
        "hooks/kinds/model/",
        "`model:` hooks: `target`, `run` (a checker's verdict), `scripted`, `apikey`",
    ),
    (
        "hooks/kinds/persistent/",
        "`persistent: true`: `run`, over a `resident` process asked a line at a time through its pipes (`lines`)",
    ),
    ("hooks/formats/", "the reply formats: `native`, `mecatl`, `claude` (+ `claude_tools`)"),
    ("hooks/claude/", "Claude Code's `settings` files and `permissions` as hookgate's"),
    (
        "hooks/author/",
        "`hookgate hooks check | fire | schema` (`cli`), `lint`, `schema`, "
        "`reference` (the docs' tables)",
    ),
    ("hooks/files/", "`yamlfile` (YAML with lines), `parsecache` (a file parsed before), `digest`"),
    ("hooks/runs/", "what a hook runs (`whatruns`, `cmdwords`): the files trust pins (`pins`)"),
    (
        "hooks/process/",
        "every external process: `core`, its drivers `aio` and `blocking`, the "
        "guardian, `subreaper`, `wakeup`",
    ),
    (
        "hooks/shell/",
        "a bash line read as bash will run it: `words` (a word's value: `literal`), `code`, `runners`",
    ),
    ("examples/", "the example hooks (also at ./examples)"),
]
#: The most modules one package should hold, and lines one module.
MAX_MODULES = 12
MAX_LINES = 450

#: Where references are rewritten (CHANGELOG.md, history, is not).
REWRITE_ROOTS = ("src", "tests", "bench", "scripts", "docs", "fuzz", ".ci")
REWRITE_FILES = ("README.md", "pyproject.toml", ".importlinter")
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".cfg",
    ".ini",
    ".txt",
    ".yaml",
    ".yml",
    ".sh",
    ".patch",
    "",
}
#: Never rewritten: this table, and the golden files (checked, not changed).
SKIP_PARTS = ("golden", "__pycache__", ".venv", "node_modules")

#: The layers, top to bottom: a layer may import those below it, never one above; the
#: packages of one line (`|`) may not import each other either.
LAYERS = [
    "hookgate.cli",
    "hookgate.frontends | hookgate.policytest | hookgate.serve | hookgate.adapters",
    "hookgate.agents",
    "hookgate.runtime",
    "hookgate.team",
    "hookgate.handoff",
    "hookgate.security",
    "hookgate.config",
    "hookgate.view | hookgate.mcp | hookgate.models | hookgate.store | hookgate.telemetry",
    "hookgate.tools",
    "hookgate.errors | hookgate.messages",
    "hookgate.hooks",
]

IMPORTLINTER = """\
# The layers of hookgate, checked by `lint-imports` (./scripts/test runs it after mypy).
# A higher layer may import a lower one, never the reverse; `|` separates siblings that
# may not import each other either. Imports under `if TYPE_CHECKING:` are left out: they
# are types alone and import nothing at run time. Written by scripts/relayout.py.
[importlinter]
root_package = hookgate
exclude_type_checking_imports = true

[importlinter:contract:layers]
name = Front ends over the runtime over tools and models over the hook engine
type = layers
layers =
{layers}
ignore_imports =
    # `hookgate hook --remote URL`, the service's client, is one branch of the agents'
    # `hook` command: the one import from the agents up to the service.
    hookgate.agents.cli -> hookgate.serve.remote

[importlinter:contract:engine]
name = The hook engine is a library of its own: it imports nothing of the rest
type = forbidden
source_modules =
    hookgate.hooks
forbidden_modules =
{above_engine}

[importlinter:contract:cycles]
name = No import cycles between the modules and packages of any package
type = acyclic_siblings
ancestors =
    hookgate
ignore_imports =
    # The relay runs as a bare script (`python -S relay.py`) with its own socket path;
    # where no resident answers, it answers the event in process with the resident's code.
    hookgate.agents.relay -> hookgate.agents.resident
    hookgate.agents.cli -> hookgate.serve.remote
"""


def _importlinter() -> str:
    above = [name.strip() for line in LAYERS[:-1] for name in line.split("|")]
    return IMPORTLINTER.format(
        layers="\n".join(f"    {line}" for line in LAYERS),
        above_engine="\n".join(f"    {name}" for name in above),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("plan", "apply", "check"))
    parser.add_argument("--force", action="store_true", help="apply on a dirty work tree")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    _check_table()
    pending, done, missing = _moves()
    if args.command == "plan":
        for old, new in pending:
            print(f"move  {_path_of(old)} -> {_path_of(new, old)}")
        print(f"{len(pending)} to move, {len(done)} moved already")
        _report(missing, after=False)
        print(VERIFY)
        return 0
    if args.command == "check":
        return _check(pending)
    if not args.force and _dirty():
        print(
            "relayout: the work tree has changes: commit them first (or --force)", file=sys.stderr
        )
        return 1
    for old, new in pending:
        _move(old, new)
    _new_packages()
    changed = _rewrite_all()
    _edit_texts()
    _write_layout_section()
    _install_contracts()
    _changelog()
    print(f"relayout: {len(pending)} moved, {len(changed)} files rewritten")
    problems = _report(missing, after=True)
    print(VERIFY)
    return 1 if problems else 0


VERIFY = """
Then, from the repository root:
    ./scripts/setup                     # pyproject's dev extras now name import-linter
    .venv/bin/ruff check --fix --select I src tests bench scripts   # imports re-sorted
    .venv/bin/ruff format src tests bench scripts                   # renamed lines re-wrapped
    .venv/bin/ruff check src tests bench && .venv/bin/ruff format --check src tests bench
    .venv/bin/mypy
    .venv/bin/lint-imports --no-cache   # the three contracts of .importlinter: all KEPT
    python3 scripts/relayout.py check   # no old name left anywhere
    ./scripts/test                      # the whole suite, lint-imports included
    git add -A && git commit            # git sees the moves as renames
"""


# The table ------------------------------------------------------------------------------


def _check_table() -> None:
    """No new name may contain an old one as a whole prefix, except a module that becomes a
    package of its own name: that is what makes a second run change nothing."""
    for new in MOVES.values():
        for old in MOVES:
            if new.startswith(old + ".") and not MOVES[old].startswith(old + "."):
                raise SystemExit(f"relayout: table: {new} lies under the moved {old}")


def _path_of(name: str, like: str | None = None) -> str:
    """`src/...` of a dotted name: a package's directory, else its module's file (a new
    name takes the kind of the old one, `like`)."""
    base = SRC / name.replace(".", "/")
    kind_of = SRC / (like or name).replace(".", "/")
    if kind_of.is_dir() or (like is None and base.is_dir()):
        return str(base.relative_to(ROOT)) + "/"
    return str(base.with_suffix(".py").relative_to(ROOT))


def _moves() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    pending, done, missing = [], [], []
    for old, new in MOVES.items():
        old_base, new_base = SRC / old.replace(".", "/"), SRC / new.replace(".", "/")
        own = new.startswith(old + ".")  # a module that becomes a package of its name
        if old_base.with_suffix(".py").is_file() or (old_base.is_dir() and not own):
            pending.append((old, new))
        elif new_base.is_dir() or new_base.with_suffix(".py").is_file():
            done.append((old, new))
        else:
            missing.append(f"{old}: in the table, but neither it nor {new} exists")
    return pending, done, missing


def _move(old: str, new: str) -> None:
    source = Path(_path_of(old).rstrip("/"))
    target = Path(_path_of(new, old).rstrip("/"))
    if source.is_dir() and target.is_dir():
        # Moved before; a branch merged since added to the old place: file by file.
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            if "__pycache__" not in file.parts:
                _move_path(file, target / file.relative_to(source))
        shutil.rmtree(source, ignore_errors=True)
    else:
        _move_path(source, target)


def _move_path(source: Path, target: Path) -> None:
    if target.exists():
        print(f"relayout: cannot place: {source}: {target} exists already (left where it is)")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["git", "mv", str(source), str(target)], capture_output=True).returncode:
        shutil.move(str(source), str(target))  # untracked: moved all the same
        print(f"relayout: {source} is not tracked by git: moved without git mv")


def _new_packages() -> None:
    """Every directory of a new name is a package with its docstring."""
    for new in MOVES.values():
        parts = new.split(".")
        for depth in range(2, len(parts)):
            package = ".".join(parts[:depth])
            directory = SRC / package.replace(".", "/")
            init = directory / "__init__.py"
            if directory.is_dir() and not init.exists():
                text = NEW_PACKAGES.get(package)
                if text is None:
                    print(f"relayout: {package} has no docstring in NEW_PACKAGES")
                    text = package
                init.write_text(f'"""{text}"""\n')
                subprocess.run(["git", "add", str(init)], check=False)


# Rewriting ------------------------------------------------------------------------------


def _files_to_rewrite() -> Iterable[Path]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *REWRITE_ROOTS,
                             *REWRITE_FILES], capture_output=True, text=True, check=True)  # fmt: skip
    for line in listed.stdout.splitlines():
        path = Path(line)
        if path.resolve() == Path(__file__).resolve() or not path.is_file():
            continue
        if any(part in SKIP_PARTS or part.startswith("golden") for part in path.parts):
            continue
        if path.suffix in TEXT_SUFFIXES:
            yield path


def _name_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Dotted names, longest first, whole names only; a module that becomes a package of
    its own name is not matched where a new child of it follows."""
    patterns = []
    for old in sorted(MOVES, key=len, reverse=True):
        new = MOVES[old]
        guard = ""
        if new.startswith(old + "."):
            children = {
                n[len(old) + 1 :].split(".")[0] for n in MOVES.values() if n.startswith(old + ".")
            }
            guard = r"(?!\.(?:" + "|".join(map(re.escape, sorted(children))) + r")\b)"
        patterns.append((re.compile(r"(?<![\w.])" + re.escape(old) + r"(?![\w])" + guard), new))
    return patterns


def _path_patterns() -> list[tuple[re.Pattern[str], str]]:
    """File paths of moved modules (`src/hookgate/turn.py`, `hooks/http.py`, a bare
    `` `turn.py` `` of a top-level one) and directories of moved packages."""
    mapping: dict[str, str] = {}
    for old, new in MOVES.items():
        old_rel, new_rel = old.replace(".", "/"), new.replace(".", "/")
        mapping[old_rel + ".py"] = new_rel + ".py"
        package = SRC / old_rel if (SRC / old_rel).is_dir() else SRC / new_rel
        if package.is_dir() and not new.startswith(old + "."):
            mapping[old_rel + "/"] = new_rel + "/"
            for file in package.rglob("*.py"):  # `trust/store.py` is a path of its own
                inner = file.relative_to(package).as_posix()
                mapping[f"{old_rel}/{inner}"] = f"{new_rel}/{inner}"
    patterns = []
    for old in sorted(mapping, key=len, reverse=True):
        new = mapping[old]
        old_in_pkg, new_in_pkg = old.removeprefix("hookgate/"), new.removeprefix("hookgate/")
        # With the `hookgate/` or `src/hookgate/` prefix: always.
        patterns.append((re.compile(r"(?<![\w./-])((?:src/)?hookgate/)" + re.escape(old_in_pkg)),
                         r"\g<1>" + new_in_pkg))  # fmt: skip
        if old.endswith(".py") and "/" in old_in_pkg:
            # `hooks/http.py` without the prefix: only as a path of its own.
            patterns.append(
                (re.compile(r"(?<![\w./-])" + re.escape(old_in_pkg) + r"(?![\w])"), new_in_pkg)
            )
        elif old.endswith(".py"):
            # A bare `turn.py` only in backticks, where it names the module.
            patterns.append((re.compile(r"(?<=`)" + re.escape(old_in_pkg) + r"(?=`)"), new_in_pkg))
    return patterns


def _rewrite_all() -> list[Path]:
    names, paths = _name_patterns(), _path_patterns()
    changed = []
    for path in _files_to_rewrite():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = _split_from_imports(text) if path.suffix == ".py" else text
        for pattern, replacement in names:
            new = pattern.sub(replacement, new)
        for pattern, replacement in paths:
            new = pattern.sub(replacement, new)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def _new_name(name: str) -> str:
    """Where `name` is after the moves (a name under a moved package moves with it)."""
    for old in sorted(MOVES, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MOVES[old] + name[len(old) :]
    return name


def _split_from_imports(text: str) -> str:
    """`from P import a, m` where `P.m` is a moved module becomes two imports: names of
    `P` from `P`, the module from its new parent. (The name pass renames `P` itself.)"""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
            continue
        if not node.module.startswith("hookgate"):
            continue
        groups: dict[str, list[str]] = {}
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            moved = _new_name(full)
            parent = moved.rpartition(".")[0] if moved != full else node.module
            shown = alias.name if moved == full else moved.rpartition(".")[2]
            if alias.asname:
                shown += f" as {alias.asname}"
            elif moved != full and shown != alias.name:
                shown += f" as {alias.name}"
            groups.setdefault(parent, []).append(shown)
        if list(groups) == [_new_name(node.module)]:
            continue  # one module, renamed or not: the name pass does it, comments kept
        span = "".join(lines[node.lineno - 1 : node.end_lineno or node.lineno])
        if "#" in span.partition("import")[2].rpartition(")")[0]:
            print(f"relayout: note: a comment inside a split import was dropped: {span.strip()}")
        indent = lines[node.lineno - 1][: node.col_offset]
        statement = "".join(
            f"{indent if i else ''}from {module} import {', '.join(names)}\n"
            for i, (module, names) in enumerate(groups.items())
        )
        edits.append((node.lineno, node.end_lineno or node.lineno, node.col_offset, statement))
    for start, end, col, statement in sorted(edits, reverse=True):
        head = lines[start - 1][:col]
        tail_line = lines[end - 1]
        rest = tail_line[tail_line.find(")") + 1 :] if ")" in tail_line else ""
        comment = rest.strip()
        statement = statement if not comment else statement.rstrip("\n") + "  " + comment + "\n"
        lines[start - 1 : end] = [head + statement]
    return "".join(lines)


def _edit_texts() -> None:
    for file, (old, new) in DOCSTRING_EDITS.items():
        path = SRC / file
        if path.is_file() and old in (text := path.read_text()):
            path.write_text(text.replace(old, new, 1))
    for file, old, new in TEXT_EDITS:
        path = ROOT / file
        if path.is_file() and old in (text := path.read_text()):
            path.write_text(text.replace(old, new, 1))


def _write_layout_section() -> None:
    """README's "Layout": one line per package, in the order of the layers."""
    readme = ROOT / "README.md"
    text = readme.read_text()
    body = "\n".join(
        f"{'  ' * name.rstrip('/').count('/')}- `{name}` {what}" for name, what in LAYOUT
    )
    section = (
        "## Layout\n\n"
        "`src/hookgate/`, one line per package, the command first and the engine last: a\n"
        "package imports only from those listed below it, a sub-package's line going with its\n"
        "parent's (`.importlinter` says so, `./scripts/test` checks it; `examples/` stands\n"
        "aside).\n\n"
        f"{body}\n\n"
    )
    match = re.search(r"^## Layout\n.*?(?=^## )", text, flags=re.M | re.S)
    tree = re.search(r"^```\nsrc/hookgate/\n.*?^```\n\n?", text, flags=re.M | re.S)
    if match:
        text = text[: match.start()] + section + text[match.end() :]
    elif tree:  # the old layout's drawing: the new section takes its place
        text = text[: tree.start()] + section + text[tree.end() :]
    elif "\n## Using it\n" in text:
        text = text.replace("\n## Using it\n", "\n" + section + "## Using it\n", 1)
    else:
        text = text.rstrip() + "\n\n" + section
    readme.write_text(text)


def _install_contracts() -> None:
    (ROOT / ".importlinter").write_text(_importlinter())
    subprocess.run(["git", "add", ".importlinter"], check=False)
    test = ROOT / "scripts" / "test"
    text = test.read_text()
    if "lint-imports" not in text:
        text = text.replace(
            ".venv/bin/mypy\n", ".venv/bin/mypy\n.venv/bin/lint-imports --no-cache\n", 1
        )
        test.write_text(text)
    pyproject = ROOT / "pyproject.toml"
    text = pyproject.read_text()
    if "import-linter" not in text:
        text = text.replace(
            '    "mypy>=1.11",\n',
            '    "mypy>=1.11",\n    "import-linter>=2.1",  # the layers of .importlinter (scripts/test)\n',
            1,
        )
        pyproject.write_text(text)


CHANGELOG_ENTRY = """\
- **The house: the layout shows the architecture** (`scripts/relayout.py`, README's
  "Layout"). `hookgate.hooks` is the engine, with one room per hook kind
  (`hooks/kinds/`: persistent, python, http, model; a process hook is the runner's own),
  `formats/`, `author/` (check, fire, schema), `claude/`, `files/`, `runs/`;
  `runtime/` holds the turn loop
  and the tool-call gate; `store/` sessions and transcripts; `config/` the agent file;
  `security/` trust, the permission policy and rule checks; `tools/` the tools with their
  settings and sandbox. The layers are import-linter contracts (`.importlinter`) that
  `./scripts/test` checks: front ends over the runtime over tools and models over the
  engine, the engine importing nothing of the rest, and no import cycle in any package.
  `hookgate.hooks` and `hookgate.adapters.*` import as before; internal module paths
  moved (the table is in `scripts/relayout.py`).
"""


def _changelog() -> None:
    path = ROOT / "CHANGELOG.md"
    text = path.read_text()
    if "The house: the layout shows the architecture" in text:
        return
    unreleased = text.find("## [Unreleased]")
    changed = text.find("### Changed\n", unreleased)
    if unreleased < 0 or changed < 0:
        print("relayout: note: CHANGELOG.md has no Unreleased/Changed: add the entry by hand")
        return
    at = changed + len("### Changed\n")
    path.write_text(text[:at] + CHANGELOG_ENTRY + text[at:])


# Reports --------------------------------------------------------------------------------


def _report(missing: list[str], *, after: bool) -> list[str]:
    """What the table could not place, and what the layout's limits say of the tree."""
    problems = list(missing)
    package = SRC / "hookgate"
    listed = {name.rstrip("/") for name, _ in LAYOUT}
    for path in sorted(package.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        placed = name in TOP_LEVEL_MODULES or f"hookgate.{name}" in MOVES
        if path.suffix == ".py" and not placed:
            problems.append(f"hookgate.{name}: a loose module no line of the table places")
        elif (path / "__init__.py").exists() and name not in listed and not placed:
            problems.append(f"hookgate.{name}: a package README's layout does not list")
    warnings: list[str] = []
    if after:
        for init in sorted(package.rglob("__init__.py")):
            inner = init.parent.relative_to(package).as_posix()
            if inner != "." and inner not in listed:
                warnings.append(f"hookgate/{inner}/: a package README's layout does not list")
        for directory in sorted(p for p in package.rglob("*") if p.is_dir()):
            modules = [p for p in directory.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > MAX_MODULES:
                rel = directory.relative_to(SRC)
                warnings.append(f"{rel}/: {len(modules)} modules (about {MAX_MODULES} at most)")
        for module in sorted(package.rglob("*.py")):
            lines = len(module.read_text().splitlines())
            if lines > MAX_LINES and "examples" not in module.parts:
                warnings.append(f"{module.relative_to(ROOT)}: {lines} lines (about {MAX_LINES})")
        warnings.extend(_stale_references())
    for line in problems:
        print(f"relayout: cannot place: {line}")
    for line in warnings:
        print(f"relayout: note: {line}")
    return problems


_FILE_PATH = re.compile(r"(dirname|parent).*__file__|__file__.*(dirname|parent)")


def _stale_references() -> list[str]:
    """Old names still written anywhere (golden files included); `__file__` paths."""
    names = _name_patterns()
    found = []
    roots = [ROOT / r for r in REWRITE_ROOTS] + [ROOT / f for f in REWRITE_FILES]
    for root in roots:
        files = [root] if root.is_file() else (root.rglob("*") if root.is_dir() else [])
        for path in files:
            if not path.is_file() or path.resolve() == Path(__file__).resolve():
                continue
            if any(part in ("__pycache__", ".venv") for part in path.parts):
                continue
            try:
                text = path.read_text()
            except (UnicodeDecodeError, OSError):
                continue
            for pattern, _ in names:
                if match := pattern.search(text):
                    found.append(f"{path.relative_to(ROOT)}: still says {match.group()}")
                    break
            if path.suffix == ".py" and "src" in path.parts and _FILE_PATH.search(text):
                found.append(f"{path.relative_to(ROOT)}: a path from __file__: check it")
    return found


def _check(pending: list[tuple[str, str]]) -> int:
    if pending:
        print(f"relayout: {len(pending)} moves to make: python scripts/relayout.py apply")
        print(VERIFY)
        return 1
    stale = [line for line in _stale_references() if "__file__" not in line]
    for line in stale:
        print(f"relayout: {line}")
    if not (ROOT / ".importlinter").exists():
        print("relayout: no .importlinter: python scripts/relayout.py apply")
        return 1
    print("relayout: applied" + (", but old names remain (above)" if stale else ""))
    return 1 if stale else 0


def _dirty() -> bool:
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    return bool(status.stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
