"""The trust summary names where an http hook sends the events, and which variables."""

from __future__ import annotations

from runtime.project import Project


def test_the_summary_shows_an_http_hooks_url_and_the_variables_it_sends(project: Project) -> None:
    hook = {
        "http": {
            "url": "https://policy.example/hook",
            "headers": {"Authorization": "Bearer ${POLICY_TOKEN}", "X-Team": "$TEAM"},
            "env_allowlist": ["POLICY_TOKEN", "TEAM"],
        }
    }
    project.write_agent("scripted:none.yaml", hooks={"preToolCall": [hook]})

    done = project.hookgate("trust", trusted=False)

    assert done.returncode == 1
    assert (
        "preToolCall: POSTs each event to https://policy.example/hook, "
        "its headers sending the value of $POLICY_TOKEN, $TEAM"
    ) in done.stderr


def test_the_summary_shows_where_guardrails_send_events_and_which_key(project: Project) -> None:
    (project.dir / "verdicts.yaml").write_text("[]")
    checker = {"name": "llama3.2:1b", "base_url": "https://checker.example/v1",
               "api_key_env": "CHECKER_KEY"}  # fmt: skip
    hook = {"model": "scripted:verdicts.yaml", "instructions": "x"}
    project.write_agent("scripted:none.yaml", guardrails={"model": checker},
                        hooks={"preToolCall": [hook]})  # fmt: skip

    done = project.hookgate("trust", trusted=False)

    assert done.returncode == 1
    assert (
        "preToolCall [matching '^shell$']: sends each event to the checker model llama3.2:1b at "
        "https://checker.example/v1; the value of $CHECKER_KEY is sent to "
        "https://checker.example/v1 as the API key"
    ) in done.stderr
    assert "preToolCall: asks a scripted checker (offline) playing" in done.stderr
    assert "checker script: " in done.stderr  # the script is part of what is trusted
