"""The hook author's CLI, run as a user runs it: `hookgate hooks check | fire | schema`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent / "mecatl_examples"
HOOKGATE = [sys.executable, "-m", "hookgate.cli"]


def hookgate(
    *args: str, cwd: Path, stdin: str = "", check_exit: int | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*HOOKGATE, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    if check_exit is not None:
        assert done.returncode == check_exit, done.stderr
    return done


def write(path: Path, text: str, *, executable: bool = False) -> Path:
    path.write_text(textwrap.dedent(text))
    if executable:
        path.chmod(0o755)
    return path


GUARD_CONFIG = """\
    hooks:
      PreToolUse:
        - name: no-rm-rf
          matcher: ^Shell$
          command: ./guard.sh
          format: mecatl
      preGeneration:
        - name: rewrite
          command: >-
            jq '{prompt: (.prompt | ascii_upcase), context: "shout"}'
    """


@pytest.fixture
def guarded(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "bash" / "pretooluse-guard.sh", tmp_path / "guard.sh")
    write(tmp_path / "hookgate.yaml", GUARD_CONFIG)
    return tmp_path


def test_check_lists_each_events_hooks_in_order(guarded: Path) -> None:
    done = hookgate("hooks", "check", cwd=guarded, check_exit=0)
    assert "valid, 2 hooks" in done.stdout
    assert done.stdout.index("preGeneration") < done.stdout.index("preToolCall")
    assert "'no-rm-rf'" in done.stdout
    assert "matcher '^Shell$'" in done.stdout
    assert "format mecatl, timeout 30s, onError warn" in done.stdout
    assert "warning" not in done.stderr


def test_check_says_which_hooks_are_persistent(tmp_path: Path) -> None:
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n"
          "    - {name: resident, args: [./guard.py], persistent: true}\n")  # fmt: skip
    done = hookgate("hooks", "check", cwd=tmp_path)
    assert "'resident': args [\"./guard.py\"]; persistent (one process for the session)" in (
        done.stdout
    )


def test_check_reports_a_config_error_with_file_line_and_key_path(tmp_path: Path) -> None:
    write(
        tmp_path / "hookgate.yaml",
        "hooks:\n  preToolCall:\n    - command: x\n      onError: fial\n",
    )
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=1)
    assert "hookgate.yaml:4: hooks.preToolCall[0].onError: 'fial' is not one of" in done.stderr
    assert "did you mean 'fail'?" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_refuses_an_unknown_event_with_did_you_mean(tmp_path: Path) -> None:
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolcall:\n    - command: x\n")
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=1)
    assert "unknown event 'preToolcall'" in done.stderr
    assert "did you mean 'preToolCall'?" in done.stderr


def test_check_warns_about_missing_and_non_executable_programs(tmp_path: Path) -> None:
    write(tmp_path / "plain.sh", "#!/bin/sh\nexit 0\n")
    write(
        tmp_path / "hookgate.yaml",
        """\
        hooks:
          preToolCall:
            - command: ./missing.sh
            - command: ./plain.sh
            - args: [no-such-program-anywhere]
        """,
    )
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    assert "./missing.sh: no such file" in done.stderr
    assert "./plain.sh: not executable" in done.stderr
    assert "no-such-program-anywhere: not found in PATH" in done.stderr
    assert "3 warnings" in done.stderr


def test_check_never_waits_on_a_named_pipe_planted_as_a_hooks_program(
    tmp_path: Path,
) -> None:
    """Its `#!` line is read as every file of a repository is (`open_regular`): a
    FIFO with the execute bit held `hooks check`, and every session's start, forever."""
    os.mkfifo(tmp_path / "guard.sh")
    (tmp_path / "guard.sh").chmod(0o755)
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - command: ./guard.sh\n")

    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)  # within the timeout

    assert "1 hook" in done.stdout


@pytest.mark.parametrize("script", ["prompt-redactor.sh", "aws-scrubber.sh"])
def test_check_flags_the_published_mecatl_examples_under_bin_sh(
    tmp_path: Path, script: str
) -> None:
    """Their `<<<` is bash: dash exits 2 on it, which the contract reads as a block."""
    shutil.copy(EXAMPLES / "published" / script, tmp_path / script)
    write(
        tmp_path / "hookgate.yaml",
        f"hooks:\n  UserPromptSubmit:\n    - command: ./{script}\n      format: mecatl\n",
    )
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    assert f"./{script}: its shell /bin/sh rejects it" in done.stderr
    assert "deliberate block" in done.stderr

    shutil.copy(EXAMPLES / "bash" / script, tmp_path / script)
    fixed = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    assert "warning" not in fixed.stderr


