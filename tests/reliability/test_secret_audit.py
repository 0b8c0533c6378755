"""Secret audit: a secret planted where a hook stops it reaches no artifact of a run.

One scenario, played once for the module through the two front ends a user scripts:
`hookgate -p` (four runs chained with `--continue`, so that every later request carries
the conversation, against the loopback model server with the real openai client) and
`hookgate acp` (one session of four prompts, driven by the ACP package's client, its
JSON-RPC stream teed byte for byte in both directions). Each front end gets three
secrets of its own: one in a question a preGeneration hook blocks, one in the arguments
of a tool call a preToolCall hook denies and redacts, one in a tool result a
postToolCall hook scrubs. Then every artifact is searched for all six, after checking
that it recorded what it should — so the audit cannot pass by recording nothing.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from runtime.project import HOOKGATE, Project, served_model
from support.acp_client import RecordingClient, acp_peer
from support.chat_server import ChatServer, ServedReply, ServedToolCall

pytestmark = pytest.mark.reliability("secrets")

BLOCKED_MARKER = "[prompt blocked by a hook:"
DENIED_MARKER = "[denied by a hook: the call holds a password]"
REDACTED = "[REDACTED]"  # what the preToolCall hook leaves of a password
SCRUBBED = "[REDACTED_KEY]"  # what scrub_aws_keys.py leaves of an AWS key id
BLOCK_RESPONSE = "Your question was not sent: it holds a secret."
REPLACED_NOTICE = "the result of read_file was replaced by a hook"
FRONT_ENDS = ("print", "acp")

#: The preToolCall hook: deny a call whose arguments hold a password, and redact it.
REDACT_CALL = """\
import json, re, sys
PASSWORD = re.compile(r"pw-[0-9a-f]{16,}")
def scrub(value):
    if isinstance(value, str):
        return PASSWORD.sub("[REDACTED]", value)
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, dict):
        return {key: scrub(item) for key, item in value.items()}
    return value
arguments = json.load(sys.stdin)["arguments"]
if PASSWORD.search(json.dumps(arguments)):
    json.dump({"action": "deny", "reason": "the call holds a password",
               "arguments": scrub(arguments)}, sys.stdout)
"""
#: Tees `hookgate acp`'s stdin and stdout: the JSON-RPC stream, as it crossed the pipes.
TEE_ACP = """\
#!/bin/sh
tee -a "{to_agent}" | "{hookgate}" "$@" | tee -a "{from_agent}"
"""


@dataclass(frozen=True)
class Secrets:
    """One front end's three secrets, each in the shape its hook looks for."""

    question: str = field(default_factory=lambda: f"sk-{secrets.token_hex(12)}")
    arguments: str = field(default_factory=lambda: f"pw-{secrets.token_hex(12)}")
    result: str = field(default_factory=lambda: f"AKIA{secrets.token_hex(8).upper()}")

    def __iter__(self) -> Iterator[str]:
        return iter((self.question, self.arguments, self.result))


@dataclass(frozen=True)
class Artifact:
    """Something a run leaves behind, and what it must hold for its search to mean anything."""

    text: str
    markers: tuple[str, ...]
    may_be_empty: bool = False


@dataclass
class Audit:
    secrets: dict[str, Secrets]
    artifacts: dict[str, Artifact]
    runs: list[subprocess.CompletedProcess[str]]
    acp_outcomes: list[tuple[str, Any]]
    session_files: list[Path]


def turns(front_end: str, own: Secrets, creds: str) -> tuple[list[str], list[ServedReply]]:
    """The four questions of a front end, and the model's replies to them.

    The model's call with the password is the model's own output, before any hook: it
    crosses the wire in a response, which the server does not record (it keeps requests).
    """
    questions = [
        f"Call the API with my key {own.question} please",
        f"Log in to the build service ({front_end})",
        f"What is in {creds}?",
        "Summarise this session.",
    ]
    replies = [
        ServedReply(tool_calls=[ServedToolCall("shell", {"command": f"login -p {own.arguments}"})]),
        ServedReply(text="The login was refused by a guard."),
        ServedReply(tool_calls=[ServedToolCall("read_file", {"path": creds})]),
        ServedReply(text="It holds an AWS key id, redacted."),
        ServedReply(text="We tried a login and read the credentials."),
    ]
    return questions, replies


