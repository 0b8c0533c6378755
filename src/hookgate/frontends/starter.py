"""`hookgate init`: a commented starter agent file and the example hooks it names.

Everything is written before it is trusted, so the trust recorded covers the scripts
as written; nothing that exists is overwritten without `--force`.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from hookgate.errors import ConfigError
from hookgate.security.trust.record import trust_agent_file

STARTER = """\
# hookgate agent file. Check it with: hookgate hooks check
# Reference: docs/runtime.md (this file) and docs/hooks.md (the hooks).

# The model: any OpenAI-compatible server. No API key is sent unless
# api_key_env names the variable holding it (servers such as Ollama need none).
model:
  name: llama3.2
  base_url: http://localhost:11434/v1
  # api_key_env: OPENAI_API_KEY
# Offline, for trying hooks out: a YAML list of replies, one per model call.
# model: scripted:replies.yaml

system: You are a careful coding assistant. Keep answers short.

# Built-in tools offered to the model (default: all of them).
tools: [shell, read_file, write_file, edit_file, list_files, grep]

# Rules judged on the model's own arguments: deny wins, then allow; anything
# else that changes things asks you first. A shell rule is judged on each
# command of the line: `ls; rm -r x` is allowed only if `rm -r x` is too, and
# `shell(rm *)` denies `true; rm x`, `/bin/rm x` and `sudo rm x`. Allow only
# commands that cannot change anything whatever their arguments. (Not git: a
# repository's .git/config can make `git status` run any program it names.)
permissions:
  allow: ["shell(ls)", "shell(ls *)"]
  deny: ["shell(sudo *)"]

# yolo: true skips the consent prompts. Hooks and deny rules still apply.
yolo: false

# Hooks run in list order; see `hookgate hooks schema EVENT` for what they read.
hooks:
  preToolCall:
    - name: no-rm-rf
      matcher: ^shell$
      command: ./hooks/guard-rm-rf.sh
      onError: fail        # a guard that cannot run must not let the call through
  postGeneration:
    - name: audit
      command: ./hooks/audit-log.sh
      onError: ignore
      timeout: 2s
"""


#: The hooks the starter file names, by path from it, and the example each copies.
STARTER_HOOKS = {"hooks/guard-rm-rf.sh": "guard-rm-rf.sh", "hooks/audit-log.sh": "audit-log.sh"}
#: Hook scripts are programs: owner-writable, runnable by all, like an installed script.
SCRIPT_MODE = 0o755


def write_starter(path: Path, *, force: bool = False) -> list[Path]:
    """Write the agent file at `path` and its hooks next to it, then trust them all.

    A symlink in the way (the agent file, `hooks/`, a hook script) is refused, dangling
    or not, `--force` or not: a cloned repository can plant one pointing anywhere, and
    following it would write outside the project and trust what it points at.
    """
    hooks = {path.parent / relative: example for relative, example in STARTER_HOOKS.items()}
    written = [path, *hooks]
    for link in _symlinks_in_the_way(path.parent, written):
        raise ConfigError(
            f"{link} is a symbolic link (to {os.readlink(link)!r}); hookgate init does not "
            "follow links it did not make",
            hint=f"remove it (rm {link}), or init another directory",
        )
    existing = [target for target in written if target.exists()]
    if existing and not force:
        raise ConfigError(
            f"{', '.join(map(str, existing))} exist{'s' if len(existing) == 1 else ''}",
            hint="hookgate init --force overwrites them",
        )
    examples = resources.files("hookgate.examples")
    for target, example in hooks.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_new(target, examples.joinpath(example).read_bytes(), SCRIPT_MODE)
    _write_new(path, STARTER.encode(), 0o644)
    trust_agent_file(path)  # written here, by the owner's own command: trusted as written
    return written


def _symlinks_in_the_way(top: Path, targets: list[Path]) -> list[Path]:
    """Each symlink among `targets` and the directories between `top` and them."""
    links: dict[Path, None] = {}
    for target in targets:
        for place in [*reversed(target.relative_to(top).parents[:-1]), target.relative_to(top)]:
            if (top / place).is_symlink():
                links[top / place] = None
    return list(links)


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Write `path`, never through a symlink (one planted since the check included)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(descriptor, "wb") as file:
        os.fchmod(descriptor, mode)  # an existing file (--force) keeps no other mode
        file.write(data)
