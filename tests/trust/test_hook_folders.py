"""A hook's script is rarely alone: it imports a module next to it, sources a library,
reads its rules. Trust pins the whole folder that holds a hook's script inside the
project (every file under it, and which files there are), and the sandbox keeps the
model's shell out of it; a script in the agent file's own folder brings the local
modules it imports.

The trust cases: trust, then change a file the hook really runs but its command line
does not name, then start; before, every one of them ran the changed code with no
question. The session cases: the model (scripted, `yolo`) changes the guard's folder
with its shell or `write_file`, then asks for the call the guard denies.
"""

from __future__ import annotations

import json
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from hookgate.hooks import parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.runs.whatruns import what_hook_runs
from runtime.project import Project

#: A guard that denies `rm`, its judgement in a module next to it.
GUARD = "import json, sys\nimport rules\nprint(json.dumps(rules.judge(json.load(sys.stdin))))\n"
RULES = (
    "def judge(event):\n"
    "    command = str(event.get('arguments', {}).get('command', ''))\n"
    "    return {'action': 'deny', 'reason': 'no rm'} if 'rm' in command else {}\n"
)
LOOSER = "def judge(event):\n    return {}\n"


def guarded_project(project: Project, folder: str = "hooks") -> Path:
    """The guard in `folder` (the agent file's own with ""), trusted; its rules module."""
    where = project.dir / folder
    where.mkdir(exist_ok=True)
    (where / "guard.py").write_text(GUARD)
    (where / "rules.py").write_text(RULES)
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    command = f"python3 {folder}/guard.py" if folder else "python3 guard.py"
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": command}]})
    (project.dir / "victim").write_text("")
    project.trust()
    return where / "rules.py"


def refusal(project: Project) -> str:
    done = project.hookgate("-p", "clean up", trusted=False)
    assert done.returncode == 1, done.stdout
    assert (project.dir / "victim").exists()
    return done.stderr


@pytest.mark.parametrize("folder", ["hooks", ""], ids=["hooks/", "the agent file's folder"])
def test_the_trusted_guard_and_the_module_it_imports_deny_as_written(
    project: Project, folder: str
) -> None:
    guarded_project(project, folder)

    done = project.hookgate("-p", "clean up", trusted=False)

    assert done.returncode == 0, done.stderr
    assert (project.dir / "victim").exists()
    (tool,) = [m for m in project.messages() if m["role"] == "tool"]
    assert tool["content"] == "[denied by a hook: no rm]"


@pytest.mark.parametrize("folder", ["hooks", ""], ids=["hooks/", "the agent file's folder"])
def test_a_module_the_guard_imports_edited_after_trust_stops_every_start(
    project: Project, folder: str
) -> None:
    rules = guarded_project(project, folder)
    rules.write_text(LOOSER)

    assert f"hook script {rules} changed since you trusted it" in refusal(project)


@pytest.mark.parametrize(
    ("folder", "shadow"),
    [("hooks", "json.py"), ("", "json.py"), ("", "json.pyc"), ("", "json" + EXTENSION_SUFFIXES[0])],
    ids=["hooks/", "the agent file's folder", "byte code there", "a compiled module there"],
)
def test_a_module_appearing_where_the_guard_imports_from_stops_every_start(
    project: Project, folder: str, shadow: str
) -> None:
    """`json.py` next to the script shadows the standard library's for it; so do
    `json.pyc` and a compiled `json` module, which the same folder serves first."""
    guarded_project(project, folder)
    planted = project.dir / folder / shadow
    planted.write_text("def load(f):\n    return {}\n\ndef dumps(o):\n    return '{}'\n")

    stderr = refusal(project)

    shown = planted if not folder else project.dir / folder
    assert str(shown) in stderr
    assert "hookgate trust" in stderr


def test_a_library_a_shell_hook_sources_by_its_own_path_is_pinned(project: Project) -> None:
    hooks = project.dir / "hooks"
    hooks.mkdir()
    (hooks / "lib.sh").write_text('deny() { echo \'{"action": "deny", "reason": "lib"}\'; }\n')
    guard = project.hook("guard.sh", '. "$(dirname "$0")/lib.sh"\ndeny')
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": guard}]})
    (project.dir / "victim").write_text("")
    project.trust()
    (hooks / "lib.sh").write_text("deny() { echo '{}'; }\n")

    assert f"{hooks / 'lib.sh'} changed since you trusted it" in refusal(project)


