"""The HTTP server's bearer tokens: the generated token file, and which namespaces a presented token opens."""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from server.settings import ConfigError, HttpToken, Settings, usable_token


def file_token(path: Path) -> str:
    """The token kept in `path`, made on first use (256 random bits, mode 0600); refuses a file others can read."""
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
        try:
            os.link(draft, path)  # atomic and refuses to overwrite: two first starts agree on one token
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return _read(path)


def _read(path: Path) -> str:
    if os.name == "posix" and stat.S_IMODE(path.stat().st_mode) & 0o077:
        raise ConfigError(f"{path} can be read by other users: `chmod 600 {path}`, or delete it to make a new token")
    value = path.read_text(encoding="utf-8", errors="replace").strip()
    if not usable_token(value):
        raise ConfigError(f"{path} holds no usable token (16 to 512 printable characters): delete it to make a new one")
    return value


def configured_tokens(settings: Settings) -> tuple[HttpToken, ...]:
    """The tokens from the environment, or else the generated file's token, which opens every namespace."""
    return settings.http_tokens or (HttpToken(file_token(settings.token_file)),)


@dataclass(frozen=True)
class Grant:
    """What one accepted token may open."""

    namespaces: frozenset[str] | None

    def opens(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


class Grants:
    """Checks an `Authorization` header against every accepted token, in constant time per token."""

    def __init__(self, tokens: Sequence[HttpToken]) -> None:
        if not tokens:
            raise ValueError("the HTTP server needs at least one token")
        self._tokens = [(token.value.encode("ascii"), Grant(token.namespaces)) for token in tokens]

    def share(self, namespace: str, other: str) -> bool:
        """Whether every token that opens `namespace` also opens `other`: then what one holds may be read beside the
        other without showing it to a token the other is closed to."""
        return all(grant.opens(other) for _, grant in self._tokens if grant.opens(namespace))

    def check(self, authorization: bytes | None) -> Grant | None:
        """The grant of the bearer token in `authorization`, or None when there is no such token."""
        presented = _bearer(authorization)
        found: Grant | None = None
        for value, grant in self._tokens:  # no early exit: the time taken does not say which token matched
            if hmac.compare_digest(value, presented) and found is None:
                found = grant
        return found if presented else None


def _bearer(authorization: bytes | None) -> bytes:
    if not authorization:
        return b""
    scheme, _, value = authorization.strip().partition(b" ")
    return value.strip() if scheme.lower() == b"bearer" else b""
