"""OpenAPI v3 documents of custom resource group-versions (``/openapi/v3/apis/<group>/<version>``).

As apiextensions-apiserver's builder (``pkg/controller/openapi/builder``): each served
version's ``openAPIV3Schema`` is published under its REST-friendly name
(``com.example.stable.v1.CronTab``) with ``apiVersion``, ``kind`` and ``metadata`` added
and its ``x-kubernetes-group-version-kind``, beside a ``<Kind>List`` schema, with the
paths and operations every resource gets (so ``kubectl explain`` finds the schema and
kubectl sees the PATCH operation's ``fieldValidation`` parameter). The documents follow
the registry: :class:`CustomDocuments` splices a group-version's from its types' encoded
parts, so a CRD change encodes only that CRD's types.
"""

from __future__ import annotations

import json
import threading
from typing import Any, NamedTuple

from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.machinery.sizedcache import SizedLRU
from fakekube.api.registry import RegistryView, ResourceType
from fakekube.api.verbs import openapi
from fakekube.api.wire.schema import SchemaSet

Doc = dict[str, Any]

OBJECT_META = openapi.META + "ObjectMeta"
LIST_META = openapi.META + "ListMeta"
#: Custom types' encoded parts kept, in bytes (a small CRD's are about 36 KB: its paths and
#: schemas; the release's definitions, most of a document, are one shared table); past it
#: the least recently used are encoded again when a document needs them.
MAX_PARTS_BYTES = 64 * 1024 * 1024
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


EMBEDDED_API_VERSION_DOC = ("apiVersion defines the versioned schema of this representation of an object. More info: "
                            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources")
EMBEDDED_KIND_DOC = ("kind is a string value representing the type of this object. In CamelCase. More info: "
                     "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")


def _embedded_properties(schema: Any) -> None:
    """addEmbeddedProperties: every ``x-kubernetes-embedded-resource`` object in the schema
    gets ``apiVersion``, ``kind`` and ``metadata`` properties and requires the first two
    (in place; the schema is a copy)."""
    if not isinstance(schema, dict):
        return
    for prop in (schema.get("properties") or {}).values() if isinstance(schema.get("properties"), dict) else ():
        _embedded_properties(prop)
    _embedded_properties(schema.get("items"))
    _embedded_properties(schema.get("additionalProperties"))
    if schema.get("x-kubernetes-embedded-resource") is not True:
        return
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"description": EMBEDDED_API_VERSION_DOC, "type": "string"}
    props["kind"] = {"description": EMBEDDED_KIND_DOC, "type": "string"}
    props["metadata"] = {"allOf": [_ref(OBJECT_META)], "description": METADATA_DOC}
    schema["properties"] = dict(sorted(props.items()))
    required = schema.setdefault("required", [])
    for name in ("kind", "apiVersion"):
        if name not in required:
            required.append(name)


def object_schema(rt: ResourceType) -> Doc:
    """The version's schema as published: type meta and ObjectMeta added (to embedded
    resources too), GVK tagged."""
    schema: Doc = deep_copy(rt.schema or {"type": "object"})
    schema.setdefault("type", "object")
    _embedded_properties(schema)
    props = _type_meta(schema)
    props["metadata"] = {"allOf": [_ref(OBJECT_META)], "description": METADATA_DOC}
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "kind": rt.kind, "version": rt.version}]
    return schema


