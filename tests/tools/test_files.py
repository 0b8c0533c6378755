"""The file tools against real files: each success, each failure, the schemas, the registry."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from hookgate.tools import (
    BUILTIN_TOOL_NAMES,
    DEFAULT_TOOL_NAMES,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    builtin_tools,
    files,
    search,
)
from hookgate.tools.base import check_arguments
from hookgate.tools.files import EditFileTool, ReadFileTool, WriteFileTool
from hookgate.tools.search import GrepTool, ListFilesTool, glob_regex

RunTool = Callable[..., ToolResult]
READ, WRITE, EDIT = ReadFileTool(), WriteFileTool(), EditFileTool()
LIST, GREP = ListFilesTool(), GrepTool()


def ok(result: ToolResult) -> str:
    assert not result.is_error, result.content
    return result.content


def failed(result: ToolResult) -> str:
    assert result.is_error, result.content
    return result.content


# read_file


def test_read_whole_file(run_tool: RunTool, project: Path) -> None:
    (project / "a.txt").write_text("one\ntwo\n")
    assert ok(run_tool(READ, {"path": "a.txt"})) == "one\ntwo\n"


def test_read_absolute_path(run_tool: RunTool, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("far away")
    assert ok(run_tool(READ, {"path": str(outside)})) == "far away"


def test_read_window_says_how_to_read_on(run_tool: RunTool, project: Path) -> None:
    (project / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    content = ok(run_tool(READ, {"path": "n.txt", "offset": 3, "limit": 2}))
    assert content == "line 3\nline 4\n[lines 3-4 of 10; read on with offset=5]"
    assert ok(run_tool(READ, {"path": "n.txt", "offset": 9.0})) == "line 9\nline 10\n"


def test_read_stops_at_the_output_cap(run_tool: RunTool, ctx: ToolContext, project: Path) -> None:
    (project / "n.txt").write_text("x" * 9 + "\n" + "y" * 9 + "\n" + "z\n")
    context = ctx._replace(output_cap=15)
    content = ok(run_tool(READ, {"path": "n.txt"}, context))
    assert content == "xxxxxxxxx\n[lines 1-1 of 3; read on with offset=2]"


def test_read_cuts_a_line_longer_than_the_cap(
    run_tool: RunTool, ctx: ToolContext, project: Path
) -> None:
    (project / "min.js").write_text("a" * 100 + "\nnext\n")
    context = ctx._replace(output_cap=10)
    content = ok(run_tool(READ, {"path": "min.js"}, context))
    assert (
        content
        == "a" * 10 + "\n[line 1 is cut at 10 bytes]\n[lines 1-1 of 2; read on with offset=2]"
    )


def test_read_empty_file(run_tool: RunTool, project: Path) -> None:
    (project / "empty").touch()
    assert ok(run_tool(READ, {"path": "empty"})) == "[empty is empty]"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "missing.txt"}, "cannot read missing.txt: No such file or directory"),
        ({"path": "sub"}, "cannot read sub: Is a directory; use list_files for a directory"),
        ({"path": "a.txt", "offset": 5}, "a.txt has 2 lines; offset 5 is past the end"),
        ({"path": "a.txt", "offset": 0}, "argument 'offset' must be at least 1, got 0"),
        ({"path": "a.txt", "limit": "10"}, "argument 'limit' must be an integer, got '10'"),
        ({"path": "a.txt", "limit": 1.5}, "argument 'limit' must be an integer, got 1.5"),
        ({"path": ""}, "argument 'path' must not be empty"),
        ({}, "missing required argument 'path'"),
        ({"file": "a.txt"}, "unknown argument 'file' (expected: path, offset, limit)"),
    ],
)
def test_read_failures(
    run_tool: RunTool, project: Path, arguments: dict[str, object], message: str
) -> None:
    (project / "a.txt").write_text("one\ntwo\n")
    (project / "sub").mkdir()
    assert failed(run_tool(READ, arguments)) == message


@pytest.mark.parametrize("tool", [READ, WRITE, EDIT, GREP], ids=lambda tool: tool.spec.name)
def test_a_fifo_is_refused_not_waited_on(run_tool: RunTool, project: Path, tool: Tool) -> None:
    os.mkfifo(project / "fifo")
    arguments = {
        "path": "fifo",
        "content": "x",
        "old_string": "a",
        "new_string": "b",
        "pattern": "x",
    }
    names = tool.spec.parameters["properties"]
    result = run_tool(tool, {key: value for key, value in arguments.items() if key in names})
    if tool is GREP:
        skipped = "no matches for 'x'\n[skipped 1 binary, large or unreadable files]"
        assert ok(result) == skipped
        assert ok(run_tool(GREP, {"pattern": "x"})) == skipped  # met on the walk
    else:
        action = "write" if tool is WRITE else "read"
        assert failed(result) == f"cannot {action} fifo: not a regular file"


def test_read_binary_file_is_reported(run_tool: RunTool, project: Path) -> None:
    (project / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    assert (
        failed(run_tool(READ, {"path": "img.png"}))
        == "img.png is a binary file (16 bytes); not shown"
    )


def test_null_optional_argument_counts_as_absent(run_tool: RunTool, project: Path) -> None:
    (project / "a.txt").write_text("one\n")
    assert ok(run_tool(READ, {"path": "a.txt", "offset": None, "limit": None})) == "one\n"


def test_arguments_must_be_an_object(run_tool: RunTool) -> None:
    assert failed(run_tool(READ, ["a.txt"])) == "the arguments must be a JSON object, got ['a.txt']"


# write_file


def test_write_creates_parents_and_keeps_bytes_exact(run_tool: RunTool, project: Path) -> None:
    text = "crlf\r\nünïcode\n"
    content = ok(run_tool(WRITE, {"path": "new/deep/f.txt", "content": text}))
    assert content == f"created new/deep/f.txt ({len(text.encode())} bytes)"
    assert (project / "new/deep/f.txt").read_bytes() == text.encode()


def test_write_replaces(run_tool: RunTool, project: Path) -> None:
    (project / "f.txt").write_text("old and long")
    assert ok(run_tool(WRITE, {"path": "f.txt", "content": "new"})) == "replaced f.txt (3 bytes)"
    assert (project / "f.txt").read_text() == "new"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"path": "file/child.txt", "content": "x"},
            "cannot write file/child.txt: Not a directory",
        ),
        (
            {"path": "dir", "content": "x"},
            "cannot write dir: Is a directory; use list_files for a directory",
        ),
        ({"path": "f.txt"}, "missing required argument 'content'"),
        ({"path": "f.txt", "content": ["x"]}, "argument 'content' must be a string, got ['x']"),
        (
            {"path": "f.txt", "content": "\ud800"},
            "the text for f.txt is not valid Unicode: surrogates not allowed",
        ),
    ],
)
def test_write_failures(
    run_tool: RunTool, project: Path, arguments: dict[str, object], message: str
) -> None:
    (project / "file").write_text("a file, not a directory")
    (project / "dir").mkdir()
    assert failed(run_tool(WRITE, arguments)) == message
    assert not (project / "f.txt").exists()


# edit_file


def test_edit_replaces_the_one_occurrence(run_tool: RunTool, project: Path) -> None:
    (project / "m.py").write_bytes(b"def f():\r\n    return 1\r\n")
    arguments = {"path": "m.py", "old_string": "return 1", "new_string": "return 2"}
    assert ok(run_tool(EDIT, arguments)) == "replaced 1 occurrence in m.py"
    assert (project / "m.py").read_bytes() == b"def f():\r\n    return 2\r\n"


def test_edit_replace_all(run_tool: RunTool, project: Path) -> None:
    (project / "m.txt").write_text("a b a b a")
    arguments = {"path": "m.txt", "old_string": "a", "new_string": "c", "replace_all": True}
    assert ok(run_tool(EDIT, arguments)) == "replaced 3 occurrences in m.txt"
    assert (project / "m.txt").read_text() == "c b c b c"


@pytest.mark.parametrize(
    ("old", "new", "replace_all", "message"),
    [
        ("zzz", "y", False, "old_string not found in m.txt; it must match exactly, whitespace "
         "and indentation included (read_file shows the current text)"),
        ("a", "y", False, "old_string occurs 2 times in m.txt; include more surrounding text "
         "to make it unique, or set replace_all to true"),
        ("", "y", False, "argument 'old_string' must not be empty; use write_file to create"),
        ("a", "a", True, "old_string and new_string are the same: nothing to change"),
        ("a", "y", "yes", "argument 'replace_all' must be true or false, got 'yes'"),
    ],
)  # fmt: skip
def test_edit_failures_leave_the_file_alone(
    run_tool: RunTool, project: Path, old: str, new: str, replace_all: object, message: str
) -> None:
    (project / "m.txt").write_text("a\nb\na\n")
    arguments = {"path": "m.txt", "old_string": old, "new_string": new, "replace_all": replace_all}
    assert failed(run_tool(EDIT, arguments)) == message
    assert (project / "m.txt").read_text() == "a\nb\na\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"ab\0cd", "bin is a binary file; only text files can be edited"),
        (b"caf\xe9", "bin is not UTF-8 text (byte 3); it cannot be edited"),
        (None, "cannot read bin: No such file or directory"),
    ],
)
def test_edit_refuses_what_it_cannot_edit(
    run_tool: RunTool, project: Path, data: bytes | None, message: str
) -> None:
    if data is not None:
        (project / "bin").write_bytes(data)
    arguments = {"path": "bin", "old_string": "c", "new_string": "x"}
    assert failed(run_tool(EDIT, arguments)) == message
    assert data is None or (project / "bin").read_bytes() == data


# list_files


@pytest.fixture
def tree(project: Path) -> Path:
    for name in [
        "README.md", "setup.py", "src/app/main.py", "src/app/ui.ts", "src/app/ui.tsx",
        "docs/.hidden.md", ".git/config", ".venv/lib/x.py", "src/.venv/y.py", "src/.git/HEAD",
    ]:  # fmt: skip
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\nTODO: fix {name}\n")
    return project


def test_list_everything_sorted_skipping_git_and_venv(run_tool: RunTool, tree: Path) -> None:
    assert ok(run_tool(LIST, {})).splitlines() == [
        "README.md",
        "docs/.hidden.md",
        "setup.py",
        "src/app/main.py",
        "src/app/ui.ts",
        "src/app/ui.tsx",
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"pattern": "**/*.py"}, ["setup.py", "src/app/main.py"]),
        ({"pattern": "*.py"}, ["setup.py"]),
        ({"pattern": "./src/**"}, ["src/app/main.py", "src/app/ui.ts", "src/app/ui.tsx"]),
        ({"pattern": "**/*.{ts,md}"}, ["README.md", "docs/.hidden.md", "src/app/ui.ts"]),
        ({"pattern": "*.py", "path": "src/app"}, ["src/app/main.py"]),
        ({"pattern": "[!R]*"}, ["setup.py"]),
    ],
)
def test_list_with_glob(
    run_tool: RunTool, tree: Path, arguments: dict[str, str], expected: list[str]
) -> None:
    assert ok(run_tool(LIST, arguments)).splitlines() == expected


def test_list_outside_the_project_shows_absolute_paths(run_tool: RunTool, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "f.txt").touch()
    content = ok(run_tool(LIST, {"path": str(tmp_path / "other")}))
    assert content == str(tmp_path / "other" / "f.txt")


def test_list_stops_at_the_cap(
    run_tool: RunTool, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_LISTED", 2)
    content = ok(run_tool(LIST, {}))
    assert content.splitlines()[-1] == "[stopped after 2 files; narrow the pattern or path]"
    assert len(content.splitlines()) == 3


def test_list_without_matches(run_tool: RunTool, tree: Path) -> None:
    assert ok(run_tool(LIST, {"pattern": "*.rs"})) == "no files match '*.rs' under ."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "setup.py"}, "setup.py is not a directory"),
        ({"path": "nowhere"}, "nowhere is not a directory"),
        ({"pattern": "/etc/*"}, "glob '/etc/*' must be relative; give the directory as 'path'"),
        ({"pattern": "{a,b"}, "invalid glob '{a,b': unbalanced '{'"),
    ],
)
def test_list_failures(
    run_tool: RunTool, tree: Path, arguments: dict[str, str], message: str
) -> None:
    assert failed(run_tool(LIST, arguments)) == message


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*", "a/b/c", True),
        ("**/c", "c", True),
        ("a/**/c", "a/c", True),
        ("a/**/c", "a/x/y/c", True),
        ("a/*", "a/b/c", False),
        ("?.py", "ab.py", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "b.py", False),
        ("*.{py,pyi}", "m.pyi", True),
        ("a+b(1).txt", "a+b(1).txt", True),
        ("*.txt", "notes.txt.bak", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


# grep


def test_grep_reports_path_line_text(run_tool: RunTool, tree: Path) -> None:
    assert ok(run_tool(GREP, {"pattern": r"fix .*\.py$"})).splitlines() == [
        "setup.py:2:TODO: fix setup.py",
        "src/app/main.py:2:TODO: fix src/app/main.py",
    ]


def test_grep_with_glob_path_and_case(run_tool: RunTool, tree: Path) -> None:
    arguments = {"pattern": "todo", "glob": "*.ts*", "path": "src/app", "ignore_case": True}
    assert ok(run_tool(GREP, arguments)).splitlines() == [
        "src/app/ui.ts:2:TODO: fix src/app/ui.ts",
        "src/app/ui.tsx:2:TODO: fix src/app/ui.tsx",
    ]


def test_grep_a_single_file(run_tool: RunTool, tree: Path) -> None:
    assert ok(run_tool(GREP, {"pattern": "^#", "path": "README.md"})) == "README.md:1:# README.md"


def test_grep_skips_binary_files_and_says_so(run_tool: RunTool, project: Path) -> None:
    (project / "blob.bin").write_bytes(b"needle\0\0")
    (project / "t.txt").write_text("a needle\n")
    assert ok(run_tool(GREP, {"pattern": "needle"})).splitlines() == [
        "t.txt:1:a needle",
        "[skipped 1 binary, large or unreadable files]",
    ]


def test_grep_stops_at_the_cap(
    run_tool: RunTool, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_MATCHES", 3)
    (project / "many.txt").write_text("hit\n" * 10)
    assert ok(run_tool(GREP, {"pattern": "hit"})).splitlines() == [
        "many.txt:1:hit",
        "many.txt:2:hit",
        "many.txt:3:hit",
        "[stopped after 3 matches; narrow the pattern, glob or path]",
    ]


def test_grep_cuts_long_lines(run_tool: RunTool, project: Path) -> None:
    (project / "long.txt").write_text("x" * 1000 + "\n")
    content = ok(run_tool(GREP, {"pattern": "x"}))
    assert content == "long.txt:1:" + "x" * search.MAX_LINE_CHARS


def test_grep_without_matches(run_tool: RunTool, tree: Path) -> None:
    assert ok(run_tool(GREP, {"pattern": "nothing here"})) == "no matches for 'nothing here'"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"pattern": "("},
            "invalid regular expression '(': missing ) at position 1",
        ),
        ({"pattern": "x", "path": "nowhere"}, "cannot search nowhere: no such file or directory"),
        ({"pattern": "x", "ignore_case": 1}, "argument 'ignore_case' must be true or false, got 1"),
    ],
)
def test_grep_failures(
    run_tool: RunTool, tree: Path, arguments: dict[str, object], message: str
) -> None:
    assert failed(run_tool(GREP, arguments)) == message


# specs and registry


def test_every_spec_is_a_valid_json_schema_that_agrees_with_the_checker() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for tool in builtin_tools():
        validator = jsonschema.Draft202012Validator
        validator.check_schema(tool.spec.parameters)
        assert tool.spec.parameters["type"] == "object"
        assert tool.spec.description
        required = {name: "x" for name in tool.spec.parameters["required"]}
        validator(tool.spec.parameters).validate(required)
        check_arguments(tool.spec.parameters, required)
        assert not validator(tool.spec.parameters).is_valid({**required, "unknown": 1})


def test_builtin_tools_and_consent() -> None:
    tools = {tool.spec.name: tool for tool in builtin_tools()}
    assert BUILTIN_TOOL_NAMES == (
        "shell",
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "web_fetch",
    )
    assert BUILTIN_TOOL_NAMES[:-1] == DEFAULT_TOOL_NAMES  # web_fetch only where listed
    assert tuple(tools) == BUILTIN_TOOL_NAMES
    assert {name for name, tool in tools.items() if tool.needs_consent} == {
        "shell",
        "write_file",
        "edit_file",
        "web_fetch",
    }


def test_only_the_tools_named_are_built_in_the_order_they_are_offered() -> None:
    named = builtin_tools(["grep", "shell", "no_such_tool"])

    assert [tool.spec.name for tool in named] == ["shell", "grep"]


def test_registry() -> None:
    registry = ToolRegistry(builtin_tools())
    assert registry.names() == list(BUILTIN_TOOL_NAMES)
    assert [spec.name for spec in registry.specs()] == list(BUILTIN_TOOL_NAMES)
    assert isinstance(registry.get("grep"), GrepTool)
    assert registry.get("nope") is None
    assert "grep" in registry
    with pytest.raises(ValueError, match="a tool named 'grep' is already registered"):
        registry.add(GrepTool())


# a folder swapped for a symlink between the check and the open


@pytest.fixture
def swapped(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`notes/` is swapped for a symlink to `.git/hooks` right after `open_path` has
    judged a path in it, as a command running beside the tool could do."""
    hooks = project / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (project / "notes").mkdir()
    (project / "notes" / "a.txt").write_text("mine\n")
    (hooks / "a.txt").write_text("git's\n")
    from hookgate.tools import files

    judged = files.open_path

    def open_then_swap(raw: str, ctx: ToolContext, *, writing: bool = False) -> Path:
        path = judged(raw, ctx, writing=writing)
        (project / "notes").rename(project / "gone")
        (project / "notes").symlink_to(hooks)
        return path

    monkeypatch.setattr(files, "open_path", open_then_swap)
    return hooks


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (WRITE, {"path": "notes/pre-commit", "content": "#!/bin/sh\n"}),
        (WRITE, {"path": "notes/a.txt", "content": "x"}),
        (EDIT, {"path": "notes/a.txt", "old_string": "git's", "new_string": "x"}),
    ],
    ids=["write a new file", "write over a file", "edit a file"],
)
def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_followed(
    run_tool: RunTool, swapped: Path, tool: Tool, arguments: dict[str, str]
) -> None:
    before = sorted((p.name, p.read_bytes()) for p in swapped.iterdir())

    message = failed(run_tool(tool, arguments))

    assert "Not a directory" in message or "Too many levels of symbolic links" in message
    assert sorted((p.name, p.read_bytes()) for p in swapped.iterdir()) == before


