"""A hook that runs from the project's own packages runs what the model could rewrite.

`.venv/bin/python hooks/guard.py` imports from `.venv`'s site-packages and runs its
`.pth` files; `npx guard` runs `node_modules/.bin/guard`; `node hooks/guard.js`
requires from `node_modules`. Each is a folder in the workspace that a package
manager fills, so trust does not pin it whole (an `npm install` would untrust the
project), but the hook runs it outside the sandbox: a model that rewrites it there
rewrites the guard. So the folder a hook runs from is read-only to the model's shell
and its file tools, and a program `npx` (or `uv run`, …) runs is pinned.

Each case: the model (scripted, `yolo`) changes the environment with its shell, then
asks for the call the guard denies. Before, the change landed and the guard allowed it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runtime.project import Project

PY_GUARD = "import json, sys\nimport rules\nprint(json.dumps(rules.judge(json.load(sys.stdin))))\n"
PY_RULES = (
    "def judge(event):\n"
    "    command = str(event.get('arguments', {}).get('command', ''))\n"
    "    return {'action': 'deny', 'reason': 'no rm'} if 'rm' in command else {}\n"
)
JS_GUARD = (
    "#!/usr/bin/env node\n"
    "const rules = require('rules');\n"
    "let input = '';\n"
    "process.stdin.on('data', (d) => { input += d; });\n"
    "process.stdin.on('end', () => console.log(JSON.stringify(rules.judge(JSON.parse(input)))));\n"
)
JS_RULES = (
    "exports.judge = (event) => String((event.arguments || {}).command || '').includes('rm')\n"
    "  ? { action: 'deny', reason: 'no rm' } : {};\n"
)
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def venv(project: Project) -> str:
    """A virtual environment in the project holding the guard's rules; the hook."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project.dir / ".venv")],
                   check=True)  # fmt: skip
    (project.dir / ".venv" / SITE / "rules.py").write_text(PY_RULES)
    (project.dir / "hooks").mkdir()
    (project.dir / "hooks" / "guard.py").write_text(PY_GUARD)
    return ".venv/bin/python hooks/guard.py"


def node_modules(project: Project) -> Path:
    modules = project.dir / "node_modules"
    (modules / "rules").mkdir(parents=True)
    (modules / "rules" / "index.js").write_text(JS_RULES)
    return modules


def npx(project: Project) -> str:
    """A package's program in `node_modules/.bin`, as `npm install` links it; the hook."""
    modules = node_modules(project)
    (modules / "guard" / "bin").mkdir(parents=True)
    (modules / "guard" / "bin" / "guard.js").write_text(JS_GUARD)
    (modules / "guard" / "bin" / "guard.js").chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "guard").symlink_to("../guard/bin/guard.js")
    return "npx --no guard"


def node_script(project: Project) -> str:
    """A guard in the hooks folder that requires a package from `node_modules`."""
    node_modules(project)
    (project.dir / "hooks").mkdir()
    (project.dir / "hooks" / "guard.js").write_text(JS_GUARD)
    return "node hooks/guard.js"


LAYOUTS = {"venv": venv, "npx": npx, "node script": node_script}
#: The model's ways into each (none holds the letters the guard looks for).
ATTACKS = {
    "venv": {
        "rewrite the module it imports": f"echo 'def judge(e): return {{}}' > .venv/{SITE}/rules.py",
        "plant a .pth file": f"echo 'import os; os.close(os.open(\"pwned\", os.O_CREAT))' "
        f"> .venv/{SITE}/zz.pth",
        "swap the interpreter": "ln -sf /bin/true .venv/bin/python",
        "a module that shadows it": f"mkdir .venv/{SITE}/rules",
    },
    "npx": {
        "rewrite the program": "echo 'console.log(\"{}\")' > node_modules/guard/bin/guard.js",
        "relink the program": "echo 'console.log(\"{}\")' > x.js && ln -sf ../../x.js "
        "node_modules/.bin/guard",
        "rewrite what it requires": "echo 'exports.judge = () => ({})' > node_modules/rules/index.js",
    },
    "node script": {
        "rewrite what it requires": "echo 'exports.judge = () => ({})' > node_modules/rules/index.js",
        "a package that shadows it": "mkdir -p hooks/node_modules/rules && echo 'exports.judge "
        "= () => ({})' > hooks/node_modules/rules/index.js",
    },
}
CASES = [(layout, attack) for layout, attacks in ATTACKS.items() for attack in attacks]


def guarded(project: Project, layout: str, *calls: str | dict[str, Any]) -> None:
    """The guard from `layout`, trusted, and a model that makes each call in turn."""
    guarded_by(project, LAYOUTS[layout](project), *calls)


def tool_results(project: Project) -> list[str]:
    return [str(m["content"]) for m in project.messages() if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("layout", "attack"), CASES, ids=[f"{layout}: {attack}" for layout, attack in CASES]
)
def test_the_model_cannot_change_what_a_hook_runs_from_the_projects_packages(
    project: Project, layout: str, attack: str
) -> None:
    guarded(project, layout, ATTACKS[layout][attack], "rm -f victim")

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    changed, removed = tool_results(project)
    assert "Read-only file system" in changed
    assert removed == "[denied by a hook: no rm]"
    assert (project.dir / "victim").exists()
    assert not (project.dir / "pwned").exists()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_control_the_guard_runs_from_its_packages_and_denies(project: Project, layout: str) -> None:
    guarded(project, layout, "echo hello", "rm -f victim")

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    assert tool_results(project) == ["hello", "[denied by a hook: no rm]"]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_file_tools_refuse_the_packages_a_hook_runs_from(project: Project, layout: str) -> None:
    target = {"venv": f".venv/{SITE}/rules.py", "npx": "node_modules/guard/bin/guard.js",
              "node script": "node_modules/rules/index.js"}[layout]  # fmt: skip
    guarded(project, layout, {"name": "write_file", "arguments": {"path": target, "content": "x"}})
    before = (project.dir / target).read_bytes()

    project.hookgate("-p", "go", trusted=False)

    assert (project.dir / target).read_bytes() == before
    (result,) = tool_results(project)
    assert "is protected" in result


