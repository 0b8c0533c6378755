"""The files a hook's scripts and modules really load are pinned: `#!` lines, module
search, `env:` keys, virtual environments, modules that shadow the standard library.

Each changed-after-trust case: a project whose sessionStart hook runs a file that
writes `benign` to a marker; trusted; a session shows the file runs; the file is then
changed (as a `git pull` would) to write `EVIL`; the next session must refuse to start.
Before, each file was loaded by the hook but not pinned, and the changed code ran.
The session cases: the model (scripted, `yolo`) plants code where the hook's
interpreter loads it; the hook's next run must not run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks.runs.environments import environments
from hookgate.hooks.runs.pins import FilePins, UnpinnedFile, file_digest
from hookgate.hooks.runs.shadows import SHADOWS
from hookgate.hooks.runs.whatruns import HookRuns, _Found, what_server_runs
from runtime.project import Project
from trust.marking import js, py, recipe, sh

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


@dataclass
class Case:
    files: Callable[[Path, str], dict[str, str]]
    """The project's files, given the marker and the word the payload writes."""
    hook: dict[str, Any]
    executable: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "#!/bin/sh tools/payload: the #! line's argument": Case(
        lambda m, w: {"hooks/guard": "#!/bin/sh tools/payload\nexit 0\n",
                      "tools/payload": f"echo {w} >> '{m}'\n"},
        {"command": "./hooks/guard"}, executable=("hooks/guard",),
    ),
    "#!tools/interp: a relative interpreter": Case(
        lambda m, w: {"hooks/guard": "#!tools/interp\nexit 0\n", "tools/interp": sh(m, w)},
        {"command": "./hooks/guard"}, executable=("hooks/guard", "tools/interp"),
    ),
    "#!/usr/bin/env -S sh tools/x: the words env splits": Case(
        lambda m, w: {"hooks/guard": "#!/usr/bin/env -S sh tools/x\nexit 0\n",
                      "tools/x": f"echo {w} >> '{m}'\n"},
        {"command": "./hooks/guard"}, executable=("hooks/guard",),
    ),
    "./bin/python3 a wrapper script named like an interpreter": Case(
        lambda m, w: {"bin/python3": "#!/bin/sh\n. bin/env.sh\nexec python3 \"$@\"\n",
                      "bin/env.sh": f"echo {w} >> '{m}'\n", "hooks/g.py": ""},
        {"command": "./bin/python3 hooks/g.py"}, executable=("bin/python3",),
    ),
    "a python script beside the agent file by its #! line": Case(
        lambda m, w: {"guard": "#!/usr/bin/env python3\nimport policy\n", "policy.py": py(m, w)},
        {"command": "./guard"}, executable=("guard",),
    ),
    "python3 - < hooks/guard.py imports from the directory it runs in": Case(
        lambda m, w: {"hooks/guard.py": "import policy\n", "policy.py": py(m, w)},
        {"command": "python3 - < hooks/guard.py"},
    ),
    "python3 guard: a script with neither suffix nor #! line": Case(
        lambda m, w: {"guard": "import policy\n", "policy.py": py(m, w)},
        {"command": "python3 guard"},
    ),
    "import tools.policy: a namespace package": Case(
        lambda m, w: {"guard.py": "import tools.policy\n", "tools/policy.py": py(m, w)},
        {"command": "python3 guard.py"},
    ),
    "require('./tools'): package.json's main": Case(
        lambda m, w: {"guard.js": "require('./tools');\n",
                      "tools/package.json": '{"main": "main.js"}', "tools/main.js": js(m, w)},
        {"command": "node guard.js"},
    ),
    "require('./tools'): its index.js": Case(
        lambda m, w: {"guard.js": "require('./tools');\n", "tools/index.js": js(m, w)},
        {"command": "node guard.js"},
    ),
    "hooks/g.py a link: Python imports from the target's folder": Case(
        lambda m, w: {"tools/g.py": "import policy\n", "tools/policy.py": py(m, w)},
        {"command": "python3 hooks/g.py"}, links={"hooks/g.py": "../tools/g.py"},
    ),
    "g.py at the root a link: Python imports from the target's folder": Case(
        lambda m, w: {"tools/g.py": "import policy\n", "tools/policy.py": py(m, w)},
        {"command": "python3 g.py"}, links={"g.py": "tools/g.py"},
    ),
    "hooks/g.js a link: Node.js requires from the target's folder": Case(
        lambda m, w: {"tools/g.js": "require('./policy');\n", "tools/policy.js": js(m, w)},
        {"command": "node hooks/g.js"}, links={"hooks/g.js": "../tools/g.js"},
    ),
    "hooks/g.js: require('../lib/policy') past its folder": Case(
        lambda m, w: {"hooks/g.js": "require('../lib/policy');\n", "lib/policy.js": js(m, w)},
        {"command": "node hooks/g.js"},
    ),
    "a Node.js script beside the agent file by its #! line": Case(
        lambda m, w: {"guard": "#!/usr/bin/env node\nrequire('./policy');\n",
                      "policy.js": js(m, w)},
        {"command": "./guard"}, executable=("guard",),
    ),
    "env MAKEFILES=extra.mk": Case(
        lambda m, w: {"Makefile": "guard:\n\t@true\n",
                      "extra.mk": recipe(m, w, "pre") + "guard: pre\n"},
        {"command": "make -s guard", "env": {"MAKEFILES": "extra.mk"}},
    ),
    "env HOME=home: Python's user site-packages .pth": Case(
        lambda m, w: {"hooks/g.py": "",
                      f"home/.local/{SITE}/x.pth": "import os; " + py(m, w).strip() + "\n"},
        {"command": "python3 hooks/g.py", "env": {"HOME": "home"}},
    ),
    "env PERL5OPT=-Itools -MPolicy": Case(
        lambda m, w: {"tools/Policy.pm": f"package Policy;\nopen(my $f, '>>', '{m}'); "
                      f"print $f \"{w}\\n\"; close $f;\n1;\n"},
        {"command": "perl -e 1", "env": {"PERL5OPT": "-Itools -MPolicy"}},
    ),
}  # fmt: skip


