"""The trust summary shows everything that widens the model's reach or changes what a
hook runs, in plain words, every name and value through the visible-text filter; and
`trust --list` and `init` give a hostile repository nothing to play with."""

from __future__ import annotations

import json
import os

import pytest

from runtime.project import Project
from support.chat_server import ChatServer, ServedReply

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # writes "rm -rf ~" to the clipboard
UP = "\x1b[2A"


def summary(project: Project) -> str:
    done = project.hookgate("trust", trusted=False)
    assert done.returncode == 1  # no terminal, no --yes: nothing recorded
    return done.stderr


def test_the_summary_says_in_plain_words_what_widens_the_models_reach(project: Project) -> None:
    project.write_agent(
        "scripted:s.yaml",
        permissions={"allow": ["shell", "shell(ls *)", "write_file(*)"]},
        workspace={"dirs": ["/"]},
        shell={"env": {"keep": ["GITHUB_TOKEN"]}},
        web_fetch={"allow_private": True},
    )

    shown = summary(project)

    assert "the shell tool runs without asking, any command (allow: shell)" in shown
    assert "the shell tool runs 'ls *' without asking (allow: shell(ls *))" in shown
    assert "the write_file tool runs without asking, any arguments" in shown
    assert "the model may write anywhere under / (workspace.dirs)" in shown
    assert "$GITHUB_TOKEN reaches the shell (shell.env.keep)" in shown
    assert "web_fetch may reach private addresses" in shown


@pytest.mark.parametrize(
    "key", ["BASH_ENV", "ENV", "LD_PRELOAD", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP",
            "PERL5OPT", "RUBYOPT"],
)  # fmt: skip
def test_a_code_loading_env_key_is_shown_with_a_warning(project: Project, key: str) -> None:
    (project.dir / "x").write_text("\n")
    hook = {"command": "true", "env": {key: "./x"}}
    server = {"command": "true", "env": {key: "./x"}}
    project.write_agent("scripted:s.yaml", hooks={"preToolCall": [hook]}, mcp_servers={"m": server})

    shown = summary(project)

    warning = f"env {key}=./x — warning: {key} makes programs load code from it"
    assert shown.count(warning) == 2  # the hook's and the server's
    assert f"preToolCall hook script: {project.dir / 'x'}\n" in shown
    assert f"MCP server 'm' program: {project.dir / 'x'}" not in shown  # pinned once, by the hook


def test_a_hooks_shell_is_shown_and_pinned(project: Project) -> None:
    (project.dir / "mysh").write_text("#!/bin/sh\n")
    hook = {"command": "true", "shell": "./mysh"}
    project.write_agent("scripted:s.yaml", hooks={"preGeneration": [hook]})

    shown = summary(project)

    assert "    preGeneration: true\n      run by the shell ./mysh\n" in shown
    assert f"preGeneration hook script: {project.dir / 'mysh'}\n" in shown


def test_every_name_and_value_shown_passes_the_visible_text_filter(project: Project) -> None:
    hook = {"command": "true", "env": {f"X{UP}": f"v{OSC52}"}, "shell": f"/bin/sh{UP}"}
    project.write_agent(
        "scripted:s.yaml",
        hooks={"preToolCall": [hook]},
        permissions={"allow": [f"shell(ls{OSC52})"]},
        shell={"env": {"keep": [f"T{UP}"]}},
    )

    shown = summary(project)

    assert "\x1b" not in shown
    assert "\x07" not in shown
    assert "env X␛[2A=v␛]52;c;cm0gLXJmIH4=␇" in shown


def test_trust_list_shows_a_hostile_file_name_as_signs(project: Project) -> None:
    directory = project.dir / f"clone{OSC52}{UP}"
    directory.mkdir()
    (directory / "hookgate.yaml").write_text(json.dumps({"model": "scripted:s.yaml"}))
    trusted = project.hookgate("trust", "--yes", str(directory / "hookgate.yaml"), trusted=False)
    assert trusted.returncode == 0, trusted.stderr

    listed = project.hookgate("trust", "--list", trusted=False)

    assert listed.returncode == 0
    assert "\x1b" not in listed.stdout + listed.stderr
    assert "\x07" not in listed.stdout
    assert "clone␛]52;c;cm0gLXJmIH4=␇␛[2A/hookgate.yaml\t" in listed.stdout


