"""Discovery documents: ``/version``, ``/api``, ``/apis``, the per-group-version
resource lists, and the aggregated (``apidiscovery.k8s.io``) documents.

Clients build their REST mapping from these documents alone: kubectl turns ``po`` into
``pods``, decides whether a kind is namespaced, and learns which subresources exist. So
every field follows upstream's apiserver of the emulated release byte-for-byte where it can (order of
resources, the storage version hash, the kinds of subresources such as ``Scale``).

All functions are pure and deterministic; the REST layer serialises their result, except
the aggregated documents, which :class:`AggregatedDiscovery` serves as bytes joined from
per-group pieces (a CRD change describes its group again, not every group). The response
headers the REST layer must add are described on :func:`negotiate_discovery`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from fakekube.objects.versions import Release, git_commit
from fakekube.api.registry import (
    APPROVAL,
    ATTACH,
    BINDING,
    EPHEMERAL_CONTAINERS,
    EVICTION,
    EXEC,
    FINALIZE,
    LOG,
    PORTFORWARD,
    PROXY,
    RESIZE,
    SCALE,
    STATUS,
    TOKEN,
    RegistryView,
    ResourceType,
)

Doc = dict[str, Any]

DISCOVERY_GROUP = "apidiscovery.k8s.io"
AGGREGATED_KIND = "APIGroupDiscoveryList"
#: Aggregated discovery versions served, most preferred first: v2 alone in every supported
#: release (AggregatedDiscoveryRemoveBetaType is on by default from 1.33, locked from 1.35;
#: reference: an ``Accept`` of v2beta1 alone is a 406, with ``application/json`` after it the
#: legacy document).
AGGREGATED_VERSIONS = ("v2",)

DEFAULT_SERVER_ADDRESS = "127.0.0.1:6443"
#: Aggregated discovery bodies kept per registry (states × /api or /apis × version).
MAX_AGGREGATED_BODIES = 8

_SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    STATUS: ("get", "patch", "update"),
    SCALE: ("get", "patch", "update"),
    BINDING: ("create",),
    EVICTION: ("create",),
    LOG: ("get",),
    TOKEN: ("create",),
    FINALIZE: ("update",),
    APPROVAL: ("get", "patch", "update"),
    EPHEMERAL_CONTAINERS: ("get", "patch", "update"),
    RESIZE: ("get", "patch", "update"),
    ATTACH: ("create", "get"),
    EXEC: ("create", "get"),
    PORTFORWARD: ("create", "get"),
    PROXY: ("create", "delete", "get", "patch", "update"),
}
#: The options kind a connect subresource takes (``PodExecOptions``), after the parent's kind.
_CONNECT_OPTIONS = {ATTACH: "AttachOptions", EXEC: "ExecOptions", PORTFORWARD: "PortForwardOptions",
                    PROXY: "ProxyOptions"}


# --------------------------------------------------------------------------- /version

def version_info(release: Release, patch: int = 0) -> Doc:
    """The ``/version`` document of a kube-apiserver of ``release`` (``v1.36.<patch>``).

    What a native binary of that release answers: its major and minor, ``emulation*`` the
    same (no ``--emulated-version``), ``minCompatibility*`` one minor below (KEP-4330's
    default). Build fields are fixed (:mod:`fakekube.objects.versions`), so two clusters
    answer identically; kubectl ignores what it does not know.
    """
    major, minor = str(release.major), str(release.minor)
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(release.minor - 1),
        "gitVersion": release.git_version(patch),
        "gitCommit": git_commit(release.version, patch),
        "gitTreeState": "clean",
        "buildDate": release.build.build_date,
        "goVersion": release.build.go_version,
        "compiler": "gc",
        "platform": "linux/amd64",
    }


# ------------------------------------------------------------------ legacy discovery

def core_api_versions(server_address: str = DEFAULT_SERVER_ADDRESS) -> Doc:
    """``/api``: the APIVersions document of the core group."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _groups(registry: RegistryView) -> list[str]:
    """Named groups in declaration order (the order /apis lists them)."""
    return [group for group in registry.groups() if group]


