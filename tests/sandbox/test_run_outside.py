"""What programs outside the sandbox run from the workspace stays out of the model's reach.

The model's commands may write the workspace; but some of its files are read and acted
on later by programs that run unconfined: git runs what `.git/config` and `.git/hooks`
name on the user's next `git status` (and on a hook's), an editor runs a project's
tasks, another agent CLI its project hooks and MCP servers, a shell its start-up
files. A command that writes one of them escapes the sandbox one step later, so each
is read-only to the shell and refused to the file tools, wherever it exists in a
writable dir. `writable: [.git]` gives `.git` back to the model.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runtime.project import Project
from sandbox.arena import snapshot

#: Files laid out in the project before the model's command, beside a `git init`.
LAID_OUT = {
    ".vscode/tasks.json": '{"version": "2.0.0", "tasks": []}\n',
    ".claude/settings.json": '{"permissions": {}}\n',
    ".gemini/settings.json": "{}\n",
    ".mcp.json": '{"mcpServers": {}}\n',
    ".bashrc": "# mine\n",
    ".gitmodules": "",
    ".husky/_/h": "#!/usr/bin/env sh\n",
    ".pre-commit-config.yaml": "repos: []\n",
    "lefthook.yml": "pre-commit:\n  commands: {}\n",
    ".config/lefthook-local.yml": "pre-commit:\n  commands: {}\n",
}
#: Commands that plant something an unconfined program would run, by every way in.
HOSTILE = {
    "a git hook": "printf '#!/bin/sh\\ntouch @P@/pwned\\n' > .git/hooks/pre-commit; "
    "chmod +x .git/hooks/pre-commit",
    "git config core.fsmonitor": "git config core.fsmonitor 'touch @P@/pwned'",
    "append to .git/config": "printf '[core]\\n\\tfsmonitor = touch @P@/pwned\\n' >> .git/config",
    "git config core.hooksPath": "mkdir -p h && git config core.hooksPath h",
    "a commondir of its own": 'mkdir -p c && echo "$PWD/c" > .git/commondir',
    "a .git of its own": "mv .git .git-old; git init -q && git config core.fsmonitor 'touch @P@/pwned'",
    "remove .git": "rm -rf .git",
    "python into .git": "python3 -c \"open('.git/config', 'a').write('[x]')\"",
    "from inside .git": "cd .git && echo x > description",
    "a link to .git": "ln -s .git g && echo '[x]' >> g/config",
    "editor tasks": 'echo \'{"tasks": [{"command": "touch pwned"}]}\' > .vscode/tasks.json',
    "rename the editor folder": "mv .vscode v && mkdir .vscode && echo x > .vscode/tasks.json",
    "Claude Code hooks": "echo '{\"hooks\": {}}' > .claude/settings.json",
    "Claude Code local hooks": "echo '{\"hooks\": {}}' > .claude/settings.local.json",
    "Gemini CLI settings": "echo '{\"hooks\": {}}' > .gemini/settings.json",
    "project MCP servers": 'echo \'{"mcpServers": {"x": {"command": "sh"}}}\' > .mcp.json',
    "a shell start-up file": "echo 'touch pwned' >> .bashrc",
    "submodule urls": "echo '[submodule \"x\"]' >> .gitmodules",
    "husky's dispatcher, which git ignores": "echo 'touch @P@/pwned' >> .husky/_/h",
    "pre-commit's hooks": "printf 'repos:\\n- repo: local\\n  hooks: [{id: x, name: x, "
    "entry: touch @P@/pwned, language: system}]\\n' > .pre-commit-config.yaml",
    "lefthook's commands": "echo '    x: {run: touch @P@/pwned}' >> lefthook.yml",
    "lefthook's local commands, a folder down": "echo '    x: {run: touch @P@/pwned}' "
    ">> .config/lefthook-local.yml",
    "move the folder holding them": "mv .config c && mkdir .config && cp c/* .config/ && "
    "echo '    x: {run: touch @P@/pwned}' >> .config/lefthook-local.yml",
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    for name, text in LAID_OUT.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return Project(directory, tmp_path / "home")


def run_outside(project: Project) -> dict[str, Any]:
    """Every entry of what programs outside the sandbox read, and whether `pwned` is."""
    seen: dict[str, Any] = {"pwned": (project.dir / "pwned").exists()}
    for name in {".git", *(Path(name).parts[0] for name in LAID_OUT)}:
        path = project.dir / name
        seen[name] = snapshot(path) if path.is_dir() else path.read_bytes()
    return seen


def play(project: Project, command: str, env: dict[str, str] | None = None, **settings: Any) -> str:
    """`command` run by the model's shell under yolo, then `git status` by a hook outside
    the sandbox (as the user's own next `git status`); the command's result."""
    command = command.replace("@P@", str(project.dir))
    project.write_agent(
        project.script({"tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
                       {"text": "done"}),
        yolo=True,
        hooks={"postToolCall": [{"command": "git status --porcelain > /dev/null 2>&1"}]},
        **settings,
    )  # fmt: skip
    done = project.hookgate("-p", "go", env=env)
    assert done.returncode == 0, done.stderr
    (result,) = [
        str(record["message"]["content"])
        for record in project.records()
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]
    return result


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_command_changes_nothing_that_runs_outside_the_sandbox(
    project: Project, name: str
) -> None:
    before = run_outside(project)

    play(project, HOSTILE[name])

    assert run_outside(project) == before
    assert not (project.dir / "pwned").exists()


def test_control_the_same_commands_unconfined_plant_what_git_then_runs(project: Project) -> None:
    before = run_outside(project)

    play(project, HOSTILE["git config core.fsmonitor"], sandbox={"mode": "off"})

    assert run_outside(project) != before
    assert (project.dir / "pwned").exists()


def test_git_reads_its_repository_and_the_workspace_stays_writable(project: Project) -> None:
    result = play(project, "echo ok > here.txt && git status --porcelain && git log -1 || true")

    assert (project.dir / "here.txt").read_text() == "ok\n"
    assert "?? here.txt" in result
    assert "Read-only file system" not in result


def test_writable_dot_git_gives_the_repository_back_to_the_model(project: Project) -> None:
    command = (
        "git add -A && git -c user.name=m -c user.email=m@x commit -qm one && git log --format=%s"
    )

    result = play(project, command, sandbox={"writable": [".git"]})

    assert result.splitlines()[0] == "one"
    assert (project.dir / ".vscode" / "tasks.json").read_text() == LAID_OUT[".vscode/tasks.json"]


def test_without_writable_dot_git_a_commit_fails_read_only(project: Project) -> None:
    before = run_outside(project)

    result = play(project, "git add -A; echo $?")

    assert "Read-only file system" in result
    assert run_outside(project) == before


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        (".git/hooks/pre-commit", "workspace-write"),
        (".git/config", "workspace-write"),
        (".vscode/tasks.json", "workspace-write"),
        (".claude/settings.local.json", "workspace-write"),
        (".bashrc", "off"),
        (".idea/workspace.xml", "off"),
    ],
)
def test_the_file_tools_refuse_what_runs_outside_the_sandbox(
    project: Project, path: str, mode: str
) -> None:
    """The file tools refuse them in every mode, present or not: a file tool can."""
    before = run_outside(project)
    project.write_agent(
        project.script(
            {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]},
            {"text": "done"},
        ),
        yolo=True,
        sandbox={"mode": mode},
    )

    done = project.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert run_outside(project) == before
    assert not (project.dir / ".idea").exists()
    (result,) = [
        str(record["message"]["content"])
        for record in project.records()
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]
    assert f"{path} is protected: programs outside the sandbox run what it holds" in result
    assert "writable: [.git]" in result or not path.startswith(".git")


@pytest.mark.parametrize(
    ("asker", "helper", "lands"), [(False, True, False), (True, True, True), (True, False, False)]
)
def test_an_asked_agent_takes_back_dot_git_only_where_its_asker_gave_it_too(
    project: Project, asker: bool, helper: bool, lands: bool
) -> None:
    folder = project.dir / "helper"
    folder.mkdir()
    command = "git config core.fsmonitor 'touch pwned'"
    (folder / "script.yaml").write_text(json.dumps(
        [{"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}, {"text": "done"}]
    ))  # fmt: skip
    (folder / "hookgate.yaml").write_text(json.dumps({
        "model": "scripted:script.yaml", "yolo": True,
        "sandbox": {"writable": ["../.git"] if helper else []},
    }))  # fmt: skip
    before = run_outside(project)
    ask = {"name": "ask_agent", "arguments": {"agent": "helper", "question": "go"}}
    project.write_agent(
        project.script({"tool_calls": [ask]}, {"text": "done"}),
        yolo=True,
        agents={"helper": {"file": "helper/hookgate.yaml"}},
        sandbox={"writable": [".git"] if asker else []},
    )

    done = project.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert (run_outside(project) != before) is lands
    results = [
        str(record["message"]["content"])
        for path in project.session_files()
        for record in project.records(path)
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]
    assert any("Read-only file system" in result for result in results) is not lands


#: Commands that make what was not there: a mount keeps only what exists, so hookgate
#: sets each one aside once the command has ended.
MADE = {
    ".git": "git init -q && git config core.fsmonitor 'touch @P@/pwned'",
    ".vscode": "mkdir .vscode && echo '{\"tasks\": []}' > .vscode/tasks.json",
    ".claude": "mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json",
    ".bashrc": "echo 'touch pwned' > .bashrc",
    ".lefthook.yml": "echo 'pre-commit: {commands: {x: {run: touch pwned}}}' > .lefthook.yml",
}


@pytest.fixture
def bare(tmp_path: Path) -> Project:
    """A project without a repository of its own, inside one (a monorepo's folder):
    a `.git` made in it is what git finds first there."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    directory = tmp_path / "project"
    directory.mkdir()
    return Project(directory, tmp_path / "home")


@pytest.mark.parametrize("name", list(MADE))
def test_what_a_command_makes_that_runs_outside_is_set_aside_when_it_ends(
    bare: Project, name: str
) -> None:
    result = play(bare, MADE[name] + " && echo made > kept.txt")

    assert not (bare.dir / name).exists()
    (aside,) = bare.dir.glob(f"{name}.hookgate-set-aside-*")
    assert f"set aside {name}, which this command made" in result
    assert aside.name in result
    assert (bare.dir / "kept.txt").read_text() == "made\n"
    assert not (bare.dir / "pwned").exists()


def test_control_unconfined_what_a_command_makes_stays(bare: Project) -> None:
    play(bare, MADE[".git"], sandbox={"mode": "off"})

    assert (bare.dir / ".git").is_dir()
    assert not list(bare.dir.glob(".git.hookgate-set-aside-*"))
    assert (bare.dir / "pwned").exists()


def test_the_shipped_audit_hook_writes_through_no_link_the_model_planted(
    project: Project, tmp_path: Path
) -> None:
    """The hook runs outside the sandbox; the log's name is the model's to replace. A
    link to `~/.bashrc` there would have the hook append the model's answer to it."""
    from importlib import resources

    victim = tmp_path / "bashrc"
    victim.write_text("# mine\n")
    hook = project.dir / "audit-log.sh"
    hook.write_bytes(resources.files("hookgate.examples").joinpath("audit-log.sh").read_bytes())
    hook.chmod(0o755)
    link = {"name": "shell", "arguments": {"command": f"ln -sf {victim} audit.log"}}
    project.write_agent(
        project.script({"tool_calls": [link]}, {"text": "$(touch pwned)"}),
        yolo=True,
        hooks={"postGeneration": [{"command": "./audit-log.sh"}]},
    )

    done = project.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "# mine\n"
    assert "audit.log is a symbolic link or no regular file; not written" in done.stderr


@pytest.fixture
def superproject(tmp_path: Path) -> Project:
    """A repository with a submodule at `sub/`, whose `sub/.git` file names its gitdir."""
    source = tmp_path / "source"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]
    subprocess.run([*git, "init", "-q", str(source)], check=True)
    subprocess.run(
        [*git, "-C", str(source), "commit", "-q", "--allow-empty", "-m", "one"], check=True
    )
    directory = tmp_path / "project"
    subprocess.run([*git, "init", "-q", str(directory)], check=True)
    subprocess.run([*git, "-C", str(directory), "submodule", "add", "-q", str(source), "sub"],
                   check=True, capture_output=True)  # fmt: skip
    return Project(directory, tmp_path / "home")


def test_a_submodules_git_file_is_read_only_to_the_model(superproject: Project) -> None:
    """Pointed at a gitdir of the model's, `sub/.git` would have the user's next `git
    status` in the repository above run that gitdir's `core.fsmonitor` (checked)."""
    pointer = superproject.dir / "sub" / ".git"
    before = pointer.read_bytes()
    evil = "mkdir -p evil && git init -q evil && echo 'gitdir: evil/.git' > sub/.git"

    result = play(superproject, evil)

    assert pointer.read_bytes() == before
    assert "Read-only file system" in result


@pytest.mark.parametrize("path", ["sub/.git", "vendor/lib/.git/config"])
def test_the_file_tools_refuse_a_git_entry_at_any_depth(superproject: Project, path: str) -> None:
    call = {"name": "write_file", "arguments": {"path": path, "content": "gitdir: evil\n"}}
    superproject.write_agent(
        superproject.script({"tool_calls": [call]}, {"text": "done"}), yolo=True
    )

    done = superproject.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert not (superproject.dir / "vendor").exists()
    assert (superproject.dir / "sub" / ".git").read_text().startswith("gitdir: ../.git/modules")
    (result,) = [
        str(record["message"]["content"])
        for record in superproject.records()
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]
    assert "is protected: programs outside the sandbox run what it holds" in result
    assert "gives it back" not in result  # no `writable:` entry could


#: Where a repository keeps its git hooks in its own tree, as many do to share them.
HOOKS_FOLDER = "scripts/git-hooks"
#: Hostile writes into that folder: the user's next `git commit` runs what it holds.
INTO_HOOKS = (
    f"echo 'touch @P@/pwned' >> {HOOKS_FOLDER}/pre-commit; "
    f"printf '#!/bin/sh\\ntouch @P@/pwned\\n' > {HOOKS_FOLDER}/post-commit; "
    f"chmod +x {HOOKS_FOLDER}/post-commit"
)


def _hooks_in_tree(project: Project, tmp_path: Path, scope: str) -> dict[str, str]:
    """`core.hooksPath` set to `HOOKS_FOLDER`, in the repository's own configuration or
    in the user's (a relative value is taken in each repository's tree); the
    environment the session and the user's later `git commit` run with."""
    env = project.env(GIT_CONFIG_GLOBAL=str(tmp_path / "gitconfig"))
    where = ["--global"] if scope == "global" else []
    subprocess.run(["git", "-C", str(project.dir), "config", *where, "core.hooksPath",
                    HOOKS_FOLDER], check=True, env=env)  # fmt: skip
    return env


def _commit(project: Project, env: dict[str, str]) -> None:
    """The user's next commit, outside any sandbox: it runs the hooks folder's hooks."""
    git = ["git", "-C", str(project.dir), "-c", "user.name=u", "-c", "user.email=u@x"]
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "mine"], env=env, check=False, capture_output=True)


