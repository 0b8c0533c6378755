"""What a hook's script reaches past its own folder is pinned and kept from the model.

A hook's folder is pinned whole (`test_hook_folders`), but a script reaches further: it
sources a library in a hidden folder beside it (`.lib/`), through a link to a folder
elsewhere (`lib -> ../shared`), or runs another of the project's scripts
(`python3 "$CLAUDE_PROJECT_DIR/tools/policy.py"`, `"$(dirname "$0")/../bin/check"`).
Before, none of those was pinned: changed after trust, the change ran with no
question; and the model's shell, in its sandbox, rewrote the linked or run file.

The trust cases: trust, change the file the script reaches, start. The session cases:
the model (scripted, `yolo`) rewrites that file with its shell, then asks for the call
the guard denies.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hookgate.hooks import parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.runs.whatruns import HookRuns, what_hook_runs
from runtime.project import Project

DENY = 'deny() { echo \'{"action": "deny", "reason": "no rm"}\'; }\n'
ALLOW = "deny() { echo '{}'; }\n"
#: A Python policy the guard runs as a program of its own: denies `rm`.
POLICY = (
    "import json, sys\n"
    "command = str(json.load(sys.stdin).get('arguments', {}).get('command', ''))\n"
    "print(json.dumps({'action': 'deny', 'reason': 'no rm'} if 'rm' in command else {}))\n"
)
LOOSE_POLICY = "print('{}')\n"


def rm_script(project: Project, *first: dict[str, object]) -> str:
    """A scripted model that does `first`, then asks for `rm -f victim`."""
    (project.dir / "victim").write_text("")
    return project.script(
        *first,
        {"tool_calls": [{"name": "shell", "arguments": {"command": "rm -f victim"}}]},
        {"text": "done"},
    )


def shell(command: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


def refusal(project: Project) -> str:
    done = project.hookgate("-p", "clean up", trusted=False)
    assert done.returncode == 1, done.stdout
    assert (project.dir / "victim").exists()
    return done.stderr


def assert_kept_from_the_model(
    project: Project, done: subprocess.CompletedProcess[str], file: Path, text: str
) -> None:
    """The model's shell failed to rewrite `file` (still `text`), and the guard then
    denied its `rm`."""
    assert done.returncode == 0, done.stderr
    assert file.read_text() == text
    tampering, removal = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert "Read-only file system" in tampering
    assert removal == "[denied by a hook: no rm]"
    assert (project.dir / "victim").exists()


def trusted_guard(project: Project, source: str, *first: dict[str, object]) -> None:
    """`hooks/guard.sh`, which runs `source` and calls `deny` for a command that starts
    with `rm`: the guard of every shell call, trusted."""
    guard = project.hook("guard.sh", f'{source}\ncase "$(cat)" in *\'"rm \'*) deny;; esac')
    project.write_agent(
        rm_script(project, *first), yolo=True, hooks={"preToolCall": [{"command": guard}]}
    )
    project.trust()


def linked_library(project: Project) -> Path:
    """`hooks/lib` a link to `shared/`, which holds the library the guard sources."""
    shared = project.dir / "shared"
    shared.mkdir()
    (shared / "deny.sh").write_text(DENY)
    (project.dir / "hooks").mkdir()
    os.symlink("../shared", project.dir / "hooks" / "lib")
    return shared / "deny.sh"


def project_policy(project: Project) -> Path:
    tools = project.dir / "tools"
    tools.mkdir()
    (tools / "policy.py").write_text(POLICY)
    return tools / "policy.py"


def runs_of(project: Project, command: str) -> HookRuns:
    """What the `preToolCall` hook `command`, in the project's agent file, runs."""
    (hook,) = parse_hooks(
        {"preToolCall": [{"command": command}]}, Where("x.yaml"), base_dir=project.dir
    )
    return what_hook_runs(hook, project.dir)


# A hook's folder, whole: hidden folders and linked ones


