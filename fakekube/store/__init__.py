"""The store: objects, the global resourceVersion and the bounded change history."""

from fakekube.store.deferred import Deferred
from fakekube.store.frozen import GUARD_ENV, FrozenDict, FrozenList, StoredObjectMutated, freeze, guard_default
from fakekube.store.history import ADDED, DEFAULT_HISTORY_LIMIT, DELETED, MODIFIED, Change, History
from fakekube.store.memory import FieldIndex, IndexFunc, Store, TooOldResourceVersion

__all__ = ["ADDED", "DEFAULT_HISTORY_LIMIT", "DELETED", "Deferred", "GUARD_ENV", "MODIFIED", "Change", "FieldIndex", "FrozenDict",
           "FrozenList", "History", "IndexFunc", "Store", "StoredObjectMutated", "TooOldResourceVersion", "freeze", "guard_default"]
