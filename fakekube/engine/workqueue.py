"""A deterministic work queue: first in, first out, each item at most once while queued.

Like client-go's workqueue it is *stingy*: an item added again while it waits keeps its
place instead of queueing twice, so a burst of changes to one object costs one
reconcile. Unlike client-go's it is *ordered*: items come out in the order they were
first added, which is the order of the store changes that caused them — never an order
that depends on hashing or thread timing. It is bounded: past ``limit`` waiting items an
add raises, because a queue that grows without end is a controller loop gone wrong.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

T = TypeVar("T", bound=Hashable)

#: Waiting items allowed at once.
DEFAULT_LIMIT = 1_000_000


class QueueFull(RuntimeError):
    """More items waiting than the queue's limit."""


class WorkQueue(Generic[T]):
    """FIFO of distinct hashable items; thread-safe."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._items: OrderedDict[T, None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, item: T) -> None:
        with self._lock:
            if item in self._items:
                return
            if len(self._items) >= self.limit:
                raise QueueFull(f"work queue holds {self.limit} items: {item!r} refused")
            self._items[item] = None

    def pop(self) -> T | None:
        """The oldest waiting item, or None when empty."""
        with self._lock:
            if not self._items:
                return None
            item, _ = self._items.popitem(last=False)
            return item

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
