"""What the lifespan owns: the memory, the clock, the model loader, the sweep timer and the profile listeners."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from threading import Lock
from typing import Any, Literal, TypeVar

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ResourceUpdated

from server import release_free_memory
from server.scope import Scope
from server.settings import Settings
from tiers.errors import MemtiersError
from tiers.memory import Memory
from tiers.model.catalog import open_embedder
from tiers.model.embedder import LoadingEmbedder
from tiers.namespace.outcomes import SweepReport
from tiers.privacy.folders import open_private
from tiers.scopes.scoped import Scoped
from tiers.storage.locking import serving_lock

log = logging.getLogger("memtiers")
PROFILE_URI = "memory://profile"
T = TypeVar("T")
# The scope of the request being served, set by the middleware that picks a session's namespace from its roots
# (server/app.py); unset, the runtime's own namespace. Worker threads see it: anyio copies the context to them.
SESSIONS_KEPT = 4_096
CURRENT_SCOPE: ContextVar[Scope | None] = ContextVar("memtiers_scope", default=None)

# Seconds of blocking work after which what it freed is given back (release_free_memory): far longer
# than a recall, far shorter than a batch of writes.
LONG_WORK_S = 0.5


def utcnow() -> datetime:
    return datetime.now(UTC)


class UserScope:
    """The user scope's memory: opened once per process, on first use, and shared by every namespace it serves."""

    def __init__(self, settings: Settings) -> None:
        namespace = settings.user_namespace
        assert namespace is not None
        self.settings = settings.for_namespace(namespace)
        self._memory: Memory | None = None
        self._opening = Lock()
        self._serving = contextlib.ExitStack()
        self._swept: datetime | None = None

    @property
    def namespace(self) -> str:
        return self.settings.namespace

    def memory(self, embedder: LoadingEmbedder) -> Memory:
        with self._opening:
            if self._memory is None:
                self._serving.enter_context(serving_lock(self.settings.folder))
                self._memory = Memory(self.settings.folder, embedder, self.settings.memory)
            return self._memory

    @property
    def opened(self) -> Memory | None:
        """Its memory if open, without opening it."""
        return self._memory

    def sweep(self, now: datetime) -> None:
        """One sweep, unless another namespace's timer swept it within half an interval (each has its own timer)."""
        memory = self._memory
        if memory is None or (self._swept is not None and now - self._swept < self._half_interval()):
            return
        self._swept = now
        memory.sweep(now)

    def _half_interval(self) -> timedelta:
        return timedelta(seconds=self.settings.sweep_interval / 2)

    def close(self) -> None:
        with self._opening:
            if self._memory is not None:
                self._memory.close()
                self._memory = None
            self._serving.close()


