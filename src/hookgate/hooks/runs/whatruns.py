"""What a hook runs: the one answer trust, `hooks check`, the runner and the sandbox share.

`what_hook_runs(hook, base_dir)` reads a hook's configuration, running nothing, and
names every file that decides what runs: the program and the scripts its command line
names (read command by command with the shell parser the rules use, past `cd DIR &&`,
`$CLAUDE_PROJECT_DIR`, `$PWD`, wrappers and `sh -c '…'`), the `shell:` program, files
`env:` values name, a `python:` hook's whole package, a checker's script. What it
cannot read (a word built at run time) is listed apart, never guessed. Relative paths
start at the hook's `cwd`, else `base_dir`: the directory of the file that declares it.
Lines are read into words by `cmdwords`; an interpreter's or a task runner's options
by `options` (`python3 -Bm pkg`, `make -C sub -f x.mk`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from hookgate.hooks.config import HookSpec
from hookgate.hooks.files.yamlfile import read_regular, script_interpreter
from hookgate.hooks.records import NamedTuple
from hookgate.hooks.runs.cmdwords import (
    ASSIGNMENT,
    STDIN,
    UNKNOWN,
    commands_of,
    commands_of_script,
    expand_known,
    own_folder,
    past_wrappers,
    split_words,
    without_substitutions,
    wrapper_settings,
    xargs_files,
    xargs_replace,
)
from hookgate.hooks.runs.environments import NODE_SUFFIXES, PACKAGE_DIRS, environment_of
from hookgate.hooks.runs.options import (
    PYTHON_NAME,
    RUNNER_GRAMMARS,
    Options,
    interpreter_grammar,
    read_options,
)

#: Where the system's own programs live: a package manager, not a repository, writes
#: there, so they are not pinned (an upgrade would untrust every project).
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/")
#: Endings of files an interpreter runs or a tool reads as a program (`jq -f x.jq`).
SCRIPT_SUFFIXES = frozenset(
    {".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php",
     ".lua", ".jq", ".awk", ".sed", ".ps1"}
)  # fmt: skip
#: Environment variables whose value makes a program load code (or find programs)
#: before or besides the one it was asked to run: shown with a warning, paths pinned.
CODE_LOADING_ENV = frozenset(
    {"BASH_ENV", "ENV", "ZDOTDIR", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS",
     "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "DYLD_INSERT_LIBRARIES",
     "DYLD_LIBRARY_PATH", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP",
     "PYTHONHOME", "PYTHONUSERBASE", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT",
     "RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "LUA_INIT", "LUA_PATH",
     "LUA_CPATH", "TCLLIBPATH", "PHPRC", "PHP_INI_SCAN_DIR", "CLASSPATH",
     "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "GIT_EXEC_PATH",
     "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_SSH", "GIT_SSH_COMMAND",
     "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER",
     "SHELL", "MAKEFILES", "MAKEFLAGS", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS",
     "XDG_DATA_HOME", "INPUTRC", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG",
     "YARN_RC_FILENAME", "PATH"}
)  # fmt: skip
#: Those whose value is files or folders, each loaded where it appears later too.
_PATH_VALUED = frozenset(
    {"BASH_ENV", "ENV", "ZDOTDIR", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS",
     "XDG_DATA_HOME", "INPUTRC", "MAKEFILES", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
     "GIT_CONFIG_SYSTEM", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG",
     "YARN_RC_FILENAME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PHPRC", "BUNDLE_GEMFILE",
     "LD_PRELOAD", "LD_AUDIT"}
)  # fmt: skip
#: Prefixes of more such keys: npm's (and pnpm's) settings (`npm_config_node_options`,
#: any case), git's `GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0`, Lua's versioned `LUA_INIT_5_4`.
_CODE_LOADING_PREFIXES = ("NPM_CONFIG_", "GIT_CONFIG_", "LUA_INIT_", "LUA_PATH_", "LUA_CPATH_")
#: Programs whose first operand is a script they run (`bash hooks/guard`, no `#!` needed).
INTERPRETERS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "python", "python3", "pypy",
     "pypy3", "node", "nodejs", "bun", "deno", "ruby", "perl", "php", "lua", "Rscript",
     "tclsh", "osascript", "pwsh"}
)  # fmt: skip
#: Task runners and the files they read their tasks from, in the directory they run in:
#: a hook that runs `make guard` or `npm run guard` runs what those files say.
_RUNS_FROM_ITS_DIRECTORY = {
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "gmake": ("GNUmakefile", "makefile", "Makefile"),
    "just": ("justfile", "Justfile", ".justfile"),
    "task": ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml"),
    "npm": ("package.json",),
    "pnpm": ("package.json",),
    "yarn": ("package.json",),
}
#: Package managers' launchers and the words before the program they run from the
#: project's own packages: `npx eslint` runs `node_modules/.bin/eslint`, `uv run ruff`
#: runs `.venv/bin/ruff` (`environments` then keeps the model out of the whole folder).
_LAUNCHERS = {
    "npx": ((), "node_modules/.bin"),
    "bunx": ((), "node_modules/.bin"),
    "npm": (("exec", "x"), "node_modules/.bin"),
    "pnpm": (("exec",), "node_modules/.bin"),
    "yarn": (("exec",), "node_modules/.bin"),
    "bun": (("x",), "node_modules/.bin"),
    "uv": (("run",), ".venv/bin"),
    "poetry": (("run",), ".venv/bin"),
    "pdm": (("run",), ".venv/bin"),
    "hatch": (("run",), ".venv/bin"),
    "pipenv": (("run",), ".venv/bin"),
    "rye": (("run",), ".venv/bin"),
}
#: Launchers' options that take the next word as their value (`npx -p pkg cmd`).
_LAUNCHER_VALUE_OPTIONS = frozenset(
    {"-p", "--package", "-w", "--workspace", "-C", "--cwd", "--dir", "--directory",
     "--project", "--from", "--with", "--python", "-e", "--env", "--env-file", "--group",
     "--extra", "--prefix"}
)  # fmt: skip
#: Launchers' options whose value is the directory their program runs in.
_LAUNCHER_CHDIR = frozenset({"--directory", "-C", "--cwd", "--dir"})
#: Options after which the next word is a program file (`awk -f x`, `jq -f x`, `make -f x`).
_FILE_OPTIONS = frozenset({"-f", "--file", "--from-file", "-r", "--require", "--rcfile",
                           "--init-file", "--import"})  # fmt: skip
#: Task runners' settings files beside their task files, present or not: they name
#: code the runner loads (`.npmrc`'s `node-options`, `script-shell`; `yarnPath`).
_RUNNER_SETTINGS = {
    "npm": (".npmrc",),
    "pnpm": (".npmrc", "pnpm-workspace.yaml", ".pnpmfile.cjs"),
    "yarn": (".npmrc", ".yarnrc", ".yarnrc.yml"),
}
#: Programs that run a line they are given in an option's value with a shell.
_LINE_RUNNERS = {
    "flock": ("-c", "--command"),
    "script": ("-c", "--command"),
    "su": ("-c", "--command"),
    "runuser": ("-c", "--command"),
}
#: The options of `cd` and `pushd` before the directory.
_CD_OPTIONS = re.compile(r"-[LPe@n]+")
#: A script operand naming the script's own stdin.
_STDIN_NAMES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: Endings of the files Node.js loads as code or data, not as a dotenv file.
_NODE_CODE = frozenset({*NODE_SUFFIXES, ".js", ".json", ".node", ".wasm"})
#: A `KEY=value` line of a dotenv file (`export` allowed).
_ENV_LINE = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)[ \t]*=(.*)$", re.M)
#: A script operand naming a file descriptor: what the shell opened on it.
_DESCRIPTOR = re.compile(r"/dev/fd/\d+|/proc/self/fd/\d+|/dev/std(?:in|out|err)")
#: A word that is a file's text: `$(cat f)`, `$(< f)`, `` `cat f` ``, `<(cat f)`.
_FED_FILE = re.compile(
    r"""(?:\$\(|<\(|`)\s*(?:cat\s+(?:--\s+)?|<\s*)(["']?)([^\s"'()$`;&|<>]+)\1\s*[)`]"""
)
#: Files of one package or directory pinned at most; past it the rest is "not pinned".
MAX_TREE_FILES = 1000
_EXPANDS = re.compile(r"[$`]")
#: What a shell expands into the names of files present when it runs: a glob, braces.
_GLOBS = re.compile(r"[*?\[{]")
#: A quoted relative path in another language's inline code (`require('./lib/g')`).
_RELATIVE_LITERAL = re.compile(r"""["'](\.\.?/[^"'\s]+)["']""")
#: What Node.js tries after a `require`d path that names no file.
_REQUIRE_ENDINGS = (".js", ".mjs", ".cjs", ".json", ".node", "/index.js")
#: What an interpreter tries after a file an option loads (`node -r ./x`, `ruby -r./x`).
_LOAD_ENDINGS = {"node": _REQUIRE_ENDINGS, "nodejs": _REQUIRE_ENDINGS, "ruby": (".rb",)}
_NOTHING = re.compile(r"(?!)")
#: Files a script writes to or reads from that run nothing: no path of a script's.
_DEVICES = re.compile(r"/dev/(?:null|tty|stdin|stdout|stderr|fd/\d+)\b")
#: Words of a script's text that may run another file without a `/` in it (`python3
#: x.py`, `make guard`, `. lib.sh`, `x.sh`, `PATH=bin:$PATH`): `_may_run_another`.
_RUN_WORDS_PATTERN = (
    r"(?<![\w.-])(?:{}|python[\d.]*|pypy3?)(?![\w.-])|(?:^|[\s;&|(){{}}`])(?:\.|source)\s"
    r"|\.(?:{})\b|\b(?:{})=|\b(?i:{})\w*=|\beval\s".format(
        "|".join(map(re.escape, sorted({*INTERPRETERS, *_RUNS_FROM_ITS_DIRECTORY, *_LAUNCHERS}))),
        "|".join(suffix[1:] for suffix in sorted(SCRIPT_SUFFIXES | set(NODE_SUFFIXES))),
        "|".join(sorted(CODE_LOADING_ENV)),
        "|".join(_CODE_LOADING_PREFIXES),
    )
)
#: Folders in a hook's folder that hold none of its code: Python's byte code, git's
#: repository, a package manager's packages.
_NOT_A_HOOKS = frozenset({"__pycache__", ".git", *PACKAGE_DIRS})


