"""A resource type's declaration (:class:`ResourceType`) and the :class:`Registry` of them.

A declaration that contradicts itself (an unknown verb or subresource, create-on-update
without update) is refused when it is made, not when a request first needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from fakekube.api.machinery.validation import NameRule, name_is_dns_subdomain
from fakekube.api.registry.strategy import DEFAULT_STRATEGY, Strategy
from fakekube.api.selectors.fieldsets import FieldSet
from fakekube.api.table.columns import TableSpec

Obj = dict[str, Any]

READ_VERBS = ("get", "list", "watch")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NO_DELETECOLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)

# Subresource names the REST layer knows how to serve.
STATUS = "status"
SCALE = "scale"
BINDING = "binding"
EVICTION = "eviction"
LOG = "log"
TOKEN = "token"
#: A Namespace's ``spec.finalizers`` (PUT only), which the namespace controller empties.
FINALIZE = "finalize"
SUBRESOURCES = (STATUS, SCALE, BINDING, EVICTION, LOG, TOKEN, FINALIZE)


@dataclass(frozen=True)
class ResourceType:
    """One REST resource, declared once: its names, scope, verbs and subresources, its
    strategy, and every per-type rule the generic layers consult.

    Raises ``ValueError`` when the declaration contradicts itself.
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    strategy: Strategy = field(default=DEFAULT_STRATEGY, compare=False)
    #: kubectl's columns (the server-side Table); None: upstream's default convertor
    #: (Name, Created At).
    table: TableSpec | None = field(default=None, compare=False)
    #: The fields a fieldSelector may name beyond ``metadata.*``; None: apimachinery's
    #: default (metadata.name and metadata.namespace only).
    field_set: FieldSet | None = field(default=None, compare=False)
    #: The ``metadata.name`` rule of the type's Validate* function (ValidateNameFunc).
    name_rule: NameRule = field(default=name_is_dns_subdomain, compare=False)
    #: A PUT of a missing object creates it (upstream's AllowCreateOnUpdate).
    create_on_update: bool = False
    #: A DELETE answers with the deleted object instead of a Status (upstream's
    #: ReturnDeletedObject).
    returns_deleted_object: bool = False
    #: False for upstream's "virtual" resources (access reviews, token reviews): a create
    #: is answered by ``Strategy.review`` and nothing is stored, so no resourceVersion is used.
    persisted: bool = True
    #: The (group, plural) whose storage this type shares, when it is another group's view
    #: of the same objects (upstream's cohabiting resources: events.k8s.io Events are core
    #: Events). Objects are stored in that type's shape; ``Strategy.to_storage`` and
    #: ``from_storage`` convert at the API's edge. None: stored under its own name.
    stored_as: tuple[str, str] | None = None
    #: Upstream's deprecation of the type: (the release it is deprecated from, its
    #: replacement), e.g. ("1.33", "discovery.k8s.io/v1 EndpointSlice"). From that release
    #: on every request for it carries the apiserver's deprecation warning. None: current.
    deprecation: tuple[str, str] | None = field(default=None, compare=False)
    #: The OpenAPI v3 schema of a custom resource's version (its CRD's ``openAPIV3Schema``),
    #: for pruning, validation and server-side apply. None: a built-in type, whose schema is
    #: the served release's definition for its group-version-kind (``wire.schema``).
    schema: Obj | None = field(default=None, compare=False)

    def deprecation_warning(self, kubernetes_version: str) -> str | None:
        """The ``Warning`` text every request for this type gets on ``kubernetes_version``
        (``v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice``)."""
        if self.deprecation is None:
            return None
        since, replacement = self.deprecation
        if _release(kubernetes_version) < _release(since):
            return None
        return f"{self.api_version} {self.kind} is deprecated in v{since}+; use {replacement}"

    def __post_init__(self) -> None:
        problems = [f"unknown verb {v!r}" for v in self.verbs if v not in ALL_VERBS]
        problems += [f"unknown subresource {s!r}" for s in self.subresources if s not in SUBRESOURCES]
        if self.create_on_update and "update" not in self.verbs:
            problems.append("create_on_update without the update verb")
        if not self.persisted and self.verbs != CREATE_ONLY:
            problems.append("a type that is never stored can only be created")
        if problems:
            raise ValueError(f"resource {self.group}/{self.plural}: " + "; ".join(problems))

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def key(self) -> tuple[str, str]:
        """(group, plural) of the objects in the store: its own, or the ``stored_as`` one."""
        return self.stored_as or (self.group, self.plural)

    def view(self, stored: Obj) -> Obj:
        """A stored object as this type's clients see it (converted when ``stored_as``)."""
        return stored if self.stored_as is None else self.strategy.from_storage(stored)

    def storable(self, obj: Obj) -> Obj:
        """A decoded body of this type in the shape its storage holds (the inverse of ``view``)."""
        return obj if self.stored_as is None else self.strategy.to_storage(obj)

    def has_status(self) -> bool:
        return STATUS in self.subresources

    def supports(self, verb: str) -> bool:
        return verb in self.verbs


def _release(version: str) -> tuple[int, ...]:
    """"1.33" (or "v1.33.2") as comparable numbers."""
    return tuple(int(part) for part in version.lstrip("v").split(".")[:2] if part.isdigit())


class Registry:
    """All resource types served, looked up by URL path, by kind, or by short name.

    Iteration order is the declaration order, so discovery and OpenAPI output are
    stable byte-for-byte.
    """

    def __init__(self, resources: Iterable[ResourceType]) -> None:
        self._all: list[ResourceType] = list(resources)
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        for rt in self._all:
            path_key = (rt.group, rt.version, rt.plural)
            if path_key in self._by_path:
                raise ValueError(f"resource declared twice: {path_key}")
            self._by_path[path_key] = rt
            self._by_kind.setdefault((rt.api_version, rt.kind), rt)

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at a URL's (group, version, plural), or None (a 404)."""
        return self._by_path.get((group, version, plural))

    def lookup(self, group: str, version: str, plural: str) -> ResourceType:
        """The type served as (group, version, plural); ``KeyError`` when there is none, so
        a misspelt name in code fails where it is written. URLs use :meth:`find`."""
        found = self._by_path.get((group, version, plural))
        if found is None:
            raise KeyError(f"no resource type {group}/{version}/{plural} is registered")
        return found

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((api_version, kind))

    def __getitem__(self, key: tuple[str, str]) -> ResourceType:
        """The type served as (group, plural); ``KeyError`` when there is none, so a
        misspelt name fails loudly where :meth:`by_group_resource` would answer None."""
        found = self.by_group_resource(*key)
        if found is None:
            raise KeyError(f"no resource type {key[0]}/{key[1]} is registered")
        return found

    def by_group_resource(self, group: str, plural: str) -> ResourceType | None:
        for rt in self._all:
            if rt.group == group and rt.plural == plural:
                return rt
        return None

    def group_versions(self) -> list[tuple[str, str]]:
        """(group, version) pairs in declaration order, core ("") first."""
        seen: list[tuple[str, str]] = []
        for rt in self._all:
            if (rt.group, rt.version) not in seen:
                seen.append((rt.group, rt.version))
        return seen

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [rt for rt in self._all if rt.group == group and rt.version == version]
