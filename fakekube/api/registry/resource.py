"""A resource type's declaration (:class:`ResourceType`) and the :class:`Registry` of them.

A declaration that contradicts itself (an unknown verb or subresource, create-on-update
without update) is refused when it is made, not when a request first needs it.

The registry holds the built-in types for the life of a cluster and the custom resource
types of its established CustomResourceDefinitions, which come and go: every change
builds a new immutable snapshot and swaps it in (copy-on-write), so HTTP threads reading
the registry never see half of a change and never take a lock.
"""

from __future__ import annotations

import bisect
import re
import threading
from typing import Any, Iterable, Iterator, NamedTuple

from fakekube.api.machinery.validation import NameRule, name_is_dns_subdomain
from fakekube.api.registry.strategy import DEFAULT_STRATEGY, Strategy
from fakekube.api.selectors.fieldsets import FieldSet
from fakekube.api.table.columns import TableSpec
from fakekube.objects.versions import DEFAULT_VERSION, Release, release as release_of

Obj = dict[str, Any]

READ_VERBS = ("get", "list", "watch")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
NO_DELETECOLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)
#: A type that is never stored but read: its objects are computed on each read
#: (``Strategy.computed``), e.g. ComponentStatuses.
GET_LIST = ("get", "list")

# Subresource names the REST layer knows how to serve.
STATUS = "status"
SCALE = "scale"
BINDING = "binding"
EVICTION = "eviction"
LOG = "log"
TOKEN = "token"
#: A Namespace's ``spec.finalizers`` (PUT only), which the namespace controller empties.
FINALIZE = "finalize"
#: A CertificateSigningRequest's approval conditions (``kubectl certificate approve``).
APPROVAL = "approval"
#: A pod's ``spec.ephemeralContainers`` (``kubectl debug``) and its in-place resize (1.33).
EPHEMERAL_CONTAINERS = "ephemeralcontainers"
RESIZE = "resize"
#: The connect subresources: streams to a kubelet or a proxied backend, which fakekube
#: lists in discovery and answers with a Status saying it does not simulate them.
ATTACH = "attach"
EXEC = "exec"
PORTFORWARD = "portforward"
PROXY = "proxy"
CONNECT_SUBRESOURCES = (ATTACH, EXEC, PORTFORWARD, PROXY)
SUBRESOURCES = (STATUS, SCALE, BINDING, EVICTION, LOG, TOKEN, FINALIZE, APPROVAL, EPHEMERAL_CONTAINERS, RESIZE,
                *CONNECT_SUBRESOURCES)


