"""The store: objects, the global resourceVersion and the bounded change history."""

from fakekube.store.history import ADDED, DEFAULT_HISTORY_LIMIT, DELETED, MODIFIED, Change, History
from fakekube.store.memory import FieldIndex, IndexFunc, Store, TooOldResourceVersion

__all__ = ["ADDED", "DEFAULT_HISTORY_LIMIT", "DELETED", "MODIFIED", "Change", "FieldIndex", "History", "IndexFunc", "Store",
           "TooOldResourceVersion"]
