"""A session file that cannot be written: the turn still answers, and says history is not saved.

Line mode too: its input history then lives in memory, with a notice.

The directory is read-only (for a `hookgate` without the privilege to ignore file
modes), the disk is full (a tmpfs filled to the last block, where this machine lets
us mount one), or it fills mid-turn (a file-size limit). Each time `hookgate -p`
answers, a notice names the session file and the reason, `postGeneration` runs, no
process is left, and what was already on disk is byte for byte what it was, or
whole JSONL ending where the writes stopped.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from frontends.test_line import PROMPT, Terminal
from hookgate.messages import Message
from hookgate.store.session import SessionStore
from reliability.faultkit import (
    MARK_VAR,
    PROCESS_MARGIN_S,
    assert_nothing_left,
    assert_session_readable,
    bounded,
    events_in,
    marked_env,
    recorder,
)
from runtime.project import (
    HOOKGATE,
    RUN_TIMEOUT,
    Project,
    assert_tool_calls_answered,
    chat_messages,
    served_model,
)
from support.chat_server import ChatServer, ServedReply

#: Seconds a case may take: one `hookgate -p` turn, its tool ends at once.
BOUND_S = PROCESS_MARGIN_S
#: The bytes a session file may grow to where the disk "fills mid-turn": room for the
#: header and the question, not for the tool's long output.
FILE_SIZE_LIMIT = 2048
#: A tool output longer than `FILE_SIZE_LIMIT`.
LONG_OUTPUT = 4000
#: The size of the tmpfs standing in for a full disk, and its unit of allocation.
TMPFS_SIZE = "256k"
PAGE = 4096
ANSWER = "done"
WRITE_HINT = "(set HOOKGATE_HOME to a writable directory)"


def write_agent(project: Project, post_log: Path) -> None:
    """One tool call with a long output, then the answer; postGeneration recorded."""
    call = {
        "name": "shell",
        "arguments": {"command": f"head -c {LONG_OUTPUT} /dev/zero | tr '\\0' x"},
    }
    model = project.script({"tool_calls": [call]}, {"expect": "xxxx", "text": ANSWER})
    project.write_agent(model, yolo=True, hooks={"postGeneration": [recorder(post_log)]})


def seed_session(home: Path, cwd: Path) -> Path:
    """An earlier session of this project, already on disk; returns its file.

    Its size is a whole number of pages, so on a full tmpfs not one byte more fits.
    """
    session = SessionStore(home).create(agent_file="hookgate.yaml", cwd=str(cwd))
    session.append_message(Message("user", "an earlier question"))
    empty = {"type": "message", "message": Message("assistant", "").to_json()}
    line = len(json.dumps(empty, separators=(",", ":"))) + 1  # the record without its text
    padding = -(session.path.stat().st_size + line) % PAGE + PAGE
    session.append_message(Message("assistant", "y" * padding))
    assert session.path.stat().st_size % PAGE == 0
    return session.path


def run(
    project: Project,
    mark: str,
    *args: str,
    prefix: Sequence[str] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`hookgate ARGS -p Go.`, through `prefix`, bounded in time; the agent file trusted."""
    project.trust()
    with bounded(BOUND_S):
        return subprocess.run(
            [*prefix, str(HOOKGATE), *args, "-p", "Go."],
            cwd=project.dir,
            env=marked_env(project, mark),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
            preexec_fn=preexec_fn,
        )


def assert_answered_unsaved(
    done: subprocess.CompletedProcess[str], post_log: Path, notice: str, mark: str
) -> None:
    """The turn answered, the one notice about history starts with `notice`, and the rest."""
    assert (done.returncode, done.stdout) == (0, ANSWER + "\n"), done.stderr
    lines = [line for line in done.stderr.splitlines() if "history" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"hookgate: {notice}"), done.stderr
    assert lines[0].endswith(WRITE_HINT), done.stderr
    assert "Traceback" not in done.stderr
    assert events_in(post_log) == [("postGeneration", "answered")]
    assert_nothing_left(mark)


# --- a read-only HOOKGATE_HOME ---------------------------------------------------------