def test_a_read_through_a_folder_swapped_for_a_symlink_is_refused(
    run_tool: RunTool, swapped: Path
) -> None:
    message = failed(run_tool(READ, {"path": "notes/a.txt"}))

    assert "git's" not in message


def test_grep_through_a_folder_swapped_for_a_symlink_reads_nothing_there(
    run_tool: RunTool, ctx: ToolContext, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk judges `notes/a.txt`; `notes` then becomes a link into `$HOOKGATE_HOME`."""
    home = project.parent / "home"
    home.mkdir()
    (home / "a.txt").write_text("needle: the secret\n")
    (project / "notes").mkdir()
    (project / "notes" / "a.txt").write_text("needle: mine\n")
    judged = search.refused

    def refused_then_swap(path: Path, context: ToolContext) -> bool:
        verdict = judged(path, context)
        if (project / "notes").is_dir() and not (project / "notes").is_symlink():
            (project / "notes").rename(project / "gone")
            (project / "notes").symlink_to(home)
        return verdict

    monkeypatch.setattr(search, "refused", refused_then_swap)

    content = run_tool(GREP, {"pattern": "needle"}, ctx._replace(hookgate_home=home)).content

    assert "secret" not in content


# A file a command made far larger than memory: 16 GiB, sparse (it costs the disk
# nothing), 8 KiB of text and then no line break at all.


@pytest.fixture
def huge(project: Path) -> Path:
    path = project / "huge.txt"
    with path.open("wb") as file:
        file.write(b"a" * 8192)
        file.truncate(16 * 1024**3)
    return path


def test_read_file_holds_no_more_of_a_huge_line_than_it_shows(
    run_tool: RunTool, ctx: ToolContext, huge: Path
) -> None:
    tracemalloc.start()
    try:
        content = ok(run_tool(READ, {"path": "huge.txt", "limit": 1}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert content.startswith("a" * 8192)
    assert f"[line 1 is cut at {ctx.output_cap} bytes]" in content
    assert peak < files.MAX_TEXT_FILE // 16


def test_edit_file_refuses_a_file_larger_than_it_holds(run_tool: RunTool, huge: Path) -> None:
    result = run_tool(EDIT, {"path": "huge.txt", "old_string": "aaa", "new_string": "b"})

    message = failed(result)
    assert message == (
        f"huge.txt holds more than {files.MAX_TEXT_FILE} bytes; edit_file edits smaller files "
        "(use the shell for this one)"
    )
    assert huge.stat().st_size == 16 * 1024**3


def test_read_file_counts_lines_only_so_far(
    run_tool: RunTool, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_TEXT_FILE", 100)
    (project / "n.txt").write_text("".join(f"line {i:03}\n" for i in range(1, 101)))

    assert ok(run_tool(READ, {"path": "n.txt", "limit": 2})) == (
        "line 001\nline 002\n[lines 1-2 of at least 12; read on with offset=3]"
    )
    assert failed(run_tool(READ, {"path": "n.txt", "offset": 50})) == (
        "n.txt holds more than 100 bytes before line 50; read_file reads no further: "
        "use the shell (`sed -n`, `tail`)"
    )
