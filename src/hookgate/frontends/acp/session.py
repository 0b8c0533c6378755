"""What one ACP session says to the editor: the turn's updates, notices, consent requests.

`AcpView` turns a turn into session updates, in order: the view's methods are called
synchronously by the turn and queue the updates; `pump` sends them. `AcpChannel` is the
session's notice sink and its `Consent`: it asks the editor with
`session/request_permission` about the tool call the view has just announced.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    McpServerStdio,
    PermissionOption,
    PlanEntry,
    PlanEntryStatus,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallUpdate,
    ToolKind,
)

from hookgate.frontends.terminal import notice_line
from hookgate.messages import ToolCall
from hookgate.runtime.approvals import GuardrailBlock
from hookgate.runtime.consent import Answer, ConsentRequest, SessionConsent
from hookgate.security.policy import MAIN_ARGUMENT
from hookgate.team.board import CANCELLED, Task, TaskStatus
from hookgate.tools import ToolResult
from hookgate.view import NoticeKind

if TYPE_CHECKING:  # imported by an editor that passes MCP servers
    from hookgate.mcp import McpServerConfig

#: The ACP tool kind of each built-in tool, for the editor's icons; others are "other".
TOOL_KINDS: Mapping[str, ToolKind] = {
    "shell": "execute",
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "list_files": "search",
    "grep": "search",
}
#: The answers offered to the editor: each option's id and kind are the `Answer` value.
PERMISSION_OPTIONS = [
    PermissionOption(option_id=Answer.ONCE.value, name="Allow once", kind="allow_once"),
    PermissionOption(
        option_id=Answer.ALWAYS.value,
        name="Always allow this exact call (this session)",
        kind="allow_always",
    ),
    PermissionOption(option_id=Answer.DENY.value, name="Reject", kind="reject_once"),
]
#: What the editor is offered when a guardrail blocked a call: once, or not at all.
GUARDRAIL_OPTIONS = [
    PermissionOption(
        option_id=Answer.ONCE.value, name="Allow once, past the guardrail", kind="allow_once"
    ),
    PermissionOption(option_id=Answer.DENY.value, name="Reject", kind="reject_once"),
]
#: Characters of a main argument shown in a tool call's title.
TITLE_ARGUMENT = 80
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9-]+")

SessionUpdate = Any  # one of the acp.schema session update models


class AcpView:
    """A `TurnView` whose output is the session updates of one prompt."""

    def __init__(self, client: Client, session_id: str) -> None:
        self._client = client
        self._session_id = session_id
        self._queue: asyncio.Queue[SessionUpdate | None] = asyncio.Queue()
        self._gone = False
        self.current_call: ToolCall | None = None
        """The tool call started and not yet finished: the one consent is asked for."""

    def answer_text(self, delta: str) -> None:
        self._queue.put_nowait(update_agent_message_text(delta))

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        notice_line(text, kind=kind)
        self.thought(text)

    def plan(self, tasks: Sequence[Task]) -> None:
        """The team's task list as the editor's plan: each update sends the whole list."""
        self._queue.put_nowait(update_plan([_plan_entry(task) for task in tasks]))

    def thought(self, text: str) -> None:
        self._queue.put_nowait(update_agent_thought_text(f"hookgate: {text}\n"))

    def tool_started(self, call: ToolCall) -> None:
        self.current_call = call
        self._queue.put_nowait(
            start_tool_call(
                call.id,
                tool_title(call.name, call.arguments),
                kind=TOOL_KINDS.get(call.name, "other"),
                status="pending",  # hooks, rules and consent come first
                raw_input=dict(call.arguments),
            )
        )

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.current_call = None
        self._queue.put_nowait(
            update_tool_call(
                call.id,
                status="failed" if result.is_error else "completed",
                content=[tool_content(text_block(result.content))],
                raw_output=result.to_json(),
            )
        )

    def close(self) -> None:
        """No more updates: `pump` returns once it has sent the ones queued."""
        self._queue.put_nowait(None)

    async def pump(self) -> None:
        """Send the queued updates in order until `close`; a closed connection drops them."""
        while (update := await self._queue.get()) is not None:
            try:
                if not self._gone:
                    await self._client.session_update(session_id=self._session_id, update=update)
            except ConnectionError:
                self._gone = True  # the editor left; the turn is being cancelled with it
            finally:
                self._queue.task_done()
        self._queue.task_done()

    async def drain(self) -> None:
        """Wait until every update queued so far has been sent."""
        await self._queue.join()


class AcpChannel:
    """The session's notices and consent, whether or not a turn is running."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self.session_id = ""
        self.view: AcpView | None = None
        self._pending: list[str] = []
        self._request_ids = itertools.count(1)
        self._consent = SessionConsent(self._answer)

    def notify(self, text: str) -> None:
        """A notice: on stderr now, and to the editor in the current (or next) turn."""
        if self.view is not None:
            self.view.notice(text)
            return
        notice_line(text)
        self._pending.append(text)  # no turn to show it in yet: the next one opens with it

    def notice(self, text: str, kind: NoticeKind = NoticeKind.INFO) -> None:
        """`TeamDisplay`: a team's notice, like any other."""
        if self.view is not None:
            self.view.notice(text, kind)
            return
        self.notify(text)

    def tasks_changed(self, tasks: Sequence[Task]) -> None:
        """`TeamDisplay`: the task list goes to the editor as a plan, during a turn."""
        if self.view is not None:
            self.view.plan(tasks)

    def take_pending(self) -> list[str]:
        pending, self._pending = self._pending, []
        return pending

    def waits(self, request: ConsentRequest) -> bool:
        return self._consent.waits(request)

    async def ask(self, request: ConsentRequest) -> bool:
        """`Consent`: ask the editor; anything but "allow" (or no answer) denies."""
        return await self._consent.ask(request)

    async def approve_guardrail(self, block: GuardrailBlock) -> bool:
        """Ask the editor whether a call a guardrail blocked may pass it, this once."""
        request = ConsentRequest(block.tool, block.arguments)
        title = f"guardrail {block.rule!r} blocked: {request.describe()}"
        details = f"{block.reason}\n\n{request.details()}"
        answer = await self._answer(request, title, details, GUARDRAIL_OPTIONS)
        return answer is Answer.ONCE

    async def _answer(
        self,
        request: ConsentRequest,
        title: str | None = None,
        details: str | None = None,
        options: list[PermissionOption] = PERMISSION_OPTIONS,
    ) -> Answer:
        view = self.view
        call = view.current_call if view is not None else None
        if view is not None:
            await view.drain()  # the editor must know the tool call before it is asked
        tool_call = ToolCallUpdate(
            tool_call_id=call.id if call is not None else f"consent-{next(self._request_ids)}",
            title=title or request.describe(),  # some editors show only the title: uncut too
            kind=TOOL_KINDS.get(request.tool, "other"),
            content=[tool_content(text_block(details or request.details()))],  # uncut
            raw_input=dict(request.arguments),
        )
        try:
            response = await self._client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=options
            )
        except Exception as exc:  # a refused or lost request: nobody allowed the call
            self.notify(f"the editor did not answer the permission request ({exc}); denied")
            return Answer.DENY
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            return Answer.DENY
        allowed = {Answer.ONCE.value: Answer.ONCE, Answer.ALWAYS.value: Answer.ALWAYS}
        return allowed.get(outcome.option_id, Answer.DENY)


