"""A session starts only where a sandbox can start, and a success is remembered.

Each run is a real `hookgate -p`; bubblewrap is the real one behind a wrapper on PATH
that notes each start in a file, so the test counts the sandboxes a run started: the
probe's (its command is `true` alone) and the commands'.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from runtime.project import Project

BWRAP = shutil.which("bwrap")
pytestmark = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    return Project(directory, tmp_path / "home")


class Wrapper:
    """A `bwrap` on PATH that notes its argv's last word, then runs the real one (or,
    `broken`, says why it cannot and fails)."""

    def __init__(self, tmp_path: Path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        self.log = tmp_path / "bwrap.log"
        self.program = self.bin / "bwrap"
        self.write(broken=False)

    def write(self, *, broken: bool) -> None:
        then = (
            'echo "bwrap: No permissions to create new namespace" >&2; exit 1'
            if broken
            else f'exec {BWRAP} "$@"'
        )
        text = f'#!/bin/sh\nfor word; do last=$word; done\necho "$last" >> {self.log}\n{then}\n'
        self.program.write_text(text)
        self.program.chmod(self.program.stat().st_mode | stat.S_IXUSR)

    def probes(self) -> int:
        """How many sandboxes of `true` alone (probes) were started so far."""
        if not self.log.exists():
            return 0
        return sum(line.endswith("/true") for line in self.log.read_text().splitlines())

    def env(self, project: Project) -> dict[str, str]:
        return project.env(PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}")


def test_a_success_is_remembered_and_a_changed_program_is_probed_again(
    project: Project, tmp_path: Path
) -> None:
    wrapper = Wrapper(tmp_path)
    project.write_agent(project.script({"text": "hi"}, {"text": "again"}), yolo=True)

    first = project.hookgate("-p", "one", env=wrapper.env(project))
    second = project.hookgate("-p", "two", env=wrapper.env(project))

    assert (first.returncode, second.returncode) == (0, 0), second.stderr
    assert wrapper.probes() == 1
    wrapper.write(broken=False)  # a new program file: another inode, size or mtime
    project.write_agent(project.script({"text": "three"}), yolo=True)
    assert project.hookgate("-p", "three", env=wrapper.env(project)).returncode == 0
    assert wrapper.probes() == 2


def test_a_failure_is_not_remembered(project: Project, tmp_path: Path) -> None:
    wrapper = Wrapper(tmp_path)
    wrapper.write(broken=True)
    project.write_agent(project.script({"text": "hi"}), yolo=True)

    refused = [project.hookgate("-p", "go", env=wrapper.env(project)) for _ in range(2)]

    for done in refused:
        assert done.returncode == 1
        assert "No permissions to create new namespace" in done.stderr
    assert wrapper.probes() == 2
    assert not project.session_files()


def test_a_remembered_success_still_confines_every_command(
    project: Project, tmp_path: Path
) -> None:
    wrapper = Wrapper(tmp_path)
    shell = {"tool_calls": [{"name": "shell", "arguments": {"command": "echo hi"}}]}
    project.write_agent(project.script({"text": "hi"}), yolo=True)
    assert project.hookgate("-p", "warm", env=wrapper.env(project)).returncode == 0
    project.write_agent(project.script(shell, {"text": "done"}), yolo=True)

    done = project.hookgate("-p", "go", env=wrapper.env(project))

    assert done.returncode == 0, done.stderr
    assert wrapper.probes() == 1  # the session's start remembered the first run's
    started = wrapper.log.read_text().splitlines()
    assert len(started) == 2  # the probe, then the command under bubblewrap
