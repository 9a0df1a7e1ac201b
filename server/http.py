"""`memtiers serve --http`: MCP over streamable HTTP at /mcp and /mcp/<namespace>, behind bearer tokens,
and the web page everywhere else (server/web/).

An MCP request is checked in this order, and refused before it reaches any namespace, lifespan or model:
its bearer token (401), its path (404), whether its token opens that namespace (401). Then the SDK's
transport checks Host (421) and Origin (403) against DNS rebinding, and serves it. The page checks the same
Host and Origin first, then its session cookie (server/web/auth.py).
"""

from __future__ import annotations

import ipaddress
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import uvicorn
from anyio.abc import TaskGroup
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from server.app import build_server
from server.runtime import Runtime, UserScope
from server.settings import ConfigError, Settings, check_namespace
from server.token import Grants, configured_tokens
from server.web import build_web_app
from tiers.model.catalog import open_embedder
from tiers.model.embedder import LoadingEmbedder

log = logging.getLogger("memtiers")
PATH = "/mcp"
MAX_NAMESPACES = 64  # each open namespace holds its index in memory: a token cannot open them without bound
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host and Origin values a request may carry: loopback names, the bound address, and `allowed_hosts`."""
    names = list(_LOOPBACK_NAMES)
    bound = f"[{host}]" if ":" in host and not host.startswith("[") else host
    for name in (bound, *allowed_hosts):
        if name not in names and name not in ("0.0.0.0", "[::]"):
            names.append(name)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for name in names for form in (name, f"{name}:*")],
        allowed_origins=[
            form
            for name in names
            for scheme in ("http", "https")
            for form in (f"{scheme}://{name}", f"{scheme}://{name}:*")
        ],
    )


class Namespaces:
    """The namespaces one process serves: each opened on its first authorised request, then kept; one shared model."""

    def __init__(
        self,
        settings: Settings,
        security: TransportSecuritySettings,
        embedder: LoadingEmbedder,
        grants: Grants | None = None,
    ) -> None:
        """`grants`: the tokens; a namespace reads the user scope only when every token opening it opens that too."""
        self.settings = settings
        self.security = security
        self.embedder = embedder
        self.grants = grants
        self.user = UserScope(settings) if settings.user_namespace else None
        self._open: dict[str, StreamableHTTPSessionManager] = {}
        self._runtimes: dict[str, Runtime] = {}
        self._opening = anyio.Lock()
        self._group: TaskGroup | None = None

    @property
    def names(self) -> list[str]:
        return sorted(self._open)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Open namespaces live in this block; leaving it runs every namespace's lifespan cleanup."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._load_model)
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()
        self._open.clear()
        self._runtimes.clear()
        if self.user is not None:
            await anyio.to_thread.run_sync(self.user.close)

    async def manager(self, name: str) -> StreamableHTTPSessionManager:
        """The session manager of namespace `name`, opening it (its lifespan: memory, timer) the first time."""
        found = self._open.get(name)
        if found is not None:
            return found
        async with self._opening:
            if name not in self._open:
                if self._group is None:
                    raise RuntimeError("the HTTP server is not running")
                if len(self._open) >= MAX_NAMESPACES:
                    raise ConfigError(f"this server already serves {MAX_NAMESPACES} namespaces")
                self._open[name] = await self._group.start(self._serve, name)
                log.info("namespace %r opened over HTTP", name)
        return self._open[name]

    def scope_note(self, name: str) -> str | None:
        """For the web page: how clients came to work in namespace `name`, when their roots picked it."""
        if self.user is not None and name == self.user.namespace:
            return "The user scope: facts about the person, read by every namespace beside its own."
        for runtime in self._runtimes.values():
            for chosen in runtime.scopes.values():
                if chosen.namespace == name and chosen.root:
                    return (
                        f"Picked from the workspace root {chosen.root} a client reported (its host names no namespace)."
                    )
        if name == self.settings.namespace and not self.settings.namespace_named:
            return "Clients whose host names no namespace and that report no workspace root work here."
        return None

    def user_for(self, name: str) -> UserScope | None:
        """The user scope namespace `name` reads beside its own, unless a token that opens it does not open that."""
        user = self.user
        if user is None or (self.grants is not None and not self.grants.share(name, user.namespace)):
            return None
        return user

    async def runtime(self, name: str) -> Runtime:
        """The running state of namespace `name` (its memory, clock, listeners), opening it the first time."""
        await self.manager(name)
        return self._runtimes[name]

    async def _serve(self, name: str, *, task_status: Any) -> None:
        # Plain /mcp serves the configured namespace, which clients' roots may rescope when the config names none.
        settings = self.settings if name == self.settings.namespace else self.settings.for_namespace(name)
        runtime = Runtime(settings, InMemorySubscriptionBus(), embedder=self.embedder, user=self.user_for(name))
        self._runtimes[name] = runtime
        server = build_server(settings, embedder=self.embedder, runtime=runtime)
        server.streamable_http_app(streamable_http_path=PATH, transport_security=self.security)
        manager = server.session_manager
        async with manager.run():  # enters the namespace's lifespan, exits it when cancelled
            task_status.started(manager)
            await anyio.sleep_forever()

    async def _load_model(self) -> None:
        try:
            await anyio.to_thread.run_sync(self.embedder.load)
            log.info("embedding model %s loaded, shared by every namespace", self.embedder.name)
        except Exception:
            log.exception("loading the embedding model failed; tools that need it will report why")


class MemtiersHTTP:
    """The ASGI app: lifespan, bearer token check, then routing of `/mcp[/<namespace>]` to that namespace."""

    def __init__(self, namespaces: Namespaces, grants: Grants) -> None:
        self.namespaces = namespaces
        self.grants = grants
        self.default = namespaces.settings.namespace
        self.web = build_web_app(namespaces, grants)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        # anything else (websocket) is not served: returning unanswered makes the server refuse it

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path != PATH and not path.startswith(PATH + "/"):
            return await self.web(scope, receive, send)
        grant = self.grants.check(_header(scope, b"authorization"))
        if grant is None:
            return await _unauthorized(scope, receive, send)
        namespace = self._namespace_of(scope["path"])
        if namespace is None:
            return await PlainTextResponse("not found: MCP is served at /mcp and /mcp/<namespace>", 404)(
                scope, receive, send
            )
        if not grant.opens(namespace):
            return await _unauthorized(scope, receive, send)
        try:
            manager = await self.namespaces.manager(namespace)
        except Exception as exc:
            log.exception("namespace %r could not be opened", namespace)
            reason = str(exc) if isinstance(exc, ConfigError) else "see the server's log"
            return await PlainTextResponse(f"namespace {namespace!r} is unavailable: {reason}", 503)(
                scope, receive, send
            )
        await manager.handle_request(scope, receive, send)

    def _namespace_of(self, path: str) -> str | None:
        if path in (PATH, PATH + "/"):
            return self.default
        if not path.startswith(PATH + "/"):
            return None
        name = path[len(PATH) + 1 :].removesuffix("/")
        try:
            return check_namespace(name)
        except ConfigError:
            return None

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.namespaces.running():
                await self.namespaces.manager(self.default)  # the default namespace is ready before the first client
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except Exception as exc:
            log.exception("the HTTP server's lifespan failed")
            kind = "shutdown" if started else "startup"
            await send({"type": f"lifespan.{kind}.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope["headers"] if key == name), None)


async def _unauthorized(scope: Scope, receive: Receive, send: Send) -> None:
    response = PlainTextResponse(
        "unauthorized: send `Authorization: Bearer <token>` with a token that opens this namespace "
        "(`memtiers token` shows the generated one)",
        401,
        headers={"WWW-Authenticate": 'Bearer realm="memtiers"'},
    )
    await response(scope, receive, send)


def build_http_app(
    settings: Settings,
    grants: Grants,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    embedder: LoadingEmbedder | None = None,
) -> MemtiersHTTP:
    """The HTTP app for `settings`; `embedder`, when given, is the model every namespace shares."""
    model = embedder or open_embedder(settings.embed_model, cache_dir=settings.model_cache)
    return MemtiersHTTP(Namespaces(settings, transport_security(host, allowed_hosts), model, grants), grants)


class _Server(uvicorn.Server):
    """uvicorn, except that a signal ends `serve` with a clean exit instead of being raised again afterwards."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {number: signal.signal(number, self.handle_exit) for number in handled}
        try:
            yield
        finally:
            for number, handler in original.items():
                signal.signal(number, handler)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:  # the real port, also when asked for port 0
            address = self.servers[0].sockets[0].getsockname()
            where = f"[{address[0]}]" if ":" in address[0] else address[0]
            print(f"memtiers serving MCP at http://{where}:{address[1]}{PATH}", file=sys.stderr, flush=True)
            print(f"memtiers web page at http://{where}:{address[1]}/ (log in with `memtiers token`)", file=sys.stderr)