_PLAN_STATUS: Mapping[TaskStatus, PlanEntryStatus] = {
    TaskStatus.PENDING: "pending",
    TaskStatus.RUNNING: "in_progress",
    TaskStatus.DONE: "completed",
    TaskStatus.FAILED: "completed",
}


def _plan_entry(task: Task) -> PlanEntry:
    failed = ""
    if task.status is TaskStatus.FAILED:
        failed = " (cancelled)" if task.error == CANCELLED else " (failed)"
    content = f"{task.subject} — {task.member or 'unassigned'}{failed}"
    return plan_entry(content, status=_PLAN_STATUS[task.status])


def tool_title(name: str, arguments: Mapping[str, Any]) -> str:
    """`shell: git status`: the tool and the argument permission rules match on."""
    value = arguments.get(MAIN_ARGUMENT.get(name, ""))
    if not isinstance(value, str):
        return name
    if len(value) > TITLE_ARGUMENT:
        value = value[: TITLE_ARGUMENT - 1] + "…"
    return f"{name}: {value}"


def prompt_text(blocks: Iterable[Any]) -> str:
    """The question a prompt asks: its text, with embedded resources inline.

    Everything goes into the one question, so `preGeneration` hooks see all of it.
    """
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[resource: {block.uri}]")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>')
            else:
                parts.append(f"[binary resource {resource.uri} omitted]")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} omitted]")
    return "\n".join(parts)


def editor_mcp_servers(
    servers: Iterable[Any], *, taken: Mapping[str, Any], notify: Callable[[str], None]
) -> dict[str, McpServerConfig]:
    """The editor's MCP servers as our configs; names are made safe for tool names.

    A name the agent file already uses, or a transport we do not speak (SSE), is a notice.
    """
    from hookgate.mcp import HttpServer, StdioServer

    configs: dict[str, McpServerConfig] = {}
    for server in servers:
        name = _UNSAFE_NAME.sub("_", str(getattr(server, "name", ""))).strip("_") or "editor"
        if name in taken or name in configs:
            notify(f"the editor's MCP server {server.name!r} is left out: {name!r} is taken")
        elif isinstance(server, McpServerStdio):
            env = {variable.name: variable.value for variable in server.env}
            configs[name] = StdioServer(name, server.command, tuple(server.args), env)
        elif isinstance(server, HttpMcpServer):
            headers = {header.name: header.value for header in server.headers}
            configs[name] = HttpServer(name, server.url, headers)
        else:
            notify(f"the editor's MCP server {server.name!r} is left out: only stdio and HTTP")
    return configs
