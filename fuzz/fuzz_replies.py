"""Atheris harness: hook answers (stdout, stderr, exit status) read by every reply format.

The decision must be the one tests/reliability/reply_spec.py reads from the docs, or a
`BadReply` where it says the hook failed; any other exception is a crash.

    .venv/bin/python fuzz/fuzz_replies.py -runs=100000 -max_total_time=60
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

with atheris.instrument_imports():
    from hookgate.hooks import EVENTS, FORMATS, BadReply, ProcessResult
    from reliability import reply_spec

#: A payload of each field an event may carry, so that replies have something to change.
FIELDS = {
    "prompt": "the question",
    "question": "a question",
    "answer": "an answer",
    "arguments": {"command": "ls"},
    "result": {"content": "out", "is_error": False},
    "conversation": [{"role": "user", "content": "hi"}],
    "tool": "shell",
    "agent": "reviewer",
    "outcome": "answered",
    "source": "startup",
    "error": None,
    "task": {"id": "t"},
}
EVENT_NAMES = sorted(EVENTS)
CODES = [0, 2, 1, 126, 127, -9]
#: The keys and values a structured input builds its JSON reply from.
KEYS = ["action", "reason", "message", "context", "prompt", "question", "answer", "arguments",
        "result", "content", "is_error", "conversation", "role", "mutated", "agent", "x"]  # fmt: skip
SCALARS = [None, True, False, 0, 1.5, "", "allow", "block", "deny", "stop", "user", "x"]


def json_value(provider: atheris.FuzzedDataProvider, depth: int = 0) -> object:
    """A JSON value drawn from the reply vocabulary: most inputs then parse as a reply."""
    kind = provider.ConsumeIntInRange(0, 3 if depth < 3 else 1)
    if kind == 0:
        return SCALARS[provider.ConsumeIntInRange(0, len(SCALARS) - 1)]
    if kind == 1:
        return provider.ConsumeUnicodeNoSurrogates(provider.ConsumeIntInRange(0, 8))
    if kind == 2:
        return [json_value(provider, depth + 1) for _ in range(provider.ConsumeIntInRange(0, 3))]
    return {
        KEYS[provider.ConsumeIntInRange(0, len(KEYS) - 1)]: json_value(provider, depth + 1)
        for _ in range(provider.ConsumeIntInRange(0, 4))
    }


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    event = EVENT_NAMES[provider.ConsumeIntInRange(0, len(EVENT_NAMES) - 1)]
    fmt = "native" if provider.ConsumeBool() else "mecatl"
    code = CODES[provider.ConsumeIntInRange(0, len(CODES) - 1)]
    stderr = provider.ConsumeBytes(provider.ConsumeIntInRange(0, 16))
    if provider.ConsumeBool():
        stdout = json.dumps(json_value(provider, depth=2 if provider.ConsumeBool() else 0)).encode()
    else:
        stdout = provider.ConsumeBytes(provider.remaining_bytes())
    spec = EVENTS[event]
    if not FORMATS[fmt].supports(spec):
        return
    payload = {"event": event, "session_id": "s", "cwd": "/"}
    payload.update({name: FIELDS[name] for name in spec.payload})
    read = reply_spec.expected_native if fmt == "native" else reply_spec.expected_mecatl
    expected = read(event, payload, stdout, stderr, code)
    result = ProcessResult(code, stdout, stderr, False, False, False, 0.0)
    try:
        reply = FORMATS[fmt].decode(spec, payload, result)
    except BadReply:
        assert expected == reply_spec.FAILED, f"refused, but the docs say {expected}"
        return
    assert expected != reply_spec.FAILED, f"accepted as {reply}, but the hook failed"
    assert isinstance(expected, reply_spec.Decision)
    assert reply.block == expected.block, (reply, expected)
    assert dict(reply.changes) == dict(expected.changes), (reply, expected)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
