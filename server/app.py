"""build_server(): the MCP server, its lifespan (memory, model loader, sweep timer) and the profile resource."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

from server import prompts, scope, shape, tools
from server.errors import message
from server.runtime import CURRENT_SCOPE, PROFILE_URI, Runtime, supervised, utcnow
from server.settings import Settings
from tiers.errors import MemtiersError
from tiers.model.embedder import LoadingEmbedder

log = logging.getLogger("memtiers")

INSTRUCTIONS = """\
memtiers is your long-term memory, in tiers. The resource memory://profile is the small hot profile
(name, current project, preferences, hard constraints): read it at the start of a conversation.
Call `remember` when the user tells you something worth keeping (a fact about them, a decision, a
preference; pass `kind` or a profile `key` when you know it), `recall` before answering anything
that may depend on the past (pass `max_tokens` to bound what comes back), `profile` to read or
change the hot profile, `promote` when a recalled memory deserves to be carried every turn, and
`forget` when the user asks you to drop something. Facts about the person go to a user scope every project
reads; the rest stays in this project (`scope` overrides where a memory or profile key goes)."""


class _FirstRequest:
    """Middleware that marks the first answered request, after which the model starts loading."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await call_next(ctx)
        finally:
            if ctx.request_id is not None:
                self.runtime.first_request.set()


class _ScopeByRoots:
    """Middleware that, when the config names no namespace, serves each session in the namespace of its roots.

    Asked once per session, at its first tool call or resource read (never during `initialize`, where a
    server-to-client request would deadlock); a URL that names a namespace (/mcp/<namespace>) is never rescoped.
    """

    METHODS = frozenset({"tools/call", "resources/read"})

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        runtime = self.runtime
        if runtime.settings.namespace_named or ctx.request_id is None or ctx.method not in self.METHODS:
            return await call_next(ctx)
        if _named_by_url(ctx):
            return await call_next(ctx)
        key = _session_key(ctx)
        chosen = runtime.scopes.get(key) if key else None
        if chosen is None:
            chosen = await scope.ask(ctx.session, ctx.protocol_version, runtime.settings.namespace)
            await runtime.run(lambda: runtime.open_scoped(chosen.namespace))
            if key:
                runtime.remember_scope(key, chosen)
            if chosen.root is not None:
                log.info("a session works in %s", chosen.note)
            elif not runtime.told_default:
                runtime.told_default = True  # said once per process, not once per session
                log.warning("%s (set MEMTIERS_NAMESPACE, or a URL /mcp/<namespace>, to name one)", chosen.note)
        token = CURRENT_SCOPE.set(chosen)
        try:
            return await call_next(ctx)
        finally:
            CURRENT_SCOPE.reset(token)


def _session_key(ctx: Any) -> str | None:
    """What identifies the client session: its Mcp-Session-Id over HTTP, the one client of stdio; None for a
    modern-era HTTP request, which belongs to no session."""
    request = getattr(ctx, "request", None)
    if request is None:
        return "stdio"
    sid = request.headers.get("mcp-session-id")
    return f"http:{sid}" if sid else None


def _named_by_url(ctx: Any) -> bool:
    path = getattr(getattr(ctx, "request", None), "url", None)
    return path is not None and path.path.rstrip("/").count("/") >= 2  # /mcp/<namespace>


def build_server(
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    run_timer: bool = True,
    embedder: LoadingEmbedder | None = None,
    runtime: Runtime | None = None,
) -> MCPServer:
    """The memtiers MCP server for `settings`; `clock` is injectable so tests control time.

    `embedder` lets the namespaces of one HTTP process share one loaded model; `runtime`, when given, is the state
    the lifespan opens (the HTTP server's web page works on the same one).
    """
    if runtime is None:
        runtime = Runtime(settings, InMemorySubscriptionBus(), clock, embedder)
    bus = runtime.bus

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[Runtime]:
        await asyncio.to_thread(runtime.open)
        background = [asyncio.create_task(supervised(runtime.load_model_after_first_request(), "model loader"))]
        if run_timer:
            background.append(asyncio.create_task(supervised(runtime.sweep_forever(), "sweep timer")))
        log.info("memtiers serving namespace %r from %s", settings.namespace, settings.folder)
        try:
            yield runtime
        finally:
            for task in background:
                task.cancel()
            with anyio.CancelScope(shield=True):  # a signal cancels the server; cleanup must still run
                await asyncio.gather(*background, return_exceptions=True)
                await asyncio.to_thread(runtime.close)
            log.info("memtiers closed namespace %r", settings.namespace)

    server: MCPServer = MCPServer(
        "memtiers",
        instructions=INSTRUCTIONS,
        version="0.1.0",
        lifespan=lifespan,
        subscriptions=bus,
        middleware=[_FirstRequest(runtime), _ScopeByRoots(runtime)],
    )
    tools.register(server, runtime)
    prompts.register(server)

    @server.resource(
        PROFILE_URI,
        name="profile",
        title="Hot profile",
        description="What the agent carries every turn: one `key: value` line per profile entry, the user scope's "
        "(about the person, shared by every project) under its own header when it has entries.",
        mime_type="text/plain",
    )
    async def hot_profile() -> str:
        try:
            profiles, flags = await runtime.run(lambda: (runtime.scoped.profiles(), runtime.scoped.flags()))
        except MemtiersError as exc:
            raise ResourceError(message(exc)) from exc
        body = shape.profiles_text(profiles, runtime.namespace) or "(the profile is empty)"
        if flags:  # a short marker: the agent reads the details with `profile`
            body += "\n(may be out of date, see `profile`: " + ", ".join(sorted(flags)) + ")"
        return _with_scope(body)

    async def subscribe(ctx: ServerRequestContext[Any], params: SubscribeRequestParams) -> EmptyResult:
        if str(params.uri) == PROFILE_URI:
            runtime.legacy_listeners.add(ctx.session)
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams) -> EmptyResult:
        runtime.legacy_listeners.discard(ctx.session)
        return EmptyResult()

    lowlevel = server._lowlevel_server  # MCPServer does not register resources/subscribe for legacy clients
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    return server


def _with_scope(body: str) -> str:
    """The profile, led by the namespace when a session's roots picked it (clients left in the configured one read
    it unchanged: the log and the web page say why, once)."""
    chosen = CURRENT_SCOPE.get()
    return body if chosen is None or chosen.root is None else f"({chosen.note})\n{body}"


def serve(settings: Settings) -> int:
    """Serve over stdio until stdin closes or SIGTERM/SIGINT arrives; the lifespan's cleanup runs either way.

    The SDK's stdin reader is a thread that a signal cannot interrupt, so after a signal the
    process exits as soon as the lifespan has closed, instead of waiting for stdin.
    """
    server = build_server(settings)
    stopped_by: list[int] = []

    async def run() -> None:
        async with anyio.create_task_group() as group:
            # Windows has no asyncio signal handlers: there Ctrl+C is Python's KeyboardInterrupt, and a
            # host that stops the server closes its stdin or ends the process.
            if sys.platform != "win32":

                async def watch_signals() -> None:
                    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                        async for number in signals:
                            stopped_by.append(number)
                            group.cancel_scope.cancel()
                            return

                group.start_soon(watch_signals)
            await server.run_stdio_async()
            group.cancel_scope.cancel()

    anyio.run(run)
    if stopped_by:
        log.info("memtiers stopped by signal %d", stopped_by[0])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
