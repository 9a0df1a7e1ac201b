"""The parts one namespace's memory is made of, shared by the write path, profile editing, search and moves."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tiers.index.store import Store
from tiers.lifecycle.candidates import Candidates
from tiers.lifecycle.flags import Flags
from tiers.lifecycle.heat import HeatRules
from tiers.model.embedder import Embedder, embed_queries
from tiers.privacy.folders import open_private
from tiers.privacy.secrets import SecretPolicy
from tiers.recall import rank as ranking
from tiers.storage.hot import HotProfile
from tiers.storage.ledger import Ledger
from tiers.storage.locking import DEFAULT_TIMEOUT, file_lock


@dataclass(frozen=True)
class MemorySettings:
    """Everything tunable about one memory; the server builds it from its configuration."""

    cap_tokens: int = 1_000
    rules: HeatRules = field(default_factory=HeatRules)
    compact_every: int = 100
    heat_candidates: int = 20
    recall: ranking.RecallSettings = field(default_factory=ranking.RecallSettings)
    secrets: SecretPolicy = SecretPolicy.REFUSE
    lock_timeout: float = DEFAULT_TIMEOUT  # seconds any lock of the data folder is waited for
    cold_uri: str | None = None  # where the cold tier lives when not beside the rest (e.g. s3://bucket/prefix)
    storage_options: dict[str, str] = field(default_factory=dict)


def random_id() -> str:
    return secrets.token_hex(6)


class Parts:
    """The profile file, the ledger and the two tiers of one namespace, with its write lock and its model."""

    def __init__(
        self, folder: Path, embedder: Embedder, settings: MemorySettings, new_id: Callable[[], str] = random_id
    ) -> None:
        self.folder = folder
        self.embedder = embedder
        self.settings = settings
        self.new_id = new_id
        open_private(folder)  # 0700/0600, also for what LanceDB writes (tiers/privacy/folders.py)
        self.hot = HotProfile(folder / "profile.json", settings.cap_tokens, settings.lock_timeout)
        self.ledger = Ledger(folder / "ledger.sqlite")
        self._lock_path = folder / "write.lock"
        self._store: Store | None = None
        self._opening = threading.Lock()
        self._short_vectors: dict[str, np.ndarray] = {}
        self.candidates = Candidates(self.ledger, self.hot, lambda: self.store, settings.heat_candidates)
        self.flags = Flags(self.ledger, self.hot)

    @property
    def store(self) -> Store:
        if self._store is None:
            # Under the write lock: two processes (or threads) opening a new folder create its tables once.
            with self._opening, self.locked():
                if self._store is None:
                    store = Store(
                        self.folder,
                        self.embedder.name,
                        self.embedder.dim,
                        self.ledger,
                        cold_uri=self.settings.cold_uri,
                        storage_options=self.settings.storage_options,
                        compact_every=self.settings.compact_every,
                    )
                    store.recovery.recover()
                    self._store = store
        return self._store

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The data folder's write lock, held across processes and threads."""
        with file_lock(self._lock_path, self.settings.lock_timeout):
            yield

    def vectors_of(self, texts: list[str]) -> np.ndarray:
        """Vectors of short texts recall compares queries with (profile entries, kind names), embedded once."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._short_vectors]
        if missing:
            for text, vector in zip(missing, embed_queries(self.embedder, missing), strict=True):
                self._short_vectors[text] = vector
        return np.stack([self._short_vectors[t] for t in texts])

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        self.ledger.close()
