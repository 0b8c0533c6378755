"""JUnit XML of a `hooks test` run, as CI systems read it: a suite per file, a case per case."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from hookgate.policytest.evaluate import CaseResult, diff_lines


def write_junit(path: Path, files: Sequence[tuple[Path, Sequence[CaseResult]]]) -> None:
    """Write one `<testsuite>` per test file into `path`; a failed case holds its diff."""
    root = ET.Element("testsuites", name="hookgate hooks test")
    total = failures = 0
    for file, results in files:
        failed = sum(1 for result in results if not result.passed)
        suite = ET.SubElement(
            root, "testsuite", name=str(file), tests=str(len(results)), failures=str(failed)
        )
        total, failures = total + len(results), failures + failed
        for result in results:
            case = ET.SubElement(
                suite, "testcase", name=result.case.name, classname=str(file),
                file=str(file), line=str(result.case.where.line or 0),
            )  # fmt: skip
            if not result.passed:
                failure = ET.SubElement(
                    case, "failure", message=f"{', '.join(result.failed)} differ"
                )
                failure.text = "\n".join(diff_lines(result))
    root.set("tests", str(total))
    root.set("failures", str(failures))
    ET.indent(root)
    path.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")
