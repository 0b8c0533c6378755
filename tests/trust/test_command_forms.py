"""Trust pins what a hook's command line really runs, however it is spelled.

The red team's forms (issue: trust holes, classes A, B, C, E, G): an interpreter's
options clustered or attached (`python3 -mhooks.guard`, `node --require=./x.js`, `make
-ftools.mk`, `perl -Itools`), a directory changed by `env -C`, `pushd`, `cd -P`, `make
-C`, `npm --prefix`, a command line in an option's value (`env -S 'sh x'`), code fed to
a shell from a file (`bash -c "$(cat f)"`, `. /dev/stdin < f`, `bash -s -- a < f`,
`cat f | sh`), a
task runner's other files (a Makefile's `include`, `.npmrc`). Before, the file that
really ran was left unpinned (or a bogus word pinned in its place): changed after trust,
the change ran with no question, and the model's sandboxed shell could rewrite it.

Each session case: trust, run (the file writes `benign` to a marker), change the file
as a `git pull` would, run again: the start is refused and the changed code never runs.
Resolver rows check the cheap spellings around each case, and what cannot be read is
listed as not pinned, never a bogus word pinned.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hookgate.hooks import parse_hooks
from hookgate.hooks.files.yamlfile import Where
from hookgate.hooks.runs.whatruns import HookRuns, what_hook_runs, what_server_runs
from runtime.project import Project
from trust.marking import js, py, recipe, sh

EXECUTABLE = 0o755


def pm(mark: Path, word: str) -> str:
    return f"package Policy;\nopen(my $f, '>>', '{mark}'); print $f \"{word}\\n\"; close $f;\n1;\n"


def npmrc(mark: Path, word: str) -> dict[str, str]:
    loaded = "pre.js" if word == "benign" else "evil.js"
    return {
        "package.json": json.dumps({"name": "p", "scripts": {"guard": "node -e 0"}}),
        ".npmrc": f"node-options=--require ./{loaded}\n",
        "pre.js": js(mark, "benign"),
        "evil.js": js(mark, "EVIL"),
    }


@dataclass
class Case:
    files: Callable[[Path, str], dict[str, str]]
    """The project's files, given the marker and the word the payload writes."""
    hook: dict[str, Any] | None = None
    """The sessionStart hook; None for an MCP server's case."""
    mcp: dict[str, Any] | None = None
    executable: tuple[str, ...] = ()


