"""Turning a Kubernetes API path into what it names.

Kubernetes REST paths are uniform, so one parser serves every type (upstream's
``RequestInfoFactory``): ``/api/v1/namespaces/{ns}/{resource}/{name}/{subresource}``
and ``/apis/{group}/{version}/...``, with the namespace subresources ``status`` and
``finalize`` special-cased exactly as upstream does.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

#: Subresources of a Namespace object itself, not resources inside a namespace.
NAMESPACE_SUBRESOURCES = ("status", "finalize")
#: The one subresource whose path goes on (``{name}/proxy/{path:*}``).
PROXY = "proxy"


class ResourcePath:
    """A request for a resource collection, an object, or an object's subresource.

    Shared from :func:`parse`'s cache, so never changed once made. A ``__slots__`` class,
    not a NamedTuple: a request reads it dozens of times, and a slot is read several times
    faster than a NamedTuple field."""

    __slots__ = ("group", "version", "plural", "namespace", "name", "subresource", "legacy_watch", "subpath")

    def __init__(self, group: str, version: str, plural: str, namespace: str = "", name: str = "",
                 subresource: str = "", legacy_watch: bool = False, subpath: str = "") -> None:
        self.group = group
        self.version = version
        self.plural = plural
        self.namespace = namespace
        self.name = name
        self.subresource = subresource
        self.legacy_watch = legacy_watch
        #: What follows a ``proxy`` subresource (``/pods/web/proxy/healthz`` → ``healthz``).
        self.subpath = subpath


class DiscoveryPath(NamedTuple):
    """``/api``, ``/apis``, ``/apis/{group}`` or a group-version resource list."""

    core: bool
    group: str = ""
    version: str = ""


@functools.lru_cache(maxsize=1024)  # clients repeat their paths; the answers are immutable
def parse(path: str) -> ResourcePath | DiscoveryPath | None:
    """What ``path`` refers to, or None for a path outside the resource API."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    if parts[0] == "api":
        if len(parts) == 1:
            return DiscoveryPath(core=True)
        return _versioned("", parts[1], parts[2:], core=True)
    if parts[0] == "apis":
        if len(parts) == 1:
            return DiscoveryPath(core=False)
        if len(parts) == 2:
            return DiscoveryPath(core=False, group=parts[1])
        return _versioned(parts[1], parts[2], parts[3:], core=False)
    return None


def _versioned(group: str, version: str, rest: list[str], core: bool) -> ResourcePath | DiscoveryPath | None:
    if not rest:
        return DiscoveryPath(core=core, group=group, version=version)
    legacy_watch = False
    if rest[0] == "watch":
        legacy_watch, rest = True, rest[1:]
        if not rest:
            return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
        else:
            # The namespace object itself: /namespaces/{name}[/status|/finalize].
            subresource = rest[2] if len(rest) > 2 else ""
            if len(rest) > 3:
                return None
            return ResourcePath(group, version, "namespaces", "", namespace, subresource, legacy_watch)
    subpath = ""
    if len(rest) > 3 and rest[2] == PROXY:  # {name}/proxy/{path:*}, as upstream routes it
        rest, subpath = rest[:3], "/".join(rest[3:])
    if len(rest) > 3:
        return None
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    return ResourcePath(group, version, plural, namespace, name, subresource, legacy_watch, subpath)
