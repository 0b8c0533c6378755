"""The distribution PyPI would get: it builds, passes `twine check`, carries the LICENSE,
the example hooks and the schemas, and every link of its description leads somewhere: to
the web, or (README's links are relative, for a clone or a fork) to a file the sdist
carries.

Built once for the module, offline (`--no-isolation`, with the dev extra's setuptools).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a build may take on a loaded two-core machine.
BUILD_TIMEOUT = 300


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=BUILD_TIMEOUT,
    )  # fmt: skip
    return out


def test_the_sdist_and_wheel_pass_twine_check(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    assert len(files) == 2, files  # one sdist, one wheel

    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr


def test_the_wheel_carries_license_examples_schemas_and_metadata(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())

    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "hookgate/examples/guard-rm-rf.sh" in names
    assert "hookgate/examples/audit-log.sh" in names
    for example in ("hookgate.yaml", "policy.hooktest.yaml", "verdicts.yaml"):  # hooks test
        assert f"hookgate/examples/{example}" in names
    assert "hookgate/policytest/replay/codex.py" in names
    assert "hookgate/hooks/schemas/preToolCall.native.payload.json" in names
    for page in ("index.html", "app.js", "app.css"):  # the window's page, no build step
        assert f"hookgate/frontends/window/static/{page}" in names
    assert metadata["License-Expression"] == "MIT"
    assert "Programming Language :: Python :: 3.11" in metadata.get_all("Classifier")
    urls = dict(entry.split(", ", 1) for entry in metadata.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Changelog"} <= set(urls)


def test_every_relative_link_of_the_description_is_a_file_the_sdist_carries(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        top, *_ = archive.getnames()
        carried = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    description = (ROOT / "README.md").read_text(encoding="utf-8")

    relative = set(re.findall(r"\]\((?!https?://|#)([^)#]+)", description))

    assert relative, "README links no page of docs/ (this test would test nothing)"
    assert sorted(relative - carried) == [], f"README links that lead nowhere in {top}"