CASES: dict[str, Case] = {
    # A. option spellings
    "python3 -mhooks.guard": Case(
        lambda m, w: {"hooks/__init__.py": "", "hooks/guard.py": py(m, w)},
        {"command": "python3 -mhooks.guard"},
    ),
    "python3 -Bm hooks.guard": Case(
        lambda m, w: {"hooks/__init__.py": "", "hooks/guard.py": py(m, w)},
        {"command": "python3 -Bm hooks.guard"},
    ),
    "python3 -Bc 'import guard'": Case(
        lambda m, w: {"guard.py": py(m, w)}, {"command": "python3 -Bc 'import guard'"}
    ),
    "node --require=./tools/pre.js": Case(
        lambda m, w: {"hooks/g.js": "", "tools/pre.js": js(m, w)},
        {"command": "node --require=./tools/pre.js hooks/g.js"},
    ),
    "node --import=./tools/pre.mjs": Case(
        lambda m, w: {
            "hooks/g.js": "",
            "tools/pre.mjs": js(m, w).replace("require('fs')", "(await import('node:fs'))"),
        },
        {"command": "node --import=./tools/pre.mjs hooks/g.js"},
    ),
    "make -ftools.mk": Case(
        lambda m, w: {"tools.mk": recipe(m, w)}, {"command": "make -s -ftools.mk guard"}
    ),
    "make --makefile=tools.mk": Case(
        lambda m, w: {"tools.mk": recipe(m, w)}, {"command": "make -s --makefile=tools.mk guard"}
    ),
    "perl -Itools hooks/g.pl": Case(
        lambda m, w: {"hooks/g.pl": "use Policy;\n", "tools/Policy.pm": pm(m, w)},
        {"command": "perl -Itools hooks/g.pl"},
    ),
    "MCP server args [-mtools.server]": Case(
        lambda m, w: {"tools/__init__.py": "", "tools/server.py": py(m, w)},
        mcp={"command": "python3", "args": ["-mtools.server"]},
    ),
    # B. directory changes
    "env -C tools ./g": Case(
        lambda m, w: {"tools/g": sh(m, w)}, {"command": "env -C tools ./g"}, executable=("tools/g",)
    ),
    "pushd tools && ./g": Case(
        lambda m, w: {"tools/g": sh(m, w)},
        {"command": "pushd tools >/dev/null && ./g", "shell": "/bin/bash"},
        executable=("tools/g",),
    ),
    "cd -P tools && ./g": Case(
        lambda m, w: {"tools/g": sh(m, w)},
        {"command": "cd -P tools && ./g"},
        executable=("tools/g",),
    ),
    "make -C tools guard": Case(
        lambda m, w: {"tools/Makefile": recipe(m, w)}, {"command": "make -s -C tools guard"}
    ),
    "npm --prefix tools run guard": Case(
        lambda m, w: {
            "tools/package.json": json.dumps(
                {"name": "t", "scripts": {"guard": f"echo {w} >> '{m}'"}}
            )
        },
        {"command": "npm --silent --prefix tools run guard"},
    ),
    # C. a command line in an option's value
    "env -S 'sh tools/g.sh'": Case(
        lambda m, w: {"tools/g.sh": sh(m, w)}, {"command": "env -S 'sh tools/g.sh'"}
    ),
    # E. code fed to a shell from a file
    'bash -c "$(cat tools/policy)"': Case(
        lambda m, w: {"tools/policy": f"echo {w} >> '{m}'\n"},
        {"command": 'bash -c "$(cat tools/policy)"'},
    ),
    ". /dev/stdin < tools/policy": Case(
        lambda m, w: {"tools/policy": f"echo {w} >> '{m}'\n"},
        {"command": ". /dev/stdin < tools/policy", "shell": "/bin/bash"},
    ),
    'a hook script: eval "$(cat tools/policy)"': Case(
        lambda m, w: {
            "hooks/g.sh": '#!/bin/sh\neval "$(cat tools/policy)"\n',
            "tools/policy": f"echo {w} >> '{m}'\n",
        },
        {"command": "./hooks/g.sh"},
        executable=("hooks/g.sh",),
    ),
    "bash -s -- arg < tools/policy": Case(
        lambda m, w: {"tools/policy": f"echo {w} >> '{m}'\n"},
        {"command": "bash -s -- arg < tools/policy"},
    ),
    "cat tools/policy | sh": Case(
        lambda m, w: {"tools/policy": f"echo {w} >> '{m}'\n"},
        {"command": "cat tools/policy | sh"},
    ),
    "source <(cat tools/policy)": Case(
        lambda m, w: {"tools/policy": f"echo {w} >> '{m}'\n"},
        {"command": "source <(cat tools/policy)", "shell": "/bin/bash"},
    ),
    "find tools -name '*.sh' -exec sh {} ';'": Case(
        lambda m, w: {"tools/x.sh": sh(m, w)},
        {"command": "find tools -name '*.sh' -exec sh {} ';'"},
    ),
    # G. a task runner's other files
    "make guard: the Makefile includes rules.mk": Case(
        lambda m, w: {"Makefile": "include rules.mk\n", "rules.mk": recipe(m, w)},
        {"command": "make -s guard"},
    ),
    "npm run guard: .npmrc node-options": Case(npmrc, {"command": "npm --silent run guard"}),
}


def write(project: Path, files: dict[str, str], executable: tuple[str, ...]) -> None:
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name in executable:
            path.chmod(EXECUTABLE)


