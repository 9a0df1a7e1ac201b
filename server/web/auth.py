"""Who may use the web page: the same Host and Origin checks as /mcp, a login that trades the bearer token for a
session cookie (HttpOnly, SameSite=Strict), and a CSRF token per session that every change must carry."""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from server.token import Grant, Grants

COOKIE = "memtiers_session"
SESSION_SECONDS = 12 * 3600  # a login lasts a working day
MAX_SESSIONS = 256  # logins kept at once: the oldest goes first


@dataclass
class Session:
    """One logged-in browser: what its token opens, the CSRF token its forms carry, and messages to show once."""

    grant: Grant
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    started: float = field(default_factory=time.monotonic)
    said: list[str] = field(default_factory=list)


class Gate:
    """Checks every web request, and keeps the sessions of this process (a restart logs everyone out)."""

    def __init__(self, grants: Grants, security: TransportSecuritySettings) -> None:
        self.grants = grants
        self._security = TransportSecurityMiddleware(security)
        self._sessions: dict[str, Session] = {}

    async def refused(self, request: Request) -> Response | None:
        """421 for a Host, 403 for an Origin this server does not answer to (the checks of /mcp)."""
        return await self._security.validate_request(request, is_post=False)

    @staticmethod
    def originless(request: Request) -> Response | None:
        """403 for a change that names no Origin: browsers send one with every form, so it came from elsewhere."""
        if request.method not in ("GET", "HEAD") and not request.headers.get("origin"):
            return PlainTextResponse("forbidden: a change must come from this server's own page (no Origin)", 403)
        return None

    def login(self, token: str) -> tuple[str, Session] | None:
        """A new session for a token that opens something; None for a wrong one."""
        grant = self.grants.check(b"Bearer " + token.strip().encode("utf-8", "replace"))
        if grant is None:
            return None
        self._expire()
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = session = Session(grant)
        return sid, session

    def session(self, request: Request) -> Session | None:
        """The session of the request's cookie; or, for a read, a one-request session from a bearer token (curl)."""
        if request.method in ("GET", "HEAD") and request.headers.get("authorization"):
            grant = self.grants.check(request.headers["authorization"].encode("latin-1", "replace"))
            if grant is not None:
                return Session(grant)
        sid = request.cookies.get(COOKIE)
        found = self._sessions.get(sid) if sid else None
        if found is not None and time.monotonic() - found.started > SESSION_SECONDS:
            self._sessions.pop(sid or "", None)
            return None
        return found

    def logout(self, request: Request) -> None:
        self._sessions.pop(request.cookies.get(COOKIE) or "", None)

    def _expire(self) -> None:
        now = time.monotonic()
        for sid, s in list(self._sessions.items()):
            if now - s.started > SESSION_SECONDS:
                del self._sessions[sid]
        while len(self._sessions) >= MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]


def csrf_ok(session: Session, presented: object) -> bool:
    return isinstance(presented, str) and hmac.compare_digest(session.csrf.encode(), presented.encode())


def set_cookie(response: Response, sid: str, secure: bool) -> None:
    response.set_cookie(COOKIE, sid, max_age=SESSION_SECONDS, httponly=True, samesite="strict", secure=secure, path="/")