class HookRuns(NamedTuple):
    """Everything a hook (or an MCP server) makes run, as far as reading can tell."""

    files: tuple[Path, ...] = ()
    """Absolute, normalised: the files to pin, present or not (absent must stay so)."""
    unread: tuple[str, ...] = ()
    """Words built at run time, or lines the parser cannot read: not pinned."""
    loaders: tuple[str, ...] = ()
    """`KEY=value` of each `env:` entry that makes a program load code."""
    program: str | None = None
    """The first program word, its variables read: what `hooks check` looks for."""


def hook_dir(hook: HookSpec, base_dir: Path) -> Path:
    """Where `hook` runs and its relative paths start: its `cwd`, else `base_dir`."""
    return Path(hook.cwd) if hook.cwd else base_dir


def what_hook_runs(hook: HookSpec, base_dir: Path) -> HookRuns:
    """What `hook`, declared in a file in `base_dir`, runs; reads, imports nothing."""
    if hook.python is not None:
        from hookgate.hooks.kinds.python import split_reference

        module_name, _ = split_reference(hook.python)
        files, unread = python_hook_files(module_name, base_dir)
        return HookRuns(tuple(files), tuple(unread))
    if hook.model is not None:
        script = hook.model.checker.script
        return HookRuns((script,) if script is not None else ())
    if hook.function is not None or hook.http is not None:
        return HookRuns()
    cwd = hook_dir(hook, base_dir)
    found = _Found(base_dir)
    if hook.args is not None:
        found.argv(list(hook.args), cwd)
    else:
        if hook.shell and os.sep in hook.shell:
            found.path(hook.shell, cwd, present_only=False)
        found.line(hook.command or "", cwd)
    found.environment(hook.env, cwd)
    return found.runs()


def what_server_runs(
    words: Sequence[str], env: Mapping[str, str], cwd: Path, base_dir: Path
) -> HookRuns:
    """What an MCP stdio server runs: its command and arguments (no shell reads them)."""
    found = _Found(base_dir)
    found.argv(list(words), cwd)
    found.environment(env, cwd)
    return found.runs()