def test_the_projects_own_folder_is_not_pinned_whole(project: Project) -> None:
    """A script beside the agent file pins itself and what it imports, not the project:
    the model may still edit the project's other files."""
    (project.dir / "guard.py").write_text("import os, helper\n")
    (project.dir / "helper.py").write_text("")
    (project.dir / "app.py").write_text("")
    (project.dir / "hooks").mkdir()
    (project.dir / "hooks" / "g.sh").write_text("")
    (project.dir / "hooks" / "lib").mkdir()
    (project.dir / "hooks" / "lib" / "x.sh").write_text("")
    (project.dir / "hooks" / "__pycache__").mkdir()
    (project.dir / "hooks" / "__pycache__" / "x.pyc").write_text("")
    config = parse_hooks(
        {"preToolCall": [{"command": "python3 guard.py"}, {"command": "sh hooks/g.sh"}]},
        Where("hookgate.yaml"),
        base_dir=project.dir,
    )

    files = {path for hook in config for path in what_hook_runs(hook, project.dir).files}

    d = project.dir
    assert {d / "guard.py", d / "helper.py", d / "os.py", d / "os" / "__init__.py"} <= files
    assert {d / "hooks", d / "hooks" / "g.sh", d / "hooks" / "lib", d / "hooks/lib/x.sh"} <= files
    assert d / "app.py" not in files
    assert d not in files
    assert not any("__pycache__" in path.parts for path in files)


def test_the_trust_summary_names_the_folder(project: Project) -> None:
    guarded_project(project)

    done = project.hookgate("trust", "--yes", trusted=False)

    assert done.returncode == 0, done.stderr
    assert f"preToolCall hook folder: {project.dir / 'hooks'}/" in done.stderr
    assert f"preToolCall hook script: {project.dir / 'hooks' / 'rules.py'}" in done.stderr
    (entry,) = json.loads((project.home / "trust.json").read_text())["agents"].values()
    assert entry["files"][str(project.dir / "hooks")]["sha256"] is not None


#: What the hostile model's shell tries on the guard's folder, each on its own.
TAMPERING = {
    "rewrite the module": f"printf '{LOOSER}' > hooks/rules.py",
    "shadow json": "printf 'def load(f):\\n    return {}\\n' > hooks/json.py",
    "a package beside it": "mkdir hooks/json",
    "move the module away": "mv hooks/rules.py hooks/old.py",
    "replace the folder": "mv hooks hooks.old && mkdir hooks",
}


@pytest.mark.parametrize("command", TAMPERING.values(), ids=TAMPERING.keys())
def test_the_models_shell_cannot_change_the_guards_folder_in_the_sandbox(
    project: Project, command: str
) -> None:
    rules = guarded_project(project)
    before = sorted(p.name for p in rules.parent.iterdir())
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    project.write_agent(
        script, yolo=True, hooks={"preToolCall": [{"command": "python3 hooks/guard.py"}]}
    )

    done = project.hookgate("-p", "loosen the guard, then clean up")

    assert done.returncode == 0, done.stderr
    assert rules.read_text() == RULES
    assert sorted(p.name for p in rules.parent.iterdir() if p.name != "__pycache__") == before
    tampering, removal = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert "Read-only file system" in tampering or "Device or resource busy" in tampering
    assert removal == "[denied by a hook: no rm]"
    assert (project.dir / "victim").exists()


def test_file_tools_refuse_to_write_into_the_guards_folder(project: Project) -> None:
    guarded_project(project)
    script = project.script(
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "hooks/json.py", "content": "x"}}
            ]
        },
        {"text": "done"},
    )
    project.write_agent(
        script, yolo=True, hooks={"preToolCall": [{"command": "python3 hooks/guard.py"}]}
    )

    done = project.hookgate("-p", "shadow json")

    assert done.returncode == 0, done.stderr
    assert not (project.dir / "hooks" / "json.py").exists()
    (result,) = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert result.startswith("[denied: hooks/json.py is protected:")


