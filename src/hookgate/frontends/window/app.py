"""The window's routes: the page, its static files, the session API and its event streams.

    GET  /                          the page
    GET  /static/...                its script and stylesheet (shipped in the package)
    GET  /api/sessions              open and saved sessions
    POST /api/sessions              a new session ({"resume": ID} resumes a saved one)
    GET  /api/sessions/ID/events    the session's events, as server-sent events
    GET  /api/sessions/ID/hooks     its hooks in the order they run
    POST /api/sessions/ID/turns     {"question": ...}: run a turn
    POST /api/sessions/ID/cancel    cancel the running turn
    POST /api/sessions/ID/consent   {"id": ..., "answer": allow_once|allow_always|reject_once}
    POST /api/sessions/ID/close     close the session (its running turn cancelled first)

Every request passes `guard.TokenGuard` first. Errors answer JSON `{"error": ...}`: a
body past `MAX_BODY` bytes is 413, read no further; a shortage of file descriptors is
503 (said once on stderr), never a traceback per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hookgate.frontends.window.guard import App, TokenGuard
from hookgate.frontends.window.hub import Hub, TurnRunning, WindowFull, WindowSession
from hookgate.frontends.window.render import code_css
from hookgate.frontends.window.shortage import (
    DESCRIPTOR_SHORTAGE,
    descriptor_shortage,
    say_descriptor_shortage,
)
from hookgate.hooks import HookgateError
from hookgate.runtime.consent import Answer

#: Seconds between keep-alive comments on an idle event stream: a page that left is
#: noticed, and no proxy or browser gives up on a quiet stream.
KEEPALIVE = 15.0
#: The longest question the page may send, in characters (the page's own limit too).
MAX_QUESTION = 200_000
#: The largest request body, in bytes, read as it arrives: a question of `MAX_QUESTION`
#: characters, each escaped in JSON (`\\uXXXX`, 6 bytes), and room for the rest.
MAX_BODY = 6 * MAX_QUESTION + 4096
#: Headers of every answer: no caching, no framing by another site, no foreign scripts.
SECURITY_HEADERS = {
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'self'; style-src 'self'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
}


def build_app(hub: Hub, *, token: str, port: int) -> App:
    """The ASGI application, guarded; closing it (lifespan end) closes every session."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await hub.aclose()

    routes = [
        Route("/", _page, methods=["GET"]),
        Route("/code.css", _code_css, methods=["GET"]),
        Mount("/static", StaticFiles(packages=[("hookgate.frontends.window", "static")])),
        Route("/api/sessions", _sessions, methods=["GET", "POST"]),
        Route("/api/sessions/{id}/events", _events, methods=["GET"]),
        Route("/api/sessions/{id}/hooks", _hooks, methods=["GET"]),
        Route("/api/sessions/{id}/turns", _turn, methods=["POST"]),
        Route("/api/sessions/{id}/cancel", _cancel, methods=["POST"]),
        Route("/api/sessions/{id}/consent", _consent, methods=["POST"]),
        Route("/api/sessions/{id}/close", _close, methods=["POST"]),
    ]
    handlers = {BodyTooLarge: _too_large, OSError: _descriptor_shortage}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    app.state.hub = hub
    # The headers go on the guard's refusals too.
    return _with_headers(TokenGuard(app, token=token, port=port))


def _with_headers(app: App) -> App:
    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped


async def _page(request: Request) -> Response:
    page = resources.files("hookgate.frontends.window").joinpath("static/index.html")
    return HTMLResponse(page.read_text(encoding="utf-8"))


async def _code_css(request: Request) -> Response:
    return Response(code_css(), media_type="text/css")


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _session(request: Request) -> WindowSession | JSONResponse:
    session = _hub(request).sessions.get(request.path_params["id"])
    if session is None:
        return _error(f"no open session {request.path_params['id']!r}", 404)
    return session


class BodyTooLarge(Exception):
    """A request body passed `MAX_BODY` bytes (said, or as read)."""


async def _body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object (None when it is not one), read up to `MAX_BODY`
    bytes as it arrives: past that, `BodyTooLarge`, and the rest is never read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise BodyTooLarge
    received = bytearray()
    async for chunk in request.stream():
        received += chunk
        if len(received) > MAX_BODY:
            raise BodyTooLarge
    try:
        body = json.loads(received)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


