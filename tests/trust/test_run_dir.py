"""A hook's relative paths start at its agent file's directory, in trust and at run
time alike: `--agent other/dir/hookgate.yaml` never runs the working directory's own
`hooks/b` in place of the one trusted."""

from __future__ import annotations

import json

import pytest

from runtime.project import Project


def script(project: Project, path: str, marker: str) -> None:
    file = project.dir / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f"#!/bin/sh\ntouch '{project.dir.parent / marker}'\n")
    file.chmod(0o755)


@pytest.mark.parametrize("command", ["bash hooks/b", "./hooks/b", "hooks/b"])
def test_the_agent_files_own_hook_runs_not_the_working_directorys(
    project: Project, command: str
) -> None:
    script(project, "hooks/b", "clone-b-ran")
    script(project, "other/dir/hooks/b", "trusted-b-ran")
    agent = project.dir / "other" / "dir" / "hookgate.yaml"
    (agent.parent / "s.yaml").write_text('[{"text": "hello"}]')
    hooks = {"preGeneration": [{"command": command}]}
    agent.write_text(json.dumps({"model": "scripted:s.yaml", "hooks": hooks}))

    done = project.hookgate("--agent", "other/dir/hookgate.yaml", "-p", "hi")

    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    ran = sorted(p.name for p in project.dir.parent.iterdir() if p.name.endswith("-ran"))
    assert ran == ["trusted-b-ran"]


def test_hooks_check_and_the_summary_read_paths_from_the_agent_files_directory(
    project: Project,
) -> None:
    script(project, "other/dir/hooks/b", "unused")
    agent = project.dir / "other" / "dir" / "hookgate.yaml"
    hooks = {"preToolCall": [{"command": "bash hooks/b"}]}
    agent.write_text(json.dumps({"model": "scripted:s.yaml", "hooks": hooks}))

    check = project.hookgate("hooks", "check", "--strict", "--agent", str(agent), trusted=False)
    summary = project.hookgate("trust", str(agent), trusted=False).stderr

    assert check.returncode == 0, check.stderr
    assert f"preToolCall hook script: {agent.parent / 'hooks' / 'b'}\n" in summary