def test_unconfined_a_module_added_to_the_folder_mid_session_blocks_the_guard(
    project: Project,
) -> None:
    guarded_project(project)
    shadow = "printf 'def load(f):\\n    return {}\\n' > hooks/json.py"
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": shadow}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    guard = {"command": "python3 hooks/guard.py", "matcher": "^shell$"}
    project.write_agent(script, yolo=True, hooks={"preToolCall": [guard]}, sandbox={"mode": "off"})

    done = project.hookgate("-p", "shadow json, then clean up")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "hooks" / "json.py").exists()  # unconfined, the shell could
    assert (project.dir / "victim").exists()
    removal = [m["content"] for m in project.messages() if m["role"] == "tool"][1]
    assert removal.startswith("[denied by a hook:")
    assert f"{project.dir / 'hooks'} changed since the session started" in removal


@pytest.mark.parametrize(
    "command",
    [".venv/bin/python hooks/guard.py", "node_modules/.bin/guard --stdin"],
    ids=["an interpreter", "a package manager's folder"],
)
def test_an_interpreters_or_a_package_managers_folder_is_not_the_hooks(
    project: Project, command: str
) -> None:
    for name in (".venv/bin/python", ".venv/bin/pip", "node_modules/.bin/guard",
                 "node_modules/.bin/other", "hooks/guard.py"):  # fmt: skip
        (project.dir / name).parent.mkdir(parents=True, exist_ok=True)
        (project.dir / name).write_text("")
        (project.dir / name).chmod(0o755)
    (hook,) = parse_hooks(
        {"preToolCall": [{"command": command}]}, Where("hookgate.yaml"), base_dir=project.dir
    )

    files = what_hook_runs(hook, project.dir).files

    program = project.dir / command.split()[0]
    assert program in files
    assert {program.parent, program.parent / ("pip" if "venv" in command else "other")}.isdisjoint(
        files
    )


@pytest.mark.parametrize(
    ("script", "sources"),
    [
        ("guard.sh", ". ./lib.sh"),
        ("guard", "source lib.sh"),  # no suffix: its `#!` line says it is a shell's
    ],
)
def test_a_library_a_shell_script_beside_the_agent_file_sources_is_pinned(
    project: Project, script: str, sources: str
) -> None:
    (project.dir / "lib.sh").write_text('deny() { echo \'{"action": "deny"}\'; }\n')
    (project.dir / script).write_text(f"#!/usr/bin/env sh\n{sources}\ndeny\n")
    (project.dir / script).chmod(0o755)
    project.write_agent(
        project.script({"text": "hi"}), hooks={"preToolCall": [{"command": f"./{script}"}]}
    )
    project.trust()
    assert project.hookgate("-p", "hi", trusted=False).returncode == 0
    (project.dir / "lib.sh").write_text("deny() { echo '{}'; }\n")

    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1
    assert f"{project.dir / 'lib.sh'} changed since you trusted it" in done.stderr


def test_a_library_sourced_by_a_path_built_at_run_time_is_named_not_pinned(
    project: Project,
) -> None:
    (project.dir / "guard.sh").write_text('#!/bin/sh\n. "$GUARD_LIB/lib.sh"\n')
    project.write_agent(
        project.script({"text": "hi"}), hooks={"preToolCall": [{"command": "sh guard.sh"}]}
    )

    done = project.hookgate("trust", "--yes", trusted=False)

    assert done.returncode == 0, done.stderr
    assert "not pinned: $GUARD_LIB/lib.sh (read at run time" in done.stderr