class _Found:
    """The files, unread words and loaders found so far, in order, each once."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir
        self.files: dict[Path, None] = {}
        self.unread: dict[str, None] = {}
        self.loaders: list[str] = []
        self.program: str | None = None
        self._folders: set[Path] = set()
        self._modules: set[tuple[Path, str]] = set()  # imported from a folder, by name
        self._scanned: set[Path] = set()  # Python files whose imports were read
        self._tasks: set[tuple[Path, str]] = set()  # task runners' tasks read

    def runs(self) -> HookRuns:
        return HookRuns(tuple(self.files), tuple(self.unread), tuple(self.loaders), self.program)

    def path(self, word: str, cwd: Path, *, present_only: bool, trees: bool = False) -> None:
        """Pin `word` read from `cwd`, unless a system file (or absent, if `present_only`);
        a directory is no file, but with `trees` every file under it is pinned."""
        if "\x00" in word or not word:
            return
        path = Path(os.path.normpath(os.path.join(cwd, os.path.expanduser(word))))
        if _system_file(str(path), self.base_dir):
            return
        if present_only and not path.exists():
            return
        if path.is_dir() and trees:
            self.folder(path)
        elif not (present_only and path.is_dir()):  # a program's place is pinned, whatever
            new = path not in self.files
            self.files[path] = None
            if new and path.is_file():
                self._beside(path, cwd)
            if new and path.is_symlink():
                self._linked(path, cwd)

    def _linked(self, link: Path, cwd: Path) -> None:
        """A linked file's target where it lies in the project (`hooks/g.py ->
        ../tools/g.py`): Python's `sys.path[0]` and Node.js's `require` start from the
        target's folder, not the link's, so what lies beside the target is read too."""
        real = Path(os.path.realpath(link))
        if real != link and _under(real, (self.base_dir,)):
            self.path(str(real), cwd, present_only=True)

    def _beside(self, script: Path, cwd: Path) -> None:
        """What a file a hook runs brings with it: inside the project, the folder that
        holds it, whole, unless that is the agent file's own folder (the project's, which
        the model edits) — there, the local modules a Python script imports; the files a
        Node.js script in the project requires by a relative path (`../lib/x` too); what
        the kernel runs for its `#!` line (`#!/bin/sh tools/payload`: `tools/payload`);
        wherever it lies, what a shell script runs and sources besides (`_script`). Not
        for an interpreter's binary (`.venv/bin/python`; a wrapper script named `python3`
        is read), nor in a package manager's folder (`environment_of`): what they load
        is no hook's folder. `cwd`: where the file runs."""
        folder = script.parent
        kernel_runs = shebang(script)
        if kernel_runs is None and (script.name in INTERPRETERS or _is_python(script.name)):
            return  # an interpreter's binary, not a wrapper script named like one
        inside = _under(folder, (self.base_dir,))
        if folder != self.base_dir and inside:
            if environment_of(script, self.base_dir) is not None:
                return
            self.folder(folder)
        elif folder == self.base_dir and _python_beside(script, kernel_runs):
            self._imports(script, folder)
        if inside and _runs_with(script, kernel_runs, _is_node, *NODE_SUFFIXES):
            self._required(script)
        if kernel_runs:
            self.command([*kernel_runs, str(script)], [cwd], shell=False)
        if _is_shell_script(script):
            self._script(script, cwd)

    def _required(self, script: Path) -> None:
        """The files a Node.js script requires or imports by a relative path
        (`require('./rules')`, `import … from './rules.js'`), and theirs in turn, present
        or not (`_inline`'s reading)."""
        source = _source(script)
        if source is not None:
            self._inline("node", source.decode("utf-8", "replace"), script.parent)

    def _script(self, script: Path, cwd: Path) -> None:
        """What a shell script runs, run in `cwd`: its commands read as a hook's line is
        (`line`), with the shell parser the rules use, and the script's own folder read
        where it names it (`$(dirname "$0")/../tools/x.py`): the files it sources, the
        scripts it runs (past its folder too: `python3 "$CLAUDE_PROJECT_DIR/tools/x.py"`),
        and theirs in turn. A script or library named by a path built at run time is
        named as unread."""
        if script in self._scanned:
            return
        self._scanned.add(script)
        try:
            text = script.read_text(errors="replace")
        except OSError:
            return
        if not _may_run_another(text):
            return  # the usual hook (`jq … | grep -q … && exit 2`): the parser not loaded
        commands = commands_of_script(text)
        if commands is None:
            self.unread[f"what {script} runs (the shell parser cannot read it)"] = None
            return
        self._commands(commands, cwd, script)

    def folder(self, directory: Path) -> None:
        """A hook's own folder (or a `PYTHONPATH` entry, a package `-m` runs): every
        file under it, and each folder's listing (which files there are: one that
        appears later, a module that would shadow another, is seen), up to
        `MAX_TREE_FILES` files."""
        if directory in self._folders:
            return
        self._folders.add(directory)
        folders, files, unread = folder_tree(directory)
        self.files.update(dict.fromkeys([*folders, *files]))
        self.unread.update(dict.fromkeys(unread))

    def _imports(self, script: Path, root: Path, *, code: str | None = None) -> None:
        """The local modules a Python script imports from `root`, first on its
        `sys.path` (a script's own folder; the directory `python -m` or `python -c`
        runs in), present or not, and theirs in turn: as source, and as the byte code or
        compiled module the same folder would serve first or instead (`json.pyc`,
        `json.cpython-311-x86_64-linux-gnu.so`). `code`: the script's text, where it is
        no file (`python3 -c CODE`)."""
        from importlib.machinery import EXTENSION_SUFFIXES  # loaded with the interpreter

        from hookgate.hooks.runs.shadows import guarded_names

        found_elsewhere = guarded_names(root)
        pending = [script]
        while pending:
            current = pending.pop()
            if current in self._scanned:
                continue
            self._scanned.add(current)
            source = code if current is script and code is not None else _source(current)
            for name in imported_names(source, str(current)):
                if (root, name) in self._modules or name in sys.builtin_module_names:
                    continue  # a built-in module (`sys`) is found before any file
                self._modules.add((root, name))
                if name not in found_elsewhere:
                    self._namespace(root / name)
                files, unread = python_hook_files(name, root)
                for file in files:
                    if file.suffix == ".py" and file.is_file():
                        pending.append(file)
                    self.files[file] = None
                for suffix in (".pyc", *EXTENSION_SUFFIXES):
                    self.files[root / f"{name}{suffix}"] = None
                self.unread.update(dict.fromkeys(unread))
        self._shadows(root)  # after the direct imports: a refusal names them first

    def _fed(self, program: str, script: str, cwd: Path) -> None:
        """A script fed to Python on its stdin (`python3 - < hooks/guard.py`): Python
        puts the directory it runs in first on `sys.path`, not the script's folder, so
        what it imports is served from `cwd`."""
        path = Path(os.path.normpath(cwd / script))
        if _is_python(program) and path.is_file():
            self._imports(path, cwd)

    def _shadows(self, root: Path) -> None:
        """A folder first on a Python hook's `sys.path`: the modules there that would
        shadow the standard library's or an installed package's (which the hook's
        imports import in turn, unread), pinned with their content, and that no more
        appear (`shadows.SHADOWS`). A hook's own folder is pinned whole already."""
        from hookgate.hooks.runs.shadows import SHADOWS, shadowing

        if root in self._folders or (guard := root / SHADOWS) in self.files:
            return
        self.files[guard] = None
        for entry in shadowing(root):
            self.path(str(entry), root, present_only=True)
            if entry.name.startswith("__init__."):  # a package: what it imports is its own
                self.folder(entry.parent)

    def _namespace(self, entry: Path) -> None:
        """A name a script imports, as a folder of `sys.path[0]`, that no other place on
        it holds: a package, or one with no `__init__.py`, which Python then imports as
        a namespace package (`import tools.policy` runs `tools/policy.py`) — pinned
        whole; absent, absent it stays. (A standard module's name is found elsewhere
        unless a package shadows it: `_shadows`.)"""
        if entry.is_dir():
            self.folder(entry)
        else:
            self.files[entry] = None

    def _inline(self, program: str, code: str, cwd: Path) -> None:
        """Code an interpreter runs from its command line (`python3 -c`, `node -e`):
        what Python's imports from `cwd` (first on its `sys.path`), read by its parser;
        for another language, each file a quoted `./` or `../` path names (`require(
        './lib/g')`: `lib/g`, `lib/g.js`, ...), present or not, and a folder it names
        whole (`require('./tools')` loads what its `package.json` says)."""
        if _is_python(program):
            self._imports(cwd / "-c", cwd, code=code)
            return
        for literal in _RELATIVE_LITERAL.findall(code):
            if (cwd / literal).is_dir():  # its package.json's `main`, else its index.js
                self.folder(Path(os.path.normpath(cwd / literal)))
                continue
            candidates = [literal, *(literal + ending for ending in _REQUIRE_ENDINGS)]
            present = [name for name in candidates if (cwd / name).is_file()]
            for name in present or [literal]:
                self.path(name, cwd, present_only=False)

    def argv(self, words: list[str], cwd: Path) -> None:
        """A program and its arguments, run with no shell; a shell's `-c` line read too
        (`args: [sh, -c, "cd sub && ./g.sh"]`: `command` reads it)."""
        self.command(words, [cwd], shell=False)

    def line(self, line: str, cwd: Path) -> None:
        """The commands of a shell command line, each read as a list of words."""
        commands = commands_of(line)
        if commands is None:
            self.unread[line] = None
            return
        self._commands(commands, cwd)

    def _commands(self, commands: list[list[str]], cwd: Path, script: Path | None = None) -> None:
        """Each command's words, run from `cwd` and the directories a `cd` (`pushd`,
        `builtin cd -P`) goes to; in a shell `script`'s body, its own folder read where
        a word names it."""
        dirs = [cwd]
        for words in commands:
            words = [expand_known(word, dirs[-1], self.base_dir) for word in words]
            if script is not None:
                words = [own_folder(word, script.parent) for word in words]
            while words and ASSIGNMENT.match(words[0]):  # `BASH_ENV=./x ./g.sh`
                key, _, value = words.pop(0).partition("=")
                self.environment({key: value}, dirs[-1])
            if (target := _cd_target(words)) is None:
                self.command(words, dirs, in_script=script is not None)
            elif target == "-":  # `cd -`, `popd`: back where it was
                dirs.append(dirs[-2] if len(dirs) > 1 else dirs[-1])
            elif _EXPANDS.search(target) or target.startswith(("+", "-")):
                self.unread[target] = None  # what runs after it is read from there
            else:
                dirs.append(Path(os.path.normpath(dirs[-1] / os.path.expanduser(target))))

    def command(
        self, words: list[str], dirs: list[Path], *, shell: bool = True, in_script: bool = False
    ) -> None:
        """One command's words: the program, an interpreter's script, scripts named,
        past its wrappers (`exec`, `timeout 5`, `env -C sub`, `env -S 'sh g.sh'`).
        Without a `shell` to expand them, `$`, `` ` `` and globs are plain characters. On a
        hook's line a word built at run time that could be a path is named as unread;
        `in_script`, only the program or an interpreter's script when they are (a
        script's `"$TMPDIR/x"` is mostly its data)."""
        expands = _EXPANDS if shell else _NOTHING
        stdin = _Stdin(
            [word[len(STDIN) :] for word in words if word.startswith(STDIN)],
            [],
            [word[len(UNKNOWN) :] for word in words if word.startswith(UNKNOWN)],
        )
        words = [word for word in words if not word.startswith((STDIN, UNKNOWN))]
        if shell:  # `bash <<< "$(cat f)"`, `source <(cat f)`: words the parser left whole
            words, here = _here_strings(_process_substitutions(words))
            stdin.here.extend(here)
        for word in words:  # `env BASH_ENV=./x sh -c …`: a wrapper's assignments count too
            key, equals, value = word.partition("=")
            if equals and loads_code(key):
                self.environment({key: value}, dirs[-1])
        inner = past_wrappers(words)
        wrappers = words[: len(words) - len(inner)]
        chdirs, split = wrapper_settings(wrappers) if wrappers else ([], None)
        if split is not None:  # `env -S 'sh g.sh' x`: its value's words, then the rest
            split_into = split_words(split)
            if expands.search(split) or split_into is None:
                self.unread[split] = None
                return
            inner = ["env", *split_into, *inner]
        if chdirs and any(expands.search(chdir) for chdir in chdirs):
            self.unread.update(dict.fromkeys(c for c in chdirs if expands.search(c)))
            return
        if chdirs:  # `env -C tools ./g`: it runs there
            dirs = [Path(os.path.normpath(d.joinpath(*chdirs))) for d in dirs]
        if split is not None or chdirs:
            marks = [STDIN + name for name in stdin.fed] + [UNKNOWN + u for u in stdin.unknown]
            here = [f"<<<{text}" for text in stdin.here]
            self.command([*inner, *here, *marks], dirs, shell=shell, in_script=in_script)
        else:
            self._wrapped(wrappers, inner, dirs, stdin, shell=shell, in_script=in_script)

    def _wrapped(
        self,
        wrappers: list[str],
        words: list[str],
        dirs: list[Path],
        stdin: _Stdin,
        *,
        shell: bool,
        in_script: bool,
    ) -> None:
        """`command`'s words past its `wrappers`, read where it runs (`dirs[-1]`, and
        the directories a `cd` went to before: `_relative`)."""
        expands = _EXPANDS if shell else _NOTHING
        globs = _GLOBS if shell else _NOTHING
        launched = _launched(wrappers, words)
        if not words:
            return
        program, cwd = words[0], dirs[-1]
        if self.program is None:
            self.program = program
        if expands.search(program) or (os.sep in program and globs.search(program)):
            if not in_script or os.sep in without_substitutions(program):
                self.unread[program] = None
        elif os.sep in program:
            self.path(program, cwd, present_only=False)
        name = os.path.basename(program)
        if name in _RUNS_FROM_ITS_DIRECTORY:  # `make guard`: the Makefile, what `guard` runs
            self._task(program, words, dirs)
        chdirs = _launcher_chdirs(wrappers, words) if launched is not None else []
        if chdirs:  # `uv run --directory sub g.py`: what it runs is read from there
            if any(_EXPANDS.search(chdir) for chdir in chdirs):
                self.unread.update(dict.fromkeys(chdirs))
                return
            dirs = [Path(os.path.normpath(d.joinpath(*chdirs))) for d in dirs]
            cwd = dirs[-1]
        if launched is not None:  # `npx eslint`: node_modules/.bin/eslint, present or not
            self._relative(launched, dirs, present_only=False)
        if name == "find":
            self._find(words, dirs)
        elif name == "eval":  # the parser reads no `eval`'s line: read here
            self._code(" ".join(words[1:]), dirs, shell=shell, parsed=False)
        elif name in _LINE_RUNNERS:  # `flock L -c 'sh g.sh'`: a line a shell runs
            for line in _line_values(words, _LINE_RUNNERS[name]):
                self._code(line, dirs, shell=shell, parsed=False)
        options = _options(words)
        if options is not None:
            if options.chdir:  # `ruby -C sub g.rb`: the script is read from there
                if any(expands.search(chdir) for chdir in options.chdir):
                    self.unread.update(dict.fromkeys(options.chdir))
                else:
                    dirs = [Path(os.path.normpath(d.joinpath(*options.chdir))) for d in dirs]
                    cwd = dirs[-1]
            if _gives_found_files(wrappers, words, options):  # `… | xargs sh`
                self.unread[f"the files xargs gives {name}"] = None
                for listed in xargs_files(wrappers):
                    self._relative(listed, dirs, present_only=False)
            self._interpreted(words, dirs, options, stdin, shell=shell)
        operand = options.operand if options is not None and not options.shell_code else None
        for index, word in enumerate(words[1:], 1):
            if index == operand and self._fed_operand(word, dirs, stdin, name):
                continue
            if word.startswith(("<(", ">(")):  # its command is read on its own
                if index == operand:
                    self.unread[word] = None  # a script built at run time
            elif expands.search(word):
                path_like = os.sep in without_substitutions(word)
                if index == operand or (path_like and not in_script):
                    self.unread[word] = None  # a path built at run time
            elif index == operand:
                if globs.search(word):
                    self.unread[word] = None  # the files it matches when it runs
                else:
                    self._relative(word, dirs, present_only=False)
            elif options is None and (file := _option_file(words, index)) is not None:
                if globs.search(file):
                    self.unread[file] = None
                else:  # `jq -f x.jq`, `awk -fx.awk`: a program file, if there is one
                    self._relative(file, dirs, present_only=True)
            elif not word.startswith("-") and _is_script(cwd / word):
                self._relative(word, dirs, present_only=True)

    def _interpreted(
        self, words: list[str], dirs: list[Path], options: Options, stdin: _Stdin, *, shell: bool
    ) -> None:
        """What an interpreter's options make it run (`read_options`): a module, code,
        files it loads first (`node --require=x`), folders it loads from (`perl -I`),
        the script it reads on stdin; options it does not know listed as unread."""
        program, cwd = words[0], dirs[-1]
        expands = _EXPANDS if shell else _NOTHING
        name = os.path.basename(program)
        self.unread.update(dict.fromkeys(f"{w} (an option of {name} not read)"
                                         for w in options.unknown))  # fmt: skip
        for file in options.files:
            if name in ("node", "nodejs") and Path(file).suffix not in _NODE_CODE:
                self._env_file(file, dirs)  # `--env-file=.env`: its `NODE_OPTIONS` too
            if expands.search(file) or _GLOBS.search(file):
                self.unread[file] = None
            elif os.sep in file or "." in file:  # `ruby -rjson`: a library, not a path
                endings = _LOAD_ENDINGS.get(name, ())
                candidates = [file, *(file + ending for ending in endings)]
                present = [c for c in candidates if any((d / c).is_file() for d in dirs)]
                for candidate in present or [file]:
                    self._relative(candidate, dirs, present_only=False)
        for folder in options.dirs:
            if expands.search(folder):
                self.unread[folder] = None
            else:
                self.path(folder, cwd, present_only=False, trees=True)
        if options.module is not None:
            if expands.search(options.module):
                self.unread[options.module] = None
            else:
                self._module([options.module], cwd)
        elif options.code is not None:
            if not self._code_file(options.code, dirs, shell=False):
                self._inline(program, options.code, cwd)
        elif options.shell_code and options.operand is not None:
            self._code(words[options.operand], dirs, shell=shell, parsed=shell)
        elif options.operand is None:
            self._from_stdin(name, dirs, stdin)

    def _env_file(self, file: str, dirs: list[Path]) -> None:
        """The code-loading variables a file `node --env-file` reads sets
        (`NODE_OPTIONS=--require ./x.js`): read as a hook's `env:` is."""
        for directory in dirs:
            try:
                text = (directory / file).read_text(errors="replace")
            except (OSError, ValueError):
                continue
            for key, value in _ENV_LINE.findall(text):
                if loads_code(key):
                    self.environment({key: value.strip().strip("\"'")}, dirs[-1])

    def _from_stdin(self, name: str, dirs: list[Path], stdin: _Stdin) -> None:
        """The script an interpreter reads on stdin: `bash < g.sh`, `python3 - < g.py`,
        `bash -s -- a < g.sh`, `bash <<< "$(cat g.sh)"`; unread where it is not a file."""
        shell = _is_shell(name)
        for script in stdin.fed:
            if _EXPANDS.search(script) or _GLOBS.search(script):
                self.unread[script] = None
            else:
                self._relative(script, dirs, present_only=False)
                self._fed(name, script, dirs[-1])
                if shell:
                    self._read_script(script, dirs)
        for text in stdin.here:
            if self._code_file(text, dirs, shell=shell):
                continue
            if _EXPANDS.search(text):
                self.unread[text] = None
            elif shell:
                self.line(text, dirs[-1])
            else:
                self._inline(name, text, dirs[-1])
        if stdin.unknown and not stdin.fed and not stdin.here:  # `bash < "$X"`, `… | bash`
            self.unread[f"the script {name} reads on its stdin"] = None

    def _fed_operand(self, word: str, dirs: list[Path], stdin: _Stdin, name: str) -> bool:
        """Whether a script operand is code fed from elsewhere, read here: stdin (`.
        /dev/stdin < f`, `sh -`) or a file's text (`source <(cat f)`)."""
        if word in _STDIN_NAMES:
            self._from_stdin(name, dirs, stdin)
            return True
        if _DESCRIPTOR.fullmatch(word):  # `. /dev/fd/3`: what was opened on it, unread
            self.unread[f"the script {name} reads from {word}"] = None
            return True
        return self._code_file(word, dirs, shell=_is_shell(name))

    def _code(self, code: str, dirs: list[Path], *, shell: bool, parsed: bool) -> None:
        """A line a shell runs (`sh -c CODE`, `eval CODE`): a file's text (`"$(cat f)"`)
        pinned and read; a line built otherwise at run time, unread; a literal one read
        as a line, unless the shell parser read it with the hook's (`parsed`)."""
        if self._code_file(code, dirs, shell=True):
            return
        if shell and _EXPANDS.search(code):
            self.unread[code] = None
        elif not parsed:
            self.line(code, dirs[-1])

    def _code_file(self, word: str, dirs: list[Path], *, shell: bool) -> bool:
        """Whether `word` is a file's text (`$(cat f)`, `$(< f)`, `<(cat f)`): then that
        file is pinned, present or not, and, for a `shell`, read as a script."""
        file = _fed_file(word)
        if file is None:
            return False
        if _EXPANDS.search(file) or _GLOBS.search(file):
            self.unread[word] = None
            return True
        self._relative(file, dirs, present_only=False)
        if shell:
            self._read_script(file, dirs)
        return True

    def _read_script(self, file: str, dirs: list[Path]) -> None:
        """What `file`, run by a shell from `dirs[-1]`, runs in turn (`_script`)."""
        for directory in dirs:
            if (directory / file).is_file():
                self._script(Path(os.path.normpath(directory / file)), dirs[-1])

    def _find(self, words: list[str], dirs: list[Path]) -> None:
        """The commands `find -exec`, `-execdir`, `-ok` run, read as commands with no
        shell. One that runs the files found (`-exec sh {} ';'`) or names them in its
        code runs what is under the folders searched: those are pinned whole where they
        are the project's own (`tools`, not the project itself: `folder`), else it is
        unread: which files it runs, only the run knows."""
        for command in _find_commands(words):
            inner = past_wrappers(command)
            if not inner:
                continue
            if "{}" in inner[0] or (_interpreter(inner[0]) and any("{}" in w for w in inner)):
                if not self._searched(_find_roots(words), dirs[-1]):
                    self.unread[f"what find runs: {' '.join(command)}"] = None
            else:
                self.command(command, dirs, shell=False)

    def _searched(self, roots: list[str], cwd: Path) -> bool:
        """Whether every folder of `roots` is one of the project's, below it: then each
        is pinned whole (`folder`)."""
        if any(_EXPANDS.search(root) or _GLOBS.search(root) for root in roots):
            return False
        folders = [Path(os.path.normpath(cwd / root)) for root in roots]
        if not all(f != self.base_dir and _under(f, (self.base_dir,)) for f in folders):
            return False
        if not all(folder.is_dir() for folder in folders):
            return False
        for folder in folders:
            self.folder(folder)
        return True

    def _task(self, program: str, words: list[str], dirs: list[Path]) -> None:
        """What a task runner runs: the files it reads its tasks from, where it runs
        (`make -C sub -f x.mk`, `npm --prefix sub`), the settings it reads that load code
        (`.npmrc`'s `node-options`), and the task it is asked for (`npm run guard`: the
        command line `package.json` names), read as a script's lines are, each once."""
        from hookgate.hooks.runs.tasks import config_code, task_lines

        name = os.path.basename(program)
        options = read_options(words, RUNNER_GRAMMARS[name], all_operands=True)
        built = [w for w in (*options.chdir, *options.files) if _EXPANDS.search(w) or w == "-"]
        self.unread.update(dict.fromkeys([*built, *options.unknown]))
        if built:
            return
        here = [Path(os.path.normpath(d.joinpath(*options.chdir))) for d in dirs]
        for file in options.files or _RUNS_FROM_ITS_DIRECTORY[name]:
            self._relative(file, here, present_only=not options.files)
        for config in _RUNNER_SETTINGS.get(name, ()):  # present or not: one added runs
            self._relative(config, here, present_only=False)
            loads, unread = config_code(here[-1] / config)
            self.unread.update(dict.fromkeys(unread))
            for file in loads:
                self._relative(file, here, present_only=False)
        tasks = [words[index] for index in options.positional]
        key = (here[-1], " ".join([name, *options.files, *tasks]))
        if key in self._tasks:
            return
        self._tasks.add(key)
        read = task_lines(program, tasks, here[-1], options.files, options.dirs)
        self.unread.update(dict.fromkeys(read.unread))
        for included in read.included:  # a Makefile's `include rules.mk`, present or not
            self.path(str(included), here[-1], present_only=False)
        for line in read.lines:
            commands = commands_of(line)
            if commands is None:
                self.unread[line] = None
            else:  # a script's lines: `$(PYTHON) g.py` names no path
                self._commands(commands, here[-1], read.source)

    def _module(self, name: list[str], cwd: Path) -> None:
        """`python3 -m pkg.mod` from `cwd` (on its `sys.path`): the files it would run."""
        if not name or _EXPANDS.search(name[0]):
            return
        parts = name[0].split(".")
        run = [cwd / os.path.join(*parts[:depth], "__init__.py") for depth in range(1, len(parts))]
        base = cwd / os.path.join(*parts)
        run += [base.with_name(base.name + ".py"), base / "__init__.py"]
        for module in run:  # the packages imported on the way, then the module
            self.path(str(module), cwd, present_only=True)
        if (base / "__init__.py").is_file():
            self.folder(base)
        for module in run:  # `-m` puts `cwd` first on `sys.path`: what they import
            if module.is_file():  # from there is served from there
                self._imports(module, cwd)

    def _relative(self, word: str, dirs: list[Path], *, present_only: bool) -> None:
        """`word` from each directory a `cd` went to: the present ones, else the last."""
        present = [d for d in dirs if (d / word).exists()]
        if present or present_only:
            for directory in present:
                self.path(word, directory, present_only=True)
        else:
            self.path(word, dirs[-1], present_only=False)

    def environment(self, env: Mapping[str, str], cwd: Path) -> None:
        """Files `env:` values name: a code-loading key's paths, present or not (a
        `BASH_ENV` file that appears later runs too), the files under its directories;
        any other key's scripts, as a command line's (a log it names is no program)."""
        for key, value in env.items():
            loads = loads_code(key)
            if loads:
                self.loaders.append(f"{key}={value}")
            for token in _path_tokens(value):
                if loads:
                    absent_too = os.sep in token or token[0] == "." or key in _PATH_VALUED
                    # A directory's files are pinned where the repository ships them: a
                    # `PATH` entry elsewhere is the machine's, upgraded by its owner.
                    if _under(cwd / token, (self.base_dir, cwd)) or not (cwd / token).is_dir():
                        self.path(token, cwd, present_only=not absent_too, trees=True)
                        self._user_site(key, cwd / token)
                elif _is_script(cwd / token):
                    self.path(token, cwd, present_only=True)
                elif _names_project_path(cwd / token, self.base_dir):
                    self.unread[f"{key}={value}: {token} in the project"] = None

    def _user_site(self, key: str, folder: Path) -> None:
        """Python's user site-packages under a `HOME` or `PYTHONUSERBASE` in the project:
        its `.pth` files run at every start, so it is pinned whole, present or not (a
        folder's walk leaves a package folder out)."""
        lib = {"HOME": ".local/lib", "PYTHONUSERBASE": "lib"}.get(key)
        if lib is None:
            return
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        versions = {version, *(p.name for p in (folder / lib).glob("python*") if p.is_dir())}
        for name in sorted(versions):
            self.path(f"{lib}/{name}/site-packages", folder, present_only=False, trees=True)