@pytest.mark.parametrize(
    ("planted", "target"),
    [("hookgate.yaml", "../elsewhere/agent.yaml"), ("hooks/guard-rm-rf.sh", "../../elsewhere/x.sh"),
     ("hooks", "../elsewhere")],
)  # fmt: skip
def test_init_refuses_a_planted_symlink_and_writes_and_trusts_nothing(
    project: Project, planted: str, target: str
) -> None:
    elsewhere = project.dir.parent / "elsewhere"
    elsewhere.mkdir()
    link = project.dir / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)  # dangling: init would create what it points at

    for args in (["init"], ["init", "--force"]):
        done = project.hookgate(*args, trusted=False)

        assert done.returncode == 1
        assert f"{planted} is a symbolic link" in done.stderr
        assert list(elsewhere.iterdir()) == []
        assert not (project.home / "trust.json").exists()
        assert "Traceback" not in done.stderr


def served(server: ChatServer, **settings: str) -> dict[str, object]:
    return {"name": "m", "base_url": server.url, "timeout": 10, **settings}


@pytest.mark.parametrize(
    ("settings", "sent"),
    [({}, "Bearer not-needed"), ({"api_key_env": "OPENAI_API_KEY"}, "Bearer sk-owner-secret")],
    ids=["no api_key_env: no key", "named: sent"],
)
def test_the_models_key_goes_only_where_api_key_env_names_it(
    project: Project, chat_server: ChatServer, settings: dict[str, str], sent: str
) -> None:
    project.write_agent(served(chat_server, **settings))
    chat_server.queue(ServedReply(text="hello"))
    env = project.env(OPENAI_API_KEY="sk-owner-secret")

    done = project.hookgate("-p", "hi", env=env)

    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    (request,) = chat_server.requests
    assert request.headers["authorization"] == sent
    said = summary(project)
    if settings:
        assert f"the value of $OPENAI_API_KEY is sent to {chat_server.url} as the API key" in said
    else:
        assert f"no API key is sent to {chat_server.url} (api_key_env names none)" in said


def test_the_summary_says_what_a_looser_sandbox_lets_the_models_commands_do(
    project: Project,
) -> None:
    """A cloned repository's agent file that turns the sandbox off, opens the network
    or gives back `.git` is as much a widening as an allow rule."""
    (project.dir / ".git").mkdir()
    (project.dir / "build").mkdir()
    project.write_agent("scripted:s.yaml", sandbox={"network": True, "writable": [".git", "build"]})

    shown = summary(project)

    assert "the model's commands reach the network, any address (sandbox.network: true)" in shown
    git = project.dir.resolve() / ".git"
    assert f"the model's commands may write {git}, which programs outside the sandbox run" in shown
    build = project.dir.resolve() / "build"
    assert f"the model's commands may write anywhere under {build} (sandbox.writable)" in shown

    project.write_agent("scripted:s.yaml", sandbox={"mode": "off"})

    assert "the model's commands run unconfined" in summary(project)


def test_the_default_sandbox_widens_nothing(project: Project) -> None:
    project.write_agent("scripted:s.yaml", sandbox={"mode": "read-only"})

    assert "the model's commands" not in summary(project)


def test_the_summary_says_where_telemetry_goes_and_what_text_goes_with_it(
    project: Project,
) -> None:
    project.write_agent(
        "scripted:s.yaml",
        telemetry={"otlp": "https://collector.example:4318", "content": True},
    )

    shown = summary(project)

    assert "telemetry: every event's decision" in shown
    assert "goes to https://collector.example:4318 (telemetry.otlp;" in shown
    assert "with the text of your questions, the tool calls' arguments and results" in shown

    project.write_agent("scripted:s.yaml", telemetry={"otlp": "http://localhost:4318"})

    shown = summary(project)
    assert "goes to http://localhost:4318" in shown
    assert "with the text of" not in shown