@pytest.mark.parametrize("scope", ["local", "global"])
def test_the_folder_git_runs_hooks_from_is_read_only_to_the_model(
    project: Project, tmp_path: Path, scope: str
) -> None:
    env = _hooks_in_tree(project, tmp_path, scope)
    hook = project.dir / HOOKS_FOLDER / "pre-commit"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)

    result = play(project, INTO_HOOKS, env=env)

    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (hook.parent / "post-commit").exists()
    assert "Read-only file system" in result
    _commit(project, env)
    assert not (project.dir / "pwned").exists()


def test_a_hooks_folder_git_would_run_that_a_command_makes_is_set_aside(
    project: Project, tmp_path: Path
) -> None:
    env = _hooks_in_tree(project, tmp_path, "local")

    result = play(project, f"mkdir -p {HOOKS_FOLDER} && {INTO_HOOKS}", env=env)

    assert not (project.dir / HOOKS_FOLDER).exists()
    assert f"set aside {HOOKS_FOLDER}, which this command made" in result
    _commit(project, env)
    assert not (project.dir / "pwned").exists()


def test_control_unconfined_the_hooks_folder_runs_at_the_next_commit(
    project: Project, tmp_path: Path
) -> None:
    env = _hooks_in_tree(project, tmp_path, "local")

    play(project, f"mkdir -p {HOOKS_FOLDER} && {INTO_HOOKS}", env=env, sandbox={"mode": "off"})

    _commit(project, env)
    assert (project.dir / "pwned").exists()


