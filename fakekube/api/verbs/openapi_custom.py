"""OpenAPI v3 documents of custom resource group-versions (``/openapi/v3/apis/<group>/<version>``).

As apiextensions-apiserver's builder (``pkg/controller/openapi/builder``): each served
version's ``openAPIV3Schema`` is published under its REST-friendly name
(``com.example.stable.v1.CronTab``) with ``apiVersion``, ``kind`` and ``metadata`` added
and its ``x-kubernetes-group-version-kind``, beside a ``<Kind>List`` schema, with the
paths and operations every resource gets (so ``kubectl explain`` finds the schema and
kubectl sees the PATCH operation's ``fieldValidation`` parameter). The documents follow
the registry: a change of custom types (``Registry.generation``) builds them afresh;
:class:`CustomDocuments` keeps the last :data:`MAX_DOCUMENTS` built.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.verbs import openapi
from fakekube.api.wire.schema import SchemaSet

Doc = dict[str, Any]

OBJECT_META = openapi.META + "ObjectMeta"
LIST_META = openapi.META + "ListMeta"
#: Custom documents kept (each a few KB); past it the least recently served is rebuilt on demand.
MAX_DOCUMENTS = 256

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


def build_custom_document(registry: Registry, schema_set: SchemaSet, group: str, version: str,
                          kubernetes_version: str) -> Doc | None:
    """The v3 document of a custom group-version, or None when none of its types is custom."""
    resources = [rt for rt in sorted(registry.in_group_version(group, version), key=lambda rt: rt.plural)
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
    roots = (ops.roots - set(own)) | {OBJECT_META, LIST_META}
    schemas = {name: openapi.convert_definition(name, schema_set.definitions[name])
               for name in openapi.referenced_definitions(schema_set, roots)}
    schemas.update(own)
    return {
        "components": {"schemas": dict(sorted(schemas.items()))},
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "openapi": "3.0.0",
        "paths": dict(sorted(paths.items())),
    }


class CustomDocuments:
    """Custom group-version documents of one registry state, built on demand and kept
    (bounded) until the registry's custom types change."""

    def __init__(self, schema_set: SchemaSet, kubernetes_version: str) -> None:
        self._schema_set = schema_set
        self._kubernetes_version = kubernetes_version
        self._lock = threading.Lock()
        self._built: OrderedDict[tuple[int, int, str], tuple[bytes, str] | None] = OrderedDict()

    def custom_paths(self, registry: Registry) -> list[str]:
        """``apis/<group>/<version>`` of every group-version with custom types."""
        return sorted({openapi.gv_path(rt.group, rt.version) for rt in registry if rt.custom is not None})

    def document(self, registry: Registry, path: str) -> tuple[bytes, str] | None:
        key = (id(registry), registry.generation, path)
        with self._lock:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key]
        built = self._build(registry, path)
        with self._lock:
            self._built[key] = built
            while len(self._built) > MAX_DOCUMENTS:
                self._built.popitem(last=False)
        return built

    def _build(self, registry: Registry, path: str) -> tuple[bytes, str] | None:
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "apis":
            return None
        doc = build_custom_document(registry, self._schema_set, parts[1], parts[2], self._kubernetes_version)
        if doc is None:
            return None
        data = openapi.encode(doc)
        return data, openapi.etag(data)