def test_a_library_in_a_hidden_folder_beside_the_guard_is_pinned(project: Project) -> None:
    hidden = project.dir / "hooks" / ".lib"
    hidden.mkdir(parents=True)
    (hidden / "deny.sh").write_text(DENY)
    trusted_guard(project, '. "$(dirname "$0")/.lib/deny.sh"')
    (hidden / "deny.sh").write_text(ALLOW)

    assert f"hook script {hidden / 'deny.sh'} changed since you trusted it" in refusal(project)


def test_a_library_in_a_linked_folder_is_pinned(project: Project) -> None:
    library = linked_library(project)
    trusted_guard(project, '. "$(dirname "$0")/lib/deny.sh"')
    library.write_text(ALLOW)

    stderr = refusal(project)

    assert f"{project.dir / 'hooks' / 'lib' / 'deny.sh'} changed since you trusted it" in stderr


def test_the_models_shell_cannot_rewrite_a_library_through_its_real_path(
    project: Project,
) -> None:
    library = linked_library(project)
    trusted_guard(
        project,
        '. "$(dirname "$0")/lib/deny.sh"',
        shell(f"printf '{ALLOW}' > shared/deny.sh"),
    )

    done = project.hookgate("-p", "loosen the guard, then clean up", trusted=False)

    assert_kept_from_the_model(project, done, library, DENY)


def test_a_linked_folder_is_walked_once_and_the_systems_own_not_at_all(
    project: Project,
) -> None:
    hooks = project.dir / "hooks"
    hooks.mkdir()
    (hooks / "g.sh").write_text("")
    os.symlink(".", hooks / "loop")
    os.symlink("/usr/share", hooks / "system")
    runs = runs_of(project, "sh hooks/g.sh")

    assert runs.unread == ()
    assert hooks / "g.sh" in runs.files
    assert not any(part in ("loop", "system") for path in runs.files for part in path.parts)


def test_a_package_managers_folder_or_a_repository_in_the_hooks_folder_is_not_its(
    project: Project,
) -> None:
    """What `npm install` or `git pull` changes there would untrust the project: a
    package manager's folder is kept from the model when a hook runs from it
    (`environments`), and git's never runs as a hook's code."""
    hooks = project.dir / "hooks"
    for folder in ("node_modules/x", ".venv/lib", ".git/objects"):
        (hooks / folder).mkdir(parents=True)
        (hooks / folder / "f").write_text("")
    (hooks / ".venv" / "pyvenv.cfg").write_text("")
    (hooks / "g.sh").write_text("")
    files = runs_of(project, "sh hooks/g.sh").files

    assert hooks / "g.sh" in files
    assert not {"node_modules", ".venv", ".git"} & {p for f in files for p in f.parts}


# What a hook's script runs past its folder


RUNS_THE_POLICY = {
    "from where the hook runs": "exec python3 tools/policy.py",
    "by the script's folder": 'exec python3 "$(dirname "$0")/../tools/policy.py"',
    "by its folder made absolute": 'exec python3 "$(cd "$(dirname "$0")" && pwd)/../tools/policy.py"',
    "by ${0%/*}": 'python3 "${0%/*}/../tools/policy.py"',
    "as a program": 'exec "$(dirname -- "${BASH_SOURCE[0]}")"/../tools/policy.py',
}


@pytest.mark.parametrize("runs", RUNS_THE_POLICY.values(), ids=RUNS_THE_POLICY.keys())
def test_a_script_the_guard_runs_past_its_folder_is_pinned(project: Project, runs: str) -> None:
    policy = project_policy(project)
    policy.write_text(f"#!/usr/bin/env python3\n{POLICY}")
    policy.chmod(0o755)
    guard = project.hook("guard.sh", runs)
    project.write_agent(
        rm_script(project), yolo=True, hooks={"preToolCall": [{"command": f"bash {guard}"}]}
    )
    project.trust()
    assert project.hookgate("-p", "clean up", trusted=False).returncode == 0
    assert (project.dir / "victim").exists()  # the policy denied, as trusted
    policy.write_text(LOOSE_POLICY)

    assert f"hook script {policy} changed since you trusted it" in refusal(project)