class ResourceType:
    """One REST resource, declared once: its names, scope, verbs and subresources, its
    strategy, and every per-type rule the generic layers consult.

    Raises ``ValueError`` when the declaration contradicts itself. Shared by every request
    and thread for the life of the registry, so nothing changes one after it is made.
    """

    #: Immutable once made: snapshots (cluster/statecopy.py) refer to it rather than copy it.
    SNAPSHOT_SHARED = True

    __slots__ = ("group", "version", "kind", "plural", "namespaced", "short_names", "categories", "verbs",
                 "subresources", "strategy", "table", "field_set", "name_rule", "create_on_update",
                 "returns_deleted_object", "persisted", "stored_as", "deprecation", "schema", "custom",
                 "singular_name", "key", "api_version")

    def __init__(self, group: str, version: str, kind: str, plural: str, namespaced: bool,
                 short_names: tuple[str, ...] = (), categories: tuple[str, ...] = (),
                 verbs: tuple[str, ...] = ALL_VERBS, subresources: tuple[str, ...] = (),
                 strategy: Strategy = DEFAULT_STRATEGY, table: TableSpec | None = None,
                 field_set: FieldSet | None = None, name_rule: NameRule = name_is_dns_subdomain,
                 create_on_update: bool = False, returns_deleted_object: bool = False, persisted: bool = True,
                 stored_as: tuple[str, str] | None = None, deprecation: tuple[str, str] | None = None,
                 schema: Obj | None = None, custom: CustomResource | None = None,
                 singular_name: str | None = None) -> None:
        self.group = group
        self.version = version
        self.kind = kind
        self.plural = plural
        self.namespaced = namespaced
        self.short_names = short_names
        self.categories = categories
        self.verbs = verbs
        self.subresources = subresources
        self.strategy = strategy
        #: kubectl's columns (the server-side Table); None: upstream's default convertor
        #: (Name, Created At).
        self.table = table
        #: The fields a fieldSelector may name beyond ``metadata.*``; None: apimachinery's
        #: default (metadata.name and metadata.namespace only).
        self.field_set = field_set
        #: The ``metadata.name`` rule of the type's Validate* function (ValidateNameFunc).
        self.name_rule = name_rule
        #: A PUT of a missing object creates it (upstream's AllowCreateOnUpdate).
        self.create_on_update = create_on_update
        #: A DELETE answers with the deleted object instead of a Status (upstream's
        #: ReturnDeletedObject).
        self.returns_deleted_object = returns_deleted_object
        #: False for upstream's "virtual" resources (access reviews, token reviews): a create
        #: is answered by ``Strategy.review`` and nothing is stored, so no resourceVersion is used.
        self.persisted = persisted
        #: The (group, plural) whose storage this type shares, when it is another group's view
        #: of the same objects (upstream's cohabiting resources: events.k8s.io Events are core
        #: Events). Objects are stored in that type's shape; ``Strategy.to_storage`` and
        #: ``from_storage`` convert at the API's edge. None: stored under its own name.
        self.stored_as = stored_as
        #: Upstream's deprecation of the type: (the release it is deprecated from, its
        #: replacement), e.g. ("1.33", "discovery.k8s.io/v1 EndpointSlice"). From that release
        #: on every request for it carries the apiserver's deprecation warning; an empty
        #: replacement names none (ComponentStatus). None: current.
        self.deprecation = deprecation
        #: The OpenAPI v3 schema of a custom resource's version (its CRD's ``openAPIV3Schema``),
        #: for pruning, validation and server-side apply. None: a built-in type, whose schema is
        #: the served release's definition for its group-version-kind (``wire.schema``).
        self.schema = schema
        #: What only a custom resource type has (its CRD's storage version, scale paths,
        #: terminating state); None for a built-in type.
        self.custom = custom
        #: Discovery's ``singularName`` when it is not the lowercased kind: an aggregated
        #: server's types may name none (metrics-server's ``""``).
        self.singular_name = singular_name
        #: (group, plural) of the objects in the store: its own, or the ``stored_as`` one.
        #: Kept, not computed: every write asks for it a dozen times (and ``api_version``
        #: several), and nothing it derives from changes once the type is made.
        self.key: tuple[str, str] = stored_as or (group, plural)
        self.api_version = f"{group}/{version}" if group else version
        self._check()

    def deprecation_warning(self, kubernetes_version: str) -> str | None:
        """The ``Warning`` text every request for this type gets on ``kubernetes_version``
        (``v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice``)."""
        if self.deprecation is None:
            return None
        since, replacement = self.deprecation
        if _release(kubernetes_version) < _release(since):
            return None
        warning = f"{self.api_version} {self.kind} is deprecated in v{since}+"
        return f"{warning}; use {replacement}" if replacement else warning

    def _check(self) -> None:
        """Refuse a declaration that contradicts itself (``ValueError`` naming every problem)."""
        problems = [f"unknown verb {v!r}" for v in self.verbs if v not in ALL_VERBS]
        problems += [f"unknown subresource {s!r}" for s in self.subresources if s not in SUBRESOURCES]
        if self.create_on_update and "update" not in self.verbs:
            problems.append("create_on_update without the update verb")
        if not self.persisted and self.verbs not in (CREATE_ONLY, GET_LIST):
            problems.append("a type that is never stored can only be created, or only read")
        if problems:
            raise ValueError(f"resource {self.group}/{self.plural}: " + "; ".join(problems))

    @property
    def singular(self) -> str:
        if self.custom is not None:
            return self.custom.singular
        return self.kind.lower() if self.singular_name is None else self.singular_name

    @property
    def list_kind(self) -> str:
        if self.custom is not None:
            return self.custom.list_kind
        return self.kind + "List"

    def view(self, stored: Obj) -> Obj:
        """A stored object as this type's clients see it (converted when ``stored_as``)."""
        return stored if self.stored_as is None else self.strategy.from_storage(stored)

    def view_all(self, stored: list[Obj]) -> list[Obj]:
        """A list's stored objects as this type's clients see them (``view`` of each)."""
        return stored if self.stored_as is None else self.strategy.from_storage_all(stored)

    def storable(self, obj: Obj) -> Obj:
        """A decoded body of this type in the shape its storage holds (the inverse of ``view``)."""
        return obj if self.stored_as is None else self.strategy.to_storage(obj)

    def has_status(self) -> bool:
        return STATUS in self.subresources

    def supports(self, verb: str) -> bool:
        return verb in self.verbs