class Runtime:
    """State of one running server: opened by the lifespan, closed when it ends."""

    def __init__(
        self,
        settings: Settings,
        bus: InMemorySubscriptionBus,
        clock: Callable[[], datetime] = utcnow,
        embedder: LoadingEmbedder | None = None,
        user: UserScope | Literal["own"] | None = "own",
    ):
        """`embedder` is shared by the runtimes of one HTTP process; without it, `open` makes this runtime's own.
        `user`: the user scope this runtime reads beside its namespaces, shared with the other runtimes of the process
        (None: none); "own": its own, when the settings turn it on."""
        self.settings = settings
        if user == "own":
            user = UserScope(settings) if settings.user_namespace else None
            self._owns_user = user is not None
        else:
            self._owns_user = False
        self.user: UserScope | None = user
        self.bus = bus
        self.clock = clock
        self._memory: Memory | None = None
        self._scoped: dict[str, Memory] = {}  # namespaces picked from clients' roots, opened on first use
        # The scope of each client session (its Mcp-Session-Id over HTTP; the one stdio client), newest last.
        self.scopes: OrderedDict[str, Scope] = OrderedDict()
        self.told_default = False  # whether the log has said that clients without roots work in the default one
        self.embedder: LoadingEmbedder | None = embedder
        self.first_request = asyncio.Event()
        self.legacy_listeners: set[Any] = set()
        self._profile_stamp: dict[str, tuple[tuple[int, int] | None, ...]] = {}
        self.last_sweep: SweepReport | None = None
        self._serving = contextlib.ExitStack()

    @property
    def memory(self) -> Memory:
        """The memory of the namespace this request works in (CURRENT_SCOPE), else of this runtime's own."""
        if self._memory is None:
            raise RuntimeError("the server is not running")
        scope = CURRENT_SCOPE.get()
        if scope is None or scope.namespace == self.settings.namespace:
            return self._memory
        return self._scoped[scope.namespace]

    @property
    def namespace(self) -> str:
        """The namespace this request works in (CURRENT_SCOPE), else this runtime's own."""
        scope = CURRENT_SCOPE.get()
        return scope.namespace if scope is not None else self.settings.namespace

    @property
    def scoped(self) -> Scoped:
        """The memory of the namespace this request works in, with the user scope's beside it (when there is one)."""
        memory = self.memory
        beside = self._user_memory
        return Scoped(memory, beside if beside is not memory else None)

    @property
    def _user_memory(self) -> Memory | None:
        return self.user.memory(self.embedder) if self.user is not None and self.embedder is not None else None

    def remember_scope(self, session: str, scope: Scope) -> None:
        """Keep the scope of a session; the oldest sessions' are dropped past SESSIONS_KEPT (they ask again)."""
        self.scopes[session] = scope
        while len(self.scopes) > SESSIONS_KEPT:
            self.scopes.popitem(last=False)

    def memories(self) -> list[Memory]:
        """Every open memory: this runtime's namespace and those picked from clients' roots."""
        user = self.user.opened if self.user is not None else None
        return [m for m in (self._memory, *self._scoped.values()) if m is not None and m is not user]

    def open_scoped(self, namespace: str) -> None:
        """Open the memory of a namespace picked from a client's roots, beside this runtime's own (once)."""
        if namespace == self.settings.namespace or namespace in self._scoped:
            return
        settings = self.settings.for_namespace(namespace)
        assert self.embedder is not None
        self._serving.enter_context(serving_lock(settings.folder))
        self._scoped[namespace] = Memory(settings.folder, self.embedder, settings.memory)

    def open(self) -> None:
        open_private(self.settings.home)  # the whole data folder, the model cache included
        if self.embedder is None:
            self.embedder = open_embedder(self.settings.embed_model, cache_dir=self.settings.model_cache)
        if self.user is not None and self.settings.namespace == self.user.namespace:
            self._memory = self.user.memory(self.embedder)  # serving the user scope itself: one memory of it
        else:
            self._memory = Memory(self.settings.folder, self.embedder, self.settings.memory)
            # Held while the server runs: `memtiers reembed` refuses to swap the model under it.
            self._serving.enter_context(serving_lock(self.settings.folder))
        if self.user is not None:
            self.user.memory(self.embedder)
        self._profile_stamp[str(self._memory.hot.path)] = self._stamp()

    def close(self) -> None:
        for memory in self.memories():
            memory.close()
        if self.user is not None and self._owns_user:
            self.user.close()
        self._memory = None
        self._scoped.clear()
        self._serving.close()

    async def run(self, work: Callable[[], T]) -> T:
        """Run blocking domain work (LanceDB, embedding) off the event loop.

        After long work (a batch of writes, an import) the memory it freed is handed back to the system:
        glibc keeps freed heap otherwise, and a server that imported a store would hold far more than the
        same server restarted. Short calls (a recall) skip it, so they pay nothing for it.
        """
        started = time.monotonic()
        try:
            return await anyio.to_thread.run_sync(work)
        finally:
            if time.monotonic() - started >= LONG_WORK_S:
                await anyio.to_thread.run_sync(release_free_memory)

    async def load_model_after_first_request(self) -> None:
        """Hosts time out slow handshakes: the model, and the store's indexes beside it, load once the first
        request is answered, so the first recall finds them ready."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.first_request.wait(), timeout=5)
        await asyncio.gather(self._load_model(), self._open_store())
        release_free_memory()  # the full reads' buffers: ~100 MB a server would otherwise keep

    async def _load_model(self) -> None:
        try:
            assert self.embedder is not None
            await self.run(self.embedder.load)
            log.info("embedding model %s loaded", self.settings.embed_model)
        except Exception:
            log.exception("loading the embedding model failed; tools that need it will report why")

    async def _open_store(self) -> None:
        try:
            await self.run(self.memory.warm_up)
            user = self._user_memory
            if user is not None and user is not self.memory:  # the first recall reads both scopes
                await self.run(user.warm_up)
            log.info(
                "%s holds memories embedded with %s; `memtiers reembed` moves them to the model MEMTIERS_EMBED_MODEL "
                "names",
                self.memory.folder,
                self.memory.embedder.name,
            )
        except MemtiersError as exc:
            log.warning("opening the store ahead of the first call failed; calls will report why: %s", exc)
        except Exception:
            log.exception("opening the store ahead of the first call failed")

    async def sweep_forever(self) -> None:
        """The demotion timer: one sweep every `sweep_interval` seconds; a failed pass is logged, not fatal."""
        while True:
            await asyncio.sleep(self.settings.sweep_interval)
            await self.sweep_once()

    async def sweep_once(self) -> SweepReport | None:
        """One sweep of every open memory; the report of this runtime's own namespace."""
        for scoped in list(self._scoped.values()):
            try:
                await self.run(lambda m=scoped: m.sweep(self.clock()))  # type: ignore[misc]
            except Exception:
                log.exception("sweep of %s failed", scoped.folder)
        if self.user is not None:
            user = self.user
            try:
                await self.run(lambda: user.sweep(self.clock()))
            except Exception:
                log.exception("sweep of the user scope failed")
        try:
            report = await self.run(lambda: self.memory.sweep(self.clock()))
        except MemtiersError as exc:
            log.warning("sweep failed: %s", exc)
            return None
        except Exception:
            log.exception("sweep failed")
            return None
        self.last_sweep = report
        if report.moves:
            log.info("sweep moved %d records", len(report.moves))
            release_free_memory()  # what the sweep's reads of the warm tier freed
        await self.notify_if_profile_changed()
        return report

    def _stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """When the profiles the model reads here (this namespace's, the user's) last changed."""
        return tuple(_file_stamp(memory.hot.path) for _, memory in self.scoped.scopes())

    async def notify_if_profile_changed(self) -> None:
        """Tell subscribed clients, of both protocol eras, that the profile changed."""
        stamp, path = self._stamp(), str(self.memory.hot.path)
        if stamp == self._profile_stamp.get(path):
            return
        self._profile_stamp[path] = stamp
        await self.bus.publish(ResourceUpdated(uri=PROFILE_URI))
        for session in list(self.legacy_listeners):
            try:
                await session.send_resource_updated(PROFILE_URI)
            except Exception:  # a closed session: forget it
                self.legacy_listeners.discard(session)


def _file_stamp(path: Any) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


async def supervised(coro: Awaitable[None], name: str) -> None:
    try:
        await coro
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("%s stopped", name)