def python_hook_files(module_name: str, base_dir: Path) -> tuple[list[Path], list[str]]:
    """The files a `python:` hook's module may run, present or not, and what is not
    pinned: where its top-level name could be found next to `base_dir` (a file that
    appears there later changes what is imported), and a local package whole, as a
    hook's folder is (`folder_tree`)."""
    from hookgate.hooks.kinds.python import local_module_files  # python hooks alone

    top = module_name.split(".")[0]
    files = local_module_files(module_name, base_dir)
    found = list(files)
    unread: list[str] = []
    package = base_dir / top
    if files[package / "__init__.py"]:
        folders, more, unread = folder_tree(package)
        found.extend(path for path in [*folders, *more] if path not in files)
    return [Path(os.path.normpath(path.absolute())) for path in found], unread


def folder_tree(directory: Path) -> tuple[list[Path], list[Path], list[str]]:
    """The folders under `directory` (itself first) and their regular files, sorted, up
    to `MAX_TREE_FILES` files (the rest named as unread). Hidden folders are walked, and
    linked ones (`lib -> ../shared`: what the script reaches through the link is the
    hook's too), each real folder once; not `__pycache__` (Python's own, rewritten as
    it runs), git's repository, a package manager's folder (`environments` keeps the
    one a hook runs from out of the model's reach) nor the system's."""
    folders: list[Path] = []
    files: list[Path] = []
    walked: set[str] = set()
    pending = [directory]
    while pending:
        folder = pending.pop(0)
        real = os.path.realpath(folder)
        if real in walked:
            continue  # a link back up, or a second way to the same folder
        walked.add(real)
        folders.append(folder)
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir():
                if _the_hooks(entry):
                    pending.append(folder / entry.name)
            elif entry.is_file():
                files.append(folder / entry.name)
        if len(files) > MAX_TREE_FILES:
            return (
                folders,
                files[:MAX_TREE_FILES],
                [f"{directory}: more than {MAX_TREE_FILES} files"],
            )
    return folders, files, []