def _versions(registry: RegistryView, group: str) -> list[str]:
    """Versions of a group, preferred (first declared) first."""
    return list(dict.fromkeys(rt.version for rt in registry.group_types(group)))


def _api_group(registry: RegistryView, group: str) -> Doc:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(registry, group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(registry: RegistryView) -> Doc:
    """``/apis``: every named group with its versions and preferred version."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(registry, g) for g in _groups(registry)],
    }


def api_group(registry: RegistryView, group: str) -> Doc | None:
    """``/apis/<group>``, or None when the group is not served (the caller answers 404)."""
    if not group or not registry.group_types(group):
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(registry, group)}


#: What a custom resource's discovery lists while its CRD is terminating (no create/update/patch).
TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")


def discovery_verbs(rt: ResourceType) -> list[str]:
    """Built-in verbs sorted; a custom resource's in apiextensions-apiserver's own order."""
    if rt.custom is None:
        return sorted(rt.verbs)
    return list(TERMINATING_VERBS if rt.custom.terminating else rt.verbs)


def storage_version_hash(rt: ResourceType, release: Release) -> str:
    """Upstream's hash: base64 of the first 8 bytes of sha256("group/version/kind"), of the
    storage version (a CRD's versions all share its storage version's hash; a built-in's is
    the release's, fakekube/objects/versions.py: CRDs are stored as v1beta1, events.k8s.io
    Events as core Events, a newly GA version only from the release after)."""
    if rt.custom is not None:
        group, version = rt.group, rt.custom.storage_version
    else:
        group, version = release.storage_group_version(rt.group, rt.plural, rt.version)
    digest = hashlib.sha256(f"{group}/{version}/{rt.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def subresource_kind(rt: ResourceType, sub: str) -> tuple[str, str, str]:
    """(group, version, kind) a subresource answers with; ("", "", kind) means "same GV".

    Mirrors upstream: scale answers ``autoscaling/v1 Scale``, eviction takes a
    ``policy/v1 Eviction``, binding a core ``Binding``, a service account's token an
    ``authentication.k8s.io/v1 TokenRequest``, the connect subresources their options kind
    (``PodExecOptions``), the others the parent kind.
    """
    if sub == TOKEN:
        return ("authentication.k8s.io", "v1", "TokenRequest")
    if sub == SCALE:
        return ("autoscaling", "v1", "Scale")
    if sub == EVICTION:
        return ("policy", "v1", "Eviction")
    if sub == BINDING:
        return ("", "", "Binding")
    if rt.custom is not None:  # apiextensions-apiserver names the group and version
        return (rt.group, rt.version, rt.kind)
    if sub in _CONNECT_OPTIONS:  # PodExecOptions, NodeProxyOptions, ServiceProxyOptions
        return ("", "", rt.kind + _CONNECT_OPTIONS[sub])
    return ("", "", rt.kind)


def subresource_verbs(sub: str) -> list[str]:
    return list(_SUBRESOURCE_VERBS.get(sub, ("get",)))


def _sorted_resources(registry: RegistryView, group: str, version: str) -> list[ResourceType]:
    return sorted(registry.group_version_types(group, version), key=lambda rt: rt.plural)


def _short_names_and_categories(rt: ResourceType) -> Doc:
    """``shortNames`` and ``categories``, present only when the type has some (upstream's omitempty).

    Both discovery formats carry them under the same names, in the same place.
    """
    extra: Doc = {}
    if rt.short_names:
        extra["shortNames"] = list(rt.short_names)
    if rt.categories:
        extra["categories"] = list(rt.categories)
    return extra


def _storage_type(registry: RegistryView, rt: ResourceType) -> ResourceType:
    """The type whose version is stored: for another version of the same resource
    (autoscaling/v1 HPAs, stored as v2) the preferred one, whose hash every version shows."""
    if rt.stored_as is not None and rt.stored_as == (rt.group, rt.plural):
        return registry.by_group_resource(*rt.stored_as) or rt
    return rt


def _api_resource(rt: ResourceType, release: Release, storage: ResourceType | None = None) -> Doc:
    entry: Doc = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": discovery_verbs(rt),
        **_short_names_and_categories(rt),
    }
    if rt.persisted:  # upstream lists a hash only for resources with a storage version
        entry["storageVersionHash"] = storage_version_hash(storage or rt, release)
    return entry


def _api_subresource(rt: ResourceType, sub: str) -> Doc:
    group, version, kind = subresource_kind(rt, sub)
    if rt.custom is not None and sub == STATUS:  # the legacy list names no group for it
        group, version = "", ""
    entry: Doc = {"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced}
    if group or version:
        entry["group"] = group
        entry["version"] = version
    entry["kind"] = kind
    entry["verbs"] = subresource_verbs(sub)
    return entry


def api_resource_list(registry: RegistryView, group: str, version: str) -> Doc | None:
    """``/api/v1`` or ``/apis/<g>/<v>``: resources then their subresources, sorted by name."""
    resources = _sorted_resources(registry, group, version)
    if not resources:
        return None
    entries: list[Doc] = []
    for rt in resources:
        entries.append(_api_resource(rt, registry.release, _storage_type(registry, rt)))
        entries.extend(_api_subresource(rt, sub) for sub in _subresource_order(rt))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": entries,
    }


# -------------------------------------------------------------- aggregated discovery

def _gvk(group: str, version: str, kind: str) -> Doc:
    return {"group": group, "version": version, "kind": kind}


def _discovery_resource(rt: ResourceType) -> Doc:
    entry: Doc = {
        "resource": rt.plural,
        "responseKind": _gvk(rt.group, rt.version, rt.kind) if rt.custom is not None else _gvk("", "", rt.kind),
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": discovery_verbs(rt),
        **_short_names_and_categories(rt),
    }
    if rt.subresources:
        entry["subresources"] = [
            {"subresource": sub, "responseKind": _gvk(*subresource_kind(rt, sub)), "verbs": subresource_verbs(sub)}
            for sub in _subresource_order(rt)
        ]
    return entry


def _subresource_order(rt: ResourceType) -> list[str]:
    """A built-in type's subresources by name; a custom resource's as apiextensions'
    discovery controller appends them: status, then scale."""
    if rt.custom is not None:
        return [sub for sub in ("status", "scale") if sub in rt.subresources]
    return sorted(rt.subresources)


def _discovery_group(registry: RegistryView, group: str) -> Doc:
    metadata: Doc = {"name": group} if group else {}
    if registry.release.null_creation_timestamp:  # ObjectMeta's zero time, until 1.34's omitzero
        metadata["creationTimestamp"] = None
    versions = [
        {
            "version": v,
            "resources": [_discovery_resource(rt) for rt in _sorted_resources(registry, group, v)],
            "freshness": "Current",
        }
        for v in _versions(registry, group)
    ]
    return {"metadata": metadata, "versions": versions}


def aggregated_discovery(registry: RegistryView, core: bool, api_version: str = "v2") -> Doc:
    """The APIGroupDiscoveryList for ``/api`` (``core=True``) or ``/apis``.

    ``api_version`` is one of :data:`AGGREGATED_VERSIONS` (``"v2"``).
    """
    if api_version not in AGGREGATED_VERSIONS:
        raise ValueError(f"unsupported aggregated discovery version {api_version!r}")
    groups = [""] if core else _groups(registry)
    return {
        "kind": AGGREGATED_KIND,
        "apiVersion": f"{DISCOVERY_GROUP}/{api_version}",
        "metadata": {},
        "items": [_discovery_group(registry, g) for g in groups],
    }


class AggregatedDiscovery:
    """One registry's aggregated discovery bodies, joined from per-group JSON pieces.

    A group's piece is kept while the group's types are the same tuple (the registry
    shares it across states until a change touches the group), so after a CRD change only
    that CRD's group is described again and the body costs its bytes, not a pass over every
    type. The bytes are those of ``json.dumps`` of :func:`aggregated_discovery` with
    compact separators; the last :data:`MAX_AGGREGATED_BODIES` bodies are kept whole.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pieces: dict[str, tuple[tuple[ResourceType, ...], bytes]] = {}
        self._bodies: OrderedDict[tuple[int, bool, str], tuple[bytes, str]] = OrderedDict()
        #: Group pieces described so far (a test reads it: only changed groups are described again).
        self.pieces_built = 0

    def body(self, registry: RegistryView, core: bool, api_version: str = "v2") -> tuple[bytes, str]:
        """(JSON bytes, ETag value) of :func:`aggregated_discovery` for the registry's state."""
        if api_version not in AGGREGATED_VERSIONS:
            raise ValueError(f"unsupported aggregated discovery version {api_version!r}")
        key = (registry.generation, core, api_version)
        with self._lock:
            found = self._bodies.get(key)
            if found is not None:
                self._bodies.move_to_end(key)
                return found
        groups = [""] if core else _groups(registry)
        pieces = {group: self._piece(registry, group) for group in groups}
        head = json.dumps({"kind": AGGREGATED_KIND, "apiVersion": f"{DISCOVERY_GROUP}/{api_version}",
                           "metadata": {}}, separators=(",", ":"))
        data = head[:-1].encode() + b',"items":[' + b",".join(piece for _, piece in pieces.values()) + b"]}"
        built = (data, discovery_etag(data))
        with self._lock:
            if not core:  # forget the groups no longer served
                core_piece = self._pieces.get("")
                self._pieces = {**({"": core_piece} if core_piece else {}), **pieces}
            else:
                self._pieces.update(pieces)
            self._bodies[key] = built
            while len(self._bodies) > MAX_AGGREGATED_BODIES:
                self._bodies.popitem(last=False)
        return built

    def _piece(self, registry: RegistryView, group: str) -> tuple[tuple[ResourceType, ...], bytes]:
        types = registry.group_types(group)
        with self._lock:
            found = self._pieces.get(group)
        if found is not None and found[0] is types:
            return found
        self.pieces_built += 1
        return types, json.dumps(_discovery_group(registry, group), separators=(",", ":")).encode()


def aggregated_content_type(api_version: str) -> str:
    """The Content-Type of an aggregated response; client-go checks its g/v/as parameters."""
    return f"application/json;g={DISCOVERY_GROUP};v={api_version};as={AGGREGATED_KIND}"


def discovery_etag(body: bytes) -> str:
    """Upstream's discovery ETag value: uppercase hex sha512 (send it quoted)."""
    return hashlib.sha512(body).hexdigest().upper()


def _parse_media_range(clause: str) -> tuple[str, dict[str, str]]:
    parts = [p.strip() for p in clause.split(";")]
    params: dict[str, str] = {}
    for p in parts[1:]:
        if "=" in p:
            key, _, value = p.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
    return parts[0].lower(), params


def _quality(params: dict[str, str]) -> float:
    try:
        return float(params.get("q", "1"))
    except ValueError:
        return 0.0


def negotiate_discovery(accept_header: str, served: tuple[str, ...] = AGGREGATED_VERSIONS) -> str | None:
    """Which aggregated discovery version to answer ``/api`` or ``/apis`` with, if any.

    Returns the version (``"v2"``) of the client's most preferred (highest q, then
    first listed) ``application/json;g=apidiscovery.k8s.io;v=…;as=APIGroupDiscoveryList``
    clause we serve, or None to answer with the legacy APIVersions/APIGroupList.

    When a version is returned the response must carry:
    ``Content-Type: application/json;g=apidiscovery.k8s.io;v=<v>;as=APIGroupDiscoveryList``
    (:func:`aggregated_content_type`), ``ETag: "<discovery_etag(body)>"`` (quoted),
    ``Vary: Accept`` and ``Cache-Control: public``; a request whose ``If-None-Match``
    equals the quoted ETag gets ``304 Not Modified`` with no body. Legacy responses are
    plain ``application/json``.
    """
    clauses = []
    for index, raw in enumerate(accept_header.split(",")):
        if not raw.strip():
            continue
        media, params = _parse_media_range(raw)
        clauses.append((-_quality(params), index, media, params))
    for neg_q, _, media, params in sorted(clauses):
        if neg_q >= 0 or media not in ("application/json", "application/*", "*/*"):
            continue
        if params.get("g") == DISCOVERY_GROUP and params.get("as") == AGGREGATED_KIND and params.get("v") in served:
            return params["v"]
    return None