@pytest.mark.parametrize("name", list(CASES))
def test_a_file_the_command_runs_changed_after_trust_is_refused(
    project: Project, tmp_path: Path, name: str
) -> None:
    case, mark = CASES[name], tmp_path / "marker"
    write(project.dir, case.files(mark, "benign"), case.executable)
    settings: dict[str, Any] = {}
    if case.hook is not None:
        settings["hooks"] = {"sessionStart": [case.hook]}
    if case.mcp is not None:
        settings["mcp_servers"] = {"s": case.mcp}
    project.write_agent(project.script({"text": "done"}), **settings)
    trusted = project.hookgate("trust", "--yes", trusted=False)
    assert trusted.returncode == 0, trusted.stderr
    first = project.hookgate("-p", "hi", trusted=False)
    assert first.returncode == 0, first.stderr
    assert mark.read_text() == "benign\n"  # the file runs, as trusted

    benign, evil = case.files(mark, "benign"), case.files(mark, "EVIL")
    write(project.dir, {n: t for n, t in evil.items() if benign.get(n) != t}, case.executable)
    done = project.hookgate("-p", "hi", trusted=False)

    assert done.returncode == 1, done.stderr
    assert "is not trusted" in done.stderr
    assert "EVIL" not in mark.read_text()


def shell(command: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "shell", "arguments": {"command": command}}]}