def test_check_warns_about_a_phase_name_without_a_format_and_strict_fails(
    tmp_path: Path,
) -> None:
    shutil.copy(EXAMPLES / "bash" / "pretooluse-guard.sh", tmp_path / "guard.sh")
    entries = "    - {command: ./guard.sh, matcher: ^Shell$}\n"
    write(tmp_path / "hookgate.yaml", f"hooks:\n  PreToolUse:\n{entries}")
    done = hookgate("hooks", "check", "--strict", cwd=tmp_path, check_exit=1)
    assert "listed under 'PreToolUse', a phase name of another hook system" in done.stderr
    assert "add format: mecatl for a Mecatl hook" in done.stderr

    write(tmp_path / "hookgate.yaml",
          f"hooks:\n  PreToolUse:\n{entries[:-2]}, format: mecatl}}\n")  # fmt: skip
    fixed = hookgate("hooks", "check", "--strict", cwd=tmp_path, check_exit=0)
    assert "warning" not in fixed.stderr


def test_check_flags_an_inline_command_its_shell_cannot_parse(tmp_path: Path) -> None:
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - command: 'if true; then'\n")
    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)
    assert "/bin/sh cannot parse the command" in done.stderr


def _planted(directory: Path, name: str, marker: Path) -> Path:
    """An executable that leaves `marker` behind if anything ever runs it."""
    return write(directory / name, f"#!/bin/sh\ntouch {marker}\n", executable=True)


def test_check_runs_no_shell_the_config_names(tmp_path: Path) -> None:
    """A `shell:` value was run as `<shell> -n -c ...`; only /bin/<name> -n runs now."""
    marker = tmp_path / "ran"
    (tmp_path / "tools").mkdir()
    _planted(tmp_path / "tools", "bash", marker)
    write(
        tmp_path / "hookgate.yaml",
        f"""\
        hooks:
          preToolCall:
            - {{command: 'if true; then', shell: ./tools/bash}}
            - {{command: 'true', shell: {tmp_path}/tools/bash, env: {{BASH_ENV: {tmp_path}/tools/bash}}}}
        """,
    )

    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)

    assert not marker.exists()
    assert "./tools/bash cannot parse the command" in done.stderr  # /bin/bash said so


def test_check_runs_no_interpreter_a_script_names(tmp_path: Path) -> None:
    """A script's `#!` interpreter, a local file, was run with -n; never now."""
    marker = tmp_path / "ran"
    (tmp_path / "bin").mkdir()
    _planted(tmp_path / "bin", "sh", marker)
    write(tmp_path / "guard.sh", f"#!{tmp_path}/bin/sh\nif true; then\n", executable=True)
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - command: ./guard.sh\n")

    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)

    assert not marker.exists()
    assert f"./guard.sh: its shell {tmp_path}/bin/sh rejects it" in done.stderr


def test_check_imports_no_python_hook(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    write(tmp_path / "planted.py", f"open({str(marker)!r}, 'w').close()\ndef check(p): pass\n")
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - python: planted:check\n"
          "    - python: nowhere_to_be_found:check\n")  # fmt: skip

    done = hookgate("hooks", "check", cwd=tmp_path, check_exit=0)

    assert not marker.exists()
    assert "planted:check" not in done.stderr
    assert "nowhere_to_be_found:check: no module 'nowhere_to_be_found'" in done.stderr


def test_a_hook_in_the_embedders_own_script_is_found(tmp_path: Path) -> None:
    """`python: __main__:hook` from a program that embeds hookgate: its `__main__` is
    imported (without a module spec), so the linter does not call it missing."""
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - python: __main__:allow\n")
    embedder = """
        from pathlib import Path
        from hookgate.hooks import load_hooks_file
        from hookgate.hooks.author.lint import lint_hooks

        def allow(event):
            return None

        config = load_hooks_file(Path("hookgate.yaml"))
        print(lint_hooks(tuple(config), Path(".")))
    """
    script = write(tmp_path / "embed.py", textwrap.dedent(embedder))

    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30, check=True)  # fmt: skip

    assert done.stdout.strip() == "[[]]", done.stdout


def test_fire_blocks_with_exit_2_and_prints_the_outcome(guarded: Path) -> None:
    done = hookgate(
        "hooks", "fire", "preToolCall", "--tool", "shell", cwd=guarded,
        stdin='{"command": "rm -rf build"}', check_exit=2,
    )  # fmt: skip
    outcome = json.loads(done.stdout)
    assert outcome["blocked"] is True
    assert "rm -rf" in outcome["reason"]
    assert outcome["blocked_by"] == "no-rm-rf"
    assert outcome["input"] == {"command": "rm -rf build"}
    assert {"context", "notices", "errors", "changed", "hooks_run"} <= set(outcome)