def _the_hooks(folder: os.DirEntry[str]) -> bool:
    """Whether what `folder` holds is a hook's own (`folder_tree`), by its name, its
    `pyvenv.cfg` and, for a link, where it leads."""
    if folder.name in _NOT_A_HOOKS or os.path.exists(os.path.join(folder.path, "pyvenv.cfg")):
        return False
    return not folder.is_symlink() or not _system_file(os.path.realpath(folder.path))


def imported_names(source: str | bytes | None, filename: str = "<string>") -> list[str]:
    """The top-level names Python `source` imports (`import a.b`, `from a import b`),
    read by Python's own parser, nothing run; none where it cannot be read. Relative
    imports name no top-level module: a script has no package."""
    import ast  # here: a Python script beside the agent file is the one reader

    if source is None:
        return []
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return []
    names: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(dict.fromkeys(alias.name.split(".")[0] for alias in node.names))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names[node.module.split(".")[0]] = None
    return list(names)


def _source(script: Path) -> bytes | None:
    try:
        return script.read_bytes()
    except OSError:
        return None


def _launched(wrappers: Sequence[str], words: Sequence[str]) -> str | None:
    """Where the program a launcher runs lies, relative to where it runs (`npx -y
    eslint .`: `node_modules/.bin/eslint`; `uv run g.py`: `.venv/bin/python`); None
    for another command, another path or a package from the registry (`npx eslint@9`).
    `wrappers`: the words before `words` that `past_wrappers` skipped, `npx` and `uv`
    among them."""
    starts = [i for i, word in enumerate(wrappers) if os.path.basename(word) in _LAUNCHERS]
    if starts:
        words = [*wrappers[starts[-1] :], *words]
    if not words or (launcher := _LAUNCHERS.get(os.path.basename(words[0]))) is None:
        return None
    subcommands, folder = launcher
    rest = _past_options(words[1:])
    if subcommands:
        if not rest or rest[0] not in subcommands:
            return None
        rest = _past_options(rest[1:])
    if not rest or "@" in rest[0] or _EXPANDS.search(rest[0]):
        return None
    if folder == ".venv/bin" and rest[0].endswith(".py"):
        return f"{folder}/python"  # the script is pinned as a word; the environment runs it
    return None if os.sep in rest[0] else f"{folder}/{rest[0]}"


