"""Line mode through a real pseudo-terminal: what a person at the keyboard sees.

`hookgate` runs as the session leader of a fresh pty (so Ctrl-C is a real SIGINT from
the terminal); the test types keys into the master side and reads the screen back,
escape sequences stripped, waiting generously for each expected piece of text.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import stat
import struct
import termios
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from hookgate.store.session import SessionStore
from runtime.project import HOOKGATE, Project, chat_messages, read_log, served_model
from support.chat_server import ChatServer, ServedReply

#: Seconds to wait for one expected piece of output on a loaded machine.
EXPECT_TIMEOUT = 20.0
#: Seconds the process may take to exit once asked to.
EXIT_TIMEOUT = 10.0
ROWS, COLUMNS = 40, 160
_ESCAPES = re.compile(
    r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])"
)
PROMPT = "›"
SECRET = "sk-lineQ9w8E7r6T5y4U3i2O1p0"


class Terminal:
    """`hookgate ARGS` on a pty; `expect(text)` reads until `text` has appeared."""

    def __init__(
        self,
        project: Project,
        *args: str,
        prefix: Sequence[str] = (),
        before_exec: Callable[[], None] | None = None,
        extra_env: Mapping[str, str] | None = None,
        trusted: bool = True,
    ) -> None:
        env = project.env(
            TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", LC_ALL="C.UTF-8", **(extra_env or {})
        )
        if trusted:
            project.trust()
        command = [*prefix, str(HOOKGATE), *args]
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once, whatever happens
            try:
                os.chdir(project.dir)
                if before_exec is not None:
                    before_exec()
                os.execve(command[0], command, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.screen = ""  # everything shown so far, escape sequences removed
        self.raw = b""  # every byte read, escape sequences included
        self._seen = 0  # where the next expect() starts looking
        self.status: int | None = None

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def submit(self, line: str) -> None:
        """Type `line`, wait until the line editor shows it, then press Enter."""
        self.type(line)
        self.expect(line)
        self.type("\r")

    def expect(self, text: str, timeout: float = EXPECT_TIMEOUT) -> str:
        """Read until `text` appears after the previous match; returns the output in between."""
        deadline = time.monotonic() + timeout
        while (found := self.screen.find(text, self._seen)) < 0:
            if not self._read(deadline - time.monotonic()):
                pytest.fail(f"{text!r} never appeared; the screen after the last match:\n"
                            f"{self.screen[self._seen:]}")  # fmt: skip
        between = self.screen[self._seen : found]
        self._seen = found + len(text)
        return between

    def wait(self, timeout: float = EXIT_TIMEOUT) -> int:
        """The exit code, once the process has exited (its output drained meanwhile)."""
        deadline = time.monotonic() + timeout
        while self.status is None and time.monotonic() < deadline:
            self._read(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        if self.status is None:
            pytest.fail(f"hookgate did not exit; the screen:\n{self.screen}")
        return self.status

    def hang_up(self) -> None:
        """Close the terminal, as a closed window does: the kernel sends SIGHUP."""
        os.close(self.fd)
        self.fd = os.open(os.devnull, os.O_RDONLY)  # read as end of file from now on

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def _read(self, timeout: float) -> bool:
        """Read what is there within `timeout` seconds; False at the deadline or at EOF."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child is gone and the slave side closed
            return False
        self.raw += data
        self.screen += _ESCAPES.sub("", data.decode("utf-8", "replace")).replace("\r", "")
        return bool(data)


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def start(terminals: list[Terminal], project: Project, *args: str, **options: Any) -> Terminal:
    terminal = Terminal(project, *args, **options)
    terminals.append(terminal)
    terminal.expect(PROMPT)
    return terminal


def wait_until(condition: Callable[[], bool], failure: str) -> None:
    deadline = time.monotonic() + EXPECT_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(failure)
        time.sleep(0.02)


#: A preGeneration hook marking that a turn runs: the terminal is back in cooked
#: mode by then, so Ctrl-C reaches hookgate as SIGINT rather than as a key. (It may
#: land while this hook is still being reaped: the turn is cancelled all the same.)
TURN_STARTED = {"name": "mark", "command": "touch turn-started"}


def audit_and_guard(project: Project) -> dict[str, Any]:
    return {
        "preGeneration": [{"name": "redact", "command": project.example("redact_prompt.py")}],
        "preToolCall": [{"name": "no-rm-rf", "matcher": "^shell$", "onError": "fail",
                         "command": project.example("guard-rm-rf.sh")}],
        "postGeneration": [{"name": "audit", "command": project.example("audit-log.sh")}],
    }  # fmt: skip


