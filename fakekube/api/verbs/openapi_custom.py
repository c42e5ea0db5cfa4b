"""OpenAPI v3 documents of custom resource group-versions (``/openapi/v3/apis/<group>/<version>``).

As apiextensions-apiserver's builder (``pkg/controller/openapi/builder``): each served
version's ``openAPIV3Schema`` is published under its REST-friendly name
(``com.example.stable.v1.CronTab``) with ``apiVersion``, ``kind`` and ``metadata`` added
and its ``x-kubernetes-group-version-kind``, beside a ``<Kind>List`` schema, with the
paths and operations every resource gets (so ``kubectl explain`` finds the schema and
kubectl sees the PATCH operation's ``fieldValidation`` parameter). The documents follow
the registry: :class:`CustomDocuments` builds a group-version's again when its types
change, and keeps them in compact form up to :data:`MAX_ENCODED_BYTES`.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, NamedTuple

from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.machinery.sizedcache import SizedLRU
from fakekube.api.registry import RegistryView, ResourceType
from fakekube.api.verbs import openapi
from fakekube.api.wire.schema import SchemaSet

Doc = dict[str, Any]

OBJECT_META = openapi.META + "ObjectMeta"
LIST_META = openapi.META + "ListMeta"
#: Custom documents kept in compact form, in bytes (a small CRD's is about 12 KB of its 80
#: KB: the release's definitions are shared); past it the least recently served is encoded
#: again when asked for.
MAX_ENCODED_BYTES = 64 * 1024 * 1024
#: Definition closures kept (one per set of root definitions: a handful in practice).
MAX_CLOSURES = 64
_INFO = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}

API_VERSION_DOC = ("APIVersion defines the versioned schema of this representation of an object. Servers should "
                   "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
                   "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
KIND_DOC = ("Kind is a string value representing the REST resource this object represents. Servers may infer this "
            "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
METADATA_DOC = ("Standard object's metadata. More info: "
                "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
LIST_METADATA_DOC = ("Standard list metadata. More info: "
                     "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")


def rest_friendly_name(group: str, version: str, kind: str) -> str:
    """``ToRESTFriendlyName("stable.example.com/v1/CronTab")`` → ``com.example.stable.v1.CronTab``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _ref(name: str) -> Doc:
    return {"$ref": "#/components/schemas/" + name}


def _type_meta(schema: Doc) -> Doc:
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"description": API_VERSION_DOC, "type": "string"}
    props["kind"] = {"description": KIND_DOC, "type": "string"}
    return props


def object_schema(rt: ResourceType) -> Doc:
    """The version's schema as published: type meta and ObjectMeta added, GVK tagged."""
    schema: Doc = deep_copy(rt.schema or {"type": "object"})
    schema.setdefault("type", "object")
    props = _type_meta(schema)
    props["metadata"] = {"allOf": [_ref(OBJECT_META)], "default": {}, "description": METADATA_DOC}
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "kind": rt.kind, "version": rt.version}]
    return schema


def list_schema(rt: ResourceType) -> Doc:
    schema: Doc = {"description": f"{rt.list_kind} is a list of {rt.kind}", "required": ["items"], "type": "object"}
    props = _type_meta(schema)
    props["items"] = {"description": f"List of {rt.plural}. More info: "
                                     "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                      "items": _ref(rest_friendly_name(rt.group, rt.version, rt.kind)), "type": "array"}
    props["metadata"] = {"allOf": [_ref(LIST_META)], "default": {}, "description": LIST_METADATA_DOC}
    schema["properties"] = dict(sorted(props.items()))
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "kind": rt.list_kind, "version": rt.version}]
    return schema


class _Parts(NamedTuple):
    """A custom group-version document before encoding: its own schemas, the names of the
    release's definitions it refers to, and its paths."""

    own: dict[str, Doc]
    shared: list[str]
    paths: dict[str, Doc]


def _parts(registry: RegistryView, schema_set: SchemaSet, group: str, version: str,
           closures: dict[frozenset[str], list[str]] | None = None) -> _Parts | None:
    resources = [rt for rt in sorted(registry.group_version_types(group, version), key=lambda rt: rt.plural)
                 if rt.custom is not None]
    if not resources:
        return None
    ops = openapi._GVOps(schema_set, group, version)
    own: dict[str, Doc] = {}
    for rt in resources:
        own[rest_friendly_name(group, version, rt.kind)] = object_schema(rt)
        own[rest_friendly_name(group, version, rt.list_kind)] = list_schema(rt)
    ops.custom_names.update({(group, version, rt.kind): rest_friendly_name(group, version, rt.kind) for rt in resources})
    ops.custom_names.update({(group, version, rt.list_kind): rest_friendly_name(group, version, rt.list_kind)
                             for rt in resources})
    paths: dict[str, Doc] = {f"{ops.prefix}/": {"get": {
        "description": "get available resources", "operationId": f"get{ops.op_prefix}APIResources",
        "responses": openapi._responses(openapi.API_RESOURCE_LIST, [("200", "OK")]), "tags": [ops.tag]}}}
    for rt in resources:
        paths.update(openapi._resource_paths(ops, rt))
    roots = frozenset((ops.roots - set(own)) | {OBJECT_META, LIST_META})
    shared = closures.get(roots) if closures is not None else None
    if shared is None:
        shared = openapi.referenced_definitions(schema_set, roots)
        if closures is not None:
            if len(closures) >= MAX_CLOSURES:
                closures.clear()
            closures[roots] = shared
    return _Parts(own, shared, paths)


