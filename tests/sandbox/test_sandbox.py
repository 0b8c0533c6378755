"""`sandbox:` as a user meets it: each mode through a real `hookgate -p`, the file tools
under the same table, a child agent held within its asker, and a machine without it."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookgate.tools.sandbox import landlock
from runtime.project import Project

#: Seconds a command may take to start under a loaded machine.
START_WAIT_S = 30.0


@pytest.fixture
def project(tmp_path: Path) -> Project:
    directory = tmp_path / "project"
    directory.mkdir()
    return Project(directory, tmp_path / "home")


def calls(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A model script that makes `calls` one reply each, then answers `done`."""
    replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "arguments": arguments}]} for name, arguments in calls
    ]
    return [*replies, {"text": "done"}]


def play(project: Project, replies: list[dict[str, Any]], **settings: Any) -> list[str]:
    """Run the agent once with `settings` under yolo; the tool results, in order."""
    project.write_agent(project.script(*replies), yolo=True, **settings)
    done = project.hookgate("-p", "go")
    assert done.returncode == 0, done.stderr
    return tool_results(project)


def tool_results(project: Project) -> list[str]:
    """What every tool call of every session (asked agents' too) returned."""
    return [
        str(record["message"]["content"])
        for path in project.session_files()
        for record in project.records(path)
        if record.get("type") == "message" and record["message"]["role"] == "tool"
    ]


def shell(command: str) -> tuple[str, dict[str, Any]]:
    return ("shell", {"command": command})


def test_read_only_writes_nothing_but_the_private_tmp(project: Project) -> None:
    script = 'echo x > here.txt; echo y > "$TMPDIR/t" && cat "$TMPDIR/t"'

    (result,) = play(project, calls(shell(script)), sandbox={"mode": "read-only"})

    assert not (project.dir / "here.txt").exists()
    assert "Read-only file system" in result
    assert result.splitlines()[0] == "y"


def test_tmp_shows_a_command_the_workspace_and_its_own_files_alone(
    project: Project, tmp_path: Path
) -> None:
    """`/tmp` is covered (its sockets are ways out): the workspace that lies there is
    bound back, read-only in `read-only` mode, and nothing else of it is seen."""
    assert str(project.dir).startswith("/tmp/")  # pytest's folders: the case at hand
    (project.dir / "notes.txt").write_text("in the workspace\n")
    (tmp_path / "elsewhere.txt").write_text("another program's\n")
    script = f"cat notes.txt; cat {tmp_path / 'elsewhere.txt'}; ls /tmp | grep -c pytest-of"

    (result,) = play(project, calls(shell(script)), sandbox={"mode": "read-only"})

    lines = result.splitlines()
    assert lines[0] == "in the workspace"
    assert "elsewhere.txt: No such file or directory" in result
    assert "1" in lines  # pytest's own folder, made to hold the workspace's mount point


def test_a_home_under_tmp_is_still_the_commands_home(project: Project, tmp_path: Path) -> None:
    """A container's `HOME` is often under `/tmp`: covering `/tmp` keeps it readable."""
    home = tmp_path / "home-of-a-container"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = someone\n")
    project.write_agent(project.script(*calls(shell("grep -c someone ~/.gitconfig"))), yolo=True)

    done = project.hookgate("-p", "go", env=project.env(HOME=str(home)))

    assert done.returncode == 0, done.stderr
    assert tool_results(project) == ["1"]