def test_question_streamed_answer_hooks_listing_and_ctrl_d(
    project: Project, terminals: list[Terminal]
) -> None:
    model = project.script({"expect": "Who are you?", "text": "I am a scripted assistant."})
    project.write_agent(model, hooks=audit_and_guard(project))
    terminal = start(terminals, project)

    terminal.submit("Who are you?")
    terminal.expect("I am a scripted assistant.")
    terminal.expect(PROMPT)
    terminal.submit("/hooks")
    listing = terminal.expect("postGeneration 1. audit (onError warn)")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "preGeneration 1. redact (onError fail)" in listing
    assert "preToolCall 1. no-rm-rf matcher '^shell$' (onError fail)" in listing
    assert (project.dir / "audit.log").read_text().count("\n") == 1


def test_ctrl_c_cancels_the_turn_not_the_program(
    project: Project, terminals: list[Terminal], chat_server: ChatServer
) -> None:
    chat_server.queue(ServedReply(fault="hang"), ServedReply(text="Still here."))
    project.write_agent(served_model(chat_server.url), hooks=audit_and_guard(project))
    terminal = start(terminals, project)

    terminal.submit("Take your time")
    wait_until(lambda: len(chat_server.requests) == 1, "the model was never asked")
    terminal.type("\x03")  # the turn waits on the model: the terminal is in cooked mode
    terminal.expect("turn cancelled")
    terminal.expect(PROMPT)
    terminal.submit("Are you there?")
    terminal.expect("Still here.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    audit = [(entry["outcome"], entry["prompt"]) for entry in read_log(project.dir / "audit.log")]
    assert audit == [("cancelled", "Take your time"), ("answered", "Are you there?")]
    sent = [m["content"] for m in chat_messages(chat_server.requests[1].body)]
    assert sent[1:] == ["Take your time", "Are you there?"]


def no_umask() -> None:
    os.umask(0)  # files get what hookgate asks for, no more


def test_a_blocked_secret_is_kept_in_no_file_line_mode_writes(
    project: Project, terminals: list[Terminal]
) -> None:
    project.write_agent(project.script({"text": "Hello."}), hooks=audit_and_guard(project))
    terminal = start(terminals, project, before_exec=no_umask)

    terminal.submit(f"use {SECRET} for me")
    terminal.expect("Your question was not sent")
    terminal.expect(PROMPT)
    terminal.submit("hello")
    terminal.expect("Hello.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    written = [*project.files_under_home(), project.dir / "audit.log"]
    holding = [path for path in written if SECRET.encode() in path.read_bytes()]
    assert holding == []
    history = project.home / "input_history"
    assert "+hello\n" in history.read_text()
    assert stat.S_IMODE(history.stat().st_mode) == 0o600  # whatever the umask


def test_a_second_ctrl_c_does_not_cut_post_generation_short(
    project: Project, terminals: list[Terminal], tmp_path: Path
) -> None:
    log = tmp_path / "post.log"
    slow_audit = f'touch post-started; sleep 1; cat >> "{log}"; echo >> "{log}"'
    model = project.script({"delay": 30, "text": "too late"})
    project.write_agent(
        model,
        hooks={
            "preGeneration": [TURN_STARTED],
            "postGeneration": [{"name": "audit", "command": slow_audit}],
        },
    )
    terminal = start(terminals, project)

    terminal.submit("Take your time")
    wait_until((project.dir / "turn-started").exists, "the turn never started")
    terminal.type("\x03")
    wait_until((project.dir / "post-started").exists, "postGeneration never started")
    terminal.type("\x03")
    terminal.expect("turn cancelled")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]


@pytest.mark.parametrize(("answer", "status"), [("y", 0), ("n", 1)])
def test_continuing_a_session_another_process_holds_offers_a_new_one(
    project: Project, terminals: list[Terminal], answer: str, status: int
) -> None:
    project.write_agent(project.script({"text": "Hello."}))
    store = SessionStore(project.home)
    held = store.create(agent_file=str(project.agent_file), cwd=str(project.dir))
    held.lock()  # this test process is the other hookgate
    before = held.path.read_bytes()
    terminal = Terminal(project, "-c")
    terminals.append(terminal)

    terminal.expect(f"session {held.id} is in use by hookgate (pid {os.getpid()})")
    terminal.expect("start a new session instead? [y/N]")
    terminal.type(f"{answer}\r")
    if answer == "y":
        terminal.expect(PROMPT)
        terminal.submit("hi")
        terminal.expect("Hello.")
        terminal.expect(PROMPT)
        terminal.type("\x04")

    assert terminal.wait() == status
    held.close()
    assert held.path.read_bytes() == before
    assert len(project.session_files()) == 1 + (answer == "y")


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143), (None, 129)]
)
def test_sighup_or_sigterm_ends_the_session_after_post_generation(
    project: Project,
    terminals: list[Terminal],
    tmp_path: Path,
    read_pid: Callable[[Path], int],
    group_gone: Callable[[int], None],
    signum: signal.Signals | None,
    code: int,
) -> None:
    """`kill -HUP`, or closing the terminal (None), is SIGTERM: the tool's group is
    stopped, the audit hook writes its record, and hookgate exits 128 + the signal."""
    log = tmp_path / "post.log"
    started = project.dir / "started"
    command = f"echo $$ > {started}; sleep 30"
    model = project.script({"tool_calls": [{"name": "shell", "arguments": {"command": command}}]})
    project.write_agent(model, yolo=True, hooks={"postGeneration": [project.recorder(log)]})
    terminal = start(terminals, project)

    terminal.submit("Run the long command")
    wait_until(lambda: started.exists() and started.read_text().strip() != "", "no tool ran")
    if signum is None:
        terminal.hang_up()  # the notices that follow find no terminal to write to
    else:
        os.kill(terminal.pid, signum)

    assert terminal.wait() == code, terminal.screen
    assert [entry["outcome"] for entry in read_log(log)] == ["cancelled"]
    group_gone(read_pid(started))


