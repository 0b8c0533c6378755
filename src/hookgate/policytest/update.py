"""`hooks test --update`: the gate's current answers written into the cases that have none.

The file is rewritten through ruamel's round trip, so its comments and layout stay;
a case that has an `expect` is never touched.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hookgate.hooks.files.yamlfile import read_text
from hookgate.policytest.evaluate import CaseResult, actual_values


def write_answers(path: Path, results: Sequence[CaseResult]) -> int:
    """Add an `expect` to each case of `path` in `results` that has none; how many."""
    missing = [result for result in results if result.case.expect is None]
    if not missing:
        return 0
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096  # a long reason stays on its line
    document = yaml.load(read_text(path))
    for result in missing:
        document[result.case.position]["expect"] = expectation(result)
    out = io.StringIO()
    yaml.dump(document, out)
    path.write_text(out.getvalue())
    return len(missing)


def expectation(result: CaseResult) -> dict[str, Any]:
    """What a case expects of the gate's answer now: the decision, who gave it, and
    the texts it turned on, as patterns that match them exactly."""
    from ruamel.yaml.comments import CommentedMap

    actual = actual_values(result.verdict)
    expect = CommentedMap(decision=actual["decision"])
    if actual["by"] is not None:
        expect["by"] = actual["by"]
    if actual["decision"] in ("deny", "block", "stop") and actual["reason"]:
        expect["reason"] = re.escape(actual["reason"])
    if result.verdict.rewritten and actual["input"] is not None:
        expect["input"] = actual["input"]
    if result.verdict.rewritten and actual["prompt"] is not None:
        expect["prompt"] = f"^{re.escape(actual['prompt'])}$"
    if result.verdict.replaced and actual["result"] is not None:
        expect["result"] = f"^{re.escape(actual['result'])}$"
    if actual["context"] is not None:
        expect["context"] = re.escape(actual["context"])
    expect.fa.set_flow_style()
    return expect
