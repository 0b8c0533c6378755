"""`examples/guard-rm-rf.sh` as the engine runs it: a process fed the event on stdin.

It must catch recursive removal however the command is spelled, and fail closed (exit
2, a block, with the reason on stderr) when it cannot do its job.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

GUARD = Path(str(resources.files("hookgate.examples").joinpath("guard-rm-rf.sh")))
#: Seconds the guard may take; it runs jq and awk once each.
GUARD_TIMEOUT = 10


def run_guard(event: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    stdin = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        [str(GUARD)], input=stdin, capture_output=True, text=True, env=env,
        timeout=GUARD_TIMEOUT, check=False,
    )  # fmt: skip


def verdict(command: str) -> str:
    run = run_guard({"event": "preToolCall", "tool": "shell", "arguments": {"command": command}})
    assert run.returncode == 0, run.stderr
    if not run.stdout.strip():
        return "allow"
    reply = json.loads(run.stdout)
    assert reply["reason"].startswith("rm -rf is not allowed")
    return str(reply["action"])


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build", "rm -fr build", "rm -r -f build", "rm -R build", "rm -r --force build",
        "rm --recursive --force build", "/bin/rm -rf build", "\\rm -rf build", "'rm' -rf build",
        "ls; rm -rf build", "true && sudo rm -rf /", "echo $(rm -rf build)",
        "find . -name '*.o' -delete", "find build -exec rm {} +", "find . -execdir /bin/rm -f {} ;",
        "bash -c 'rm -rf build'", "command rm -rf build", "env X=1 rm -rf build",
    ],
)  # fmt: skip
def test_recursive_removal_is_denied_however_it_is_spelled(command: str) -> None:
    assert verdict(command) == "deny"


@pytest.mark.parametrize(
    "command", ["rm notes.txt", "ls -rf", "git rm --cached x", "find . -name '*.py'", "format -rf"]
)
def test_other_commands_pass(command: str) -> None:
    assert verdict(command) == "allow"


def test_without_jq_it_blocks_and_says_why(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "cat", "awk", "tr"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)

    run = run_guard({"arguments": {"command": "ls"}}, env={**os.environ, "PATH": str(bin_dir)})

    assert run.returncode == 2
    assert "jq" in run.stderr


@pytest.mark.parametrize("stdin", ["not json", '{"arguments": {"command": 42}}', ""])
def test_an_event_it_cannot_read_is_blocked(stdin: str) -> None:
    run = run_guard(stdin)
    assert run.returncode == 2
    assert run.stderr.strip()