class ScalePaths(NamedTuple):
    """A CRD version's ``subresources.scale``: where a custom resource keeps its replicas."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str = ""


class CustomResource(NamedTuple):
    """The parts of a custom resource type that come from its CustomResourceDefinition."""

    #: The CRD's ``metadata.name`` (``<plural>.<group>``): whose types these are.
    crd_name: str
    singular: str
    list_kind: str
    #: The version objects are stored in (the CRD's storage version): discovery's hash.
    storage_version: str
    scale: ScalePaths | None = None
    #: The CRD is being deleted: creates are refused, discovery lists fewer verbs.
    terminating: bool = False


def _release(version: str) -> tuple[int, ...]:
    """"1.33" (or "v1.33.2") as comparable numbers."""
    return tuple(int(part) for part in version.lstrip("v").split(".")[:2] if part.isdigit())


GroupVersion = tuple[str, str]
#: A type's place in serving order: (0, i) the i-th built-in, (1, group, version order,
#: plural) a custom type, (2, j) the j-th aggregated type.
_Rank = tuple[Any, ...]


class _Snapshot:
    """One immutable state of the registry: every type in serving order, and its indexes.

    The next state after a CRD change is made from this one (:meth:`with_owner`): only the
    CRD's groups are indexed again and every other group's entries are shared, so a change
    costs the size of its groups plus C-speed copies of the top-level dicts, not a Python
    pass over every type. Whole-registry lists (group-versions, groups, served kinds) are
    computed on first use, once per state.
    """

    #: Immutable once made: snapshots (cluster/statecopy.py) refer to it rather than copy it.
    SNAPSHOT_SHARED = True

    __slots__ = ("serial", "builtin", "aggregated", "fixed_rank", "custom", "custom_keys", "custom_types", "all",
                 "by_path", "by_kind", "by_group_resource", "by_group", "by_group_version", "_group_versions",
                 "_groups", "_served_kinds")

    def __init__(self, serial: int, builtin: tuple[ResourceType, ...], aggregated: tuple[ResourceType, ...],
                 fixed_rank: dict[int, _Rank]) -> None:
        self.serial = serial
        self.builtin = builtin
        self.aggregated = aggregated
        #: id(type) → rank of the built-in and aggregated types (alive as long as the registry).
        self.fixed_rank = fixed_rank
        #: CRD name → the types it serves.
        self.custom: dict[str, tuple[ResourceType, ...]] = {}
        #: Custom types in serving order, and their ranks' tails (group, version order, plural).
        self.custom_keys: list[tuple[Any, ...]] = []
        self.custom_types: list[ResourceType] = []
        self.all: tuple[ResourceType, ...] = ()
        self.by_path: dict[tuple[str, str, str], ResourceType] = {}
        self.by_kind: dict[tuple[str, str], ResourceType] = {}
        self.by_group_resource: dict[tuple[str, str], ResourceType] = {}
        #: Group → its types in serving order; group-version → its types. A group's tuple is
        #: the same object in every state until a change touches the group.
        self.by_group: dict[str, tuple[ResourceType, ...]] = {}
        self.by_group_version: dict[GroupVersion, tuple[ResourceType, ...]] = {}
        self._group_versions: tuple[GroupVersion, ...] | None = None
        self._groups: tuple[str, ...] | None = None
        self._served_kinds: frozenset[tuple[str, str]] | None = None

    @classmethod
    def initial(cls, builtin: tuple[ResourceType, ...], aggregated: tuple[ResourceType, ...],
                serial: int = 0) -> _Snapshot:
        """Built-in and aggregated types alone (``ValueError`` if two share a URL)."""
        rank: dict[int, _Rank] = {id(rt): (0, i) for i, rt in enumerate(builtin)}
        rank.update({id(rt): (2, j) for j, rt in enumerate(aggregated)})
        snap = cls(serial, builtin, aggregated, rank)
        snap.all = builtin + aggregated
        groups: dict[str, list[ResourceType]] = {}
        for rt in snap.all:
            _add_path(snap.by_path, rt)
            groups.setdefault(rt.group, []).append(rt)
        for group, types in groups.items():
            snap.by_group[group] = tuple(types)
            _index_group(snap.by_group[group], snap.by_kind, snap.by_group_resource, snap.by_group_version)
        return snap

    def with_owner(self, owner: str, wanted: tuple[ResourceType, ...]) -> _Snapshot:
        """The next state: CRD ``owner`` serves ``wanted`` (``ValueError`` if a URL is taken)."""
        old = self.custom.get(owner, ())
        nxt = _Snapshot(self.serial + 1, self.builtin, self.aggregated, self.fixed_rank)
        nxt.custom = {k: v for k, v in self.custom.items() if k != owner} if old else dict(self.custom)
        if wanted:
            nxt.custom[owner] = wanted
        nxt.by_path = dict(self.by_path)
        for rt in old:
            del nxt.by_path[(rt.group, rt.version, rt.plural)]
        for rt in wanted:
            _add_path(nxt.by_path, rt)
        nxt.custom_keys, nxt.custom_types = list(self.custom_keys), list(self.custom_types)
        for rt in old:
            where = bisect.bisect_left(nxt.custom_keys, _custom_key(rt))
            del nxt.custom_keys[where], nxt.custom_types[where]
        for rt in wanted:
            key = _custom_key(rt)
            where = bisect.bisect_left(nxt.custom_keys, key)
            nxt.custom_keys.insert(where, key)
            nxt.custom_types.insert(where, rt)
        nxt.all = self.builtin + tuple(nxt.custom_types) + self.aggregated
        nxt._regroup(self, old, wanted)
        return nxt

    def _regroup(self, prev: _Snapshot, old: tuple[ResourceType, ...], wanted: tuple[ResourceType, ...]) -> None:
        """Index again the groups ``old`` and ``wanted`` belong to; share every other group's."""
        self.by_group, self.by_group_version = dict(prev.by_group), dict(prev.by_group_version)
        self.by_kind, self.by_group_resource = dict(prev.by_kind), dict(prev.by_group_resource)
        gone = {id(rt) for rt in old}
        for group in sorted({rt.group for rt in old} | {rt.group for rt in wanted}):
            before = prev.by_group.get(group, ())
            kept = [rt for rt in before if id(rt) not in gone] + [rt for rt in wanted if rt.group == group]
            after = tuple(sorted(kept, key=self._rank))
            _unindex_group(before, self.by_kind, self.by_group_resource, self.by_group_version)
            _index_group(after, self.by_kind, self.by_group_resource, self.by_group_version)
            if after:
                self.by_group[group] = after
            else:
                self.by_group.pop(group, None)

    def _rank(self, rt: ResourceType) -> _Rank:
        fixed = self.fixed_rank.get(id(rt))
        return fixed if fixed is not None else (1, *_custom_key(rt))

    def group_versions(self) -> tuple[GroupVersion, ...]:
        found = self._group_versions
        if found is None:
            found = self._group_versions = tuple(dict.fromkeys((rt.group, rt.version) for rt in self.all))
        return found

    def groups(self) -> tuple[str, ...]:
        found = self._groups
        if found is None:
            found = self._groups = tuple(dict.fromkeys(group for group, _ in self.group_versions()))
        return found

    def served_kinds(self) -> frozenset[tuple[str, str]]:
        found = self._served_kinds
        if found is None:
            found = self._served_kinds = frozenset(self.by_kind)
        return found