def test_a_malformed_model_chunk_fails_the_turn_and_line_mode_goes_on(
    project: Project, terminals: list[Terminal], chat_server: ChatServer
) -> None:
    chat_server.queue(
        ServedReply(raw_events=[b'data: {"choices": null}\n\n']), ServedReply(text="Still here.")
    )
    project.write_agent(served_model(chat_server.url))
    terminal = start(terminals, project)

    terminal.submit("First")
    terminal.expect("sent choices that are not a list")
    terminal.expect(PROMPT)
    terminal.submit("Second")
    terminal.expect("Still here.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "Traceback" not in terminal.screen


def test_a_model_error_is_shown_once(
    project: Project, terminals: list[Terminal], chat_server: ChatServer
) -> None:
    chat_server.queue(ServedReply.http_error(500, '{"error": {"message": "overloaded"}}'))
    project.write_agent(served_model(chat_server.url))
    terminal = start(terminals, project)

    terminal.submit("Hello?")
    terminal.expect("overloaded")
    shown = terminal.expect(PROMPT)  # what came after the error, up to the next prompt
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "overloaded" not in shown, shown


def test_a_blocked_question_names_the_hook_and_its_reason(
    project: Project, terminals: list[Terminal]
) -> None:
    project.write_agent(project.script({"text": "Hello."}), hooks=audit_and_guard(project))
    terminal = start(terminals, project)

    terminal.submit(f"use {SECRET} for me")
    shown = terminal.expect("Your question was not sent")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "blocked by hook 'redact': the question holds an OpenAI-style API key" in shown


def test_a_status_line_shows_the_model_at_work_and_for_how_long(
    project: Project, terminals: list[Terminal], chat_server: ChatServer
) -> None:
    chat_server.queue(ServedReply(fault="hang"))
    project.write_agent(served_model(chat_server.url))
    terminal = start(terminals, project)

    terminal.submit("Take your time")
    terminal.expect("thinking… 0s")
    terminal.expect("thinking… 1s")  # the seconds go up while the model is silent
    terminal.type("\x03")
    terminal.expect("turn cancelled")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0


def test_a_status_line_shows_the_tool_at_work_then_gives_way_to_the_answer(
    project: Project, terminals: list[Terminal]
) -> None:
    model = project.script(
        {"tool_calls": [{"name": "shell", "arguments": {"command": "sleep 1.5"}}]},
        {"text": "Slept well."},
    )
    project.write_agent(model, yolo=True)
    terminal = start(terminals, project)

    terminal.submit("Sleep a little")
    terminal.expect("running shell… 1s")
    terminal.expect("Slept well.")
    terminal.expect(PROMPT)
    terminal.type("\x04")

    assert terminal.wait() == 0
    assert "\r\x1b[KSlept well." in terminal.raw.decode()  # the status erased, then the answer