def test_fire_allows_with_exit_0_and_the_matcher_decides(guarded: Path) -> None:
    other_tool = hookgate(
        "hooks", "fire", "PreToolUse", "--tool", "write_file", cwd=guarded,
        stdin='{"command": "rm -rf build"}', check_exit=0,
    )  # fmt: skip
    assert json.loads(other_tool.stdout)["hooks_run"] == 0


def test_fire_prints_the_rewritten_prompt_and_the_context(guarded: Path) -> None:
    done = hookgate(
        "hooks", "fire", "preGeneration", cwd=guarded, stdin='{"prompt": "hi"}', check_exit=0
    )
    outcome = json.loads(done.stdout)
    assert outcome["input"] == {"prompt": "HI"}
    assert outcome["changed"] == ["prompt"]
    assert outcome["context"] == ["shout"]


def test_fire_reads_a_post_tool_result_as_a_string_or_an_object(tmp_path: Path) -> None:
    write(
        tmp_path / "hookgate.yaml",
        "hooks:\n  postToolCall:\n    - command: 'echo ''{\"result\": \"clean\"}'''\n",
    )
    for given in ('"dirty"', '{"content": "dirty", "is_error": true}'):
        done = hookgate(
            "hooks", "fire", "postToolCall", "--tool", "shell", cwd=tmp_path, stdin=given,
            check_exit=0,
        )  # fmt: skip
        result = json.loads(done.stdout)["input"]
        assert result["content"] == "clean"
        assert result["is_error"] is (given != '"dirty"')


def test_fire_exits_1_on_a_config_error_and_on_bad_input(tmp_path: Path) -> None:
    write(tmp_path / "hookgate.yaml", "hooks:\n  preToolCall:\n    - nope: 1\n")
    assert (
        "unknown key 'nope'"
        in hookgate(
            "hooks", "fire", "preToolCall", "--tool", "x", cwd=tmp_path, stdin="{}", check_exit=1
        ).stderr
    )
    write(tmp_path / "hookgate.yaml", "hooks: {}\n")
    assert (
        "needs --tool"
        in hookgate("hooks", "fire", "preToolCall", cwd=tmp_path, stdin="{}", check_exit=1).stderr
    )
    assert (
        "stdin is not JSON"
        in hookgate(
            "hooks", "fire", "preGeneration", cwd=tmp_path, stdin="{oops", check_exit=1
        ).stderr
    )


def test_schema_prints_the_payload_and_reply_schemas(tmp_path: Path) -> None:
    native = json.loads(
        hookgate("hooks", "schema", "PreToolUse", cwd=tmp_path, check_exit=0).stdout
    )
    assert set(native) == {"payload", "reply"}
    assert "arguments" in native["reply"]["properties"]
    mecatl = json.loads(
        hookgate(
            "hooks", "schema", "preToolCall", "--format", "mecatl", cwd=tmp_path, check_exit=0
        ).stdout
    )
    assert set(mecatl["payload"]["properties"]) == {"Phase", "Tool", "Input", "SessionID"}
    refused = hookgate(
        "hooks", "schema", "preAsk", "--format", "mecatl", cwd=tmp_path, check_exit=1
    )
    assert "no counterpart" in refused.stderr


def test_fire_interrupted_by_ctrl_c_exits_130_and_leaves_no_hook_behind(
    tmp_path: Path, read_pid: Callable[[Path], int], group_gone: Callable[[int], None]
) -> None:
    """`fire` waits for its hooks without an event loop (run_sync): Ctrl-C still stops them."""
    write(
        tmp_path / "hookgate.yaml",
        f"""\
        hooks:
          preToolCall:
            - command: "echo $$ > {tmp_path}/pid; exec sleep 30"
        """,
    )
    process = subprocess.Popen(
        [*HOOKGATE, "hooks", "fire", "preToolCall", "--tool", "shell"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b'{"command": "ls"}')
    process.stdin.close()
    deadline = time.monotonic() + 30
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text().strip():
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.02)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130
    assert time.monotonic() - started < 5
    group_gone(read_pid(tmp_path / "pid"))


@pytest.mark.parametrize(
    ("reply", "hint"),
    [
        ('{"acton": "block"}', "unknown reply field 'acton'; did you mean 'action'?"),
        ('{"action": "blok"}', "got 'blok'; did you mean 'block'?"),
    ],
)
def test_a_misspelt_reply_gets_did_you_mean(tmp_path: Path, reply: str, hint: str) -> None:
    hook = {"name": "typo", "command": f"echo '{reply}'"}
    write(tmp_path / "hookgate.yaml", json.dumps({"hooks": {"preToolCall": [hook]}}))
    done = hookgate(
        "hooks", "fire", "preToolCall", "--tool", "shell", cwd=tmp_path, stdin="{}",
        check_exit=0,
    )  # fmt: skip
    (error,) = json.loads(done.stdout)["errors"]
    assert hint in error
