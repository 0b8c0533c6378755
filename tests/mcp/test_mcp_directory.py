"""A stdio server starts where trust resolved what it runs: its agent file's directory.

Trust pins `args: [server.py]` from the agent file's directory; the server used to start
in the project directory, so `hookgate --agent other/dir/agent.yaml` ran the project's
`server.py`, which trust never saw.
"""

from __future__ import annotations

import json
import shutil
import sys

from runtime.project import Project
from support.mcp_peers import SERVER_SCRIPT

#: What stands in the project directory under the server's name: it leaves a mark.
DECOY = "import pathlib, sys\npathlib.Path('DECOY-RAN').write_text('ran')\nsys.exit(3)\n"


def test_a_server_of_an_agent_file_elsewhere_runs_the_script_trust_pinned(
    project: Project,
) -> None:
    home = project.dir / "other" / "dir"
    home.mkdir(parents=True)
    shutil.copy(SERVER_SCRIPT, home / "server.py")
    (project.dir / "server.py").write_text(DECOY)
    script = [
        {"tool_calls": [{"name": "mcp__test__echo", "arguments": {"text": "hi"}}]},
        {"text": "Done."},
    ]
    (home / "script.json").write_text(json.dumps(script))
    agent = {
        "model": "scripted:script.json",
        "yolo": True,
        "mcp_servers": {"test": {"command": sys.executable, "args": ["server.py", "stdio"]}},
    }
    (home / "agent.yaml").write_text(json.dumps(agent))

    run = project.hookgate("--agent", "other/dir/agent.yaml", "-p", "echo hi")

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Done."
    assert "did not start" not in run.stderr
    assert not (project.dir / "DECOY-RAN").exists()
    assert not (home / "DECOY-RAN").exists()
    results = [m["content"] for m in project.messages() if m["role"] == "tool"]
    assert results == ["echo: hi"]
