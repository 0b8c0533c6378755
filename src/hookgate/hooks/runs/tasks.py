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
import shlex
from collections.abc import Sequence
from pathlib import Path

from hookgate.hooks.records import NamedTuple

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
#: The files make reads by default in its directory, the first present.
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
#: A makefile's `include`, `-include` or `sinclude` line (a tab starts a recipe's).
_INCLUDE = re.compile(r"^ *(?:-include|sinclude|include)\s+(.+)$")
#: A makefile's assignment of the program that runs its recipes.
_MAKE_SHELL = re.compile(r"^ *(?:override +|export +)?SHELL *[:!?+]*= *(\S+)", re.M)
#: How a recipe runs make again: read as `make`.
_SUB_MAKE = re.compile(r"\$[({]MAKE[)}]")
#: Makefiles read at most, the included ones among them.
_MAX_MAKEFILES = 32
#: A `key = value` line of `.npmrc`, `.yarnrc` (`key "value"`) or `.yarnrc.yml`.
_SETTING = re.compile(r"^[ \t]*(?P<key>[\w.-]+)[ \t]*(?:[=:][ \t]*|[ \t]+)(?P<value>.*)$", re.M)
#: Settings whose value is a file of code the runner runs or loads.
_SETTING_FILES = frozenset({"script-shell", "userconfig", "globalconfig", "yarn-path",
                            "yarnpath", "onload-script", "pnpmfile", "global-pnpmfile"})  # fmt: skip
#: Targets followed at most, through the prerequisites of each.
_MAX_TARGETS = 64


class TaskLines(NamedTuple):
    """What a task runner runs for a hook (`task_lines`)."""

    lines: list[str]
    """The command lines of the task, and of the tasks it runs first and after."""
    unread: list[str]
    """A task named at run time, a file that cannot be parsed, an include built at run
    time."""
    source: Path | None
    """The file the lines come from."""
    included: list[Path]
    """The files that file includes (`include rules.mk`), present or not, in turn, and
    the shell it runs its recipes with where that is the project's (`SHELL := ./sh`)."""


def task_lines(
    program: str,
    tasks: Sequence[str],
    cwd: Path,
    files: Sequence[str] = (),
    include_dirs: Sequence[str] = (),
) -> TaskLines:
    """The command lines the task runner `program` runs in `cwd` for `tasks` (its
    operands), from `files` where it was told them (`make -f x.mk`), else its own;
    `include_dirs`: where make looks for an included file not in `cwd` (`-I`)."""
    name = os.path.basename(program)
    if name in _RUN_SCRIPT:
        package = cwd / "package.json"
        return TaskLines(*_package_script(name, tasks, package), package, [])
    if name in ("make", "gmake"):
        makefiles = [cwd / file for file in files] or [
            next((cwd / f for f in _MAKEFILES if (cwd / f).is_file()), cwd / "Makefile")
        ]
        text, included, unread = _make_text(makefiles, [cwd, *(cwd / d for d in include_dirs)])
        lines, not_read = _make_recipes(tasks, text)
        for shell in _MAKE_SHELL.findall(text):  # `SHELL := ./tools/sh` runs every recipe
            if "$" in shell:
                unread.append(f"make SHELL {shell}")
            elif "/" in shell and not shell.startswith(("/bin/", "/usr/")):
                included.append(Path(os.path.normpath(cwd / shell)))
        lines = [_SUB_MAKE.sub("make", line) for line in lines]  # `$(MAKE) -C sub x`
        return TaskLines(lines, [*unread, *not_read], makefiles[0], included)
    return TaskLines([], [], None, [])


def config_code(path: Path) -> tuple[list[str], list[str]]:
    """The files a task runner's settings file makes it load or run (`.npmrc`:
    `node-options=--require ./x.js`, `script-shell=./sh`; `.yarnrc.yml`: `yarnPath`),
    and the values built at run time (`${VAR}`), not read."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return [], []
    files: list[str] = []
    unread: list[str] = []
    for match in _SETTING.finditer(text):
        key = match.group("key").lower().replace("_", "-")
        value = match.group("value").strip().strip("\"'")
        if key == "node-options":
            loads = _node_option_files(value)
            files.extend(loads if loads is not None else [])
            unread.extend([] if loads is not None else [f"{path}: node-options={value}"])
        elif key in _SETTING_FILES and value:
            files.append(value)
    built = [file for file in files if "$" in file]
    return [file for file in files if file not in built], [*built, *unread]


def _node_option_files(value: str) -> list[str] | None:
    """The files `NODE_OPTIONS`-like `value` loads (`--require ./x.js`, `-r=./x`);
    None where its quotes cannot be read."""
    from hookgate.hooks.runs.options import INTERPRETER_GRAMMARS, read_options

    try:
        words = shlex.split(value)
    except ValueError:
        return None
    return list(read_options(["node", *words], INTERPRETER_GRAMMARS["node"]).files)


def _package_script(
    manager: str, tasks: Sequence[str], package: Path
) -> tuple[list[str], list[str]]:
    rest = list(tasks)
    if not rest:
        return [], []
    if rest[0] in ("workspace", "workspaces"):  # `yarn workspace w run x`: another package's
        return [], [f"{manager} {' '.join(rest)}"]
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


def _make_text(
    makefiles: Sequence[Path], search: Sequence[Path]
) -> tuple[str, list[Path], list[str]]:
    """The text make reads from `makefiles`, each `include`d file's in its place (the
    first found in the folders of `search`: make's directory, then its `-I` folders),
    the files an include could be, present or not (one that appears earlier in the
    search is read instead), and the includes named at run time (`include $(RULES)`)."""
    included: list[Path] = []
    unread: list[str] = []
    seen: set[Path] = set()

    def text_of(makefile: Path) -> str:
        if makefile in seen or len(seen) >= _MAX_MAKEFILES:
            return ""
        seen.add(makefile)
        try:
            text = makefile.read_text(errors="replace")
        except OSError:
            return ""
        lines = []
        for line in text.replace("\\\n", " ").splitlines():
            match = _INCLUDE.match(line)
            if match is None:
                lines.append(line)
                continue
            for name in match.group(1).split("#")[0].split():
                if "$" in name or any(c in name for c in "*?["):
                    unread.append(f"make include {name}")
                    continue
                places = [Path(os.path.normpath(folder / name)) for folder in search]
                included.extend(places)
                found = next((place for place in places if place.is_file()), places[0])
                lines.append(text_of(found))
        return "\n".join(lines)

    return "\n".join(text_of(makefile) for makefile in makefiles), included, unread


def _make_recipes(tasks: Sequence[str], text: str) -> tuple[list[str], list[str]]:
    """The recipe lines of the targets `tasks` name (the first target by default), and
    of the targets each depends on, from a makefile's `text`, `@`, `-` and `+` left out."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first: str | None = None
    current: list[tuple[list[str], list[str]]] = []
    for line in text.splitlines():
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
    asked = [task for task in tasks if "=" not in task]
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