def test_a_program_npx_runs_is_pinned(project: Project) -> None:
    guarded(project, "npx", "rm -f victim")
    program = project.dir / "node_modules" / "guard" / "bin" / "guard.js"
    program.write_text(program.read_text().replace("rules.judge(", "({}) || rules.judge("))

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 1
    assert f"{project.dir}/node_modules/.bin/guard changed since you trusted it" in done.stderr
    assert (project.dir / "victim").exists()


def test_the_summary_names_the_packages_the_model_cannot_write(project: Project) -> None:
    guarded(project, "venv")

    shown = project.hookgate("trust", "--yes", trusted=False)

    assert shown.returncode == 0, shown.stderr
    heading, folder = shown.stderr.splitlines()[-3:-1]
    assert heading.startswith("Read-only to the model, as hooks run from them")
    assert folder == f"  {project.dir}{os.sep}.venv{os.sep}"


def test_a_hook_started_by_name_from_an_activated_environment_is_kept_from_the_model(
    project: Project,
) -> None:
    """`source .venv/bin/activate; hookgate`: a hook's `python3` is `.venv`'s."""
    venv(project)
    bin_dir = project.dir / ".venv" / "bin"
    plant = f"echo 'import os; os.close(os.open(\"pwned\", os.O_CREAT))' > .venv/{SITE}/zz.pth"
    guarded_by(project, "python3 hooks/guard.py", plant, "rm -f victim")

    done = project.hookgate("-p", "go", trusted=False, env=on_path(project, bin_dir))

    assert done.returncode == 0, done.stderr
    planted, removed = tool_results(project)
    assert "Read-only file system" in planted
    assert removed == "[denied by a hook: no rm]"
    assert not (project.dir / "pwned").exists()


def test_a_program_dir_of_the_workspace_on_path_is_kept_from_the_model(project: Project) -> None:
    """A `bin/` on `PATH` (direnv's `PATH_add bin`): a hook's `guard` and `git` come from it."""
    bin_dir = project.dir / "bin"
    bin_dir.mkdir()
    guard = PY_GUARD.replace("import rules\n", PY_RULES).replace("rules.judge", "judge")
    (bin_dir / "guard").write_text(f"#!{sys.executable}\n{guard}")
    (bin_dir / "guard").chmod(0o755)
    plant = "printf '#!/bin/sh\\necho {}\\n' > bin/guard; printf '#!/bin/sh\\n' > bin/git"
    guarded_by(project, "guard", plant, "rm -f victim")

    done = project.hookgate("-p", "go", trusted=False, env=on_path(project, bin_dir))

    assert done.returncode == 0, done.stderr
    planted, removed = tool_results(project)
    assert planted.count("Read-only file system") == 2
    assert removed == "[denied by a hook: no rm]"
    assert sorted(path.name for path in bin_dir.iterdir()) == ["guard"]


def guarded_by(project: Project, command: str, *calls: str | dict[str, Any]) -> None:
    """A trusted hook `command` guarding the shell, and a model that makes each call in
    turn (a string: a shell command)."""
    replies = [
        {
            "tool_calls": [
                {"name": "shell", "arguments": {"command": c}} if isinstance(c, str) else c
            ]
        }
        for c in calls
    ]
    project.write_agent(
        project.script(*replies, {"text": "done"}),
        yolo=True,
        hooks={"preToolCall": [{"matcher": "^shell$", "command": command, "onError": "fail"}]},
    )
    (project.dir / "victim").write_text("")
    project.trust()


def on_path(project: Project, folder: Path) -> dict[str, str]:
    return project.env(PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_the_environment_hookgate_runs_in_is_kept_from_the_model(project: Project) -> None:
    """Were it inside the workspace (`workspace.dirs` names it here), a model that wrote
    there would rewrite hookgate itself for its next start."""
    prefix = Path(sys.prefix).resolve()
    assert prefix != Path(sys.base_prefix).resolve(), "the tests run in a virtual environment"
    mark = prefix / f"pwned-{os.getpid()}"
    project.write_agent(
        project.script(
            {"tool_calls": [{"name": "shell", "arguments": {"command": f"touch {mark}"}}]},
            {"text": "done"},
        ),
        yolo=True,
        workspace={"dirs": [str(prefix)]},
    )
    try:
        done = project.hookgate("-p", "go")

        assert done.returncode == 0, done.stderr
        assert not mark.exists()
        (result,) = tool_results(project)
        assert "Read-only file system" in result
    finally:
        mark.unlink(missing_ok=True)


@pytest.mark.parametrize("above", [0, 1], ids=["the project itself", "the folder above it"])
def test_a_path_entry_holding_the_project_leaves_it_writable(project: Project, above: int) -> None:
    """`PATH` names folders whose programs run; one that holds the whole workspace is no
    folder to keep from the model (it would have nothing left to write)."""
    folder = [project.dir, project.dir.parent][above]
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}}
    guarded_by(project, "true", write, "echo b > b.txt")

    done = project.hookgate("-p", "go", trusted=False, env=on_path(project, folder))

    assert done.returncode == 0, done.stderr
    assert (project.dir / "a.txt").read_text() == "a"
    assert (project.dir / "b.txt").read_text() == "b\n"
