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
