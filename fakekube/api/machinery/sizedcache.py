"""A least-recently-used cache bounded by the bytes its values hold.

For documents built from pieces (OpenAPI, discovery): a value says its own size
(``size_bytes``), the cache drops the least recently used values past its byte budget (or
entry count), and the newest value always stays, so a value larger than the budget is
still served once it is built. Not thread-safe: callers hold their own lock around it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, Hashable, Protocol, TypeVar


class Sized(Protocol):
    @property
    def size_bytes(self) -> int: ...


K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Sized)


class SizedLRU(Generic[K, V]):
    """Values by key; past ``max_bytes`` (or ``max_entries``) the least recently used go."""

    def __init__(self, max_bytes: int, max_entries: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        #: The sizes of the values held now.
        self.bytes = 0
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old.size_bytes
        self._entries[key] = value
        self.bytes += value.size_bytes
        while len(self._entries) > 1 and (self.bytes > self.max_bytes or (
                self.max_entries is not None and len(self._entries) > self.max_entries)):
            _, dropped = self._entries.popitem(last=False)
            self.bytes -= dropped.size_bytes