def unprivileged() -> list[str]:
    """The command prefix that runs without the power to ignore file modes."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv(1) is missing to drop privileges")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]


@pytest.fixture
def read_only_home(project: Project, tmp_path: Path) -> Iterator[Path]:
    """An earlier session in a home made read-only for the case; yields the session file.

    The agent file (`write_agent`, post.log in tmp_path) is written and trusted first.
    """
    write_agent(project, tmp_path / "post.log")
    project.trust()
    path = seed_session(project.home, project.dir)
    path.chmod(0o400)
    for directory in (path.parent, project.home):
        directory.chmod(0o500)
    yield path
    for directory in (project.home, path.parent):
        directory.chmod(0o700)
    path.chmod(0o600)


@pytest.mark.reliability("session")
def test_read_only_home_new_session(
    project: Project, read_only_home: Path, tmp_path: Path, mark: str
) -> None:
    """A new session in a read-only HOOKGATE_HOME: answered in memory, a notice says so, the old file intact."""
    before = read_only_home.read_bytes()
    post_log = tmp_path / "post.log"

    done = run(project, mark, prefix=unprivileged())

    assert_answered_unsaved(
        done, post_log, "history is not saved: cannot write the session file", mark
    )
    assert "Permission denied" in done.stderr
    assert read_only_home.read_bytes() == before
    assert project.session_files() == [read_only_home]


@pytest.mark.reliability("session")
def test_read_only_home_continued_session(
    project: Project, read_only_home: Path, tmp_path: Path, mark: str
) -> None:
    """Continuing a session in a read-only HOOKGATE_HOME: answered, one notice, the file byte for byte intact."""
    before = read_only_home.read_bytes()
    post_log = tmp_path / "post.log"

    done = run(project, mark, "--continue", prefix=unprivileged())

    notice = f"history is no longer saved: cannot write the session file {read_only_home}"
    assert_answered_unsaved(done, post_log, notice, mark)
    assert read_only_home.read_bytes() == before


# --- the disk fills up mid-turn (a file-size limit) ---------------------------------------


def limit_file_size(limit: int) -> Callable[[], None]:
    """A `preexec_fn` limiting the files the child (and its hooks) write to `limit` bytes."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.reliability("session")
def test_disk_fills_mid_turn(
    project: Project, chat_server: ChatServer, tmp_path: Path, mark: str
) -> None:
    """The session file hits a size limit mid-turn: answered, one notice, whole JSONL, and it resumes validly."""
    post_log = tmp_path / "post.log"
    write_agent(project, post_log)

    done = run(project, mark, preexec_fn=limit_file_size(FILE_SIZE_LIMIT))

    notice = "history is no longer saved: cannot write the session file"
    assert_answered_unsaved(done, post_log, notice, mark)
    assert "File too large" in done.stderr
    # The tool's long result did not fit: the file stops after the call, whole.
    records = assert_session_readable(project.home, complete=False)
    assert records[1] == {"type": "message", "message": {"role": "user", "content": "Go."}}
    assert project.session_files()[0].stat().st_size <= FILE_SIZE_LIMIT
    # Resumed, the call the file holds without its result still gets an answer.
    project.write_agent(served_model(chat_server.url))
    chat_server.queue(ServedReply(text="resumed"))
    resumed = run(project, mark, "--continue")
    assert (resumed.returncode, resumed.stdout) == (0, "resumed\n"), resumed.stderr
    assert_tool_calls_answered(chat_messages(chat_server.requests[0].body))


@pytest.mark.reliability("session")
def test_disk_full_for_a_continued_session(project: Project, tmp_path: Path, mark: str) -> None:
    """Continuing a session whose file already fills the size limit: answered, one notice, the file intact."""
    path = seed_session(project.home, project.dir)
    before = path.read_bytes()
    post_log = tmp_path / "post.log"
    write_agent(project, post_log)

    done = run(project, mark, "--continue", preexec_fn=limit_file_size(len(before)))

    notice = f"history is no longer saved: cannot write the session file {path}"
    assert_answered_unsaved(done, post_log, notice, mark)
    assert path.read_bytes() == before


# --- a full disk (a tmpfs filled to the last block) ----------------------------------------

#: Run inside a private mount namespace: mount a tmpfs on $HOOKGATE_HOME, put the seed
#: session there (if any), fill the rest, run hookgate, and copy the sessions out.
_FULL_TMPFS = """
set -u
mount -t tmpfs -o size="$TMPFS_SIZE",mode=0700 tmpfs "$HOOKGATE_HOME" || exit 97
if [ -n "$SEED" ]; then
    mkdir -m 0700 "$HOOKGATE_HOME/sessions" && cp -p "$SEED" "$HOOKGATE_HOME/sessions/"
fi
cp -p "$TRUST" "$HOOKGATE_HOME/"
dd if=/dev/zero of="$HOOKGATE_HOME/filler" bs=1k 2>/dev/null
"$@"
status=$?
[ -d "$HOOKGATE_HOME/sessions" ] && cp -rp "$HOOKGATE_HOME/sessions" "$AFTER"
exit $status
"""