def write(project: Path, files: dict[str, str], executable: tuple[str, ...]) -> None:
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name in executable:
            path.chmod(0o755)


@pytest.mark.parametrize("name", list(CASES))
def test_a_file_the_hook_loads_changed_after_trust_is_refused(
    project: Project, tmp_path: Path, name: str
) -> None:
    case = CASES[name]
    mark = tmp_path / "marker"
    write(project.dir, case.files(mark, "benign"), case.executable)
    for link, to in case.links.items():
        (project.dir / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(to, project.dir / link)
    project.write_agent(project.script({"text": "done"}), hooks={"sessionStart": [case.hook]})
    project.trust()
    first = project.hookgate("-p", "hi", trusted=False)
    assert first.returncode == 0, first.stderr
    assert mark.exists()
    assert "benign" in mark.read_text(), "the trusted hook ran the file"

    benign, evil = case.files(mark, "benign"), case.files(mark, "EVIL")
    write(project.dir, {n: t for n, t in evil.items() if benign.get(n) != t}, case.executable)
    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1
    assert "is not trusted" in done.stderr
    assert "EVIL" not in mark.read_text()


# --- the session: what the model plants where the hook's interpreter loads it -------


def guarded_by(project: Project, command: str, *calls: str) -> None:
    """A trusted hook `command` guarding the shell, and a model that runs each call."""
    replies = [{"tool_calls": [{"name": "shell", "arguments": {"command": c}}]} for c in calls]
    project.write_agent(
        project.script(*replies, {"text": "done"}),
        yolo=True,
        hooks={"preToolCall": [{"matcher": "^shell$", "command": command, "onError": "fail"}]},
    )
    project.trust()


def tool_results(project: Project) -> list[str]:
    return [str(m["content"]) for m in project.messages() if m["role"] == "tool"]


PLANT = "echo 'import os; os.close(os.open(\"pwned\", os.O_CREAT))' > "


@pytest.mark.skipif(not Path("/usr/bin/python3").is_file(), reason="no distribution Python")
def test_a_venv_made_from_the_system_python_is_kept_from_the_model(project: Project) -> None:
    """`.venv/bin/python -> python3 -> /usr/bin/python3`: the venv's interpreter, which
    runs its `.pth` files, not a system program."""
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(project.dir / ".venv")],
                   check=True)  # fmt: skip
    site = next((project.dir / ".venv" / "lib").glob("python*/site-packages"))
    (project.dir / "hooks").mkdir()
    (project.dir / "hooks" / "guard.py").write_text("import json, sys\njson.load(sys.stdin)\n")
    plant = PLANT + str(site.relative_to(project.dir) / "zz.pth")
    guarded_by(project, ".venv/bin/python hooks/guard.py", plant, "true")

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    planted, _ = tool_results(project)
    assert "Read-only file system" in planted
    assert not (project.dir / "pwned").exists()


