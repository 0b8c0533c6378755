"""docs/reliability.md's whole-suite table: recorded by scripts/suite_times.py from pytest's
own summary line, rendered by scripts/render_reliability.py, quiet rows first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
RECORD = ROOT / "scripts" / "suite_times.py"
RENDER = ROOT / "scripts" / "render_reliability.py"
#: The end of a `pytest -q` run's output, as it prints it.
PYTEST_LOG = """\
........................................................................ [ 99%]
...                                                                      [100%]
3045 passed, 2 skipped, 1 warning in 789.12s (0:13:09)
"""


def record(times: Path, log: Path, machine: str, total: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(RECORD), "--command", "./scripts/test", "--machine", machine,
            "--total", total, "--log", str(log), "--load-start", "0.5", "--file", str(times)]  # fmt: skip
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, timeout=30)


def test_a_recorded_run_replaces_the_last_of_its_kind_and_the_page_shows_both(
    tmp_path: Path,
) -> None:
    times, log = tmp_path / "suite-times.json", tmp_path / "pytest.log"
    log.write_text(PYTEST_LOG.replace("789.12s", "1358.40s"))
    assert record(times, log, "saturated", "1400").returncode == 0
    log.write_text(PYTEST_LOG.replace("3045 passed", "3000 passed"))
    assert record(times, log, "quiet", "900").returncode == 0
    log.write_text(PYTEST_LOG)
    assert record(times, log, "quiet", "795.4").returncode == 0

    rows = json.loads(times.read_text())
    assert [(r["machine"], r["total_s"], r["pytest_s"], r["passed"]) for r in rows] == [
        ("saturated", 1400, 1358.4, 3045),
        ("quiet", 795, 789.1, 3045),
    ]
    assert rows[1]["skipped"] == 2
    assert rows[1]["load"].startswith("0.5–")

    out = tmp_path / "out"
    out.mkdir()
    (out / "cases.json").write_text(json.dumps({"profile": "quick", "cases": []}))
    doc = tmp_path / "reliability.md"
    argv = [sys.executable, str(RENDER), "--out", str(out), "--doc", str(doc),
            "--suite-times", str(times)]  # fmt: skip
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True, timeout=30)
    page = doc.read_text()
    table = page[page.index("## The whole suite") :].split("\n\n")[2].splitlines()
    assert table[2].startswith("| ./scripts/test | quiet | 795 s | 789 s | 3,045 |")
    assert table[3].startswith("| ./scripts/test | saturated | 1,400 s | 1,358 s | 3,045 |")


def test_a_log_without_pytest_s_summary_records_nothing(tmp_path: Path) -> None:
    times, log = tmp_path / "suite-times.json", tmp_path / "pytest.log"
    log.write_text("ImportError while loading conftest\n")
    done = record(times, log, "quiet", "10")
    assert done.returncode == 1
    assert "no pytest summary line" in done.stderr
    assert not times.exists()


def test_the_committed_times_render_on_the_page() -> None:
    """The page in docs/ was rendered with the committed times: its table is theirs."""
    rows = json.loads((ROOT / "docs" / "suite-times.json").read_text())
    page = (ROOT / "docs" / "reliability.md").read_text()
    assert "## The whole suite" in page
    for row in rows:
        assert f"| {row['command']} | {row['machine']} |" in page