def test_the_models_shell_cannot_rewrite_a_script_the_guard_runs(project: Project) -> None:
    policy = project_policy(project)
    guard = project.hook("guard.sh", 'exec python3 "$(dirname "$0")/../tools/policy.py"')
    script = rm_script(project, shell(f'printf "{LOOSE_POLICY}" > tools/policy.py'))
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": guard}]})

    done = project.hookgate("-p", "loosen the policy, then clean up")

    assert_kept_from_the_model(project, done, policy, POLICY)


def test_what_a_claude_code_hook_script_runs_by_the_project_dir_is_in_the_summary(
    project: Project,
) -> None:
    project_policy(project)
    hooks = project.dir / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "guard.sh").write_text('#!/bin/sh\npython3 "$CLAUDE_PROJECT_DIR/tools/policy.py"\n')
    command = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'
    settings = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
    (project.dir / ".claude" / "settings.json").write_text(json.dumps(settings))
    project.write_agent(project.script({"text": "hi"}), claude_settings=[".claude/settings.json"])

    done = project.hookgate("trust", "--yes", trusted=False)

    assert done.returncode == 0, done.stderr
    assert f"hook script: {project.dir / 'tools' / 'policy.py'}" in done.stderr


def test_scripts_beside_the_agent_file_that_run_each_other_are_pinned_once(
    project: Project,
) -> None:
    """`./guard.sh` runs `./helper.sh`, which runs `bash guard.sh` again: each pinned,
    the loop read once."""
    (project.dir / "guard.sh").write_text("#!/bin/sh\n./helper.sh\n")
    (project.dir / "helper.sh").write_text('#!/bin/sh\n[ -n "$AGAIN" ] || AGAIN=1 bash guard.sh\n')
    runs = runs_of(project, "./guard.sh")

    assert runs.files == (project.dir / "guard.sh", project.dir / "helper.sh")
    assert runs.unread == ()


def test_a_script_run_by_a_path_built_at_run_time_is_named_and_a_scripts_data_is_not(
    project: Project,
) -> None:
    hooks = project.dir / "hooks"
    hooks.mkdir()
    (hooks / "guard.sh").write_text(
        '#!/bin/sh\nlog="$HOME/guard.log"\necho "$TMPDIR/x" >> "$log"\n'
        'cat "$HOME/.config/rules" | python3 "$POLICY_HOME/policy.py"\n'
    )
    project.write_agent(
        project.script({"text": "hi"}), hooks={"preToolCall": [{"command": "sh hooks/guard.sh"}]}
    )

    done = project.hookgate("trust", "--yes", trusted=False)

    assert done.returncode == 0, done.stderr
    assert "not pinned: $POLICY_HOME/policy.py" in done.stderr
    assert "$TMPDIR" not in done.stderr
    assert ".config/rules" not in done.stderr


@pytest.mark.parametrize(
    "command",
    ["python3 guard*.py", "sh hooks/{a,b}.sh", "./g?ard.sh"],
    ids=["a glob", "braces", "a program's glob"],
)
def test_a_script_named_by_a_pattern_is_named_not_pinned(project: Project, command: str) -> None:
    """The shell expands a pattern into the files present when the hook runs: a file
    that appears later would run unpinned, so the pattern is listed as not pinned."""
    runs = runs_of(project, command)

    assert command.split()[-1] in runs.unread


def test_file_tools_refuse_a_script_the_guard_runs(project: Project) -> None:
    policy = project_policy(project)
    guard = project.hook("guard.sh", 'exec python3 "$(dirname "$0")/../tools/policy.py"')
    write = {"name": "write_file", "arguments": {"path": "tools/policy.py", "content": "x"}}
    script = rm_script(project, {"tool_calls": [write]})
    project.write_agent(script, yolo=True, hooks={"preToolCall": [{"command": guard}]})

    done = project.hookgate("-p", "loosen the policy, then clean up")

    assert done.returncode == 0, done.stderr
    assert policy.read_text() == POLICY
    written, removal = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert written.startswith("[denied: tools/policy.py is protected:")
    assert removal == "[denied by a hook: no rm]"