@pytest.mark.skipif(not Path("/usr/bin/python3").is_file(), reason="no distribution Python")
def test_an_mcp_server_run_by_a_system_made_venv_runs_from_it(tmp_path: Path) -> None:
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(tmp_path / ".venv")],
                   check=True)  # fmt: skip
    (tmp_path / "server.py").write_text("")

    runs = what_server_runs([".venv/bin/python", "server.py"], {}, tmp_path, tmp_path)

    assert tmp_path / ".venv" / "bin" / "python" in runs.files
    assert tmp_path / ".venv" in environments(runs.files, tmp_path)


GUARD = "import json, subprocess, sys\njson.load(sys.stdin)\n"


@pytest.mark.parametrize("module", ["selectors.py", "re.py", "email/__init__.py"])
def test_a_module_shadowing_the_standard_library_beside_a_root_hook_is_refused(
    project: Project, module: str
) -> None:
    """`json` imports `re`, `subprocess` `selectors`: from the guard's folder first."""
    (project.dir / "guard.py").write_text(GUARD)
    (project.dir / "email").mkdir()  # a folder of the project's, no package: no shadow
    plant = PLANT + module
    guarded_by(project, "python3 guard.py", plant, "rm -f victim")
    (project.dir / "victim").write_text("")

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    _, removed = tool_results(project)
    assert removed.startswith("[denied by a hook:")
    assert f"{project.dir / module}" in removed
    assert "would shadow" in removed
    assert not (project.dir / "pwned").exists()
    assert (project.dir / "victim").exists()


@pytest.mark.parametrize(
    "module", ["main.py", "test.py", "notes/__init__.py", "re.txt", "email/notes.txt"]
)
def test_an_ordinary_module_beside_a_root_hook_leaves_it_running(
    project: Project, module: str
) -> None:
    """`email/` with no `__init__.py` is no package: the standard `email` it imports
    comes first, whatever the folder holds."""
    (project.dir / "guard.py").write_text(GUARD + "import email\n")
    (project.dir / "notes").mkdir()
    (project.dir / "email").mkdir()
    guarded_by(project, "python3 guard.py", f"echo x > {module}", "echo hello")

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    assert tool_results(project)[1] == "hello"


def test_a_shadowing_module_there_when_trusted_is_pinned_with_its_content(
    project: Project,
) -> None:
    (project.dir / "guard.py").write_text(GUARD)
    (project.dir / "selectors.py").write_text("from _selectors_real import *\n")
    runs = resolve("python3 guard.py", project.dir)
    assert project.dir / "selectors.py" in runs.files


# --- the resolver, read alone ------------------------------------------------------


