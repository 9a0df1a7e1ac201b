"""The web page of `memtiers serve --http`: see and steer what the agent remembers (server-rendered, no build)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.types import ASGIApp

from server.token import Grants
from server.web.auth import Gate
from server.web.pages import Pages

if TYPE_CHECKING:
    from server.http import Namespaces

__all__ = ["build_web_app"]


def build_web_app(namespaces: Namespaces, grants: Grants) -> ASGIApp:
    """The page's ASGI app: every path of the HTTP server but /mcp, under the same Host and Origin checks."""
    return Pages(namespaces, Gate(grants, namespaces.security))
