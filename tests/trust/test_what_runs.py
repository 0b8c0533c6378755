"""Trust pins every file a hook really runs: a repository that ships one, trusted and
then edited, makes `hookgate -p` refuse, and the model's file tools cannot rewrite it.

Each case is a way a hook runs a file the first closure missed (issue 30): an
interpreter's script with no suffix, `cd DIR && ./x`, `${PWD}`, Claude Code's
`"$CLAUDE_PROJECT_DIR"/…`, a `shell:` program, code-loading `env:` keys, a module of a
`python:` hook's package.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from runtime.project import Project

EXECUTABLE = 0o755


class Case(NamedTuple):
    files: dict[str, str]
    """Files of the repository, by path from the agent file; `*` ending a name: executable."""
    hook: dict[str, Any]
    edited: str
    """The file the attacker edits after trust."""


CASES = {
    "bash X, no suffix, not executable": Case(
        {"hooks/guard": "exit 0\n"}, {"command": "bash hooks/guard"}, "hooks/guard"
    ),
    "cd sub && ./g.sh": Case(
        {"sub/g.sh*": "#!/bin/sh\nexit 0\n"}, {"command": "cd sub && ./g.sh"}, "sub/g.sh"
    ),
    "sh ${PWD}/sub/g.sh": Case(
        {"sub/g.sh": "exit 0\n"}, {"command": "sh ${PWD}/sub/g.sh"}, "sub/g.sh"
    ),
    "python3 -B X, an option first": Case(
        {"hooks/guard": "pass\n"}, {"command": "python3 -B hooks/guard"}, "hooks/guard"
    ),
    "exec wrapper, ./x after a pipe": Case(
        {"g*": "#!/bin/sh\ncat >/dev/null\n"}, {"command": "echo {} | exec ./g"}, "g"
    ),
    "sh -c '…X…'": Case({"sub/g": "exit 0\n"}, {"command": "sh -c 'cd sub && sh g'"}, "sub/g"),
    "shell: ./mysh": Case(
        {"mysh*": '#!/bin/sh\nexec /bin/sh "$@"\n'}, {"command": "true", "shell": "./mysh"}, "mysh"
    ),
    "env BASH_ENV": Case({".x": "true\n"}, {"command": "true", "env": {"BASH_ENV": "./.x"}}, ".x"),
    "env LD_PRELOAD": Case(
        {"lib/x.so": "not yet a library\n"},
        {"command": "true", "env": {"LD_PRELOAD": "./lib/x.so"}},
        "lib/x.so",
    ),
    "env NODE_OPTIONS": Case(
        {"x.js": "\n"}, {"command": "true", "env": {"NODE_OPTIONS": "--require ./x.js"}}, "x.js"
    ),
    "env PYTHONPATH, a directory": Case(
        {"pylib/sitecustomize.py": "\n"},
        {"command": "true", "env": {"PYTHONPATH": "pylib"}},
        "pylib/sitecustomize.py",
    ),
    "env PYTHONSTARTUP": Case(
        {"start.py": "\n"}, {"command": "true", "env": {"PYTHONSTARTUP": "start.py"}}, "start.py"
    ),
    "uv run X: the environment's program": Case(
        {".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/ruff*": "#!/bin/sh\nexit 0\n"},
        {"command": "uv run ruff check"},
        ".venv/bin/ruff",
    ),
    "uv run --with x g.py: the environment's Python": Case(
        {".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/python*": "#!/bin/sh\n", "g.py": ""},
        {"command": "uv run --with x g.py"},
        ".venv/bin/python",
    ),
    "timeout 5 npx -y X": Case(
        {"node_modules/.bin/eslint*": "#!/bin/sh\nexit 0\n"},
        {"command": "timeout 5 npx -y eslint ."},
        "node_modules/.bin/eslint",
    ),
    "npm exec -- X": Case(
        {"node_modules/.bin/prettier*": "#!/bin/sh\nexit 0\n"},
        {"command": "npm exec -- prettier --check ."},
        "node_modules/.bin/prettier",
    ),
    "python3 -c 'import X'": Case(
        {"guard.py": "def main():\n    pass\n"},
        {"command": "python3 -c 'import guard; guard.main()'"},
        "guard.py",
    ),
    "node -e \"require('./lib/g')\"": Case(
        {"lib/g.js": "\n"}, {"command": "node -e \"require('./lib/g')\""}, "lib/g.js"
    ),
    "node guard.js, beside the agent file, require('./rules')": Case(
        {"guard.js": "const rules = require('./rules');\n", "rules.js": "\n"},
        {"command": "node guard.js"},
        "rules.js",
    ),
    "python: a package's other module": Case(
        {"guard/__init__.py": "def check(payload):\n    return None\n", "guard/helper.py": "\n"},
        {"python": "guard:check"},
        "guard/helper.py",
    ),
}


def plant(project: Project, case: Case) -> None:
    for name, text in case.files.items():
        path = project.dir / name.rstrip("*")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith("*"):
            path.chmod(EXECUTABLE)
    # preToolCall: a text answer fires none, so only the start is judged.
    project.write_agent(project.script({"text": "hello"}), hooks={"preToolCall": [case.hook]})


def trust(project: Project, env: dict[str, str] | None = None) -> None:
    done = project.hookgate("trust", "--yes", trusted=False, env=env)
    assert done.returncode == 0, done.stderr


def assert_refused(done: subprocess.CompletedProcess[str], project: Project, edited: Path) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert f"{project.agent_file} is not trusted: " in done.stderr
    assert f"{edited} changed since you trusted it" in done.stderr


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_editing_a_file_a_hook_runs_after_trust_makes_print_mode_refuse(
    project: Project, case: Case
) -> None:
    plant(project, case)
    trust(project)
    ran = project.hookgate("-p", "hi", trusted=False)
    assert (ran.returncode, ran.stdout) == (0, "hello\n"), ran.stderr

    edited = project.dir / case.edited
    edited.write_text(edited.read_text() + "# the attacker's line\n")

    assert_refused(project.hookgate("-p", "hi", trusted=False), project, edited)


def claude_project(project: Project) -> tuple[Path, dict[str, str]]:
    """A Claude Code project: its settings run `"$CLAUDE_PROJECT_DIR"/.claude/hooks/c.sh`."""
    script = project.dir / ".claude" / "hooks" / "c.sh"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(EXECUTABLE)
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/c.sh'
    handler = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    settings = {"hooks": {"PreToolUse": [handler]}}
    (project.dir / ".claude" / "settings.json").write_text(json.dumps(settings))
    project.write_agent(project.script({"text": "hello"}), claude_settings=True)
    home = project.dir.parent / "user-home"  # no ~/.claude of the machine's
    home.mkdir()
    return script, project.env(HOME=str(home))


def test_a_claude_projects_own_hook_script_is_pinned(project: Project) -> None:
    script, env = claude_project(project)
    trust(project, env)

    listed = project.hookgate("trust", trusted=False, env=env).stderr
    assert f"preToolCall hook script: {script}\n" in listed  # pinned where it is
    assert "$CLAUDE_PROJECT_DIR/" not in listed.replace(f"{script}", "")

    script.write_text("#!/bin/sh\nexit 0  # loosened\n")
    assert_refused(project.hookgate("-p", "hi", trusted=False, env=env), project, script)


def test_hooks_check_strict_passes_a_claude_project(project: Project) -> None:
    _, env = claude_project(project)

    done = project.hookgate("hooks", "check", "--strict", trusted=False, env=env)

    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr


def test_hooks_check_strict_fails_on_a_word_trust_cannot_pin(project: Project) -> None:
    project.write_agent("scripted:s.yaml", hooks={"preToolCall": [{"command": "$TOOLS/guard.sh"}]})

    done = project.hookgate("hooks", "check", "--strict", trusted=False)

    assert done.returncode == 1
    assert "warning: not pinned: $TOOLS/guard.sh" in done.stderr
    summary = project.hookgate("trust", trusted=False).stderr
    assert "not pinned: $TOOLS/guard.sh" in summary


@pytest.mark.parametrize("case", ["cd sub && ./g.sh", "bash X, no suffix, not executable"])
def test_the_model_cannot_rewrite_such_a_file_with_write_file(project: Project, case: str) -> None:
    planted = CASES[case]
    for name, text in planted.files.items():
        path = project.dir / name.rstrip("*")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    rewrite = {"path": planted.edited, "content": "exit 0 # the model's\n"}
    script = project.script(
        {"tool_calls": [{"name": "write_file", "arguments": rewrite}]}, {"text": "done"}
    )
    project.write_agent(
        script, yolo=True, hooks={"preToolCall": [{**planted.hook, "matcher": "^shell$"}]}
    )
    before = (project.dir / planted.edited).read_bytes()

    done = project.hookgate("-p", "rewrite it")

    assert done.returncode == 0, done.stderr
    assert (project.dir / planted.edited).read_bytes() == before
    tool_results = [m for m in project.messages() if m["role"] == "tool"]
    assert " is protected" in tool_results[0]["content"]


def test_a_file_an_mcp_servers_env_loads_is_pinned(project: Project) -> None:
    (project.dir / ".x").write_text("true\n")
    server = {"command": "sh", "args": ["-c", "exit 0"], "env": {"BASH_ENV": "./.x"}}
    project.write_agent(project.script({"text": "hello"}), mcp_servers={"m": server})
    trust(project)

    (project.dir / ".x").write_text("touch owned\n")

    assert_refused(project.hookgate("-p", "hi", trusted=False), project, project.dir / ".x")


def test_a_module_planted_where_python_c_imports_from_stops_the_start(project: Project) -> None:
    """`python3 -c 'import json'` runs in the project: a `json.py` there is imported first."""
    plant(project, Case({}, {"command": "python3 -c 'import json, sys; json.load(sys.stdin)'"}, ""))
    trust(project)
    planted = project.dir / "json.py"
    planted.write_text("raise SystemExit(0)\n")

    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1, done.stderr
    assert f"new preToolCall hook script {planted}" in done.stderr