def test_a_hookgate_installed_under_tmp_still_runs_its_sandboxed_commands(
    project: Project, tmp_path: Path
) -> None:
    """The reaper runs from hookgate's package inside the sandbox: a package under the
    covered `/tmp` (a checkout there, a venv there) is bound back."""
    import hookgate

    copy = tmp_path / "site" / "hookgate"
    shutil.copytree(
        Path(hookgate.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    project.write_agent(project.script(*calls(shell("echo from the copy"))), yolo=True)
    env = project.env(PYTHONPATH=str(copy.parent))

    done = project.hookgate("-p", "go", env=env)

    assert done.returncode == 0, done.stderr
    assert tool_results(project) == ["from the copy"]


def test_writable_dirs_are_writable_beyond_the_workspace(project: Project, tmp_path: Path) -> None:
    extra, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    extra.mkdir()
    elsewhere.mkdir()

    play(
        project,
        calls(shell(f"echo a > {extra}/a; echo b > {elsewhere}/b")),
        sandbox={"writable": [str(extra)]},
    )

    assert (extra / "a").read_text() == "a\n"
    assert not (elsewhere / "b").exists()


def test_the_private_tmp_is_the_sessions_own_and_goes_with_it(project: Project) -> None:
    (result,) = play(project, calls(shell('echo "$TMPDIR"; touch "$TMPDIR/mine"')))

    tmp = Path(result.splitlines()[0])
    assert tmp.name.startswith("hookgate-")
    assert not tmp.exists()


def test_a_background_process_dies_with_its_command(project: Project, tmp_path: Path) -> None:
    """The command is PID 1 of its namespace: what it leaves running dies with it."""
    mark = f"sandbox-sleeper-{os.getpid()}"
    play(project, calls(shell(f"(exec -a {mark} sleep 300) & setsid sleep 301 & echo started")))

    cmdlines = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmdlines.append(cmdline.read_bytes())
        except OSError:
            continue
    assert not [c for c in cmdlines if mark.encode() in c or b"sleep\x00301" in c]


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
def test_file_tools_write_only_where_the_sandbox_lets_commands_write(
    project: Project, tmp_path: Path, mode: str
) -> None:
    outside = tmp_path / "outside.txt"
    results = play(
        project,
        calls(
            ("write_file", {"path": str(outside), "content": "x"}),
            ("write_file", {"path": "inside.txt", "content": "y"}),
        ),
        sandbox={"mode": mode},
    )

    assert not outside.exists()
    assert "is outside the sandbox's writable directories" in results[0]
    assert (project.dir / "inside.txt").exists() is (mode == "workspace-write")


def test_unconfined_file_tools_write_outside_the_workspace_with_consent(
    project: Project, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"

    play(
        project,
        calls(("write_file", {"path": str(outside), "content": "x"})),
        sandbox={"mode": "off"},
    )

    assert outside.read_text() == "x"


def test_an_asked_agent_never_runs_looser_than_its_asker(project: Project, tmp_path: Path) -> None:
    """The helper's own file says `mode: off`; its asker's sandbox still holds it."""
    outside = tmp_path / "outside.txt"
    helper = project.dir / "helper"
    helper.mkdir()
    (helper / "script.yaml").write_text(json.dumps(calls(shell(f"echo x > {outside}"))))
    (helper / "hookgate.yaml").write_text(
        json.dumps({"model": "scripted:script.yaml", "yolo": True, "sandbox": {"mode": "off"}})
    )
    ask = ("ask_agent", {"agent": "helper", "question": "write it"})

    results = play(project, calls(ask), agents={"helper": {"file": "helper/hookgate.yaml"}})

    assert not outside.exists()
    assert any("Read-only file system" in result for result in results)


def without_bubblewrap(project: Project, tmp_path: Path) -> dict[str, str]:
    """hookgate's environment with a PATH that has bash but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("bash", "true"):
        found = shutil.which(program)
        assert found is not None
        (bin_dir / program).symlink_to(found)
    return project.env(PATH=str(bin_dir))


def test_without_bubblewrap_a_session_that_confines_commands_refuses_to_start(
    project: Project, tmp_path: Path
) -> None:
    project.write_agent(project.script(*calls(shell("touch ran"))), yolo=True)

    done = project.hookgate("-p", "go", env=without_bubblewrap(project, tmp_path))

    assert done.returncode == 1
    assert "the sandbox (sandbox: mode workspace-write) cannot be set up" in done.stderr
    assert "bubblewrap is not installed" in done.stderr
    assert "`sandbox: {mode: off}`" in done.stderr
    assert not (project.dir / "ran").exists()
    assert not project.session_files()


def test_without_bubblewrap_mode_off_runs_and_says_it_runs_unconfined(
    project: Project, tmp_path: Path
) -> None:
    replies = calls(shell("echo > ran"))  # a builtin: this PATH has bash and true alone
    project.write_agent(project.script(*replies), yolo=True, sandbox={"mode": "off"})

    done = project.hookgate("-p", "go", env=without_bubblewrap(project, tmp_path))

    assert done.returncode == 0, done.stderr
    assert (project.dir / "ran").exists()
    assert "warning: sandbox mode is off and yolo is true" in done.stderr


@pytest.mark.parametrize(
    ("sandbox", "said"),
    [
        ({"mode": "workspace_write"}, ":3: sandbox.mode: expected one of read-only, "
         "workspace-write, off, got a string 'workspace_write'\n  hint: did you mean "
         "'workspace-write'?"),
        ({"network": "yes"}, ":3: sandbox.network: expected true or false, got a string 'yes'"),
        ({"writable": ["nowhere"]}, ":3: sandbox.writable[0]: 'nowhere' is not a directory"),
        ({"mod": "off"}, ":3: sandbox.mod: unknown key"),
    ],
)  # fmt: skip
def test_a_sandbox_mistake_names_file_line_key_and_value(
    project: Project, sandbox: dict[str, Any], said: str
) -> None:
    project.agent_file.write_text(
        "model: scripted:x.yaml\nsandbox:\n"
        + "".join(f"  {key}: {json.dumps(value)}\n" for key, value in sandbox.items())
    )

    done = project.hookgate("-p", "go")

    assert done.returncode == 1
    assert f"{project.agent_file}{said}" in done.stderr, done.stderr


def test_hooks_check_says_what_this_machine_enforces(project: Project) -> None:
    project.write_agent("scripted:x.yaml", sandbox={"network": True})

    done = project.hookgate("hooks", "check", "--strict", trusted=False)

    assert done.returncode == 0, done.stderr
    assert "sandbox: workspace-write, network on" in done.stdout
    assert "this machine enforces it (bubblewrap:" in done.stdout
    assert "$HOOKGATE_HOME and the hidden paths out of reach" in done.stdout
    assert "the sockets in /run and /tmp out of reach" in done.stdout
    assert "what programs outside the sandbox run read-only: .git," in done.stdout
    scoped = "abstract Unix sockets and processes outside out of reach (Landlock ABI"
    unscoped = "not enforced here: abstract Unix sockets outside the sandbox"
    said = (scoped, unscoped) if landlock.abi() >= landlock.SCOPES_ABI else (unscoped, scoped)
    assert said[0] in done.stdout
    assert said[1] not in done.stdout


def test_hooks_check_strict_fails_where_the_sandbox_cannot_be_set_up(
    project: Project, tmp_path: Path
) -> None:
    project.write_agent("scripted:x.yaml")
    env = without_bubblewrap(project, tmp_path)

    done = project.hookgate("hooks", "check", "--strict", env=env, trusted=False)

    assert done.returncode == 1
    assert "warning: this machine cannot confine commands: bubblewrap is not installed" in (
        done.stderr
    )
    assert "sandbox: {mode: off}" in done.stderr


def processes_named(mark: str) -> list[int]:
    """The pids, as this process sees them, whose command line starts with `mark`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().startswith(mark.encode() + b"\0"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_a_sandboxed_command_dies_with_a_hookgate_killed_outright(
    project: Project, outlived: Callable[[int], None]
) -> None:
    mark = f"sandboxed-sleeper-{os.getpid()}"
    started = project.dir / "started"
    command = f"echo > {started}; exec -a {mark} sleep 300"
    project.write_agent(project.script(*calls(shell(command))), yolo=True)
    process = project.start_hookgate("-p", "Run the long command")
    try:
        deadline = time.monotonic() + START_WAIT_S
        while not (started.exists() and processes_named(mark)):
            assert time.monotonic() < deadline, "the command never started"
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
    finally:
        process.kill()
        process.communicate()

    for pid in processes_named(mark):
        outlived(pid)
    assert not processes_named(mark)


def counting(server: Any) -> list[int]:
    """The connections the listening `server` takes, counted by a thread of its own."""
    import threading

    taken: list[int] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            taken.append(1)
            connection.close()

    threading.Thread(target=accept, daemon=True).start()
    return taken


@pytest.fixture(
    params=["/run", "/tmp/.X11-unix", f"/tmp/tmux-{os.getuid()}", "/tmp/ssh-hookgatetest"],
    ids=["/run", "X11's", "tmux's", "ssh-agent's"],
)
def run_socket(request: pytest.FixtureRequest) -> Iterator[tuple[Path, list[int]]]:
    """A Unix socket listening in /run, as docker's and the user's D-Bus bus do, in
    X11's folder, as the display server does, or in /tmp, as tmux's server and
    ssh-agent do (each a way out: `docker run -v /:/host`, `systemd-run --user`,
    keystrokes sent to the user's terminal, `tmux send-keys` to the user's shell, the
    user's keys); the connections it took."""
    import socket

    folder = Path(request.param)
    made = not folder.exists()
    path = folder / f"hookgate-test-{os.getpid()}.sock"
    try:
        folder.mkdir(mode=0o1777, exist_ok=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    except OSError as exc:
        pytest.skip(f"{folder} cannot hold a socket here: {exc}")
    path.chmod(0o777)
    server.listen()
    taken = counting(server)
    try:
        yield path, taken
    finally:
        server.close()
        path.unlink(missing_ok=True)
        if made:
            folder.rmdir()


CONNECT = "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{}')\""


@pytest.mark.parametrize("network", [False, True], ids=["network off", "network on"])
def test_the_system_sockets_are_out_of_reach_network_or_not(
    project: Project, run_socket: tuple[Path, list[int]], network: bool
) -> None:
    path, taken = run_socket

    (result,) = play(project, calls(shell(CONNECT.format(path))), sandbox={"network": network})

    assert taken == []
    assert "[exit 1]" in result


def test_control_unconfined_a_command_reaches_the_system_socket(
    project: Project, run_socket: tuple[Path, list[int]]
) -> None:
    path, taken = run_socket

    (result,) = play(project, calls(shell(CONNECT.format(path))), sandbox={"mode": "off"})

    assert result == "[no output]"  # connected; the listener's thread takes it when it runs
    deadline = time.monotonic() + START_WAIT_S
    while not taken and time.monotonic() < deadline:
        time.sleep(0.01)
    assert taken == [1]


@pytest.fixture
def abstract_socket() -> Iterator[tuple[str, list[int]]]:
    """A Unix socket in the abstract namespace, as the display server's
    `@/tmp/.X11-unix/X0` and a containerd shim's are: no file, so no mount hides it."""
    import socket

    name = f"\0hookgate-test-{os.getpid()}-{time.monotonic_ns()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind(name)
    server.listen()
    taken = counting(server)
    try:
        yield name[1:], taken
    finally:
        server.close()


CONNECT_ABSTRACT = (
    "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{}'); print('in')\""
)


@pytest.mark.skipif(landlock.abi() < landlock.SCOPES_ABI, reason="Landlock has no scopes here")
@pytest.mark.parametrize("network", [False, True], ids=["network off", "network on"])
def test_an_abstract_socket_outside_is_out_of_reach_network_or_not(
    project: Project, abstract_socket: tuple[str, list[int]], network: bool
) -> None:
    name, taken = abstract_socket

    (result,) = play(
        project, calls(shell(CONNECT_ABSTRACT.format(name))), sandbox={"network": network}
    )

    assert "[exit 1]" in result
    assert ("Operation not permitted" if network else "Connection refused") in result
    assert taken == []


@pytest.mark.skipif(landlock.abi() < landlock.SCOPES_ABI, reason="Landlock has no scopes here")
@pytest.mark.parametrize("confined", [True, False], ids=["sandbox: true", "control: unconfined"])
def test_a_sandboxed_mcp_server_reaches_no_abstract_socket_outside_either(
    project: Project, abstract_socket: tuple[str, list[int]], confined: bool
) -> None:
    """The MCP server's reaper is scoped as the shell's is: a server that connects to
    the socket as it starts, under `network: true`, reaches it only unconfined."""
    name, _ = abstract_socket
    server = project.dir / "server.py"
    outcome = project.dir / "outcome"
    server.write_text(
        "import socket, sys\n"
        "try:\n"
        f"    socket.socket(socket.AF_UNIX).connect('\\0{name}')\n"
        "except OSError as exc:\n"
        f"    open({str(outcome)!r}, 'w').write(exc.strerror)\n"
        "else:\n"
        f"    open({str(outcome)!r}, 'w').write('in')\n"
    )
    project.write_agent(
        project.script({"text": "hi"}),
        sandbox={"network": True},
        mcp_servers={"probe": {"command": "python3", "args": [str(server)], "sandbox": confined}},
    )

    project.hookgate("-p", "hi")  # the server ends at once: the session says so, and goes on

    assert outcome.read_text() == ("Operation not permitted" if confined else "in")


@pytest.mark.parametrize("network", [False, True], ids=["network off", "network on"])
def test_control_unconfined_a_command_reaches_the_abstract_socket(
    project: Project, abstract_socket: tuple[str, list[int]], network: bool
) -> None:
    name, taken = abstract_socket

    (result,) = play(
        project,
        calls(shell(CONNECT_ABSTRACT.format(name))),
        sandbox={"mode": "off", "network": network},
    )

    assert result == "in"
    deadline = time.monotonic() + START_WAIT_S
    while not taken and time.monotonic() < deadline:
        time.sleep(0.01)
    assert taken == [1]


def test_with_the_network_on_names_still_resolve_as_the_machine_resolves_them(
    project: Project,
) -> None:
    """`/etc/resolv.conf` may be a link into `/run` (systemd-resolved's stub)."""
    (result,) = play(
        project,
        calls(shell("cat /etc/resolv.conf >/dev/null && echo read")),
        sandbox={"network": True},
    )

    assert result == "read"


def test_with_the_network_on_a_resolver_file_in_run_is_bound_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """systemd-resolved's `/etc/resolv.conf` is a link to `/run/systemd/resolve/…`."""
    import subprocess

    from hookgate.tools.base import ToolContext
    from hookgate.tools.sandbox import Boundaries, SandboxSettings, bwrap

    folder = Path("/run") / f"hookgate-test-resolve-{os.getpid()}"
    try:
        folder.mkdir()
    except OSError as exc:
        pytest.skip(f"/run cannot hold a folder here: {exc}")
    try:
        (folder / "stub-resolv.conf").write_text("nameserver 127.0.0.53\n")
        link = tmp_path / "resolv.conf"
        link.symlink_to(folder / "stub-resolv.conf")
        monkeypatch.setattr(bwrap, "RESOLV_CONF", str(link))
        ctx = ToolContext(project_dir=tmp_path, env={}, sandbox=SandboxSettings(network=True))

        shown = [
            subprocess.run(
                bwrap.confine(["cat", str(link)], Boundaries.of(ctx._replace(sandbox=sandbox))),
                capture_output=True, text=True, check=False,
            ).stdout
            for sandbox in (SandboxSettings(network=True), SandboxSettings(network=False))
        ]  # fmt: skip

        assert shown == ["nameserver 127.0.0.53\n", ""]
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
