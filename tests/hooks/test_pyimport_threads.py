"""A `python:` hook's local module loaded by two threads at once (`hookgate serve`
answers requests in threads): the second waits for the first, and never gets the
module half made."""

from __future__ import annotations

import json
import sys
import threading
import types
from pathlib import Path

from hookgate.hooks import ConfigError, load_hooks_file

#: Seconds the second thread is given to go wrong before the first may finish: far
#: more than a failing lookup takes, and nothing is asserted about it.
CHANCE = 2.0


def test_two_threads_loading_one_local_module_both_get_the_whole_module(tmp_path: Path) -> None:
    gate = types.SimpleNamespace(started=threading.Event(), go=threading.Event())
    sys.modules["_hookgate_test_gate"] = gate  # type: ignore[assignment]
    (tmp_path / "slowguard.py").write_text(
        "import _hookgate_test_gate as gate\n"
        "gate.started.set()\n"
        "gate.go.wait(60)  # the module is half made until the test says go\n"
        "def check(event):\n    return None\n"
    )
    config = tmp_path / "hooks.yaml"
    config.write_text(json.dumps({"hooks": {"preToolCall": [{"python": "slowguard:check"}]}}))
    results: dict[str, str] = {}

    def load(name: str) -> None:
        try:
            load_hooks_file(config)
            results[name] = "loaded"
        except ConfigError as exc:
            results[name] = str(exc)

    first = threading.Thread(target=load, args=("first",))
    second = threading.Thread(target=load, args=("second",))
    try:
        first.start()
        assert gate.started.wait(60)
        second.start()
        second.join(CHANCE)  # before the fix, it failed here on the half-made module
    finally:
        gate.go.set()
        first.join(60)
        second.join(60)
        del sys.modules["_hookgate_test_gate"]
    assert results == {"first": "loaded", "second": "loaded"}