@pytest.mark.parametrize(
    ("hook", "file"), [("python3 -mhooks.guard", "hooks/guard.py"), ("env -C tools ./g", "tools/g")]
)
def test_the_model_cannot_rewrite_what_such_a_guard_runs(
    project: Project, tmp_path: Path, hook: str, file: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = project.dir / file
    target.parent.mkdir(parents=True, exist_ok=True)
    (project.dir / "hooks").mkdir(exist_ok=True)
    (project.dir / "hooks" / "__init__.py").write_text("")
    benign = "print('{}')\n" if file.endswith(".py") else "#!/bin/sh\necho '{}'\n"
    target.write_text(benign)
    target.chmod(EXECUTABLE)
    evil = f"#!/bin/sh\ntouch '{outside}/by-hook'\necho '{{}}'\n"
    script = project.script(
        shell(f"touch '{outside}/direct'"),
        shell(f"cat > {file} <<'EOF'\n{evil}EOF"),
        shell("true"),
        {"text": "done"},
    )
    project.write_agent(
        script, yolo=True, hooks={"preToolCall": [{"command": hook, "matcher": "^shell$"}]}
    )
    project.trust()

    done = project.hookgate("-p", "go", trusted=False)

    assert done.returncode == 0, done.stderr
    assert not (outside / "direct").exists(), "no sandbox here: the test proves nothing"
    assert target.read_text() == benign
    assert not (outside / "by-hook").exists()


# Resolver rows: the files a hook's line pins, by path from the agent file.


def runs(tmp_path: Path, files: dict[str, str], hook: dict[str, Any] | str) -> HookRuns:
    base = tmp_path.resolve()
    for name, text in files.items():
        path = base / name.rstrip("*")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name.endswith("*"):
            path.chmod(EXECUTABLE)
    spec = {"command": hook} if isinstance(hook, str) else hook
    (parsed,) = parse_hooks({"preToolCall": [spec]}, Where("x.yaml"), base_dir=base)
    return what_hook_runs(parsed, base)


def pinned(tmp_path: Path, found: HookRuns) -> set[str]:
    base = tmp_path.resolve()
    return {os.path.relpath(path, base) for path in found.files}


P = "print('x')\n"
S = "#!/bin/sh\necho hi\n"
PKG = {"hooks/__init__.py": "", "hooks/guard.py": P}
MK = {"tools.mk": "guard:\n\techo hi\n"}
TOOLS_G = {"tools/g*": S}
POLICY = {"tools/policy": "echo hi\n"}

#: A line, the project's files, a file it must pin.
PINS = [
    ("python3 -m hooks.guard", PKG, "hooks/guard.py"),
    ("python3 -mhooks.guard", PKG, "hooks/guard.py"),
    ("python3 -Bm hooks.guard", PKG, "hooks/guard.py"),
    ("python3 -BEsmhooks.guard", PKG, "hooks/guard.py"),
    ("python3 -W ignore -m hooks.guard", PKG, "hooks/guard.py"),
    ("python3 -Wignore hooks/guard.py", PKG, "hooks/guard.py"),
    ("python3 -cimport\\ guard", {"guard.py": P}, "guard.py"),
    ("python3 -Bc 'import guard'", {"guard.py": P}, "guard.py"),
    ("python3 -X dev -c 'import guard'", {"guard.py": P}, "guard.py"),
    ("node --require=./tools/pre.js hooks/g.js", {"tools/pre.js": ""}, "tools/pre.js"),
    ("node --require ./tools/pre.js hooks/g.js", {"tools/pre.js": ""}, "tools/pre.js"),
    ("node -r ./tools/pre.js hooks/g.js", {"tools/pre.js": ""}, "tools/pre.js"),
    ("node --require=./tools/pre.js hooks/g.js", {"hooks/g.js": ""}, "hooks/g.js"),
    ("node --import=./tools/pre.mjs hooks/g.js", {"tools/pre.mjs": ""}, "tools/pre.mjs"),
    ("node --loader=./tools/pre.mjs hooks/g.js", {"tools/pre.mjs": ""}, "tools/pre.mjs"),
    ("node --experimental-loader ./l.mjs g.js", {"l.mjs": "", "g.js": ""}, "g.js"),
    ("node --env-file=.env g.js", {".env": "NODE_OPTIONS=--require ./x.js\n"}, ".env"),
    ("make -ftools.mk guard", MK, "tools.mk"),
    ("make --makefile=tools.mk guard", MK, "tools.mk"),
    ("make --file tools.mk guard", MK, "tools.mk"),
    ("make -sftools.mk guard", MK, "tools.mk"),
    ("perl -Itools hooks/g.pl", {"hooks/g.pl": "", "tools/Policy.pm": "1;\n"}, "tools/Policy.pm"),
    ("perl -I tools hooks/g.pl", {"hooks/g.pl": "", "tools/Policy.pm": "1;\n"}, "tools/Policy.pm"),
    ("perl -Itools hooks/g.pl", {"hooks/g.pl": "", "tools/Policy.pm": "1;\n"}, "hooks/g.pl"),
    ("ruby -Ilib g.rb", {"g.rb": "", "lib/p.rb": ""}, "lib/p.rb"),
    ("ruby -r./lib/p g.rb", {"g.rb": "", "lib/p.rb": ""}, "g.rb"),
    ("bash -x -o pipefail hooks/g", {"hooks/g": "true\n"}, "hooks/g"),
    ("bash --rcfile tools/rc -i g", {"tools/rc": "", "g": ""}, "tools/rc"),
    # B. directory changes
    ("env -C tools ./g", TOOLS_G, "tools/g"),
    ("env --chdir=tools ./g", TOOLS_G, "tools/g"),
    ("env --chdir tools ./g", TOOLS_G, "tools/g"),
    ("env -Ctools ./g", TOOLS_G, "tools/g"),
    ("pushd tools && ./g", TOOLS_G, "tools/g"),
    ("cd -P tools && ./g", TOOLS_G, "tools/g"),
    ("cd -- tools && ./g", TOOLS_G, "tools/g"),
    ("builtin cd tools && ./g", TOOLS_G, "tools/g"),
    (
        "make -C tools guard",
        {"tools/Makefile": "guard:\n\tsh g.sh\n", "tools/g.sh": S},
        "tools/Makefile",
    ),
    (
        "make -C tools guard",
        {"tools/Makefile": "guard:\n\tsh g.sh\n", "tools/g.sh": S},
        "tools/g.sh",
    ),
    ("make --directory=tools guard", {"tools/Makefile": "guard:\n\tsh g.sh\n"}, "tools/Makefile"),
    ("make -Ctools guard", {"tools/Makefile": "guard:\n\tsh g.sh\n"}, "tools/Makefile"),
    (
        "npm --prefix tools run guard",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}', "tools/g.sh": S},
        "tools/package.json",
    ),
    (
        "npm --prefix tools run guard",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}', "tools/g.sh": S},
        "tools/g.sh",
    ),
    (
        "npm run guard --prefix=tools",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}', "tools/g.sh": S},
        "tools/g.sh",
    ),
    (
        "yarn --cwd tools guard",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}', "tools/g.sh": S},
        "tools/g.sh",
    ),
    (
        "pnpm -C tools run guard",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}', "tools/g.sh": S},
        "tools/g.sh",
    ),
    # C. a command line in an option's value
    ("env -S 'sh tools/g.sh'", {"tools/g.sh": S}, "tools/g.sh"),
    ("env -iS 'sh tools/g.sh'", {"tools/g.sh": S}, "tools/g.sh"),
    ("env --split-string='sh tools/g.sh'", {"tools/g.sh": S}, "tools/g.sh"),
    ("flock /tmp/l -c 'sh tools/g.sh'", {"tools/g.sh": S}, "tools/g.sh"),
    ("xargs -a tools/policy -I{} sh -c {}", POLICY, "tools/policy"),
    # E. code fed to a shell from a file
    ('bash -c "$(cat tools/policy)"', POLICY, "tools/policy"),
    ('bash -c "$(< tools/policy)"', POLICY, "tools/policy"),
    ('sh -c "`cat tools/policy`"', POLICY, "tools/policy"),
    ('eval "$(cat tools/policy)"', POLICY, "tools/policy"),
    (". /dev/stdin < tools/policy", POLICY, "tools/policy"),
    ("sh /dev/stdin < tools/policy", POLICY, "tools/policy"),
    ("sh -s < tools/policy", POLICY, "tools/policy"),
    ("bash -s -- arg < tools/policy", POLICY, "tools/policy"),
    ("cat tools/policy | sh", POLICY, "tools/policy"),
    ("cat -- tools/policy | bash -s -- arg", POLICY, "tools/policy"),
    ("cat tools/a tools/policy | sh", {"tools/a": "echo a\n", **POLICY}, "tools/policy"),
    ("cat tools/p.py | python3 -", {"tools/p.py": P}, "tools/p.py"),
    ("source <(cat tools/policy)", POLICY, "tools/policy"),
    ("bash <(cat tools/policy)", POLICY, "tools/policy"),
    ('bash <<< "$(cat tools/policy)"', POLICY, "tools/policy"),
    ('python3 -c "$(cat tools/p.py)"', {"tools/p.py": P}, "tools/p.py"),
    (
        {"command": "./hooks/g.sh"},
        {"hooks/g.sh*": '#!/bin/sh\neval "$(cat tools/policy)"\n', **POLICY},
        "tools/policy",
    ),
    # G. a task runner's other files
    (
        "make guard",
        {"Makefile": "include rules.mk\n", "rules.mk": "guard:\n\techo hi\n"},
        "rules.mk",
    ),
    (
        "make guard",
        {"Makefile": "-include rules.mk\n", "rules.mk": "guard:\n\tsh g.sh\n", "g.sh": S},
        "g.sh",
    ),
    ("make guard", {"Makefile": "sinclude a.mk b.mk\n", "b.mk": "guard:\n\techo\n"}, "b.mk"),
    ("make guard", {"Makefile": "include rules.mk\nguard:\n\techo\n"}, "rules.mk"),
    (
        "npm run guard",
        {
            "package.json": '{"scripts":{"guard":"node -v"}}',
            ".npmrc": "node-options=--require ./x.js\n",
        },
        ".npmrc",
    ),
    (
        "npm run guard",
        {
            "package.json": '{"scripts":{"guard":"node -v"}}',
            ".npmrc": "node-options=--require ./x.js\n",
            "x.js": "",
        },
        "x.js",
    ),
    (
        "npm run guard",
        {"package.json": '{"scripts":{"guard":"node -v"}}', ".npmrc": "script-shell=./tools/sh\n"},
        "tools/sh",
    ),
    ("npm run guard", {"package.json": '{"scripts":{"guard":"node -v"}}'}, ".npmrc"),
    (
        "yarn guard",
        {
            "package.json": '{"scripts":{"guard":"node -v"}}',
            ".yarnrc.yml": "yarnPath: .yarn/releases/y.cjs\n",
        },
        ".yarn/releases/y.cjs",
    ),
    ("yarn guard", {"package.json": '{"scripts":{"guard":"node -v"}}'}, ".yarnrc.yml"),
    (
        "yarn guard",
        {"package.json": '{"scripts":{"guard":"node -v"}}', ".yarnrc": 'yarn-path "./y.js"\n'},
        "y.js",
    ),
    ("pnpm run guard", {"package.json": '{"scripts":{"guard":"node -v"}}'}, "pnpm-workspace.yaml"),
    ("make guard", {"Makefile": "SHELL := ./tools/sh\nguard:\n\techo\n"}, "tools/sh"),
    (
        "make guard",
        {
            "Makefile": "guard:\n\t$(MAKE) -C sub x\n",
            "sub/Makefile": "x:\n\tsh g.sh\n",
            "sub/g.sh": S,
        },
        "sub/g.sh",
    ),
]


