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

from server import prompts, tools
from server.errors import message
from server.runtime import PROFILE_URI, Runtime, supervised, utcnow
from server.settings import Settings
from tiers.embedder import FastEmbedder
from tiers.errors import MemtiersError
from tiers.hot import render

log = logging.getLogger("memtiers")

INSTRUCTIONS = """\
memtiers is your long-term memory, in tiers. The resource memory://profile is the small hot profile
(name, current project, preferences, hard constraints): read it at the start of a conversation.
Call `remember` when the user tells you something worth keeping (a fact about them, a decision, a
preference; pass `kind` or a profile `key` when you know it), `recall` before answering anything
that may depend on the past (pass `max_tokens` to bound what comes back), `profile` to read or
change the hot profile, `promote` when a recalled memory deserves to be carried every turn, and
`forget` when the user asks you to drop something."""


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


def build_server(
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    run_timer: bool = True,
    embedder: FastEmbedder | None = None,
) -> MCPServer:
    """The memtiers MCP server for `settings`; `clock` is injectable so tests control time.

    `embedder` lets the namespaces of one HTTP process share one loaded model.
    """
    bus = InMemorySubscriptionBus()
    runtime = Runtime(settings, bus, clock, embedder)

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
        middleware=[_FirstRequest(runtime)],
    )
    tools.register(server, runtime)
    prompts.register(server)

    @server.resource(
        PROFILE_URI,
        name="profile",
        title="Hot profile",
        description="What the agent carries every turn: one `key: value` line per profile entry.",
        mime_type="text/plain",
    )
    async def hot_profile() -> str:
        try:
            entries = await runtime.run(runtime.memory.profile)
        except MemtiersError as exc:
            raise ResourceError(message(exc)) from exc
        return render(entries) or "(the profile is empty)"

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
