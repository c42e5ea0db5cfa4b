"""The immutability guard's frozen containers (check mode).

Stored objects are shared: every reader gets the very dict the store keeps, and a write
makes a new one (DESIGN.md, "Stored objects are immutable"). Editing a stored object in
place would change history under open watches and under other readers without a
resourceVersion. With the guard on, the store keeps deeply frozen copies, so such an
edit raises :class:`StoredObjectMutated` at the line that does it, naming the object.

:class:`FrozenDict` and :class:`FrozenList` are ``dict`` and ``list`` subclasses, so
every reader (``isinstance`` checks, ``json.dumps``, selectors) works unchanged. Every
*copy* is an ordinary mutable container: ``dict(x)``, ``x.copy()``, ``copy.copy``,
``copy.deepcopy``, ``pickle`` and :func:`fakekube.api.machinery.jsonutil.deep_copy`; YAML's
dumpers are taught to write them as plain mappings and sequences.

The guard cannot see code that bypasses the methods (``dict.__setitem__(obj, k, v)``),
nor edits to the dict a caller *passed* to a write after the write (the store keeps its
own copy). Its cost is one deep copy per write, paid only when it is switched on.
"""

from __future__ import annotations

import copy
import functools
import os
from typing import Any, NoReturn

#: Test-only switch: fakekube's own tests/conftest.py sets it to "1" so that clusters
#: built directly with ``Cluster(...)`` all over the suite run with the guard on.
GUARD_ENV = "FAKEKUBE_IMMUTABILITY_GUARD"


def guard_default() -> bool:
    """The guard's default for a cluster built without saying: on when ``GUARD_ENV`` is set.

    Meant as ``ClusterConfig.immutability_guard``'s default factory (a check mode for
    tests, not configuration a user's cluster reads from the environment otherwise).
    """
    return os.environ.get(GUARD_ENV, "") not in ("", "0")


class StoredObjectMutated(TypeError):
    """Code edited a stored object in place (it must copy it and write the copy)."""


class Origin:
    """Which stored object a frozen container belongs to, for the error message."""

    __slots__ = ("resource", "key", "rv")

    def __init__(self, resource: str, key: str, rv: str) -> None:
        self.resource, self.key, self.rv = resource, key, rv

    def __str__(self) -> str:
        return f"{self.resource} {self.key} at resourceVersion {self.rv}"


def _refuse(container: FrozenDict | FrozenList, operation: str) -> NoReturn:
    origin = container._origin
    where = str(origin) if origin is not None else "a stored object"
    raise StoredObjectMutated(
        f"in-place {operation} on stored object {where}: stored objects are shared and immutable; "
        "copy it (fakekube.api.machinery.jsonutil.deep_copy, or dict(...) level by level) and write the copy")


class FrozenDict(dict[Any, Any]):
    """A dict whose every mutating method raises :class:`StoredObjectMutated`."""

    __slots__ = ("_origin",)
    _origin: Origin | None

    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        _refuse(self, f"__setitem__({key!r})")

    def __delitem__(self, key: Any) -> NoReturn:
        _refuse(self, f"__delitem__({key!r})")

    def setdefault(self, key: Any, default: Any = None) -> NoReturn:
        _refuse(self, f"setdefault({key!r})")

    def pop(self, key: Any, *default: Any) -> NoReturn:
        _refuse(self, f"pop({key!r})")

    def popitem(self) -> NoReturn:
        _refuse(self, "popitem()")

    def clear(self) -> NoReturn:
        _refuse(self, "clear()")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(self, "update()")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]  # refuses, unlike __or__
        _refuse(self, "|=")

    # Copies are plain, mutable containers.
    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        memo[id(self)] = result
        for key, value in self.items():
            result[key] = copy.deepcopy(value, memo)
        return result

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__reduce__()


class FrozenList(list[Any]):
    """A list whose every mutating method raises :class:`StoredObjectMutated`."""

    __slots__ = ("_origin",)
    _origin: Origin | None

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse(self, f"__setitem__({index!r})")

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse(self, f"__delitem__({index!r})")

    def append(self, value: Any) -> NoReturn:
        _refuse(self, "append()")

    def extend(self, values: Any) -> NoReturn:
        _refuse(self, "extend()")

    def insert(self, index: Any, value: Any) -> NoReturn:
        _refuse(self, "insert()")

    def remove(self, value: Any) -> NoReturn:
        _refuse(self, "remove()")

    def pop(self, index: Any = -1) -> NoReturn:
        _refuse(self, "pop()")

    def clear(self) -> NoReturn:
        _refuse(self, "clear()")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(self, "sort()")

    def reverse(self) -> NoReturn:
        _refuse(self, "reverse()")

    def __iadd__(self, other: Any) -> NoReturn:  # type: ignore[misc]  # refuses, unlike __add__
        _refuse(self, "+=")

    def __imul__(self, other: Any) -> NoReturn:  # type: ignore[misc]  # refuses, unlike __mul__
        _refuse(self, "*=")

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        result: list[Any] = []
        memo[id(self)] = result
        result.extend(copy.deepcopy(value, memo) for value in self)
        return result

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return self.__reduce__()


def freeze(value: Any, origin: Origin | None = None) -> Any:
    """A deeply frozen copy of a JSON value (scalars are returned as they are)."""
    if isinstance(value, dict):
        frozen_dict = FrozenDict({k: freeze(v, origin) for k, v in value.items()})
        frozen_dict._origin = origin
        return frozen_dict
    if isinstance(value, list):
        frozen_list = FrozenList([freeze(v, origin) for v in value])
        frozen_list._origin = origin
        return frozen_list
    return value


@functools.cache
def teach_yaml() -> None:
    """Dump frozen containers as plain YAML mappings and sequences (safe and full dumpers).

    Called when a guarded store is made (only then do frozen containers exist), so
    PyYAML is not loaded with the package (cold start). Runs once."""
    import yaml
    for representer in (yaml.representer.SafeRepresenter, yaml.representer.Representer):
        representer.add_representer(FrozenDict, yaml.representer.SafeRepresenter.represent_dict)
        representer.add_representer(FrozenList, yaml.representer.SafeRepresenter.represent_list)