@pytest.mark.parametrize(("hook", "files", "want"), PINS, ids=[f"{h} {w}" for h, _, w in PINS])
def test_the_file_a_command_line_runs_is_pinned(
    tmp_path: Path, hook: str | dict[str, Any], files: dict[str, str], want: str
) -> None:
    assert want in pinned(tmp_path, runs(tmp_path, files, hook))


#: A line whose code cannot be read before it runs, the project's files, and a word of
#: what is listed as not pinned.
UNREAD = [
    ("python3 -Qnew g.py", {"g.py": P}, "-Qnew"),
    ("find . -name '*.sh' -exec sh {} ';'", {"x.sh": S}, "find"),
    ("find \"$D\" -name '*.sh' -exec sh -c '. \"$1\"' _ {} +", {"tools/x.sh": S}, "find"),
    ("find tools -name '*.sh' | xargs -n1 sh", {"tools/x.sh": S}, "xargs"),
    ('bash -c "$(curl -s https://x)"', {}, "curl"),
    ("source <(./tools/gen)", {"tools/gen*": S}, "<(./tools/gen)"),
    ('bash <<< "$X"', {}, "$X"),
    ('eval "$X"', {}, "$X"),
    ("cat -n tools/policy | sh", POLICY, "sh"),  # cat's option: not the file as it is
    ("cat tools/policy - | sh", POLICY, "sh"),  # and its own stdin after it
    ("curl -s https://x | sh", {}, "sh"),
    ("cat tools/policy |& sh", POLICY, "sh"),  # cat's errors go into the pipe as well
    ('env -C "$D" ./g', {}, "$D"),
    ('make -C "$D" guard', {}, "$D"),
    (
        "npm -w tools run guard",
        {"tools/package.json": '{"scripts":{"guard":"sh g.sh"}}'},
        "-w tools",
    ),
    ("pnpm --filter t run guard", {"package.json": "{}"}, "--filter t"),
    ("yarn workspace t run guard", {"package.json": "{}"}, "yarn workspace"),
    ("make --eval='guard: ; sh x' guard", {"Makefile": "all:\n"}, "--eval"),
    ("make -f - guard < tools/rules", {"tools/rules": "guard:\n\tsh x\n"}, "-"),
    (
        "npm run guard",
        {"package.json": "{}", ".npmrc": 'node-options=--require "./x.js\n'},
        "node-options",
    ),
]


