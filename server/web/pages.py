"""The web page's routes: one page per namespace (profile, search, browse, moves, import and export).

Every read runs off the event loop on the namespace's running state; every change calls the same `Memory`
method as the MCP tool that makes it, then tells the profile's subscribers, as the tools do.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from server import shape
from server.errors import message
from server.runtime import Runtime
from server.settings import ConfigError, check_namespace
from server.web.auth import COOKIE, Gate, Session, csrf_ok, set_cookie
from server.web.chart import COLOURS, tiers_svg
from tiers import browse
from tiers.errors import InvalidInput, MemtiersError
from tiers.index.store import check_id
from tiers.memory import Memory
from tiers.recall.rank import Packed
from tiers.records import Tier, tokens_of
from tiers.scopes import transfer as scoped_transfer
from tiers.scopes.routing import Scope as MemoryScope
from tiers.text.timeparse import iso, parse_time
from tiers.transfer.jsonl import FORMATS, export

if TYPE_CHECKING:
    from server.http import Namespaces

log = logging.getLogger("memtiers")
T = TypeVar("T")
TEMPLATES = Path(__file__).with_name("templates")
MAX_UPLOAD = 512 * 1024 * 1024  # an import file's bytes
# What each rule of the move log means, for a person reading why a memory moved.
REASONS = {
    "forget_after": "its forget_after time passed",
    "hot_idle": "profile entry unused for the idle period",
    "project_away": "its project was not current for a while",
    "project_current": "its project became current again",
    "promote": "promoted (by the agent or on this page)",
    "demote": "demoted by hand on this page",
    "undo": "an earlier move undone",
    "forget": "forgotten: deleted from every tier",
    "profile": "profile set or changed",
    "unset": "profile entry removed (kept in warm as history)",
    "superseded": "profile value replaced (the old one kept in warm)",
    "supersedes": "replaced by a later memory the agent named (kept as history)",
    "flagged": "a newer memory may update this profile entry",
    "dismissed": "the flag on this profile entry was dismissed",
    "remember": "remembered with a profile key",
    "repeated": "said again, so it came back from cold",
}


def reason(rule: str, dst: str = "") -> str:
    if rule.startswith("remember:"):
        return f"remembered ({rule.split(':', 1)[1]})"
    if rule == "heat":
        return "used again: its heat rose above the line" if dst == "warm" else "not used lately: its heat fell"
    return REASONS.get(rule, rule)


class Pages:
    """The routes, over the namespaces one HTTP process serves."""

    def __init__(self, namespaces: Namespaces, gate: Gate) -> None:
        self.namespaces = namespaces
        self.gate = gate
        self.env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))
        self.env.filters["when"] = _when
        self.env.globals["reason"] = reason
        self.env.globals["colours"] = COLOURS
        self.routes = self.app()

    def app(self) -> Starlette:
        get, post = ["GET"], ["POST"]
        return Starlette(
            routes=[
                Route("/", self.home, methods=get),
                Route("/login", self.login_form, methods=get),
                Route("/login", self.login, methods=post),
                Route("/logout", self.logout, methods=post),
                Route("/ns/{ns}", self.profile, methods=get),
                Route("/ns/{ns}/search", self.search, methods=get),
                Route("/ns/{ns}/browse", self.browse, methods=get),
                Route("/ns/{ns}/log", self.log, methods=get),
                Route("/ns/{ns}/transfer", self.transfer, methods=get),
                Route("/ns/{ns}/export", self.export, methods=get),
                Route("/ns/{ns}/profile", self.change_profile, methods=post),
                Route("/ns/{ns}/record", self.change_record, methods=post),
                Route("/ns/{ns}/import", self.import_, methods=post),
            ]
        )

    # rendering and the checks every route makes

    def render(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(self.env.get_template(name).render(**values), status, headers=_SECURITY_HEADERS)

    def namespace_names(self, session: Session) -> list[str]:
        folder = self.namespaces.settings.home / "namespaces"
        found = {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()
        found |= {self.namespaces.settings.namespace, *self.namespaces.names}
        return sorted(n for n in found if _valid(n) and session.grant.opens(n))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Host and Origin first (421, 403), then a session (401 and the login form), then that a change names
        its Origin (403), then the routes (each change checks its CSRF token)."""
        request = Request(scope, receive)
        refused = await self.gate.refused(request)
        if refused is not None:
            return await refused(scope, receive, send)
        if scope["path"] != "/login":
            session = self.gate.session(request)
            if session is None:
                response = self._unauthorized(request)
                return await response(scope, receive, send)
            scope.setdefault("state", {})["session"] = session
        refused = self.gate.originless(request)
        if refused is not None:
            return await refused(scope, receive, send)
        await self.routes(scope, receive, send)

    def _unauthorized(self, request: Request) -> Response:
        challenge = {"WWW-Authenticate": 'Bearer realm="memtiers"'}
        if request.method == "GET":
            page = self.render("login.html", status=401, next=_next(request.url.path), wrong=False)
            page.headers.update(challenge)
            return page
        return PlainTextResponse(
            "unauthorized: log in at / first, or send `Authorization: Bearer <token>`", 401, challenge
        )

    async def _open(self, request: Request) -> tuple[Session, str, Runtime] | Response:
        """The session, namespace and running state of a namespace route, or the response refusing it."""
        session: Session = request.state.session
        ns = request.path_params["ns"]
        if not _valid(ns) or ns not in self.namespace_names(session):
            return PlainTextResponse(f"no namespace {ns!r} here (or your token does not open it)", 404)
        return session, ns, await self.namespaces.runtime(ns)

    async def _page(self, request: Request, view: str, work: Callable[[Runtime], dict[str, Any]]) -> Response:
        opened = await self._open(request)
        if isinstance(opened, Response):
            return opened
        session, ns, runtime = opened
        said, session.said = session.said, []
        try:
            values = await runtime.run(lambda: work(runtime))
        except MemtiersError as exc:
            values, said = {}, [*said, message(exc)]
        scope = self.namespaces.scope_note(ns)
        return self.render(
            f"{view}.html",
            view=view,
            ns=ns,
            namespaces=self.namespace_names(session),
            csrf=session.csrf,
            said=said,
            scope=scope,
            here=request.url.path + (f"?{request.url.query}" if request.url.query else ""),
            **values,
        )

    async def _change(self, request: Request, work: Callable[[Runtime, Any], str], form: Any | None = None) -> Response:
        """A POST: checked (Origin, session, CSRF), done off the loop, told to subscribers, then back to the page."""
        opened = await self._open(request)
        if isinstance(opened, Response):
            return opened
        session, ns, runtime = opened
        form = form if form is not None else await request.form()
        if not csrf_ok(session, form.get("csrf")):
            return PlainTextResponse("forbidden: this form is stale or not from this page (CSRF token)", 403)
        try:
            said = await runtime.run(lambda: work(runtime, form))
        except MemtiersError as exc:
            said = message(exc)
        await runtime.notify_if_profile_changed()
        session.said.append(said)
        back = str(
            form.get("back") or ""
        )  # a page of this server: a change to the user scope may come from a project's
        return RedirectResponse(back if back.startswith("/ns/") else f"/ns/{ns}", 303)

    # login

    async def home(self, request: Request) -> Response:
        names = self.namespace_names(request.state.session)
        default = self.namespaces.settings.namespace
        return RedirectResponse(f"/ns/{default if default in names else (names or [default])[0]}", 303)

    async def login_form(self, request: Request) -> Response:
        return self.render("login.html", next=_next(request.query_params.get("next")), wrong=False)

    async def login(self, request: Request) -> Response:
        form = await request.form()
        started = self.gate.login(str(form.get("token") or ""))
        if started is None:
            return self.render("login.html", status=401, next=_next(str(form.get("next") or "")), wrong=True)
        response = RedirectResponse(_next(str(form.get("next") or "")), 303)
        set_cookie(response, started[0], secure=request.url.scheme == "https")
        return response

    async def logout(self, request: Request) -> Response:
        form = await request.form()
        if csrf_ok(request.state.session, form.get("csrf")):
            self.gate.logout(request)
        response = RedirectResponse("/login", 303)
        response.delete_cookie(COOKIE, path="/")
        return response

    # the views

    async def profile(self, request: Request) -> Response:
        def work(runtime: Runtime) -> dict[str, Any]:
            memory, now = runtime.memory, runtime.clock()
            entries = memory.profile()
            scoped = runtime.scoped
            profiles = scoped.profiles()
            text, data = shape.profiles_view(profiles, scoped.flags(), runtime.namespace)
            user_entries = profiles.entries.get(MemoryScope.USER, {})
            weeks = browse.tier_history(memory, now)
            return {
                "entries": {key: shape.entry_data(e) for key, e in sorted(entries.items())},
                "lines": {key: tokens_of(f"{key}: {e.value}") for key, e in entries.items()},
                "user_ns": runtime.user.namespace if scoped.user is not None and runtime.user is not None else None,
                "user_entries": {key: shape.entry_data(e) for key, e in sorted(user_entries.items())},
                "user_lines": {key: tokens_of(f"{key}: {e.value}") for key, e in user_entries.items()},
                "tokens": data["tokens"],
                "cap": data["cap_tokens"],
                "candidates": [c for c in data["candidates"] if c.get("scope") != "user"],
                "agent_reads": text,
                "chart": Markup(tiers_svg(weeks)),
                "counts": weeks[-1].counts if weeks else {},
            }

        return await self._page(request, "profile", work)

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        limit = _int(request.query_params.get("limit"), 20, 1, 200)

        def work(runtime: Runtime) -> dict[str, Any]:
            if not query:
                return {"q": "", "hits": []}
            scoped, now = runtime.scoped, runtime.clock()
            found = scoped.rank(query, limit, [Tier.WARM, Tier.COLD])
            hits: list[dict[str, Any]] = []
            moved: dict[str, str] = {}
            for scope, memory in scoped.scopes():
                ranked = [hit.ranked for hit in found if hit.scope is scope]
                heat = browse.heats(memory, [h.record for h in ranked], now)
                data = shape.recall_data(Packed(hits=ranked))["memories"]
                for hit, h in zip(data, ranked, strict=True):
                    extra = {"kind": h.record.kind.value, "heat": heat[h.record.id], "scope": scope.value}
                    hits.append({**hit, **extra, "extra": _extra(hit)})
                moved |= _last_moves(memory, [h.record.id for h in ranked])
            order = {hit.ranked.record.id: i for i, hit in enumerate(found)}
            hits.sort(key=lambda hit: order[hit["id"]])
            user_ns = runtime.user.namespace if runtime.user is not None else None
            return {"q": query, "hits": hits, "moved": moved, "user_ns": user_ns}

        return await self._page(request, "search", work)

    async def browse(self, request: Request) -> Response:
        tier = Tier.COLD if request.query_params.get("tier") == "cold" else Tier.WARM
        before_text = request.query_params.get("before")

        def work(runtime: Runtime) -> dict[str, Any]:
            memory, now = runtime.memory, runtime.clock()
            before = parse_time(before_text, "before") if before_text else None
            page = browse.listing(memory, tier, before, _int(request.query_params.get("limit"), 50, 1, 500))
            heat = browse.heats(memory, page.records, now)
            ids = [r.id for r in page.records]
            return {
                "tier": tier.value,
                "records": page.records,
                "heat": heat,
                "total": page.total,
                "before": before,
                "next": None if page.next_before is None else iso(page.next_before),
                "moved": _last_moves(runtime.memory, ids),
            }

        return await self._page(request, "browse", work)

    async def log(self, request: Request) -> Response:
        rid = request.query_params.get("id") or None
        limit = _int(request.query_params.get("limit"), 100, 1, 1000)

        def work(runtime: Runtime) -> dict[str, Any]:
            moves = runtime.memory.moves(rid, limit)
            latest: dict[str, int | None] = {}
            for m in moves:  # newest first: a record's first row here is its last move, the one undo reverses
                latest.setdefault(m.rid, m.seq)
            no_undo = {m.seq for m in moves if m.dst == "gone" or m.src == "new"}  # a forget, a first write
            undoable = {seq for r, seq in latest.items() if _is_record(r)} - no_undo
            return {"moves": moves, "id": rid or "", "undoable": undoable}

        return await self._page(request, "log", work)

    async def transfer(self, request: Request) -> Response:
        def work(runtime: Runtime) -> dict[str, Any]:
            reads = runtime.scoped.user is not None and runtime.user is not None
            return {"formats": FORMATS, "user_ns": runtime.user.namespace if reads and runtime.user else None}

        return await self._page(request, "transfer", work)

    async def export(self, request: Request) -> Response:
        opened = await self._open(request)
        if isinstance(opened, Response):
            return opened
        _, ns, runtime = opened
        vectors = request.query_params.get("vectors") == "1"
        lines = await runtime.run(lambda: list(export(runtime.memory, ns, runtime.clock(), vectors=vectors)))
        stamp = f"{runtime.clock():%Y%m%d-%H%M}"
        return Response(
            "".join(line + "\n" for line in lines),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="memtiers-{ns}-{stamp}.jsonl"', **_SECURITY_HEADERS},
        )

    # the changes

    async def change_profile(self, request: Request) -> Response:
        def work(runtime: Runtime, form: Any) -> str:
            action, key = str(form.get("action")), str(form.get("key") or "").strip()
            value = str(form.get("value") or "")
            memory, now = runtime.memory, runtime.clock()
            if action == "set":
                change = memory.set_profile({key: value}, now)
                kept = f"; the old value is kept in warm ({', '.join(change.demoted)})" if change.demoted else ""
                return f"{key} set{kept}"
            if action in ("unset", "pin", "unpin"):
                memory.set_profile({}, now, **{action: [key]})
                return {"unset": f"{key} removed from the profile (kept in warm)", "pin": f"{key} pinned"}.get(
                    action, f"{key} unpinned"
                )
            raise InvalidInput(f"unknown profile action {action!r}")

        return await self._change(request, work)

    async def change_record(self, request: Request) -> Response:
        def work(runtime: Runtime, form: Any) -> str:
            action, rid = str(form.get("action")), str(form.get("id") or "").strip()
            memory, now = runtime.memory, runtime.clock()
            if action == "forget":
                gone = memory.forget(rid, now)
                return shape.forgotten_text(gone)
            if action == "promote":
                to = Tier.HOT if form.get("to") == "hot" else Tier.WARM
                return shape.promoted_text(memory.promote(rid, now, to, str(form.get("key") or "").strip() or None))
            if action == "demote":
                done = memory.demote(rid, now)
                return f"{rid} moved to cold" if done.outcome == "demoted" else f"{rid} is already cold"
            if action == "undo":
                undone = memory.undo(rid, now)
                return f"{rid}: undid its {undone.undid} move ({'; '.join(undone.changes)})"
            raise InvalidInput(f"unknown action {action!r}")

        return await self._change(request, work)

    async def import_(self, request: Request) -> Response:
        form = await request.form(max_part_size=MAX_UPLOAD)
        upload = form.get("file")

        def work(runtime: Runtime, form: Any) -> str:
            if not isinstance(upload, UploadFile) or not upload.filename:
                raise InvalidInput("choose a file to import")
            fmt = str(form.get("format") or "") or None
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / Path(upload.filename).name
                upload.file.seek(0)
                path.write_bytes(upload.file.read())
                reports = scoped_transfer.import_file(runtime.scoped, path, runtime.clock(), fmt)
            return "; ".join(
                f"imported {report.read} memories from {upload.filename} ({report.format})"
                + (" into the user scope" if where is MemoryScope.USER else "")
                + f": {report.added} new, {report.duplicates} already stored, {report.profile_set} profile entries"
                + ("" if report.complete else "; the file ends early: import the whole file again to finish")
                for where, report in reports
            )

        return await self._change(request, work, form)