def _custom_key(rt: ResourceType) -> tuple[str, tuple[int, int, int, str], str]:
    """Custom types after the built-ins: groups by name (every CRD group has upstream's
    group priority 1000, below every built-in group), versions by kube-aware version
    order (all CRD versions have version priority 100), types by plural."""
    return (rt.group, kube_version_sort_key(rt.version), rt.plural)


def _add_path(by_path: dict[tuple[str, str, str], ResourceType], rt: ResourceType) -> None:
    path_key = (rt.group, rt.version, rt.plural)
    if path_key in by_path:
        raise ValueError(f"resource declared twice: {path_key}")
    by_path[path_key] = rt


def _unindex_group(types: tuple[ResourceType, ...], by_kind: dict, by_group_resource: dict,
                   by_group_version: dict) -> None:
    """Drop every entry of one group (the keys all name its group, so no other group's go)."""
    for rt in types:
        by_kind.pop((rt.api_version, rt.kind), None)
        by_group_resource.pop((rt.group, rt.plural), None)
        by_group_version.pop((rt.group, rt.version), None)


def _index_group(types: tuple[ResourceType, ...], by_kind: dict, by_group_resource: dict,
                 by_group_version: dict) -> None:
    """Enter one group's types, in serving order: the first of a kind or resource wins."""
    versions: dict[GroupVersion, list[ResourceType]] = {}
    for rt in types:
        by_kind.setdefault((rt.api_version, rt.kind), rt)
        by_group_resource.setdefault((rt.group, rt.plural), rt)
        versions.setdefault((rt.group, rt.version), []).append(rt)
    for gv, members in versions.items():
        by_group_version[gv] = tuple(members)


