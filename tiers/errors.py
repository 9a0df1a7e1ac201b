"""The errors of the memory domain.

MemtiersError              base of everything raised on purpose by tiers/
├── InvalidInput           the caller's input is wrong; the message says how to fix it
│   ├── ProfileCapExceeded the hot profile would pass its token cap
│   └── SecretFound        what was given holds a credential (names its kind and place, never the value)
├── NotFound               no memory or profile entry with that id or key
├── CorruptProfile         the hot profile file on disk cannot be read; it is left untouched
├── ModelMismatch          the store was embedded by another model than the one configured
└── StorageError           LanceDB, the ledger or a file memtiers owns failed underneath; names the file
    ├── CorruptFile        a file memtiers owns cannot be read; it is left untouched
    └── LockTimeout        a lock of the data folder was held longer than the wait allowed
"""

from __future__ import annotations


class MemtiersError(Exception):
    """Base of all errors raised on purpose by the memory domain."""


class InvalidInput(MemtiersError):
    """The input cannot be stored or used as given."""


class ProfileCapExceeded(InvalidInput):
    """A profile change would pass the hot profile's token cap."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


class SecretFound(InvalidInput):
    """A memory or profile value holds a credential; `kinds` names what was found, never the value."""

    def __init__(self, message: str, kinds: tuple[str, ...]) -> None:
        super().__init__(message)
        self.kinds = kinds


class NotFound(MemtiersError):
    """No memory or profile entry matches."""


class CorruptProfile(MemtiersError):
    """The profile file exists but is not a valid profile."""


class ModelMismatch(MemtiersError):
    """The store's vectors come from another embedding model."""


class StorageError(MemtiersError):
    """The storage backend failed."""


class CorruptFile(StorageError):
    """A file memtiers owns (store metadata, ledger) exists but cannot be read."""


class LockTimeout(StorageError):
    """A lock of the data folder stayed held past the wait allowed."""
