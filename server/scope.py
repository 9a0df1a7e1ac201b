"""Project scope without a config edit: the namespace of a client's workspace, from the roots it reports.

When the host's config names no namespace (no MEMTIERS_NAMESPACE, plain /mcp, or stdio), the first tool call or
resource read of a session asks the client for its roots (`roots/list`) and picks the namespace of the first
`file://` root: the folder's name made safe, a dash and a short hash of its whole path, so two checkouts named
alike stay apart. A client that reports none keeps `default`, and is told so once.

`roots/list` is a server-to-client request of the legacy protocol era (up to 2025-11-25). The modern era
(2026-07-28) deprecates roots (SEP-2577) and has no standalone server-to-client request: there a server can ask
only inside a tool's input request, so modern clients keep `default` here.
"""

from __future__ import annotations

import hashlib
import logging
import re
import warnings
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import anyio

log = logging.getLogger("memtiers")
ASK_SECONDS = 10  # a client that does not answer roots/list in this time keeps the default namespace
LEGACY_UP_TO = "2025-11-25"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Scope:
    """The namespace a session works in, why, and the workspace root it came from (None: no root)."""

    namespace: str
    note: str
    root: str | None = None


def namespace_of_root(uri: str) -> tuple[str, str] | None:
    """(namespace, path) of a `file://` root URI, or None for another scheme or an empty path."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:", path):  # file:///C:/work/app on Windows
        path = path[1:]
    path = path.replace("\\", "/").rstrip("/")
    if not path:
        return None
    name = _UNSAFE.sub("-", PurePosixPath(path).name).strip("-.")[:48] or "root"
    if not name[0].isalnum():
        name = "p" + name
    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:8]
    return f"{name}-{digest}", path


def from_roots(uris: list[str], default: str) -> Scope:
    """The scope for the roots a client reported: its first `file://` root's namespace, else `default`."""
    for uri in uris:
        found = namespace_of_root(uri)
        if found is not None:
            namespace, path = found
            return Scope(namespace, f"namespace {namespace}, from the workspace root {path}", path)
    return no_root(default)


def no_root(default: str, why: str = "the client reports no workspace root") -> Scope:
    return Scope(default, f"namespace {default}: the host's config names none and {why}")


async def ask(session: Any, protocol_version: str | None, default: str) -> Scope:
    """Ask a session for its roots (legacy era, when it declared the capability); a failure keeps `default`."""
    if protocol_version is not None and protocol_version > LEGACY_UP_TO:
        return no_root(default, f"protocol {protocol_version} has no roots/list from the server")
    capabilities = getattr(session, "client_capabilities", None)
    if capabilities is None or capabilities.roots is None:
        return no_root(default, "the client does not offer its roots")
    try:
        with anyio.fail_after(ASK_SECONDS), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots is deprecated by the modern era, not by the one spoken here
            result = await session.list_roots()
    except Exception as exc:  # a client that errs or stalls keeps working, in the default namespace
        log.warning("roots/list failed (%s); this session uses namespace %r", exc, default)
        return no_root(default, "asking it for its roots failed")
    return from_roots([str(root.uri) for root in result.roots], default)
