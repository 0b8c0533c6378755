"""The reliability suite's plugin: every case's record for docs/reliability.md, and fixtures.

Each test here carries `@pytest.mark.reliability("<category>")` and a one-line
docstring stating the case and what it guarantees; a test without them fails. For
every case run, its category, that line, its parameters, its outcome and its duration
go to `OUT/cases.json`, which `scripts/render_reliability.py` turns into the page.
"""

from __future__ import annotations

import datetime
import json
import platform
import time
from collections.abc import Generator
from dataclasses import asdict, dataclass
from typing import Any

import pytest

from reliability.faultkit import mark
from reliability.profile import CATEGORIES, FULL, OUT
from runtime.conftest import anyio_backend, chat_server, open_project_agent, project

__all__ = ["anyio_backend", "chat_server", "mark", "open_project_agent", "project"]

#: How a phase's report ranks: the worst one is the case's outcome.
_RANK = {"passed": 0, "skipped": 1, "xfailed": 2, "xpassed": 3, "failed": 4, "error": 5}


@dataclass
class CaseRecord:
    """One row of docs/reliability.md."""

    nodeid: str
    category: str
    guarantee: str
    params: str
    outcome: str = "passed"
    duration_s: float = 0.0
    detail: str = ""
    """Why it was skipped, or the first line of its failure."""


_cases: dict[str, CaseRecord] = {}
_started = time.time()


def _category(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("reliability")
    if marker is None or len(marker.args) != 1:
        return None
    category = marker.args[0]
    return category if category in CATEGORIES else None


def _guarantee(item: pytest.Item) -> str:
    doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
    lines = [line.strip() for line in doc.strip().splitlines()]
    return lines[0] if lines else ""


def _params(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return callspec.id if callspec is not None else ""


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a case that does not follow the suite's convention: it would be a blank row."""
    if _category(item) is None:
        pytest.fail(
            f"{item.nodeid}: mark it @pytest.mark.reliability(<category>), one of "
            f"{', '.join(CATEGORIES)}",
            pytrace=False,
        )
    if not _guarantee(item):
        pytest.fail(
            f"{item.nodeid}: give it a one-line docstring stating the case and its guarantee",
            pytrace=False,
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    record = _cases.setdefault(
        item.nodeid,
        CaseRecord(item.nodeid, _category(item) or "", _guarantee(item), _params(item)),
    )
    record.duration_s += report.duration
    phase = _phase_outcome(report)
    if _RANK[phase] > _RANK[record.outcome]:
        record.outcome = phase
        record.detail = _detail(report)


def _phase_outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    if report.failed:
        return "failed" if report.when == "call" else "error"
    return "skipped" if report.skipped else "passed"


def _detail(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    text = str(report.longrepr or "")
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("E ")]
    return (lines[0] if lines else text.strip().splitlines()[-1:] or [""])[0][:300]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write `OUT/cases.json` when any reliability case ran (a partial run too)."""
    if not _cases:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    document = {
        "profile": "full" if FULL else "quick",
        "started": datetime.datetime.fromtimestamp(_started, datetime.UTC).isoformat(
            timespec="seconds"
        ),
        "wall_s": round(time.time() - _started, 2),
        "python": platform.python_version(),
        "categories": list(CATEGORIES),
        "cases": [asdict(record) for record in _cases.values()],
    }
    (OUT / "cases.json").write_text(json.dumps(document, indent=2) + "\n")
