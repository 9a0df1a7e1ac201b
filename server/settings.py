"""Configuration: the only code that reads the environment."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from tiers.lifecycle.heat import HeatRules
from tiers.memory import MemorySettings
from tiers.model import catalog
from tiers.model.embedder import DEFAULT_MODEL
from tiers.privacy.secrets import SecretPolicy
from tiers.recall.rank import RecallSettings

_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOKEN = re.compile(r"^[!-~]{16,512}$")  # printable ASCII, no spaces: it travels in an HTTP header
USER_NAMESPACE = "user"  # the user scope: facts about the person, read beside every project's namespace
RERANK_MOST = 500  # candidates a recall may rerank: about 13 ms each on 2 cores, 6.5 s at this bound


class ConfigError(ValueError):
    """A setting has a value memtiers cannot use."""


def check_namespace(name: str, what: str = "namespace ") -> str:
    """`name` when it can name a namespace folder, else a ConfigError saying what is allowed."""
    if not _NAMESPACE.match(name):
        raise ConfigError(f"{what}{name!r} is not valid: 1-64 letters, digits, '_', '.' or '-'")
    return name


def usable_token(value: str) -> bool:
    return bool(_TOKEN.match(value))


@dataclass(frozen=True)
class HttpToken:
    """A bearer token the HTTP server accepts, and the namespaces it opens (None: every namespace)."""

    value: str = field(repr=False)
    namespaces: frozenset[str] | None = None


def default_home(env: Mapping[str, str]) -> Path:
    """The per-user data folder: XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows."""
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "memtiers"
    if sys.platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "memtiers"
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share") / "memtiers"


@dataclass(frozen=True)
class Settings:
    """Everything the server is told by its host; see the README's configuration table."""

    home: Path
    namespace: str = "default"
    namespace_named: bool = True  # False: the config names none, so a client's roots may pick it (server/scope.py)
    embed_model: str = DEFAULT_MODEL
    sweep_interval: float = 600.0
    hot_cap_tokens: int = 1_000
    hot_idle_days: float = 90.0
    project_away_days: float = HeatRules.project_away_days
    log_level: str = "WARNING"
    cold_uri: str | None = None
    storage_options: tuple[tuple[str, str], ...] = ()
    http_tokens: tuple[HttpToken, ...] = field(default=(), repr=False)  # empty: the generated token file
    secrets: SecretPolicy = SecretPolicy.REFUSE
    lock_timeout: float = 30.0
    profile_carried: bool = False  # the host puts the profile resource in every prompt: recall repeats none of it
    recall_context: float = RecallSettings.context  # share of a memory's meaning read with its neighbours'
    rerank: int = RecallSettings.rerank  # recall's best this many read again by a cross-encoder (0: off)
    later_first: bool = RecallSettings.updates  # recall shows the later of two updates first, the older marked
    user_scope: bool = True  # every namespace reads the user scope beside its own (tiers/scopes/)

    @property
    def memory(self) -> MemorySettings:
        """The domain's settings, derived so that an override of a field here always reaches it."""
        return MemorySettings(
            cap_tokens=self.hot_cap_tokens,
            rules=HeatRules(hot_idle_days=self.hot_idle_days, project_away_days=self.project_away_days),
            cold_uri=self.namespace_cold_uri,
            storage_options=dict(self.storage_options),
            secrets=self.secrets,
            lock_timeout=self.lock_timeout,
            recall=RecallSettings(
                profile_carried=self.profile_carried,
                context=self.recall_context,
                rerank=self.rerank,
                updates=self.later_first,
            ),
        )

    @property
    def namespace_cold_uri(self) -> str | None:
        """Where this namespace's cold tier lives when MEMTIERS_COLD_URI moves it off the data folder."""
        if not self.cold_uri:
            return None
        return f"{self.cold_uri.rstrip('/')}/{self.namespace}"

    @property
    def folder(self) -> Path:
        """The folder of this namespace: profile, ledger and LanceDB table together."""
        return self.home / "namespaces" / self.namespace

    @property
    def user_namespace(self) -> str | None:
        """The namespace of the user scope every other namespace reads beside its own; None when it is off."""
        return USER_NAMESPACE if self.user_scope else None

    @property
    def model_cache(self) -> Path:
        return self.home / "models"

    @property
    def token_file(self) -> Path:
        """Where the HTTP server keeps the token it generated (mode 0600), used when no token is configured."""
        return self.home / "http-token"

    def for_namespace(self, namespace: str) -> Settings:
        """The same settings for another namespace of the same data folder."""
        return replace(self, namespace=check_namespace(namespace), namespace_named=True)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        namespace = check_namespace(env.get("MEMTIERS_NAMESPACE") or "default", "MEMTIERS_NAMESPACE=")
        cap = _number(env, "MEMTIERS_HOT_CAP_TOKENS", 1_000, int)
        idle = _number(env, "MEMTIERS_HOT_IDLE_DAYS", 90.0, float)
        values: dict[str, object] = {
            "home": Path(env.get("MEMTIERS_HOME") or default_home(env)).expanduser(),
            "namespace": namespace,
            "namespace_named": bool(env.get("MEMTIERS_NAMESPACE")),
            "embed_model": _model(env),
            "sweep_interval": _number(env, "MEMTIERS_SWEEP_INTERVAL", 600.0, float),
            "hot_cap_tokens": cap,
            "hot_idle_days": idle,
            "project_away_days": _number(env, "MEMTIERS_PROJECT_AWAY_DAYS", HeatRules.project_away_days, float),
            "log_level": _log_level(env),
            "cold_uri": env.get("MEMTIERS_COLD_URI") or None,
            "storage_options": _object_storage(env),
            "http_tokens": _http_tokens(env),
            "secrets": _secrets(env),
            "lock_timeout": _number(env, "MEMTIERS_LOCK_TIMEOUT", 30.0, float),
            "profile_carried": _flag(env, "MEMTIERS_PROFILE_CARRIED"),
            "later_first": _flag(env, "MEMTIERS_LATER_FIRST", RecallSettings.updates),
            "recall_context": _share(env, "MEMTIERS_RECALL_CONTEXT", RecallSettings.context),
            "rerank": _count(env, "MEMTIERS_RERANK", RecallSettings.rerank, RERANK_MOST),
            "user_scope": _flag(env, "MEMTIERS_USER_SCOPE", True),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


# The usual AWS variables, passed to LanceDB for a cold tier on S3 or an S3-compatible server.
_AWS = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_REGION": "region",
    "AWS_DEFAULT_REGION": "region",
    "AWS_ENDPOINT_URL": "endpoint",
    "AWS_ENDPOINT_URL_S3": "endpoint",
}