@pytest.mark.parametrize(("line", "files", "word"), UNREAD, ids=[u[0] for u in UNREAD])
def test_what_cannot_be_read_is_listed_not_pinned_and_no_bogus_word_is_pinned(
    tmp_path: Path, line: str, files: dict[str, str], word: str
) -> None:
    found = runs(tmp_path, files, line)
    assert any(word in unread for unread in found.unread), found.unread
    bogus = {"<(cat", "<<<", "arg", "-P/g", "{}", "tools/policy)", "/dev/stdin"}
    assert not {p for p in pinned(tmp_path, found) if os.path.basename(p) in bogus}


@pytest.mark.parametrize(
    "line",
    ["cd -P tools && ./g", "bash -s -- arg < tools/policy", "source <(cat tools/policy)",
     'bash <<< "$(cat tools/policy)"', ". /dev/stdin < tools/policy", "python3 -Bm hooks.guard"],
)  # fmt: skip
def test_no_bogus_word_is_pinned(tmp_path: Path, line: str) -> None:
    found = runs(tmp_path, {**TOOLS_G, **POLICY, **PKG}, line)
    names = pinned(tmp_path, found)
    assert not [n for n in names if n.startswith(("-", "<", "arg")) or "/-" in n], names
    assert not [n for n in names if os.path.basename(n) in ("-P", "arg", "<(cat", "<<<")], names
    assert not any(n.endswith(("-P/g", "tools/policy)", "hooks.guard")) for n in names), names


