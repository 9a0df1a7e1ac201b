"""Configuration: the only code that reads the environment."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tiers.embedder import DEFAULT_MODEL
from tiers.heat import HeatRules
from tiers.memory import MemorySettings
from tiers.secrets import SecretPolicy

_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ConfigError(ValueError):
    """A setting has a value memtiers cannot use."""


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
    """Everything the server is told by its host; see the README's Configuration table."""

    home: Path
    namespace: str = "default"
    embed_model: str = DEFAULT_MODEL
    sweep_interval: float = 600.0
    hot_cap_tokens: int = 1_000
    hot_idle_days: float = 90.0
    log_level: str = "WARNING"
    secrets: SecretPolicy = SecretPolicy.REFUSE
    lock_timeout: float = 30.0

    @property
    def memory(self) -> MemorySettings:
        """The domain's settings, derived so that an override of a field here always reaches it."""
        return MemorySettings(
            cap_tokens=self.hot_cap_tokens,
            rules=HeatRules(hot_idle_days=self.hot_idle_days),
            secrets=self.secrets,
            lock_timeout=self.lock_timeout,
        )

    @property
    def folder(self) -> Path:
        """The folder of this namespace: profile, ledger and LanceDB table together."""
        return self.home / "namespaces" / self.namespace

    @property
    def model_cache(self) -> Path:
        return self.home / "models"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        namespace = env.get("MEMTIERS_NAMESPACE") or "default"
        if not _NAMESPACE.match(namespace):
            raise ConfigError(f"MEMTIERS_NAMESPACE={namespace!r} is not valid: 1-64 letters, digits, '_', '.' or '-'")
        cap = _number(env, "MEMTIERS_HOT_CAP_TOKENS", 1_000, int)
        idle = _number(env, "MEMTIERS_HOT_IDLE_DAYS", 90.0, float)
        values: dict[str, object] = {
            "home": Path(env.get("MEMTIERS_HOME") or default_home(env)).expanduser(),
            "namespace": namespace,
            "embed_model": env.get("MEMTIERS_EMBED_MODEL") or DEFAULT_MODEL,
            "sweep_interval": _number(env, "MEMTIERS_SWEEP_INTERVAL", 600.0, float),
            "hot_cap_tokens": cap,
            "hot_idle_days": idle,
            "log_level": (env.get("MEMTIERS_LOG_LEVEL") or "WARNING").upper(),
            "secrets": _secrets(env),
            "lock_timeout": _number(env, "MEMTIERS_LOCK_TIMEOUT", 30.0, float),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


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


def _secrets(env: Mapping[str, str]) -> SecretPolicy:
    raw = (env.get("MEMTIERS_SECRETS") or SecretPolicy.REFUSE.value).strip().lower()
    try:
        return SecretPolicy(raw)
    except ValueError:
        choices = " or ".join(repr(p.value) for p in SecretPolicy)
        raise ConfigError(f"MEMTIERS_SECRETS={raw!r} is not valid: {choices}") from None
