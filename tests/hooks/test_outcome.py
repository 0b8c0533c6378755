"""`Outcome.halted`: the one reading of "what the event was about does not go ahead",
which every place that withholds a question or refuses a call goes by."""

from __future__ import annotations

import pytest

from hookgate.hooks import Outcome


@pytest.mark.parametrize(
    ("fields", "halted", "reason"),
    [
        ({}, False, None),
        ({"blocked": True, "reason": "secret"}, True, "secret"),
        ({"stop_reason": "done for today"}, True, "done for today"),
        ({"stop_reason": ""}, True, ""),  # a stop without a reason stops all the same
        ({"blocked": True, "reason": "secret", "stop_reason": "later"}, True, "secret"),
        ({"context": ("note",)}, False, None),
    ],
)
def test_a_block_or_a_stop_halts_the_event(
    fields: dict[str, object], halted: bool, reason: str | None
) -> None:
    outcome = Outcome(event="preGeneration", payload={"prompt": "q"}, **fields)  # type: ignore[arg-type]
    assert outcome.halted is halted
    assert outcome.halt_reason == reason