def _launcher_chdirs(wrappers: Sequence[str], words: Sequence[str]) -> list[str]:
    """The directories a launcher among `wrappers` (or first in `words`) runs its
    program in, each from the one before (`uv run --directory sub`, `poetry -C sub`)."""
    starts = [i for i, word in enumerate(wrappers) if os.path.basename(word) in _LAUNCHERS]
    combined = [*wrappers[starts[-1] :], *words] if starts else list(words)
    if not combined or (launcher := _LAUNCHERS.get(os.path.basename(combined[0]))) is None:
        return []
    chdirs: list[str] = []
    index = 1
    while index < len(combined):
        option, equals, value = combined[index].partition("=")
        if option in _LAUNCHER_CHDIR:
            following = combined[index + 1] if index + 1 < len(combined) else ""
            chdirs.append(value if equals else following)
        elif not option.startswith("-") and option not in launcher[0]:
            break  # the program
        index += 2 if option in _LAUNCHER_VALUE_OPTIONS and not equals else 1
    return chdirs


def _past_options(words: Sequence[str]) -> Sequence[str]:
    """`words` from the first that is not an option (or an option's value), past `--`."""
    index = 0
    while index < len(words) and words[index].startswith("-"):
        if words[index] == "--":
            return words[index + 1 :]
        index += 2 if words[index] in _LAUNCHER_VALUE_OPTIONS else 1
    return words[index:]