def test_byte_code_the_model_plants_beside_a_root_guard_blocks_its_next_run(
    project: Project,
) -> None:
    """The project's own folder is the model's to write, in the sandbox too: what it
    plants where the guard's imports are served from is seen before the guard runs."""
    guarded_project(project, "")
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "printf x > json.pyc"}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": "python3 guard.py"}]})

    done = project.hookgate("-p", "plant, then clean up")

    assert done.returncode == 0, done.stderr
    assert (project.dir / "json.pyc").exists()  # the workspace's root is writable
    assert (project.dir / "victim").exists()
    removal = [m["content"] for m in project.messages() if m["role"] == "tool"][1]
    assert removal.startswith("[denied by a hook:")
    assert f"{project.dir / 'json.pyc'} changed since the session started" in removal


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ("make -s guard", "Makefile"),
        ("npm run --silent guard", "package.json"),
        ("python3 -m checks.guard", "json.py"),  # `-m`: this folder first on sys.path
    ],
    ids=["make", "npm run", "python -m"],
)
def test_what_a_task_runner_or_python_m_reads_changed_after_trust_stops_every_start(
    project: Project, command: str, changed: str
) -> None:
    (project.dir / "Makefile").write_text("guard:\n\tpython3 -m checks.guard\n")
    (project.dir / "package.json").write_text('{"scripts": {"guard": "make -s guard"}}\n')
    (project.dir / "checks").mkdir()
    (project.dir / "checks" / "__init__.py").write_text("")
    (project.dir / "checks" / "guard.py").write_text("import json\n")
    project.write_agent(
        project.script({"text": "hi"}, {"text": "hi"}),
        hooks={"preToolCall": [{"command": command}]},
    )
    project.trust()
    assert project.hookgate("-p", "hi", trusted=False).returncode == 0
    (project.dir / changed).write_text("{}\n")

    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1
    assert str(project.dir / changed) in done.stderr
    assert "hookgate trust" in done.stderr


#: The model's command: byte code for `rules.py` that allows everything, stamped with
#: the source's mtime and size, where Python looks first (`__pycache__`).
FORGE = (
    "python3 - <<'EOF'\n"
    "import importlib._bootstrap_external as be, importlib.util, os\n"
    "source = os.path.abspath('rules.py')\n"
    "info = os.stat(source)\n"
    "code = compile('def judge(event):\\n    return {}\\n\\ncheck = judge\\n', source, 'exec')\n"
    "target = importlib.util.cache_from_source(source)\n"
    "os.makedirs(os.path.dirname(target), exist_ok=True)\n"
    "open(target, 'wb').write(be._code_to_timestamp_pyc(code, info.st_mtime, info.st_size))\n"
    "print('planted', os.path.relpath(target))\n"
    "EOF"
)


def test_byte_code_the_model_forges_in_pycache_is_never_what_a_hook_runs(
    project: Project,
) -> None:
    """A `.pyc` in `__pycache__` whose stamp matches the source is what Python imports
    in the source's place; the project's root, where it goes, is the model's to write."""
    (project.dir / "rules.py").write_text(RULES)
    (project.dir / "guard.py").write_text(GUARD)
    script = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": FORGE}}]},
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": "python3 guard.py"}]})
    (project.dir / "victim").write_text("")
    project.trust()

    done = project.hookgate("-p", "plant, then clean up", trusted=False)

    assert done.returncode == 0, done.stderr
    planted, removal = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert planted.startswith("planted __pycache__/rules.")
    assert removal.startswith("[denied by a hook")
    assert (project.dir / "victim").exists()


def test_a_python_hooks_module_is_never_imported_from_forged_byte_code(project: Project) -> None:
    """The same for a `python:` hook beside the agent file, which hookgate imports
    itself at the next session's start."""
    (project.dir / "rules.py").write_text(RULES.replace("def judge", "def check"))
    hooks = {"preToolCall": [{"python": "rules:check"}]}
    plant = {"tool_calls": [{"name": "shell", "arguments": {"command": FORGE}}]}
    project.write_agent(project.script(plant, {"text": "done"}), yolo=True, hooks=hooks)
    project.trust()
    assert project.hookgate("-p", "plant", trusted=False).returncode == 0
    assert list((project.dir / "__pycache__").glob("rules.*.pyc"))
    remove = {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]}
    project.write_agent(project.script(remove, {"text": "done"}, name="two.yaml"), yolo=True,
                        hooks=hooks)  # fmt: skip
    (project.dir / "victim").write_text("")
    project.trust()

    done = project.hookgate("-p", "clean up", trusted=False)

    assert done.returncode == 0, done.stderr
    assert (project.dir / "victim").exists()