def resolve(line: str, base: Path, env: dict[str, str] | None = None) -> HookRuns:
    found = _Found(base)
    found.line(line, base)
    found.environment(env or {}, base)
    return found.runs()


def test_every_node_modules_a_node_script_searches_is_kept_present_or_not(tmp_path: Path) -> None:
    """`require('picocolors')`, tolerating its absence: a `node_modules` the model makes
    later is searched too."""
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "guard.js").write_text("try { require('picocolors') } catch {}\n")

    found = environments(resolve("node hooks/guard.js", tmp_path).files, tmp_path)

    assert found == {tmp_path / "hooks" / "node_modules", tmp_path / "node_modules"}


@pytest.mark.parametrize(
    ("key", "value", "pinned"),
    [
        ("MAKEFILES", "extra.mk", "extra.mk"),
        ("GIT_CONFIG_GLOBAL", "conf/gitconfig", "conf/gitconfig"),
        ("GIT_CONFIG_SYSTEM", "gitconfig", "gitconfig"),
        ("XDG_CONFIG_HOME", "cfg", "cfg"),
        ("NPM_CONFIG_USERCONFIG", "npmrc", "npmrc"),
        ("npm_config_node_options", "--require ./pre.js", "pre.js"),
        ("LUA_INIT", "@init.lua", "init.lua"),
        ("RUBYOPT", "-r./pre.rb", "pre.rb"),
        ("PERL5OPT", "-Itools", "tools"),
        ("NODE_OPTIONS", "--import=./pre.mjs", "pre.mjs"),
        ("JAVA_TOOL_OPTIONS", "-javaagent:agent.jar", "agent.jar"),
        ("HOME", "home", f"home/.local/{SITE}"),
        ("PYTHONUSERBASE", "base", f"base/{SITE}"),
    ],
)
def test_an_env_key_that_loads_code_pins_what_it_names(
    tmp_path: Path, key: str, value: str, pinned: str
) -> None:
    target = tmp_path / pinned
    if target.name == "site-packages":  # a package folder: no folder's walk enters it
        target.mkdir(parents=True)
        target = target / "x.pth"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("")

    runs = resolve("true", tmp_path, {key: value})

    assert target in runs.files
    assert f"{key}={value}" in runs.loaders


def test_an_unknown_env_key_naming_a_project_path_is_listed_not_pinned(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    runs = resolve("true", tmp_path, {"MY_TOOL_DIR": "data"})
    assert any("data" in word for word in runs.unread)
    assert tmp_path / "data" not in runs.files


def test_the_shadows_pin_is_checked_by_its_folders_stat_and_re_listed_on_a_change(
    tmp_path: Path,
) -> None:
    """The check at each run: settled, an unchanged folder is a `stat`; a module added
    to a package folder (no change to the root's own `stat`) is still seen."""
    (tmp_path / "guard.py").write_text(GUARD)
    (tmp_path / "email").mkdir()
    files = resolve("python3 guard.py", tmp_path).files
    pins = FilePins({str(path): file_digest(path) for path in files}, settle_ns=0)
    guard = tmp_path / SHADOWS
    assert guard in files

    pins.check(guard)
    (tmp_path / "main.py").write_text("")
    pins.check(guard)
    (tmp_path / "email" / "__init__.py").write_text("")
    with pytest.raises(UnpinnedFile, match=r"email/__init__\.py"):
        pins.check(guard)


def test_the_summary_says_no_shadowing_module_may_appear(project: Project) -> None:
    (project.dir / "guard.py").write_text(GUARD)
    project.write_agent(project.script({"text": "done"}),
                        hooks={"sessionStart": [{"command": "python3 guard.py"}]})  # fmt: skip

    shown = project.hookgate("trust", "--yes", trusted=False)

    assert shown.returncode == 0, shown.stderr
    line = f"in {project.dir}{os.sep}, no module that would shadow Python's"
    assert line in shown.stderr