def test_an_mcp_servers_clustered_module_option_is_pinned(tmp_path: Path) -> None:
    base = tmp_path.resolve()
    (base / "tools").mkdir()
    (base / "tools" / "__init__.py").write_text("")
    (base / "tools" / "server.py").write_text(P)

    found = what_server_runs(["python3", "-mtools.server"], {}, base, base)

    assert "tools/server.py" in pinned(tmp_path, found)


#: More spellings of the same classes, read by the resolver alone.
MORE_PINS = [
    ("make -I tools guard", {"Makefile": "include rules.mk\n", "tools/rules.mk": "guard:\n\techo\n"}, "tools/rules.mk"),
    ("make -I tools guard", {"Makefile": "include rules.mk\n", "tools/rules.mk": "guard:\n\techo\n"}, "rules.mk"),
    ("find tools -name '*.sh' -exec sh {} ';'", {"tools/x.sh": S}, "tools/x.sh"),
    ("uv run --directory tools g.py", {"tools/g.py": P}, "tools/g.py"),
    ({"command": "./hooks/g.sh"}, {"hooks/g.sh*": '#!/bin/sh\neval "$(cat policy)"\n', "policy": "echo\n"}, "policy"),
    ('eval "sh tools/x.sh"', {"tools/x.sh": S}, "tools/x.sh"),
    ("node -r ./tools/pre hooks/g.js", {"tools/pre.js": ""}, "tools/pre.js"),
    ("sudo -D tools ./g", TOOLS_G, "tools/g"),
    ("timeout 5 env --chdir=tools ./g", TOOLS_G, "tools/g"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("hook", "files", "want"), MORE_PINS, ids=[f"{h} {w}" for h, _, w in MORE_PINS]
)
def test_more_spellings_pin_the_file_they_run(
    tmp_path: Path, hook: str | dict[str, Any], files: dict[str, str], want: str
) -> None:
    assert want in pinned(tmp_path, runs(tmp_path, files, hook))


def test_the_code_an_env_file_node_reads_preloads_is_pinned(tmp_path: Path) -> None:
    files = {".env": "NODE_OPTIONS=--require ./tools/pre.js\n", "tools/pre.js": "", "g.js": ""}
    found = runs(tmp_path, files, "node --env-file=.env g.js")
    assert {".env", "tools/pre.js", "g.js"} <= pinned(tmp_path, found)


def test_a_script_read_from_another_descriptor_is_unread_not_pinned(tmp_path: Path) -> None:
    found = runs(tmp_path, {"tools/policy": "echo\n"}, ". /dev/fd/3 3< tools/policy")
    assert not [p for p in pinned(tmp_path, found) if p.startswith("/dev")], found.files
    assert any("/dev/fd/3" in unread for unread in found.unread), found.unread


@pytest.mark.parametrize(
    "line", ["perl -wle 'print 1'", "perl -0777 -ne 'print 1' data", "ruby -W0 -e 'print 1'"]
)
def test_a_number_attached_in_a_cluster_leaves_the_code_option_read(
    tmp_path: Path, line: str
) -> None:
    """`perl -wle CODE`: `-l` takes digits only, `-e` still gives the code."""
    found = runs(tmp_path, {}, line)
    assert not [p for p in pinned(tmp_path, found) if "print" in p], found.files