class _Stdin(NamedTuple):
    """What a command reads on stdin, as far as its line says."""

    fed: list[str]
    """Files redirected in (`< g.sh`)."""
    here: list[str]
    """Here-strings' text (`<<< "$(cat g.sh)"`)."""
    unknown: list[str]
    """Why what it reads is not known before it runs (`… | bash`)."""


def _options(words: Sequence[str]) -> Options | None:
    """What an interpreter's options say (`read_options`), `.`'s and `source`'s
    operand; None for another program."""
    name = os.path.basename(words[0])
    if name in (".", "source"):
        return Options(operand=1 if len(words) > 1 else None)
    if not _interpreter(name):
        return None
    return read_options(words, interpreter_grammar(name))


def _cd_target(words: Sequence[str]) -> str | None:
    """Where a `cd`, `pushd` or `popd` goes (`builtin cd -P sub`: `sub`; `-` back where
    it was; `+1` a place on the stack), None for another command."""
    if words[:1] in (["builtin"], ["command"]):
        words = words[1:]
    if not words or words[0] not in ("cd", "pushd", "popd", "chdir"):
        return None
    if words[0] == "popd":
        return "-"
    args = list(words[1:])
    while args and _CD_OPTIONS.fullmatch(args[0]):
        args.pop(0)
    if args[:1] == ["--"]:
        args.pop(0)
    if not args:
        return "-" if words[0] == "pushd" else "~"  # a bare `pushd` swaps back
    return args[0]