def build_custom_document(registry: RegistryView, schema_set: SchemaSet, group: str, version: str,
                          kubernetes_version: str) -> Doc | None:
    """The v3 document of a custom group-version, or None when none of its types is custom."""
    parts = _parts(registry, schema_set, group, version)
    if parts is None:
        return None
    schemas = {name: openapi.convert_definition(name, schema_set.definitions[name]) for name in parts.shared}
    schemas.update(parts.own)
    return {
        "components": {"schemas": dict(sorted(schemas.items()))},
        "info": _INFO,
        "openapi": "3.0.0",
        "paths": dict(sorted(parts.paths.items())),
    }


class _Encoded(NamedTuple):
    """A document's bytes, kept compact: its own schemas' members and the rest encoded, the
    release's definitions (most of its bytes, the same in every custom document) named
    only and spliced in from one shared table when the bytes are asked for."""

    members: tuple[tuple[str, bytes | None], ...]  # by name; None: a release definition
    rest: bytes
    size_bytes: int


def _encode(parts: _Parts) -> _Encoded:
    members: dict[str, bytes | None] = {name: None for name in parts.shared}
    members.update({name: _member(name, schema) for name, schema in parts.own.items()})
    rest = openapi.encode({"info": _INFO, "openapi": "3.0.0", "paths": parts.paths})
    ordered = tuple((name, members[name]) for name in sorted(members))
    return _Encoded(ordered, rest, len(rest) + sum(len(member or b"") for _, member in ordered))


def _join(encoded: _Encoded, shared_member: Callable[[str], bytes]) -> bytes:
    """``openapi.encode(build_custom_document(...))``, spliced."""
    members = [member if member is not None else shared_member(name) for name, member in encoded.members]
    return b'{"components":{"schemas":{' + b",".join(members) + b"}}," + encoded.rest[1:]


def _member(name: str, schema: Doc) -> bytes:
    return json.dumps(name, ensure_ascii=False).encode() + b":" + openapi.encode(schema)


class CustomDocuments:
    """Custom group-version documents of one registry, built when asked for and kept while
    the group-version's types are unchanged (the registry shares a group's types tuple
    across states until a change touches the group), so a CRD change builds only its own
    group's documents again. Kept: every served custom group-version's ETag (forgotten when
    it is no longer served), and documents in compact form (:class:`_Encoded`) up to
    :data:`MAX_ENCODED_BYTES`."""

    def __init__(self, schema_set: SchemaSet, kubernetes_version: str) -> None:
        self._schema_set = schema_set
        self._kubernetes_version = kubernetes_version
        self._lock = threading.Lock()
        self._etags: dict[str, tuple[tuple[ResourceType, ...], str]] = {}
        self._encoded: SizedLRU[tuple[str, str], _Encoded] = SizedLRU(MAX_ENCODED_BYTES)
        #: The release's definitions as encoded members (at most all of the release's),
        #: and the closures of the definitions documents refer to (at most MAX_CLOSURES).
        self._shared: dict[str, bytes] = {}
        self._closures: dict[frozenset[str], list[str]] = {}
        #: Documents built so far (tests read it: a CRD change builds its group's only).
        self.built = 0

    def custom_paths(self, registry: RegistryView) -> list[str]:
        """``apis/<group>/<version>`` of every group-version with custom types, sorted."""
        return sorted(openapi.gv_path(group, version) for group, version in registry.custom_group_versions())

    def etags(self, registry: RegistryView) -> list[tuple[str, str]]:
        """(path, ETag) of every custom group-version, sorted by path; builds the documents
        of group-versions that changed, and forgets those no longer served."""
        paths = self.custom_paths(registry)
        found = [(path, self.document_etag(registry, path)) for path in paths]
        with self._lock:
            if len(self._etags) > len(paths):
                served = set(paths)
                self._etags = {path: entry for path, entry in self._etags.items() if path in served}
        return [(path, etag) for path, etag in found if etag is not None]

    def document_etag(self, registry: RegistryView, path: str) -> str | None:
        """The ETag of a custom group-version's document (built if its types changed)."""
        types = _custom_types(registry, path)
        if types is None:
            return None
        with self._lock:
            entry = self._etags.get(path)
        if entry is not None and entry[0] is types:
            return entry[1]
        built = self.document(registry, path)
        return built[1] if built is not None else None

    def document(self, registry: RegistryView, path: str) -> tuple[bytes, str] | None:
        """(JSON bytes, ETag) of a custom group-version's document, or None when none of
        its types is custom."""
        types = _custom_types(registry, path)
        if types is None:
            return None
        with self._lock:
            entry = self._etags.get(path)
            encoded = self._encoded.get((path, entry[1])) if entry is not None and entry[0] is types else None
        if encoded is not None and entry is not None:
            return _join(encoded, self._shared_member), entry[1]
        group, version = path.split("/")[1:]
        parts = _parts(registry, self._schema_set, group, version, self._closures)  # memo races are benign
        if parts is None:
            return None
        encoded = _encode(parts)
        data = _join(encoded, self._shared_member)
        etag = openapi.etag(data)
        with self._lock:
            self.built += 1
            self._etags[path] = (types, etag)
            self._encoded.put((path, etag), encoded)
        return data, etag

    def _shared_member(self, name: str) -> bytes:
        found = self._shared.get(name)
        if found is None:
            found = self._shared[name] = _member(name, openapi.convert_definition(name, self._schema_set.definitions[name]))
        return found


def _custom_types(registry: RegistryView, path: str) -> tuple[ResourceType, ...] | None:
    """The types of an ``apis/<group>/<version>`` path when one of them is custom."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "apis":
        return None
    types = registry.group_version_types(parts[1], parts[2])
    return types if any(rt.custom is not None for rt in types) else None