def guarded_agent(project: Project, server: ChatServer, logs: Path) -> None:
    """Three guards, an audit log on postGeneration, and a recorder last on every event."""
    script = project.dir / "hooks" / "redact_call.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(REDACT_CALL)
    hooks = {
        "preGeneration": [
            {"name": "redact-question", "command": project.example("redact_prompt.py"),
             "onError": "fail"},
        ],
        "preToolCall": [
            {"name": "redact-call", "args": [sys.executable, str(script)], "onError": "fail"},
        ],
        "postToolCall": [{"name": "scrub", "command": project.example("scrub_aws_keys.py")}],
        "postGeneration": [
            {"name": "audit", "command": project.example("audit-log.sh"),
             "env": {"AUDIT_LOG": str(logs / "audit.log")}},
        ],
    }  # fmt: skip
    # The guards read what they guard, by design: the recorder runs after each of them,
    # and stands for every hook that is not the guard of that secret.
    project.write_agent(
        served_model(server.url), hooks=project.record_every_event(logs / "hooks.log", hooks)
    )


def run_print_mode(
    project: Project, questions: list[str]
) -> list[subprocess.CompletedProcess[str]]:
    """Four `-p` runs, one session; `-v` puts each tool call on stderr, as it is recorded.

    The blocked question is in the first run's argv: that is the test's own input, and
    no artifact records argv.
    """
    runs = [project.hookgate("-v", "-p", questions[0])]
    runs += [project.hookgate("-v", "--continue", "-p", q) for q in questions[1:]]
    return runs


async def run_acp(project: Project, questions: list[str], logs: Path) -> list[tuple[str, Any]]:
    wrapper = logs / "hookgate-acp"
    wrapper.write_text(
        TEE_ACP.format(
            to_agent=logs / "acp.to_agent", from_agent=logs / "acp.from_agent", hookgate=HOOKGATE
        )
    )
    wrapper.chmod(0o755)
    client = RecordingClient()  # answers any permission request with reject_once
    project.trust()
    async with acp_peer(wrapper, project.dir, project.env(), logs / "acp.stderr", client) as peer:
        session = await peer.new_session()
        outcomes = []
        for question in questions:
            response = await peer.prompt(session, question)
            outcomes.append((response.stop_reason, (response.field_meta or {}).get("hookgate")))
    return outcomes


def without_sent_question(raw: str, question: str) -> str:
    """The editor's side of the stream, less the one prompt that asks the blocked question.

    That message is the test's own input, the question as the user typed it; the audit
    is about where it goes next.
    """
    lines = raw.splitlines()
    asking = [
        line
        for line in lines
        if json.loads(line).get("method") == "session/prompt"
        and json.loads(line)["params"]["prompt"][0]["text"] == question
    ]
    assert len(asking) == 1, f"the blocked question was sent {len(asking)} times"
    return "\n".join(line for line in lines if line not in asking)


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Audit:
    """Play the scenario once through both front ends and gather every artifact."""
    root = tmp_path_factory.mktemp("audit").resolve()
    project = Project(root / "project", root / "home")
    project.dir.mkdir()
    logs = root / "logs"
    logs.mkdir()
    planted = {front_end: Secrets() for front_end in FRONT_ENDS}
    with ChatServer() as server:
        guarded_agent(project, server, logs)
        questions = {}
        for front_end, own in planted.items():
            # The tool's file is the test's own plant: the project is not an artifact.
            creds = f"creds-{front_end}.txt"
            (project.dir / creds).write_text(f"aws_access_key_id = {own.result}\n")
            questions[front_end], replies = turns(front_end, own, creds)
            server.queue(*replies)
        runs = run_print_mode(project, questions["print"])
        outcomes = asyncio.run(run_acp(project, questions["acp"], logs))
        requests = [json.dumps(request.body) for request in server.requests]
    home = sorted(path for path in project.home.rglob("*") if path.is_file())
    trust_store = project.home / "trust.json"  # paths and digests: searched on its own row
    home.remove(trust_store)
    # The agent file's parse, kept by the commands that read it: searched on its own row.
    parsed = [path for path in home if path.is_relative_to(project.home / "cache")]
    home = [path for path in home if path not in parsed]
    artifacts = {
        "trust store ($HOOKGATE_HOME/trust.json)": Artifact(
            trust_store.read_text(), (str(project.agent_file),)
        ),
        "parse cache ($HOOKGATE_HOME/cache/)": Artifact(
            "\n".join(path.read_text() for path in parsed), ('"redact-question"',)
        ),
        **{
            f"$HOOKGATE_HOME/{path.relative_to(project.home)}": Artifact(
                path.read_text(), (BLOCKED_MARKER, REDACTED, DENIED_MARKER, SCRUBBED)
            )
            for path in home
        },
        "hook inputs (a recorder on every event)": Artifact(
            (logs / "hooks.log").read_text(), (BLOCKED_MARKER, SCRUBBED, '"sessionStart"')
        ),
        "audit log (postGeneration)": Artifact(
            (logs / "audit.log").read_text(), (BLOCKED_MARKER, '"answered"')
        ),
        "model requests": Artifact(
            "\n".join(requests), (BLOCKED_MARKER, REDACTED, DENIED_MARKER, SCRUBBED)
        ),
        **print_mode_artifacts(runs),
        "acp stdout (agent to editor, raw)": Artifact(
            (logs / "acp.from_agent").read_text(),
            (BLOCK_RESPONSE, REDACTED, DENIED_MARKER, SCRUBBED),
        ),
        "acp stdin (editor to agent, raw)": Artifact(
            without_sent_question((logs / "acp.to_agent").read_text(), questions["acp"][0]),
            ('"session/prompt"', questions["acp"][1]),
        ),
        "acp stderr": Artifact((logs / "acp.stderr").read_text(), (REPLACED_NOTICE,)),
    }
    return Audit(planted, artifacts, runs, outcomes, project.session_files())