def uvicorn_config(app: MemtiersHTTP, settings: Settings, **where: Any) -> uvicorn.Config:
    """uvicorn settings: our logging (stderr), no access log (paths only, but noise), bounded shutdown."""
    return uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        log_level=settings.log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=3,  # open event streams would otherwise hold the shutdown forever
        **where,
    )


def serve_http(
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 8765,
    expose: bool = False,
    allowed_hosts: Sequence[str] = (),
) -> int:
    """Serve over HTTP until SIGTERM or SIGINT; every open namespace's lifespan cleanup runs before the exit."""
    if not is_loopback(host) and not expose:
        print(
            f"memtiers: {host} is not a loopback address; add --expose to serve this machine's memory to the network",
            file=sys.stderr,
        )
        return 2
    grants = Grants(configured_tokens(settings))
    app = build_http_app(settings, grants, host, allowed_hosts)
    security = app.namespaces.security
    bound = f"[{host}]" if ":" in host else host
    if not is_loopback(host):
        print(
            f"memtiers: EXPOSED: every namespace under {settings.home / 'namespaces'} is served at "
            f"http://{bound}:{port}{PATH}/<namespace> to whoever can reach this address and holds a token "
            f"(plain HTTP: put TLS in front of it). Accepted Host headers: {', '.join(security.allowed_hosts)}",
            file=sys.stderr,
        )
    server = _Server(uvicorn_config(app, settings, host=host, port=port))
    server.run()
    if server._captured_signals:
        log.info("memtiers stopped by signal %d", server._captured_signals[0])
    return 0 if server.started or server._captured_signals else 1
