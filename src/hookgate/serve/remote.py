"""`hookgate hook AGENT --remote URL`: the agent's event decided by `hookgate serve`.

For the agents that only run commands (Codex CLI, Gemini CLI; Claude Code too): the
event is POSTed as the agent sent it to `URL/v1/hook/AGENT` with the bearer token of
`HOOKGATE_SERVE_TOKEN`, and the service's answer, already in the agent's protocol, is
printed. Where the service gives no decision (down, slow, refusing the token) the event
is refused, with the reason: the service is the policy, and no policy must not mean
"allowed".
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping

from hookgate.agents.hookrun import read_event
from hookgate.agents.protocol import AgentProtocol, Reply
from hookgate.serve.tokens import TOKEN_VARIABLE

#: Seconds to wait for the service: its own limit (630 s) and then some.
ANSWER_TIMEOUT = 660.0
#: Bytes of an answer read: an agent's reply is small.
MAX_ANSWER = 4 * 1024 * 1024


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is no decision: followed, it would take the bearer token to another
    place and read that place's `{}` as the service's "allowed"."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # urllib then raises `HTTPError` for the 3xx itself


#: urllib's opener (the environment's proxies kept: a fleet may reach its service
#: through one), following no redirect.
_OPENER = urllib.request.build_opener(_NoRedirect)


def remote_hook(protocol: AgentProtocol, text: str, url: str, environ: Mapping[str, str]) -> Reply:
    """The service's reply to the agent event `text`, or a refusal where it gave none."""
    event = read_event(protocol, text, environ)  # as locally: unreadable, or not answered
    if isinstance(event, Reply):
        return event
    target = f"{url.rstrip('/')}/v1/hook/{protocol.name}"
    request = urllib.request.Request(
        target, data=text.encode(), method="POST",
        headers={"content-type": "application/json",
                 "authorization": f"Bearer {environ.get(TOKEN_VARIABLE, '')}"},
    )  # fmt: skip
    try:
        with _OPENER.open(request, timeout=ANSWER_TIMEOUT) as response:
            if response.status != 200:  # a 204 or another 2xx is no answer of the service's
                raise urllib.error.HTTPError(target, response.status, "", response.headers, None)
            body = response.read(MAX_ANSWER + 1)
        if len(body) > MAX_ANSWER:
            raise ValueError(f"the answer passed {MAX_ANSWER:,} bytes")
        answer = body.decode()
        if answer.strip():
            json.loads(answer)  # the agent must get JSON it reads, or a refusal
    except urllib.error.HTTPError as exc:
        return protocol.refuse(
            event, f"hookgate serve at {target} gave no decision: HTTP {exc.code}"
        )
    except (OSError, ValueError) as exc:
        return protocol.refuse(event, f"hookgate serve at {target} gave no decision: {exc}")
    return Reply(stdout="" if answer.strip() in ("", "{}") else answer)
