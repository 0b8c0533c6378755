"""The tables of docs/hooks.md that come from code: events and defaults.

`scripts/gen_docs.py` writes them between marker comments, and a test fails when
the file and the code disagree, so the reference cannot drift from the engine.
"""

from __future__ import annotations

from hookgate.hooks.config import DEFAULT_SHELL, MAX_TIMEOUT
from hookgate.hooks.events import EVENTS
from hookgate.hooks.formats import FORMATS
from hookgate.hooks.process import EOF_GRACE, KILL_GRACE, OUTPUT_CAP


def events_table() -> str:
    rows = [
        "| event | also spelled | fires | a block… | may change | context | matcher tests | default onError |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for spec in EVENTS.values():
        rows.append(
            "| "
            + " | ".join(
                [
                    f"`{spec.name}`",
                    ", ".join(f"`{a}`" for a in spec.aliases) or "—",
                    spec.fires,
                    spec.blocked_means or "only annotates (notice)",
                    ", ".join(f"`{m}`" for m in spec.mutable) or "—",
                    "yes" if spec.can_add_context else "—",
                    spec.match_on.value if spec.match_on.value != "nothing" else "—",
                    f"`{spec.default_on_error.value}`",
                ]
            )
            + " |"
        )
    return "\n".join(rows)


def defaults_table() -> str:
    native, mecatl, claude = FORMATS["native"], FORMATS["mecatl"], FORMATS["claude"]
    prompt = claude.timeout_for(EVENTS["preGeneration"])
    rows = [
        ("`timeout`", f"{native.default_timeout:g} s (`format: native`), "
                      f"{mecatl.default_timeout:g} s (`format: mecatl`), "
                      f"{claude.default_timeout:g} s (`format: claude`; {prompt:g} s on "
                      f"`UserPromptSubmit`); at most {MAX_TIMEOUT:g} s"),
        ("`onError`", "`fail` on `sessionStart` and `preGeneration` (fail-safe), `warn` elsewhere; "
                      "`warn` everywhere under `format: claude`; `fail` for model hooks, whatever "
                      "the event"),
        ("`format`", "`native`"),
        ("`shell`", f"`{DEFAULT_SHELL}` (for `command`; `args` runs without a shell)"),
        ("`cwd`", "the config file's directory, where the hook's relative paths start (trust "
                  "reads them from there too); `cwd:` relative to it"),
        ("`matcher`", "none: the hook runs for every tool or agent"),
        ("`env`", "hookgate's environment, plus the `HOOKGATE_*` variables"),
        ("`name`", "the command (or an http hook's URL), shortened"),
        ("output kept", f"{OUTPUT_CAP // 1024 // 1024} MiB of stdout and of stderr each; the rest is read and dropped"),
        ("http body", f"{OUTPUT_CAP // 1024 // 1024} MiB at most; a longer 2xx body fails the hook"),
        ("stop", f"SIGTERM to the hook's process group, {KILL_GRACE:g} s grace, then SIGKILL"),
        ("after exit", f"output is awaited {EOF_GRACE:g} s more, then what is left of the group is killed"),
    ]  # fmt: skip
    return "\n".join(
        ["| setting | default |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in rows)]
    )


GENERATED = {"events": events_table, "defaults": defaults_table}
