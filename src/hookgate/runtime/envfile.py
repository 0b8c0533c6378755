"""`CLAUDE_ENV_FILE`: variables a sessionStart hook sets for the session's tools.

Claude Code hands its SessionStart hooks a file to append `export NAME=value` lines to,
and the session's commands then see those variables. `create(home, session_id)` makes
the (empty, private) file; `exported(path, env)` runs it once in `bash` with `env`,
after the sessionStart hooks, and returns the variables it set or changed, for the
tools' environment. A file that is missing, empty or fails costs a notice at most,
never the session.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

#: The variable that names the file to sessionStart hooks, as Claude Code names it.
ENV_FILE_VAR = "CLAUDE_ENV_FILE"
#: The folder under `$HOOKGATE_HOME` that holds the files.
ENV_FILES = "session-env"
#: Seconds the file may take to run: it is a few `export` lines.
RUN_TIMEOUT = 10.0
#: What bash sets itself, never a hook's variable.
_BASH_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD"})


def create(home: Path, session_id: str) -> Path | None:
    """An empty file, private (0600 in a 0700 folder), for `session_id`'s hooks to write;
    None where the home cannot hold it (read-only, full): the session goes on without."""
    path = home / ENV_FILES / f"{session_id}.sh"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    os.close(fd)
    return path


def exported(path: Path, env: Mapping[str, str]) -> dict[str, str]:
    """The variables `path`, run by bash with `env`, sets or changes (none if it is
    empty). Raises `OSError` where it cannot run, or bash fails or times out."""
    if path.stat().st_size == 0:
        return {}
    import subprocess  # here: ~4 ms of a start-up, which mostly has nothing to run

    try:
        done = subprocess.run(
            ["bash", "-c", 'set -a; . "$1" >/dev/null; exec env -0', "env-file", str(path)],
            env=dict(env), capture_output=True, timeout=RUN_TIMEOUT, check=True,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.SubprocessError as exc:
        raise OSError(str(exc)) from exc
    after = dict(
        entry.split("=", 1) for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0")
        if "=" in entry
    )  # fmt: skip
    return {
        name: value
        for name, value in after.items()
        if name not in _BASH_OWN and env.get(name) != value
    }


def applied(
    path: Path | None, env: Mapping[str, str], notify: Callable[[str], None]
) -> dict[str, str]:
    """`exported`, where a file that cannot run is a notice and the tools get none of it.

    The file is removed once read: what it set lives on in the tools' environment, and
    `$HOOKGATE_HOME` keeps no empty file per session.
    """
    if path is None:
        return {}
    try:
        return exported(path, env)
    except OSError as exc:
        notify(f"warning: {ENV_FILE_VAR} ({path}) was not applied: {exc}")
        return {}
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