@pytest.mark.parametrize(
    "path", [f"{HOOKS_FOLDER}/pre-commit", ".gitconfig-project", "tools/clean", "bin/merge"]
)
def test_the_file_tools_refuse_what_git_configuration_names(project: Project, path: str) -> None:
    """Whatever git runs from the tree: the hooks folder, an included configuration file,
    the program of a filter or a merge driver (one `git config` names, one the file it
    includes names)."""
    git = ["git", "-C", str(project.dir), "config"]
    subprocess.run([*git, "core.hooksPath", HOOKS_FOLDER], check=True)
    subprocess.run([*git, "include.path", "../.gitconfig-project"], check=True)
    subprocess.run([*git, "filter.x.clean", "./tools/clean --quiet"], check=True)
    (project.dir / ".gitconfig-project").write_text('[merge "m"]\n\tdriver = "bin/merge" %A\n')
    call = {"name": "write_file", "arguments": {"path": path, "content": "#!/bin/sh\n"}}
    project.write_agent(project.script({"tool_calls": [call]}, {"text": "done"}), yolo=True)

    done = project.hookgate("-p", "go")

    assert done.returncode == 0, done.stderr
    assert (project.dir / ".gitconfig-project").read_text().startswith("[merge")
    assert not any((project.dir / name).exists() for name in (HOOKS_FOLDER, "tools", "bin"))
    (result,) = [
        str(record["message"]["content"])
        for record in project.records()
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]
    assert "is protected: programs outside the sandbox run what it holds" in result