def _object_storage(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    options: dict[str, str] = {}
    for name, option in _AWS.items():
        if env.get(name):
            options.setdefault(option, env[name])
    if options.get("endpoint", "").startswith("http://"):
        options["allow_http"] = "true"
    return tuple(sorted(options.items()))


def _model(env: Mapping[str, str]) -> str:
    """MEMTIERS_EMBED_MODEL as the full name a store records (`multilingual`, `default` or a full name)."""
    raw = (env.get("MEMTIERS_EMBED_MODEL") or "").strip()
    if not raw:
        return DEFAULT_MODEL
    lacking = catalog.missing(raw)
    if lacking is not None:
        raise ConfigError(f"MEMTIERS_EMBED_MODEL={raw}: {lacking}")
    return catalog.canonical(raw)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(env: Mapping[str, str]) -> str:
    level = (env.get("MEMTIERS_LOG_LEVEL") or "WARNING").strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(f"MEMTIERS_LOG_LEVEL={env['MEMTIERS_LOG_LEVEL']!r}: one of {', '.join(LOG_LEVELS)}")
    return level


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{name}={raw!r} is not valid: use 1 or 0")


def _number(env: Mapping[str, str], name: str, default: float, kind: type) -> float:
    raw = env.get(name)
    if not raw:
        return kind(default)
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        raise ConfigError(f"{name} must be above zero, not {raw}")
    return value


def _count(env: Mapping[str, str], name: str, default: int, most: int) -> int:
    """A whole number from 0 to `most` (unset: `default`)."""
    return int(_within(env, name, default, int, (0, most), ("a whole number", f"0 (off) to {most}")))


def _share(env: Mapping[str, str], name: str, default: float) -> float:
    """A share from 0 to 1 (unset: `default`)."""
    return float(_within(env, name, default, float, (0.0, 1.0), ("a number", "0 to 1")))


def _within(
    env: Mapping[str, str], name: str, default: float, kind: type, bounds: tuple[float, float], said: tuple[str, str]
) -> float:
    """`name` read as `kind` within `bounds` (unset: `default`); `said`: what it must be, and its bounds in words."""
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not {said[0]}") from None
    if not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"{name} must be from {said[1]}, not {raw}")
    return float(value)


def _http_tokens(env: Mapping[str, str]) -> tuple[HttpToken, ...]:
    """MEMTIERS_HTTP_TOKEN (every namespace) and MEMTIERS_HTTP_TOKENS (`token=ns1,ns2;token2=*`).

    Error messages name the variable and the entry's position, never a token.
    """
    tokens: list[HttpToken] = []
    single = env.get("MEMTIERS_HTTP_TOKEN")
    if single:
        if not usable_token(single):
            raise ConfigError("MEMTIERS_HTTP_TOKEN must be 16 to 512 printable characters without spaces")
        tokens.append(HttpToken(single))
    for position, entry in enumerate((env.get("MEMTIERS_HTTP_TOKENS") or "").split(";"), start=1):
        if not entry.strip():
            continue
        value, equals, names = entry.strip().partition("=")
        where = f"MEMTIERS_HTTP_TOKENS entry {position}"
        if not equals or not usable_token(value):
            raise ConfigError(f"{where} is not `token=namespace,...` with a token of 16 to 512 printable characters")
        listed = [name.strip() for name in names.split(",") if name.strip()]
        if not listed:
            raise ConfigError(f"{where} names no namespace: list them, or `*` for every namespace")
        scope = None if "*" in listed else frozenset(check_namespace(name, f"{where}: namespace ") for name in listed)
        tokens.append(HttpToken(value, scope))
    return tuple(tokens)


def _secrets(env: Mapping[str, str]) -> SecretPolicy:
    raw = (env.get("MEMTIERS_SECRETS") or SecretPolicy.REFUSE.value).strip().lower()
    try:
        return SecretPolicy(raw)
    except ValueError:
        choices = " or ".join(repr(p.value) for p in SecretPolicy)
        raise ConfigError(f"MEMTIERS_SECRETS={raw!r} is not valid: {choices}") from None