def print_mode_artifacts(runs: list[subprocess.CompletedProcess[str]]) -> dict[str, Artifact]:
    """stdout and stderr of each `-p` run; only the runs with notices write to stderr."""
    stderr_markers: list[tuple[str, ...]] = [(), (REDACTED, DENIED_MARKER), (REPLACED_NOTICE,), ()]
    artifacts = {}
    for number, (run, markers) in enumerate(zip(runs, stderr_markers, strict=True), start=1):
        stdout_marker = (BLOCK_RESPONSE,) if number == 1 else ()
        artifacts[f"-p run {number} stdout"] = Artifact(run.stdout, stdout_marker)
        artifacts[f"-p run {number} stderr"] = Artifact(
            run.stderr, markers, may_be_empty=not markers
        )
    return artifacts


ARTIFACTS = (
    "every file under $HOOKGATE_HOME",
    "trust store ($HOOKGATE_HOME/trust.json)",
    "parse cache ($HOOKGATE_HOME/cache/)",
    "hook inputs (a recorder on every event)",
    "audit log (postGeneration)",
    "model requests",
    *(f"-p run {n} {stream}" for n in range(1, 5) for stream in ("stdout", "stderr")),
    "acp stdout (agent to editor, raw)",
    "acp stdin (editor to agent, raw)",
    "acp stderr",
)


def selected(audit: Audit, name: str) -> dict[str, Artifact]:
    """The artifacts `name` stands for (the files under $HOOKGATE_HOME are one row)."""
    if name == "every file under $HOOKGATE_HOME":
        return {
            key: value
            for key, value in audit.artifacts.items()
            if key.startswith("$HOOKGATE_HOME/")
        }
    return {name: audit.artifacts[name]}


def test_the_scenario_ran_as_written(audit: Audit) -> None:
    """Both front ends: the question blocked, the call denied, the result scrubbed, all answered."""
    assert [run.returncode for run in audit.runs] == [2, 0, 0, 0], [r.stderr for r in audit.runs]
    assert [stop for stop, _ in audit.acp_outcomes] == ["end_turn"] * 4
    assert [meta["outcome"] for _, meta in audit.acp_outcomes] == ["blocked"] + ["answered"] * 3
    assert len(audit.session_files) == 2  # the -p runs continue one session; ACP has its own
    # Only session files and their transcripts: neither front end keeps an input history
    # (line mode does, and tests/frontends/test_line.py audits it for a blocked question).
    home = sorted(key for key in audit.artifacts if key.startswith("$HOOKGATE_HOME/"))
    assert "trust store ($HOOKGATE_HOME/trust.json)" in audit.artifacts
    assert home == sorted(
        f"$HOOKGATE_HOME/{folder}/{path.name}"
        for path in audit.session_files
        for folder in ("sessions", "transcripts")
    )


@pytest.mark.parametrize("name", ARTIFACTS)
def test_the_artifact_recorded_the_run(audit: Audit, name: str) -> None:
    """Each artifact holds the run's traces (markers, redactions): its search below means something."""
    for key, artifact in selected(audit, name).items():
        assert artifact.text.strip() or artifact.may_be_empty, f"{key} is empty"
        missing = [marker for marker in artifact.markers if marker not in artifact.text]
        assert missing == [], f"{key} lacks {missing}:\n{artifact.text[:2000]}"


@pytest.mark.parametrize("name", ARTIFACTS)
def test_no_secret_reaches_the_artifact(audit: Audit, name: str) -> None:
    """No secret (blocked question, redacted call, scrubbed result; -p and ACP) is in the artifact."""
    for key, artifact in selected(audit, name).items():
        for front_end, own in audit.secrets.items():
            leaked = [secret for secret in own if secret in artifact.text]
            assert leaked == [], f"{key} holds {front_end}'s secrets {leaked}"