async def _too_large(request: Request, exc: Exception) -> Response:
    return _error(f"the request body passed {MAX_BODY:,} bytes", 413)


async def _descriptor_shortage(request: Request, exc: Exception) -> Response:
    """503 for a shortage of file descriptors, said once on stderr; any other OSError
    is a bug of ours, as before."""
    shortage = descriptor_shortage(exc)
    if shortage is None:
        raise exc
    return _shortage_answer(shortage)


def _shortage_answer(shortage: OSError) -> JSONResponse:
    say_descriptor_shortage(shortage)
    return _error(f"{DESCRIPTOR_SHORTAGE}: close a session, or wait", 503)


async def _sessions(request: Request) -> Response:
    hub = _hub(request)
    if request.method == "GET":
        return JSONResponse(hub.listing())
    body = await _body(request)
    resume = body.get("resume") if body is not None else None
    if body is None or not (resume is None or isinstance(resume, str)):
        return _error('expected {} or {"resume": "SESSION-ID"}', 400)
    try:
        session = await hub.open(resume)
    except WindowFull as exc:
        return _error(str(exc), 503)
    except HookgateError as exc:
        shortage = descriptor_shortage(exc)
        return _error(str(exc), 409) if shortage is None else _shortage_answer(shortage)
    return JSONResponse({"id": session.id}, status_code=201)


async def _events(request: Request) -> Response:
    session = _session(request)
    if isinstance(session, JSONResponse):
        return session
    start = request.headers.get("last-event-id", "")
    first = int(start) + 1 if start.isdigit() else 0

    async def stream() -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        async for event in session.log.follow(first):
            yield f"id: {event['seq']}\ndata: {json.dumps(event)}\n\n"

    closing = _hub(request).closing
    return StreamingResponse(_with_keepalive(stream(), closing), media_type="text/event-stream")


async def _with_keepalive(events: AsyncIterator[str], closing: asyncio.Event) -> AsyncIterator[str]:
    """`events`, with a comment line whenever none came for `KEEPALIVE` seconds, until
    the server is `closing` (a stream left open would hold its shutdown up)."""
    pending = asyncio.ensure_future(anext(events))
    closed = asyncio.ensure_future(closing.wait())
    try:
        while not closing.is_set():
            done, _ = await asyncio.wait(
                {pending, closed}, timeout=KEEPALIVE, return_when=asyncio.FIRST_COMPLETED
            )
            if pending in done:
                try:
                    yield pending.result()
                except StopAsyncIteration:  # the session was closed: its stream ends
                    return
                pending = asyncio.ensure_future(anext(events))
            elif not done:
                yield ": keep-alive\n\n"
    finally:
        pending.cancel()
        closed.cancel()


async def _hooks(request: Request) -> Response:
    session = _session(request)
    if isinstance(session, JSONResponse):
        return session
    return JSONResponse(session.hooks())


async def _turn(request: Request) -> Response:
    session = _session(request)
    if isinstance(session, JSONResponse):
        return session
    body = await _body(request)
    question = body.get("question") if body is not None else None
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION:
        return _error(f'expected {{"question": "..."}} (1 to {MAX_QUESTION} characters)', 400)
    try:
        session.start_turn(question)
    except TurnRunning:
        return _error("a turn is already running in this session", 409)
    return JSONResponse({"started": True}, status_code=202)


async def _cancel(request: Request) -> Response:
    session = _session(request)
    if isinstance(session, JSONResponse):
        return session
    return JSONResponse({"cancelled": await session.cancel_turn()})


async def _consent(request: Request) -> Response:
    session = _session(request)
    if isinstance(session, JSONResponse):
        return session
    body = await _body(request) or {}
    answers = {answer.value: answer for answer in Answer}
    ask_id, answer = body.get("id"), answers.get(str(body.get("answer")))
    if not isinstance(ask_id, str) or answer is None:
        return _error(f'expected {{"id": ..., "answer": one of {sorted(answers)}}}', 400)
    if not session.answer_consent(ask_id, answer):
        return _error(f"no pending consent request {ask_id!r}", 404)
    return JSONResponse({"answered": answer.value})


async def _close(request: Request) -> Response:
    if not await _hub(request).close(request.path_params["id"]):
        return _error(f"no open session {request.path_params['id']!r}", 404)
    return JSONResponse({"closed": request.path_params["id"]})