def list_schema(rt: ResourceType) -> Doc:
    schema: Doc = {"description": f"{rt.list_kind} is a list of {rt.kind}", "required": ["items"], "type": "object"}
    props = _type_meta(schema)
    props["items"] = {"description": f"List of {rt.plural}. More info: "
                                     "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                      "items": _ref(rest_friendly_name(rt.group, rt.version, rt.kind)), "type": "array"}
    props["metadata"] = {"allOf": [_ref(LIST_META)], "description": LIST_METADATA_DOC}
    schema["properties"] = dict(sorted(props.items()))
    schema["x-kubernetes-group-version-kind"] = [{"group": rt.group, "kind": rt.list_kind, "version": rt.version}]
    return schema


def _root_path(ops: openapi._GVOps) -> dict[str, Doc]:
    return {f"{ops.prefix}/": {"get": {
        "description": "get available resources", "operationId": f"get{ops.op_prefix}APIResources",
        "responses": openapi._responses(openapi.API_RESOURCE_LIST, [("200", "OK")]), "tags": [ops.tag]}}}


def _own_schemas(rt: ResourceType) -> dict[str, Doc]:
    return {rest_friendly_name(rt.group, rt.version, rt.kind): object_schema(rt),
            rest_friendly_name(rt.group, rt.version, rt.list_kind): list_schema(rt)}


def _custom_resources(registry: RegistryView, group: str, version: str) -> list[ResourceType]:
    return [rt for rt in sorted(registry.group_version_types(group, version), key=lambda rt: rt.plural)
            if rt.custom is not None]


def build_custom_document(registry: RegistryView, schema_set: SchemaSet, group: str, version: str,
                          kubernetes_version: str) -> Doc | None:
    """The v3 document of a custom group-version built from scratch, or None when none of
    its types is custom: what :class:`CustomDocuments` splices from per-type parts (the
    tests hold the two equal)."""
    resources = _custom_resources(registry, group, version)
    if not resources:
        return None
    ops = openapi._GVOps(schema_set, group, version)
    own: dict[str, Doc] = {}
    for rt in resources:
        own.update(_own_schemas(rt))
        ops.custom_names.update({(group, version, rt.kind): rest_friendly_name(group, version, rt.kind),
                                 (group, version, rt.list_kind): rest_friendly_name(group, version, rt.list_kind)})
    paths = _root_path(ops)
    for rt in resources:
        paths.update(openapi._resource_paths(ops, rt))
    roots = (ops.roots - set(own)) | {OBJECT_META, LIST_META}
    schemas = {name: openapi.convert_definition(name, schema_set.definitions[name], schema_set.minor)
               for name in openapi.referenced_definitions(schema_set, roots)}
    schemas.update(own)
    return {
        "components": {"schemas": dict(sorted(schemas.items()))},
        "info": _INFO,
        "openapi": "3.0.0",
        "paths": dict(sorted(paths.items())),
    }


class _TypeParts(NamedTuple):
    """One custom type's share of its group-version's document, encoded: its paths and its
    own schemas as members (``"name":{...}``), and the definitions its paths refer to."""

    rt: ResourceType
    paths: tuple[tuple[str, bytes], ...]
    own: tuple[tuple[str, bytes], ...]
    roots: frozenset[str]
    size_bytes: int


def _type_parts(rt: ResourceType, schema_set: SchemaSet) -> _TypeParts:
    ops = openapi._GVOps(schema_set, rt.group, rt.version)
    ops.custom_names.update({(rt.group, rt.version, rt.kind): rest_friendly_name(rt.group, rt.version, rt.kind),
                             (rt.group, rt.version, rt.list_kind):
                                 rest_friendly_name(rt.group, rt.version, rt.list_kind)})
    paths = tuple((path, _member(path, item)) for path, item in openapi._resource_paths(ops, rt).items())
    own = tuple((name, _member(name, schema)) for name, schema in _own_schemas(rt).items())
    size = sum(len(member) for _, member in paths + own)
    return _TypeParts(rt, paths, own, frozenset(ops.roots), size)


def _member(name: str, schema: Doc) -> bytes:
    return json.dumps(name, ensure_ascii=False).encode() + b":" + openapi.encode(schema)


class CustomDocuments:
    """Custom group-version documents of one registry, spliced from per-type parts: a
    type's paths and schemas are encoded once (kept while it is the same type object,
    which the registry keeps until its CRD changes) and a group-version's document is its
    types' parts, the release's definitions (one shared table) and its root path joined in
    order, byte for byte :func:`build_custom_document`'s. A CRD change encodes only its own
    types, whatever the size of its group. Kept: every served custom group-version's ETag
    (forgotten when it is no longer served) and type parts up to :data:`MAX_PARTS_BYTES`."""

    def __init__(self, schema_set: SchemaSet, kubernetes_version: str) -> None:
        self._schema_set = schema_set
        self._kubernetes_version = kubernetes_version
        self._lock = threading.Lock()
        self._etags: dict[str, tuple[tuple[ResourceType, ...], str]] = {}
        #: Type parts by id(type) (checked against the type itself: ids are reused).
        self._types: SizedLRU[int, _TypeParts] = SizedLRU(MAX_PARTS_BYTES)
        #: The release's definitions as encoded members (at most all of the release's),
        #: and the closures of the definitions documents refer to (at most MAX_CLOSURES).
        self._shared: dict[str, bytes] = {}
        self._closures: dict[frozenset[str], list[str]] = {}
        #: Type parts encoded so far (tests read it: a CRD change encodes its own types).
        self.built = 0

    def custom_paths(self, registry: RegistryView) -> list[str]:
        """``apis/<group>/<version>`` of every group-version with custom types, sorted."""
        return sorted(openapi.gv_path(group, version) for group, version in registry.custom_group_versions())

    def etags(self, registry: RegistryView) -> list[tuple[str, str]]:
        """(path, ETag) of every custom group-version, sorted by path; assembles the
        documents of group-versions that changed, and forgets those no longer served."""
        paths = self.custom_paths(registry)
        found = [(path, self.document_etag(registry, path)) for path in paths]
        with self._lock:
            if len(self._etags) > len(paths):
                served = set(paths)
                self._etags = {path: entry for path, entry in self._etags.items() if path in served}
        return [(path, etag) for path, etag in found if etag is not None]

    def document_etag(self, registry: RegistryView, path: str) -> str | None:
        """The ETag of a custom group-version's document (assembled if its types changed)."""
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
        group, version = path.split("/")[1:]
        data = self._join(group, version, [self._parts(rt) for rt in _custom_resources(registry, group, version)])
        with self._lock:
            entry = self._etags.get(path)
        if entry is not None and entry[0] is types:
            return data, entry[1]
        etag = openapi.etag(data)
        with self._lock:
            self._etags[path] = (types, etag)
        return data, etag

    def _parts(self, rt: ResourceType) -> _TypeParts:
        with self._lock:
            found = self._types.get(id(rt))
        if found is not None and found.rt is rt:
            return found
        parts = _type_parts(rt, self._schema_set)
        with self._lock:
            self._types.put(id(rt), parts)
            self.built += 1
        return parts

    def _join(self, group: str, version: str, parts: list[_TypeParts]) -> bytes:
        ops = openapi._GVOps(self._schema_set, group, version)
        own = {name: member for part in parts for name, member in part.own}
        roots = frozenset(ops.roots.union(*(part.roots for part in parts)) - set(own) | {OBJECT_META, LIST_META})
        members = {name: self._shared_member(name) for name in self._closure(roots)}
        members.update(own)
        paths = dict(path for part in parts for path in part.paths)
        paths.update((path, _member(path, item)) for path, item in _root_path(ops).items())
        return b"".join([b'{"components":{"schemas":{', b",".join([members[name] for name in sorted(members)]),
                         b'}},"info":', openapi.encode(_INFO), b',"openapi":"3.0.0","paths":{',
                         b",".join([paths[path] for path in sorted(paths)]), b"}}"])

    def _closure(self, roots: frozenset[str]) -> list[str]:
        found = self._closures.get(roots)  # memo races are benign
        if found is None:
            found = openapi.referenced_definitions(self._schema_set, roots)
            if len(self._closures) >= MAX_CLOSURES:
                self._closures.clear()
            self._closures[roots] = found
        return found

    def _shared_member(self, name: str) -> bytes:
        found = self._shared.get(name)
        if found is None:
            found = self._shared[name] = _member(name, openapi.convert_definition(name, self._schema_set.definitions[name], self._schema_set.minor))
        return found


def _custom_types(registry: RegistryView, path: str) -> tuple[ResourceType, ...] | None:
    """The types of an ``apis/<group>/<version>`` path when one of them is custom."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "apis":
        return None
    types = registry.group_version_types(parts[1], parts[2])
    return types if any(rt.custom is not None for rt in types) else None
