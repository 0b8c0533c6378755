"""The command lines a task runner runs for a hook: `npm run guard`, `make guard`.

A hook that runs `npm run guard` runs what `package.json` names under
`scripts.guard` (with `preguard` and `postguard` before and after it); `make guard`
runs the recipe of `guard` in the `Makefile`, and those of the targets it depends on
first. `whatruns` pins the file a task runner reads; this reads the task, so that the
scripts its lines run are pinned too (`node tools/guard.js`, `python3 tools/g.py`).
Only the named task is read, never the whole file: a `build` script that names the
build's output would make every build untrust the project. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

#: Package managers and the subcommands that run a script of `package.json` by name;
#: npm's lifecycle shortcuts run the script of their own name.
_RUN_SCRIPT = {
    "npm": ("run", "run-script", "rum", "urn"),
    "pnpm": ("run", "run-script"),
    "yarn": ("run",),
}
_LIFECYCLE = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop",
              "restart": "restart"}  # fmt: skip
#: A rule's line in a Makefile: its targets, then `:` (not `:=`, `::=`, `?=`).
_RULE = re.compile(r"^([^\t#=:][^#=:]*?)\s*::?(?![=])(.*)$")
#: Targets followed at most, through the prerequisites of each.
_MAX_TARGETS = 64


def task_lines(
    program: str, words: Sequence[str], cwd: Path
) -> tuple[list[str], list[str], Path | None]:
    """The command lines the task runner `program` (run as `words`, in `cwd`) runs, what
    cannot be read (a task named at run time, a file that cannot be parsed), and the
    file they come from."""
    name = os.path.basename(program)
    if name in _RUN_SCRIPT:
        package = cwd / "package.json"
        return (*_package_script(name, words, package), package)
    if name in ("make", "gmake"):
        makefile = next((cwd / f for f in ("GNUmakefile", "makefile", "Makefile")
                         if (cwd / f).is_file()), None)  # fmt: skip
        if makefile is not None:
            return (*_make_recipes(words, makefile), makefile)
    return [], [], None


def _package_script(
    manager: str, words: Sequence[str], package: Path
) -> tuple[list[str], list[str]]:
    rest = [word for word in words[1:] if not word.startswith("-")]
    if not rest:
        return [], []
    if rest[0] in _RUN_SCRIPT[manager]:
        script = rest[1] if len(rest) > 1 else None
    elif manager == "npm" and rest[0] in _LIFECYCLE:
        script = _LIFECYCLE[rest[0]]
    elif manager in ("yarn", "pnpm"):
        script = rest[0]  # `yarn guard`: a script of that name, if there is one
    else:
        return [], []
    if script is None:
        return [], []
    if "$" in script or "`" in script:
        return [], [script]
    try:
        scripts = json.loads(package.read_text()).get("scripts", {})
    except (OSError, ValueError, AttributeError):
        return [], [f"the scripts of {package} (not readable as JSON)"]
    if not isinstance(scripts, dict):
        return [], []
    names = (f"pre{script}", script, f"post{script}")
    return [scripts[n] for n in names if isinstance(scripts.get(n), str)], []


def _make_recipes(words: Sequence[str], makefile: Path) -> tuple[list[str], list[str]]:
    """The recipe lines of the targets `words` name (the first target by default), and
    of the targets each depends on, from `makefile`, `@`, `-` and `+` left out."""
    try:
        text = makefile.read_text(errors="replace")
    except OSError:
        return [], []
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    current: list[tuple[list[str], list[str]]] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            for _, recipe in current:
                recipe.append(line.strip().lstrip("@-+").strip())
            continue
        match = _RULE.match(line)
        if match is None:
            if line.strip():
                current = []
            continue
        prerequisites = match.group(2).split(";", 1)
        current = []
        for target in match.group(1).split():
            rule = rules.setdefault(target, ([], []))
            rule[0].extend(prerequisites[0].split())
            if len(prerequisites) > 1:
                rule[1].append(prerequisites[1].strip())
            current.append(rule)
            if first is None and not target.startswith("."):
                first = target
    asked = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    targets = asked or ([first] if first else [])
    lines: list[str] = []
    unread: list[str] = []
    seen: set[str] = set()
    while targets and len(seen) < _MAX_TARGETS:
        target = targets.pop(0)
        if target in seen:
            continue
        seen.add(target)
        if "$" in target:
            unread.append(f"make target {target}")
            continue
        prerequisites, recipe = rules.get(target, ([], []))
        targets.extend(prerequisites)
        lines.extend(line for line in recipe if line)
    return lines, unread