def _here_strings(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """`words` less their here-strings (`<<< TEXT`, `<<<TEXT`), and those texts."""
    kept: list[str] = []
    here: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "<<<" and index + 1 < len(words):
            here.append(words[index + 1])
            index += 1
        elif word.startswith("<<<"):
            here.append(word[3:])
        else:
            kept.append(word)
        index += 1
    return kept, here


def _process_substitutions(words: Sequence[str]) -> list[str]:
    """`words` with each process substitution, which the parser leaves split (`<(cat`,
    `f)`), one word again (`<(cat f)`)."""
    joined: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.startswith(("<(", ">(")):
            while word.count("(") > word.count(")") and index + 1 < len(words):
                index += 1
                word = f"{word} {words[index]}"
        joined.append(word)
        index += 1
    return joined


def _fed_file(word: str) -> str | None:
    """The file whose text `word` is (`$(cat f)`, `$(< f)`, `` `cat f` ``, `<(cat f)`)."""
    match = _FED_FILE.fullmatch(word.strip())
    return match.group(2) if match is not None else None


def _is_shell(name: str) -> bool:
    """Whether `name` runs what it reads as shell code (`sh`, `.`, `eval`)."""
    return os.path.basename(name) in _SHELLS_C or name in (".", "source", "eval")


def _gives_found_files(wrappers: Sequence[str], words: Sequence[str], options: Options) -> bool:
    """Whether `xargs` among `wrappers` gives the interpreter `words` its script or
    code from its input (`xargs sh`, `xargs -I{} sh -c {}`): which, only the run knows."""
    replace = xargs_replace(wrappers)
    if replace is None:
        return False
    if replace and any(replace in word for word in words[1:]):
        return True
    given = options.code, options.module
    return options.operand is None and given == (None, None) and not options.stdin


def _find_commands(words: Sequence[str]) -> list[list[str]]:
    """The commands a `find`'s `-exec`, `-execdir`, `-ok`, `-okdir` run, `{}` kept."""
    commands: list[list[str]] = []
    current: list[str] | None = None
    for word in words[1:]:
        if current is None:
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                current = []
        elif word == ";" or (word == "+" and current[-1:] == ["{}"]):
            commands.append(current)
            current = None
        else:
            current.append(word)
    if current:
        commands.append(current)
    return commands


def _find_roots(words: Sequence[str]) -> list[str]:
    """The folders a `find` searches: its operands before the expression (`.` if none)."""
    roots: list[str] = []
    for word in words[1:]:
        if word in ("-H", "-L", "-P") and not roots:
            continue
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    return roots or ["."]


def _line_values(words: Sequence[str], options: tuple[str, ...]) -> list[str]:
    """The values of `options` (`-c LINE`, `-cLINE`, `--command=LINE`, `-qc LINE`)."""
    values: list[str] = []
    for index, word in enumerate(words[1:], 1):
        following = words[index + 1] if index + 1 < len(words) else None
        for option in options:
            if option.startswith("--"):
                if word.startswith(option + "="):
                    values.append(word[len(option) + 1 :])
                elif word == option and following is not None:
                    values.append(following)
            elif word[:1] == "-" and word[1:2] != "-" and option[1] in word:
                value = word[word.index(option[1]) + 1 :] or following
                if value is not None:
                    values.append(value)
    return values


def _option_file(words: Sequence[str], index: int) -> str | None:
    """The file a program's option names at `index`: `-f x`'s `x`, `-fx`, `--file=x`."""
    word = words[index]
    if words[index - 1] in _FILE_OPTIONS:
        return word
    if word.startswith("-f") and len(word) > 2 and word[2] != "-":
        return word[2:]
    option, equals, value = word.partition("=")
    return value if equals and option in _FILE_OPTIONS and option.startswith("--") else None


def _under(path: Path, roots: Iterable[Path]) -> bool:
    normal = os.path.normpath(path)
    return any(normal == str(root) or normal.startswith(f"{root}{os.sep}") for root in roots)


def _interpreter(program: str) -> bool:
    """Whether `program` runs a script: a shell, Python, Node.js, …"""
    return os.path.basename(program) in INTERPRETERS or _is_python(program)


def _is_python(program: str) -> bool:
    return PYTHON_NAME.fullmatch(os.path.basename(program)) is not None


def _system_file(path: str, project: Path | None = None) -> bool:
    """Under the system's directories, by name or as a symlink's target (the realpath
    only for a link: a system call per part of the path is the resolver's main cost).
    A path in `project` is judged as written: `.venv/bin/python -> /usr/bin/python3` is
    the virtual environment's interpreter, which runs its `.pth` files and packages."""
    if path.startswith(SYSTEM_DIRS):
        return True
    if project is not None and _under(Path(path), (project,)):
        return False
    return os.path.islink(path) and os.path.realpath(path).startswith(SYSTEM_DIRS)


def shebang(script: Path) -> list[str] | None:
    """What the kernel runs for `script`'s `#!` line, the script's own path aside: the
    interpreter and its one optional argument (`#!/bin/sh tools/payload`), or the words
    `env -S` splits that argument into; None where the file has no `#!` line."""
    data = read_regular(script, _SHEBANG_MAX)
    if data is None:
        return None
    first = data.partition(b"\n")[0]
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").strip().split(None, 1)  # at a space or tab
    if not words:
        return []
    interpreter, argument = words[0], words[1].strip() if len(words) > 1 else ""
    if os.path.basename(interpreter) == "env":
        for option in ("--split-string=", "--split-string", "-S"):
            if argument.startswith(option):
                return argument[len(option) :].split()
    return [interpreter, argument] if argument else [interpreter]


def _runs_with(
    script: Path,
    kernel_runs: Sequence[str] | None,
    is_program: Callable[[str], bool],
    *suffixes: str,
) -> bool:
    """Whether `script` is one language's: by its suffix, else by its `#!` line."""
    if script.suffix in suffixes:
        return True
    words = past_wrappers(list(kernel_runs or ()))
    return bool(words) and is_program(words[0])


def _python_beside(script: Path, kernel_runs: Sequence[str] | None) -> bool:
    """Whether Python runs `script`, beside the agent file: by its suffix or `#!` line,
    else (`python3 guard`: no suffix, no `#!`, the interpreter on the command line)
    when Python's parser reads imports in it — a shell script it cannot parse."""
    if _runs_with(script, kernel_runs, _is_python, ".py"):
        return True
    return kernel_runs is None and not script.suffix and bool(imported_names(_source(script)))


def _is_node(program: str) -> bool:
    return os.path.basename(program) in ("node", "nodejs")


#: Bytes of a `#!` line the kernel reads (`BINPRM_BUF_SIZE` on Linux since 5.1).
_SHEBANG_MAX = 256
_SHELLS_C = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"})


def _is_shell_script(path: Path) -> bool:
    """Whether `path` is a shell script: by its suffix, else by its `#!` line."""
    if path.suffix in (".sh", ".bash"):
        return True
    interpreter = script_interpreter(path)
    return interpreter is not None and os.path.basename(interpreter) in _SHELLS_C


def _may_run_another(script: str) -> bool:
    """Whether a shell script's text could name a file it runs (`_Found._script`): a
    path (a device's aside), an interpreter, task runner or launcher, `.` or `source`, a
    script's name, a variable that makes a program load code. `hookgate hook` starts a
    process per event: a script with none of these is read without loading the parser."""
    lines = (line for line in script.splitlines() if not line.lstrip().startswith("#"))
    text = _DEVICES.sub(" ", "\n".join(lines))
    return "/" in text or _run_words().search(text) is not None


@functools.cache
def _run_words() -> re.Pattern[str]:
    """`_RUN_WORDS_PATTERN`, compiled at its first use: a long alternation, which most
    `hookgate hook` events (a hook that is no script) never need."""
    return re.compile(_RUN_WORDS_PATTERN)


def _is_script(path: Path) -> bool:
    try:
        if not path.is_file():
            return False
    except (OSError, ValueError):
        return False
    return path.suffix in SCRIPT_SUFFIXES or os.access(path, os.X_OK)


def loads_code(key: str) -> bool:
    """Whether an `env:` key makes a program load code (or find programs) besides the
    one it was asked to run (`CODE_LOADING_ENV`, `_CODE_LOADING_PREFIXES`)."""
    upper = key.upper()
    return key in CODE_LOADING_ENV or upper.startswith(_CODE_LOADING_PREFIXES)


def _names_project_path(path: Path, project: Path) -> bool:
    """Whether `path`, an `env:` value's part, is a file or folder in the project: one a
    key not known to load code names is listed as not pinned, where the user sees it."""
    try:
        return _under(path, (project,)) and path.exists()
    except (OSError, ValueError):
        return False


def _path_tokens(value: str) -> Iterable[str]:
    """The parts of an `env:` value that could name a file (`a:b`, `--require=./x.js`),
    an option's attached value too (`-Itools`, `-r./pre.rb`), Lua's `@file`."""
    for token in re.split(r"[\s:=,;]+", value):
        if token.startswith("-") and not token.startswith("--"):
            token = token[2:]  # `-Itools`: the value of a one-letter option
        token = token.lstrip("@")
        if token and not token.startswith("-"):
            yield token