def on_full_tmpfs(
    project: Project, mark: str, seed: Path | None, after: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run `hookgate ARGS -p Go.` with $HOOKGATE_HOME on a full tmpfs; skip where impossible."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        pytest.skip("mounting a tmpfs needs root and unshare(1)")
    env = {
        **marked_env(project, mark),
        "TMPFS_SIZE": TMPFS_SIZE,
        "SEED": str(seed or ""),
        "AFTER": str(after),
        "TRUST": str(after.parent / "trust.json"),  # home itself is hidden by the mount
    }
    project.trust()
    shutil.copy(project.home / "trust.json", after.parent / "trust.json")
    command = [unshare, "--mount", "--propagation", "private", "sh", "-c", _FULL_TMPFS, "sh"]
    with bounded(BOUND_S):
        done = subprocess.run(
            [*command, str(HOOKGATE), *args, "-p", "Go."],
            cwd=project.dir, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=RUN_TIMEOUT, check=False,
        )  # fmt: skip
    if done.returncode == 97 or "unshare failed" in done.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    return done


@pytest.mark.reliability("session")
def test_full_disk_new_session(project: Project, tmp_path: Path, mark: str) -> None:
    """A new session on a full disk (ENOSPC): answered in memory, a notice says so, no half-made file."""
    post_log = tmp_path / "post.log"
    write_agent(project, post_log)
    project.home.mkdir()

    done = on_full_tmpfs(project, mark, None, tmp_path / "after")

    notice = "history is not saved: cannot write the session file"
    assert_answered_unsaved(done, post_log, notice, mark)
    assert "No space left on device" in done.stderr
    assert list((tmp_path / "after").glob("*")) == []


@pytest.mark.reliability("session")
def test_full_disk_continued_session(project: Project, tmp_path: Path, mark: str) -> None:
    """Continuing a session on a full disk (ENOSPC): answered, one notice, the file byte for byte intact."""
    seed = seed_session(tmp_path / "seed-home", project.dir)
    before = seed.read_bytes()
    post_log = tmp_path / "post.log"
    write_agent(project, post_log)
    project.home.mkdir()

    done = on_full_tmpfs(project, mark, seed, tmp_path / "after", "--continue")

    notice = "history is no longer saved: cannot write the session file"
    assert_answered_unsaved(done, post_log, notice, mark)
    assert "No space left on device" in done.stderr
    (after,) = (tmp_path / "after").glob("*.jsonl")
    assert after.read_bytes() == before
    assert json.loads(before.split(b"\n")[0])["type"] == "session"


# --- line mode: the input history cannot be written either ---------------------------------


def no_room_to_write() -> None:
    """A full disk, as a file-size limit of 0 bytes (set in the child before exec)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.fixture
def home_with_input_history(project: Project) -> Iterator[Path]:
    """A home holding an input history from before; yields that file."""
    project.home.mkdir(mode=0o700)
    history = project.home / "input_history"
    history.write_text("\n# earlier\n+an earlier question\n")
    history.chmod(0o400)
    yield history
    project.home.chmod(0o700)


@pytest.mark.reliability("session")
@pytest.mark.parametrize("home", ["read-only", "full"])
def test_line_mode_on_an_unwritable_home(
    project: Project, home_with_input_history: Path, home: str, mark: str
) -> None:
    """Line mode on a read-only or full HOOKGATE_HOME: one notice per file, no traceback, the session goes on."""
    history = home_with_input_history
    project.write_agent(project.script({"text": "Hello."}, {"text": "Hello again."}))
    env = {MARK_VAR: mark}
    if home == "read-only":
        project.home.chmod(0o500)
        terminal = Terminal(project, prefix=unprivileged(), extra_env=env)
        reason = "Permission denied"
    else:
        terminal = Terminal(project, before_exec=no_room_to_write, extra_env=env)
        reason = "File too large"
    try:
        terminal.expect("history is not saved")
        terminal.expect(PROMPT)
        terminal.submit("hello")
        terminal.expect("Hello.")
        terminal.expect(f"input history is kept in memory only: cannot write {history}: {reason}")
        terminal.expect(PROMPT)
        terminal.submit("again")
        terminal.expect("Hello again.")
        terminal.expect(PROMPT)
        terminal.type("\x04")
        assert terminal.wait() == 0
    finally:
        terminal.close()

    assert "Traceback" not in terminal.screen
    assert terminal.screen.count("input history is kept in memory only") == 1
    assert history.read_text() == "\n# earlier\n+an earlier question\n"
    assert_nothing_left(mark)


@pytest.mark.reliability("session")
def test_a_session_that_cannot_be_saved_keeps_the_id_its_notice_names(
    project: Project, mark: str
) -> None:
    """A new session on a full disk goes on under the id its notice names, not another one.

    The notice names a session file; the transcript, the hooks' session id are that id."""
    project.write_agent(project.script({"text": ANSWER}))

    done = run(project, mark, preexec_fn=limit_file_size(0))

    assert (done.returncode, done.stdout) == (0, ANSWER + "\n"), done.stderr
    named = re.findall(r"/sessions/([0-9A-Za-z_-]+)\.jsonl", done.stderr)
    transcripts = re.findall(r"/transcripts/([0-9A-Za-z_-]+)\.jsonl", done.stderr)
    assert len(named) == 1, done.stderr
    assert transcripts == named, done.stderr