_SECURITY_HEADERS = {
    # Nothing from outside this server; the only script is inline; no framing by other pages.
    "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make the browser send `Origin: null` with forms
    "Cache-Control": "no-store",
}
_KNOWN = {"id", "tier", "content", "score", "occurred_at", "tags", "metadata", "source", "kind", "heat", "scope"}


def _extra(hit: dict[str, Any]) -> dict[str, Any]:
    """The fields of a recall hit the page has no column for (supersession and whatever recall adds later)."""
    extra = {k: v for k, v in hit.items() if k not in _KNOWN and v not in (None, "", [], {})}
    if isinstance(later := extra.pop("later", None), dict):
        extra["earlier"] = f"a later memory may replace this: {later['id']} of {later['occurred_at'][:10]}"
    return extra


def _last_moves(memory: Memory, ids: list[str]) -> dict[str, str]:
    """The latest logged move of each record, as a person reads it: `warm → cold (reason)`."""
    out: dict[str, str] = {}
    for rid in ids:
        mine = [m for m in memory.moves(rid, 20) if m.rid == rid]
        if mine:
            out[rid] = (
                f"{mine[0].src} → {mine[0].dst} on {_when(mine[0].at)[:10]} ({reason(mine[0].rule, mine[0].dst)})"
            )
    return out


def _when(value: datetime | None) -> str:
    """A time as a person reads it here: `2026-11-30 14:05` (UTC)."""
    return (iso(value) or "")[:16].replace("T", " ")


def _is_record(rid: str) -> bool:
    try:
        check_id(rid)
    except InvalidInput:
        return False
    return True


def _valid(name: str) -> bool:
    try:
        check_namespace(name)
    except ConfigError:
        return False
    return True


def _next(value: str | None) -> str:
    """Where to go after the login: a path of this server only."""
    return value if value and value.startswith("/") and not value.startswith("//") else "/"


def _int(value: str | None, default: int, least: int, most: int) -> int:
    try:
        return min(max(int(value), least), most) if value else default
    except ValueError:
        return default