def test_a_script_fed_to_a_shell_on_its_stdin_is_pinned(project: Project) -> None:
    """`sh < tools/policy.sh`: the script is what the redirect reads, no operand."""
    policy = project.dir / "tools" / "policy.sh"
    policy.parent.mkdir()
    policy.write_text(f'{DENY}case "$(cat /dev/stdin 2>/dev/null)" in *) deny;; esac\n')
    project.write_agent(
        rm_script(project), yolo=True,
        hooks={"preToolCall": [{"command": "sh < tools/policy.sh"}]},
    )  # fmt: skip
    project.trust()
    policy.write_text(ALLOW)

    assert f"hook script {policy} changed since you trusted it" in refusal(project)


@pytest.mark.parametrize(
    "command", ['sh < "$POLICY"', "curl -s https://example.com/g.sh | bash"], ids=["built", "piped"]
)
def test_a_script_a_shell_reads_on_its_stdin_from_elsewhere_is_named_not_pinned(
    project: Project, command: str
) -> None:
    runs = runs_of(project, command)

    assert any("reads on its stdin" in word or "$POLICY" in word for word in runs.unread)


TASKS = {
    "npm run": ("npm run -s guard", "package.json", '{"scripts": {"guard": "node tools/g.js"}}'),
    "yarn's shortcut": ("yarn guard", "package.json", '{"scripts": {"guard": "node tools/g.js"}}'),
    "npm's pre-script": (
        "npm test",
        "package.json",
        '{"scripts": {"pretest": "node tools/g.js", "test": "true"}}',
    ),
    "make": (
        "make guard",
        "Makefile",
        "all:\n\techo all\nguard: check\ncheck:\n\t@node tools/g.js\n",
    ),
}


@pytest.mark.parametrize(("command", "file", "text"), TASKS.values(), ids=TASKS.keys())
def test_a_script_a_task_runner_runs_for_the_hook_is_pinned(
    project: Project, command: str, file: str, text: str
) -> None:
    """`npm run guard` runs what `package.json` names (and its pre-script), `make guard`
    the recipes of `guard` and what it depends on: before, the file they read was
    pinned, not the script its task runs."""
    (project.dir / file).write_text(text)
    script = project.dir / "tools" / "g.js"
    script.parent.mkdir()
    script.write_text("console.log('{}')\n")
    project.write_agent(rm_script(project), hooks={"preToolCall": [{"command": command}]})
    project.trust()
    script.write_text("require('child_process').execSync('touch pwned')\n")

    assert f"hook script {script} changed since you trusted it" in refusal(project)


def test_only_the_task_the_hook_names_is_read(project: Project) -> None:
    """A `build` script naming the build's output is none of the guard's business."""
    (project.dir / "package.json").write_text(
        '{"scripts": {"guard": "node tools/g.js", "build": "node dist/cli.js"}}'
    )
    for name in ("tools/g.js", "dist/cli.js"):
        (project.dir / name).parent.mkdir()
        (project.dir / name).write_text("")

    files = runs_of(project, "npm run guard").files

    assert project.dir / "tools" / "g.js" in files
    assert not any("dist" in path.parts for path in files)


def test_a_recipes_variables_are_its_own_not_unread_paths(project: Project) -> None:
    """`$(PYTHON) tools/g.py`: the script is pinned, the interpreter is no path."""
    (project.dir / "Makefile").write_text("PYTHON ?= python3\nguard:\n\t$(PYTHON) tools/g.py\n")
    (project.dir / "tools").mkdir()
    (project.dir / "tools" / "g.py").write_text("")

    runs = runs_of(project, "make guard")

    assert project.dir / "tools" / "g.py" in runs.files
    assert runs.unread == ()