def kube_version_sort_key(version: str) -> tuple[int, int, int, str]:
    """Upstream's ``CompareKubeAwareVersionStrings`` as a sort key (most preferred first):
    GA before beta before alpha, higher numbers first; other strings last, alphabetically."""
    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, "")


class RegistryView:
    """Lookups in one state of a registry. :meth:`Registry.pinned` gives one that stays on
    the state it was taken from, so a document built from many lookups (discovery,
    OpenAPI) describes one state even while CRDs change."""

    def __init__(self, snapshot: _Snapshot, release: Release) -> None:
        self._snap = snapshot
        #: The Kubernetes release this registry serves (fakekube/objects/versions.py): which
        #: built-in types it has, and what discovery says of them.
        self.release = release

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(self._snap.all)

    def __len__(self) -> int:
        return len(self._snap.all)

    @property
    def generation(self) -> int:
        """Changes to the custom types before this state (0: only built-ins ever served)."""
        return self._snap.serial

    def custom_owners(self) -> list[str]:
        """The CRDs whose types are served, by name."""
        return sorted(self._snap.custom)

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The type served at a URL's (group, version, plural), or None (a 404)."""
        return self._snap.by_path.get((group, version, plural))

    def lookup(self, group: str, version: str, plural: str) -> ResourceType:
        """The type served as (group, version, plural); ``KeyError`` when there is none, so
        a misspelt name in code fails where it is written. URLs use :meth:`find`."""
        found = self._snap.by_path.get((group, version, plural))
        if found is None:
            raise KeyError(f"no resource type {group}/{version}/{plural} is registered")
        return found

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return self._snap.by_kind.get((api_version, kind))

    def served_kinds(self) -> frozenset[tuple[str, str]]:
        """Every (apiVersion, kind) served now."""
        return self._snap.served_kinds()

    def __getitem__(self, key: tuple[str, str]) -> ResourceType:
        """The type served as (group, plural); ``KeyError`` when there is none, so a
        misspelt name fails loudly where :meth:`by_group_resource` would answer None."""
        found = self.by_group_resource(*key)
        if found is None:
            raise KeyError(f"no resource type {key[0]}/{key[1]} is registered")
        return found

    def by_group_resource(self, group: str, plural: str) -> ResourceType | None:
        """The first served version of (group, plural): the preferred one."""
        return self._snap.by_group_resource.get((group, plural))

    def group_versions(self) -> list[tuple[str, str]]:
        """(group, version) pairs in serving order, core ("") first."""
        return list(self._snap.group_versions())

    def groups(self) -> tuple[str, ...]:
        """Groups in serving order, core ("") first."""
        return self._snap.groups()

    def group_types(self, group: str) -> tuple[ResourceType, ...]:
        """A group's types in serving order (empty: not served). The same tuple object in
        every state until a change touches the group, so caches of per-group documents
        check it by identity."""
        return self._snap.by_group.get(group, ())

    def group_version_types(self, group: str, version: str) -> tuple[ResourceType, ...]:
        """A group-version's types in serving order; the same object while its group is unchanged."""
        return self._snap.by_group_version.get((group, version), ())

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return list(self._snap.by_group_version.get((group, version), ()))

    def custom_group_versions(self) -> list[tuple[str, str]]:
        """(group, version) of every custom type, sorted by group then version order."""
        return list(dict.fromkeys((rt.group, rt.version) for rt in self._snap.custom_types))

    def pinned(self) -> RegistryView:
        """Lookups that stay on the current state."""
        return RegistryView(self._snap, self.release)


