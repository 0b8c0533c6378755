"""Record the conversation lines of a transcript the real Claude Code CLI writes.

`python tests/agent_clis/record_transcript.py OUT.jsonl` runs `claude -p "say hi"`
(installed by scripts/install-agent-clis) in an empty directory against the scripted
Messages API on loopback (`mock_anthropic`): the model asks for `echo hi`, then answers
"Done.". Claude Code's transcript (`$CLAUDE_CONFIG_DIR/projects/*/*.jsonl`) keeps its
conversation lines (`type` user or assistant) byte for byte in OUT; the other lines
(attachments, request shapes, costs) are Claude Code's own bookkeeping, left out.
`tests/runtime/claude_transcript.jsonl` was made so, with Claude Code 2.1.332.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_clis.conftest import AGENT_CLIS
from agent_clis.mock_anthropic import MockAnthropic, ToolUse

SCRIPT = (ToolUse("Bash", {"command": "echo hi", "description": "say hi"}), "Done.")


def record(out: Path) -> None:
    """Run Claude Code once and write its conversation lines to `out`."""
    with tempfile.TemporaryDirectory() as scratch, MockAnthropic(SCRIPT) as server:
        config, project = Path(scratch, "config"), Path(scratch, "project")
        project.mkdir()
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-test",
               "CLAUDE_CONFIG_DIR": str(config), "DISABLE_AUTOUPDATER": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}  # fmt: skip
        subprocess.run(
            [str(AGENT_CLIS / "claude"), "-p", "say hi", "--allowedTools", "Bash"],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=120, check=True,
        )  # fmt: skip
        (transcript,) = config.glob("projects/*/*.jsonl")
        kept = [
            line
            for line in transcript.read_text(encoding="utf-8").splitlines()
            if json.loads(line).get("type") in ("user", "assistant")
        ]
    out.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
