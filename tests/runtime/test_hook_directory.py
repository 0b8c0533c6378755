"""`hookgate hooks fire` and a session run a hook in the same directory: the agent
file's (docs/hooks.md, `cwd`), wherever hookgate was started."""

from __future__ import annotations

from runtime.project import Project


def test_fire_and_a_session_run_hooks_in_the_agent_files_directory(project: Project) -> None:
    agents = project.dir / "agents"
    agents.mkdir()
    where = project.dir / "where.log"
    agent = agents / "agent.yaml"
    agent.write_text(
        f"model: scripted:{project.dir / 'script.yaml'}\n"
        f"hooks:\n  preGeneration:\n    - {{name: where, command: 'pwd >> {where}'}}\n"
    )
    project.script({"text": "ok"})

    fired = project.hookgate(
        "hooks", "fire", "preGeneration", "--agent", "agents/agent.yaml", stdin='{"prompt": "q"}'
    )
    session = project.hookgate("--agent", "agents/agent.yaml", "-p", "q")

    assert fired.returncode == 0, fired.stderr
    assert session.returncode == 0, session.stderr
    assert where.read_text().splitlines() == [str(agents), str(agents)]