class Registry(RegistryView):
    """All resource types served, looked up by URL path, by kind, or by short name.

    Iteration order is the serving order (built-ins in declaration order, then custom
    types), so discovery and OpenAPI output are stable byte-for-byte. Custom types are
    set per CRD (:meth:`set_custom`); ``generation`` counts the changes, so caches of
    documents built from the registry know when to rebuild.
    """

    def __init__(self, resources: Iterable[ResourceType], aggregated: Iterable[ResourceType] = (),
                 release: Release | None = None) -> None:
        """``aggregated``: types an add-on's APIService serves (metrics.k8s.io), served after
        every CRD group, as their low group priority (100, below CRDs' 1000) orders them upstream.
        ``release``: the Kubernetes release served (default: fakekube's default release)."""
        super().__init__(_Snapshot.initial(tuple(resources), tuple(aggregated)),
                         release if release is not None else release_of(DEFAULT_VERSION))
        self._write_lock = threading.Lock()

    # -- custom resource types ---------------------------------------------------------
    def set_custom(self, owner: str, types: Iterable[ResourceType]) -> bool:
        """Serve ``types`` for CRD ``owner`` from now on, replacing what it served before
        (none: stop serving it). Returns whether anything changed. A type whose URL another
        type already has is refused with ``ValueError`` and nothing changes. The caller
        decides when a CRD changed; this swaps even equal declarations in."""
        wanted = tuple(types)
        with self._write_lock:
            snap = self._snap
            if not snap.custom.get(owner) and not wanted:
                return False
            self._snap = snap.with_owner(owner, wanted)
            return True

    def clear_custom(self) -> None:
        """Back to the built-in types alone (a cluster reset)."""
        with self._write_lock:
            snap = self._snap
            if snap.custom:
                self._snap = _Snapshot.initial(snap.builtin, snap.aggregated, snap.serial + 1)
