"""Atheris harness: the agent-file and model-script loaders on arbitrary bytes.

Each input is written as a file and loaded both ways. Any exception but `ConfigError`
is a crash, and so is a file accepted that the spec of tests/reliability finds invalid.

    .venv/bin/python fuzz/fuzz_config.py -runs=100000 -max_total_time=60

The full reliability profile runs it for a bounded time (tests/reliability/test_fuzz.py).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

with atheris.instrument_imports():
    from ruamel.yaml import YAML

    from hookgate.config.agentfile import load_agent_file
    from hookgate.errors import ConfigError
    from hookgate.models.scripted import load_script
    from reliability import agentfile_spec, script_spec
    from reliability.agentfile_spec import plain

WORKDIR = Path(tempfile.mkdtemp(prefix="fuzz-config-")).resolve()
(WORKDIR / "sub").mkdir()
FILE = WORKDIR / "hookgate.yaml"


def read_back(data: bytes) -> object:
    try:
        return plain(YAML(typ="rt", pure=True).load(data.decode("utf-8")))
    except Exception:
        return None


def test_one_input(data: bytes) -> None:
    FILE.write_bytes(data)
    try:
        load_agent_file(FILE)
    except ConfigError:
        pass
    else:
        found = agentfile_spec.violations(read_back(data), WORKDIR)
        assert not found, f"an invalid agent file was accepted: {found}"
    try:
        load_script(FILE)
    except ConfigError:
        pass
    else:
        problems = script_spec.violations(read_back(data))
        assert not problems, f"an invalid script was accepted: {problems}"


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
