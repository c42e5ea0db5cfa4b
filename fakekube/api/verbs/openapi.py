"""OpenAPI v3 documents: ``/openapi/v3`` and one document per group-version.

kubectl reads these for three things, and each shapes what we emit:

* ``kubectl apply``/``create``/``replace`` look for a ``fieldValidation`` query
  parameter on the PATCH operation tagged with the object's
  ``x-kubernetes-group-version-kind`` to decide that the server validates fields itself;
* client-side ``kubectl apply`` finds the schema carrying that GVK under
  ``components.schemas`` and reads ``x-kubernetes-patch-merge-key``/``-strategy`` to
  build a strategic merge patch;
* ``kubectl explain`` walks the same schemas (through ``allOf``-wrapped refs) for
  descriptions and types.

The schemas come from :mod:`fakekube.api.wire.schema` (JSON-schema form with nullable type
lists) and are converted to upstream's v3 form. Documents are built lazily once per
:class:`OpenAPIV3` and served as bytes with upstream's ETag (uppercase hex sha512).

Simplifications, stated once: the protobuf/CBOR encodings of the documents are not offered. Properties carry the
``default`` upstream's generator gives them (:mod:`.openapi_defaults`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any, Iterable, Mapping

from fakekube.api.registry import (
    BINDING,
    CONNECT_SUBRESOURCES,
    EVICTION,
    FINALIZE,
    LOG,
    PROXY,
    SCALE,
    TOKEN,
    Registry,
    RegistryView,
    ResourceType,
)
from fakekube.api.verbs import openapi_enums, openapi_json, openapi_roots
from fakekube.api.verbs.discovery import subresource_kind
from fakekube.api.verbs.openapi_defaults import property_default
from fakekube.api.wire.schema import SchemaSet, ref_name
from fakekube.objects import versions

Doc = dict[str, Any]

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
DELETE_OPTIONS = META + "DeleteOptions"
STATUS = META + "Status"
PATCH = META + "Patch"
WATCH_EVENT = META + "WatchEvent"
API_RESOURCE_LIST = META + "APIResourceList"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

PATCH_CONTENT_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
RESPONSE_CONTENT_TYPES = ("application/json", "application/vnd.kubernetes.protobuf", "application/yaml")
WATCH_CONTENT_TYPES = (
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
)


# ------------------------------------------------------------------ schema conversion

def _components_ref(name: str) -> str:
    return "#/components/schemas/" + name


def convert_schema(schema: Any) -> Any:
    """One schema from kubernetes-validate's JSON-schema form to upstream's v3 form.

    ``["string", "null"]`` becomes ``"string"``; ``#/$defs/X`` refs become
    ``#/components/schemas/X``, wrapped in ``allOf`` when the ref has siblings
    (description, …) as upstream's v3 generator does; x-kubernetes-* extensions stay.
    """
    if isinstance(schema, list):
        return [convert_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: Doc = {}
    for key, value in schema.items():
        if key == "type":
            out[key] = _single_type(value)
        elif key == "$ref":
            out[key] = _components_ref(ref_name(value))
        elif key in ("properties", "patternProperties"):
            out[key] = {name: convert_schema(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties", "oneOf", "anyOf", "allOf", "not"):
            out[key] = convert_schema(value)
        else:
            out[key] = value
    if "$ref" in out and len(out) > 1:
        out["allOf"] = [{"$ref": out.pop("$ref")}]
    return out


def _single_type(value: Any) -> Any:
    """Drop the ``"null"`` that kubernetes-validate adds to optional fields."""
    if isinstance(value, list):
        types = [t for t in value if t != "null"]
        return types[0] if len(types) == 1 else (types or value)
    return value


def convert_definition(name: str, definition: Doc, minor: int | None = None) -> Doc:
    """A whole named definition, with the few upstream shapes the generic rule misses and
    release ``1.<minor>``'s enums (:mod:`.openapi_enums`)."""
    if name == INT_OR_STRING:
        return {**openapi_enums.description_of(name), "format": "int-or-string",
                "oneOf": [{"type": "integer"}, {"type": "string"}]}
    if name == QUANTITY:
        return {**openapi_enums.description_of(name), "oneOf": [{"type": "string"}, {"type": "number"}]}
    converted = convert_schema(definition)
    # kubernetes-validate pins apiVersion/kind with an enum; upstream does not.
    for field in ("apiVersion", "kind"):
        prop = converted.get("properties", {}).get(field)
        if isinstance(prop, dict):
            prop.pop("enum", None)
    props = converted.get("properties", {})
    for field, prop in props.items():
        default = property_default(name, field)
        if default is not None and isinstance(prop, dict):
            # a ref with siblings is wrapped in allOf, as upstream's v3 generator does
            props[field] = {"allOf": [{"$ref": prop["$ref"]}], **{k: v for k, v in prop.items() if k != "$ref"},
                            "default": default} if "$ref" in prop else {**prop, "default": default}
    openapi_enums.apply(name, converted, minor)
    return converted


def referenced_definitions(schema_set: SchemaSet, roots: Iterable[str]) -> list[str]:
    """Every definition name reachable from ``roots`` through refs, sorted."""
    seen: set[str] = set()
    stack = [r for r in roots if schema_set.definition(r) is not None]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for ref in _refs_in(schema_set.definition(name)):
            if ref not in seen and schema_set.definition(ref) is not None:
                stack.append(ref)
    return sorted(seen)


def _refs_in(schema: Any) -> Iterable[str]:
    """The definitions ``schema`` refers to; values (``enum``, ``default``, ``example``) are
    not schemas, but properties named so (JSONSchemaProps' ``default``) are."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield ref_name(value)
            elif key in ("properties", "patternProperties") and isinstance(value, dict):
                for prop in value.values():
                    yield from _refs_in(prop)
            elif key not in ("enum", "default", "example", "x-kubernetes-group-version-kind"):
                yield from _refs_in(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _refs_in(item)


# ------------------------------------------------------------------------- operations

def _param(name: str, where: str, typ: str, description: str, required: bool = False) -> Doc:
    param: Doc = {"description": description, "in": where, "name": name,
                  "schema": {"type": typ, "uniqueItems": True}}
    if required:
        param["required"] = True
    return param


P_PRETTY = _param("pretty", "query", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
P_DRY_RUN = _param("dryRun", "query", "string", "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed")
P_FIELD_MANAGER = _param("fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.")
P_FIELD_MANAGER_PATCH = _param("fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).")
P_FIELD_VALIDATION = _param("fieldValidation", "query", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.")
P_FORCE = _param("force", "query", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.")
P_GRACE = _param("gracePeriodSeconds", "query", "integer", "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.")
P_IGNORE_READ_ERR = _param("ignoreStoreReadErrorWithClusterBreakingPotential", "query", "boolean", "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it")
P_ORPHAN = _param("orphanDependents", "query", "boolean", "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.")
P_PROPAGATION = _param("propagationPolicy", "query", "string", "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.")
LIST_PARAMS = [
    _param("allowWatchBookmarks", "query", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored."),
    _param("continue", "query", "string", "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications."),
    _param("fieldSelector", "query", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
    _param("labelSelector", "query", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
    _param("limit", "query", "integer", "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned."),
    _param("resourceVersion", "query", "string", "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    _param("resourceVersionMatch", "query", "string", "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"),
    _param("sendInitialEvents", "query", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - `resourceVersionMatch` = NotOlderThan\n  is interpreted as \"data at least as new as the provided `resourceVersion`\"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted as \"consistent read\" and the\n  bookmark event is send when the state is synced at least to the moment\n  when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=\"\"` or `resourceVersion=\"0\"` (for backward compatibility reasons) and to false otherwise."),
    _param("timeoutSeconds", "query", "integer", "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."),
    _param("watch", "query", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."),
]
P_SHARD_SELECTOR = _param("shardSelector", "query", "string", "shardSelector restricts the list of returned objects using a CEL-based shard selector expression. The format uses the shardRange() function combined with || (logical OR) to specify one or more hash ranges:\n\n  shardRange(object.metadata.uid, '0x0', '0x8000000000000000')\n  shardRange(object.metadata.uid, '0x0', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')\n\nField paths use CEL-style object-rooted syntax (e.g. \"object.metadata.uid\"), NOT the fieldSelector format (\"metadata.uid\"). Currently supported paths:\n  - object.metadata.uid\n  - object.metadata.namespace\n\nhexStart and hexEnd are single-quoted CEL string literals with a '0x' prefix, defining the inclusive lower and exclusive upper bounds over the 64-bit FNV-1a hash space. The full range is [0x0, 0x10000000000000000), where the exclusive upper bound equals 2^64.\n\nExamples:\n  2-shard split:\n    shard 0: shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')\n    shard 1: shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')\n  4-shard split:\n    shard 0: shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')\n    shard 1: shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')\n    shard 2: shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')\n    shard 3: shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')\n\nThis is an alpha field and requires enabling the ShardedListAndWatch feature gate.")
DELETECOLLECTION_PARAMS = [
    LIST_PARAMS[1], P_DRY_RUN, LIST_PARAMS[2], P_GRACE, P_IGNORE_READ_ERR, LIST_PARAMS[3], LIST_PARAMS[4],
    P_ORPHAN, P_PROPAGATION, LIST_PARAMS[5], LIST_PARAMS[6], LIST_PARAMS[7], LIST_PARAMS[8],
]
LOG_PARAMS = [
    _param("container", "query", "string", "The container for which to stream logs. Defaults to only container if there is one container in the pod."),
    _param("follow", "query", "boolean", "Follow the log stream of the pod. Defaults to false."),
    _param("insecureSkipTLSVerifyBackend", "query", "boolean", "insecureSkipTLSVerifyBackend indicates that the apiserver should not confirm the validity of the serving certificate of the backend it is connecting to.  This will make the HTTPS connection between the apiserver and the backend insecure. This means the apiserver cannot verify the log data it is receiving came from the real kubelet.  If the kubelet is configured to verify the apiserver's TLS credentials, it does not mean the connection to the real kubelet is vulnerable to a man in the middle attack (e.g. an attacker could not intercept the actual log data coming from the real kubelet)."),
    _param("limitBytes", "query", "integer", "If set, the number of bytes to read from the server before terminating the log output. This may not display a complete final line of logging, and may return slightly more or slightly less than the specified limit."),
    _param("previous", "query", "boolean", "Return previous terminated container logs. Defaults to false."),
    _param("sinceSeconds", "query", "integer", "A relative time in seconds before the current time from which to show logs. If this value precedes the time a pod was started, only logs since the pod start will be returned. If this value is in the future, no logs will be returned. Only one of sinceSeconds or sinceTime may be specified."),
    _param("stream", "query", "string", "Specify which container log stream to return to the client. Acceptable values are \"All\", \"Stdout\" and \"Stderr\". If not specified, \"All\" is used, and both stdout and stderr are returned interleaved. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\"."),
    _param("tailLines", "query", "integer", "If set, the number of lines from the end of the logs to show. If not specified, logs are shown from the creation of the container or sinceSeconds or sinceTime. Note that when \"TailLines\" is specified, \"Stream\" can only be set to nil or \"All\"."),
    _param("timestamps", "query", "boolean", "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false."),
]


def _content(schema_name: str, types: Iterable[str] = RESPONSE_CONTENT_TYPES) -> Doc:
    return {t: {"schema": {"$ref": _components_ref(schema_name)}} for t in types}


def _responses(schema_name: str, codes: Iterable[tuple[str, str]], types: Iterable[str] = RESPONSE_CONTENT_TYPES) -> Doc:
    out: Doc = {code: {"content": _content(schema_name, types), "description": text} for code, text in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


def _body(schema_name: str, types: Iterable[str] = ("*/*",)) -> Doc:
    """A request body; DeleteOptions' is optional (a DELETE may send none), the others required."""
    if schema_name == DELETE_OPTIONS:
        return {"content": _content(schema_name, types)}
    return {"content": _content(schema_name, types), "required": True}


def _group_camel(group: str) -> str:
    """``rbac.authorization.k8s.io`` → ``RbacAuthorization``; core → ``Core``."""
    if not group:
        return "Core"
    parts = group.removesuffix(".k8s.io").split(".")
    return "".join(p[:1].upper() + p[1:] for p in parts)


def _tag(group: str, version: str) -> str:
    camel = _group_camel(group)
    return f"{camel[:1].lower()}{camel[1:]}_{version}"


class _GVOps:
    """Builds the operations of one group-version; holds what every operation shares."""

    def __init__(self, schema_set: SchemaSet, group: str, version: str) -> None:
        self.schema_set = schema_set
        self.group = group
        self.version = version
        self.prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        self.op_prefix = _group_camel(group) + version[:1].upper() + version[1:]
        self.tag = _tag(group, version)
        self.roots: set[str] = {DELETE_OPTIONS, STATUS, PATCH, WATCH_EVENT, API_RESOURCE_LIST}
        #: Schema names of kinds the release's definitions do not have (custom resources).
        self.custom_names: dict[tuple[str, str, str], str] = {}

    def schema_name(self, group: str, version: str, kind: str) -> str:
        name = (self.custom_names.get((group, version, kind)) or self.schema_set.name_for_gvk(group, version, kind)
                or f"{group}.{version}.{kind}")
        self.roots.add(name)
        return name

    def op(self, verb: str, op_id: str, description: str, action: str, gvk: tuple[str, str, str], **extra: Any) -> Doc:
        operation: Doc = {"description": description, "operationId": op_id}
        operation.update(extra)
        operation["tags"] = [self.tag]
        operation["x-kubernetes-action"] = action
        operation["x-kubernetes-group-version-kind"] = {"group": gvk[0], "kind": gvk[2], "version": gvk[1]}
        return operation


def _article(kind: str) -> str:
    """kube-apiserver's GetArticleForNoun with its spaces: none for a plural-looking kind
    (``Endpoints``, not ``…ss``), ``an`` before a vowel, else ``a``."""
    if kind.endswith("s") and not kind.endswith("ss"):
        return " "
    return " an " if kind[:1].lower() in "aeiou" else " a "


def _resource_paths(ops: _GVOps, rt: ResourceType) -> dict[str, Doc]:
    """Every path of one resource: collection, item, subresources, all-namespaces, watch."""
    gvk = (rt.group, rt.version, rt.kind)
    obj = ops.schema_name(*gvk)
    lst = ops.schema_name(rt.group, rt.version, rt.list_kind) if rt.supports("list") else ""
    scope = "Namespaced" if rt.namespaced else ""
    ns_seg = "/namespaces/{namespace}" if rt.namespaced else ""
    ns_params = [_param("namespace", "path", "string", "object name and auth scope, such as for teams and projects", True)] if rt.namespaced else []
    name_param = _param("name", "path", "string", f"name of the {rt.kind}", True)
    suffix = scope + rt.kind
    p = ops.op_prefix
    paths: dict[str, Doc] = {}

    collection: Doc = {"parameters": ns_params + [P_PRETTY]}
    if rt.supports("list"):
        listing = "list or watch" if rt.supports("watch") else "list"
        collection["get"] = ops.op("get", f"list{p}{suffix}", f"{listing} objects of kind {rt.kind}", "list", gvk,
                                   parameters=list(LIST_PARAMS),
                                   responses=_responses(lst, [("200", "OK")], WATCH_CONTENT_TYPES))
    if rt.supports("create"):
        collection["post"] = ops.op("post", f"create{p}{suffix}", f"create{_article(rt.kind)}{rt.kind}", "post", gvk,
                                    parameters=[P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION], requestBody=_body(obj),
                                    responses=_responses(obj, [("200", "OK"), ("201", "Created"), ("202", "Accepted")]))
    if rt.supports("deletecollection"):
        collection["delete"] = ops.op("delete", f"delete{p}Collection{suffix}", f"delete collection of {rt.kind}", "deletecollection", gvk,
                                      parameters=list(DELETECOLLECTION_PARAMS), requestBody=_body(DELETE_OPTIONS),
                                      responses=_responses(STATUS, [("200", "OK")]))
    paths[f"{ops.prefix}{ns_seg}/{rt.plural}"] = collection

    item_ops = _item_ops(ops, rt, gvk, obj, suffix)
    if item_ops:  # create-only types (reviews) have no item path upstream
        paths[f"{ops.prefix}{ns_seg}/{rt.plural}/{{name}}"] = {"parameters": [name_param] + ns_params + [P_PRETTY], **item_ops}

    for sub in sorted(rt.subresources):
        sub_path = f"{ops.prefix}{ns_seg}/{rt.plural}/{{name}}/{sub}"
        if sub in CONNECT_SUBRESOURCES:
            paths.update(_connect_paths(ops, rt, sub, sub_path, ns_params, suffix))
            continue
        paths[sub_path] = {"parameters": [_param("name", "path", "string", _sub_name_desc(rt, sub), True)] + ns_params + [P_PRETTY]}
        paths[sub_path].update(_subresource_ops(ops, rt, sub, suffix))

    if rt.namespaced and rt.supports("list"):
        paths[f"{ops.prefix}/{rt.plural}"] = {
            "get": ops.op("get", f"list{p}{rt.kind}ForAllNamespaces", f"list or watch objects of kind {rt.kind}", "list", gvk,
                          responses=_responses(lst, [("200", "OK")], WATCH_CONTENT_TYPES)),
            "parameters": LIST_PARAMS[:5] + [P_PRETTY] + LIST_PARAMS[5:],
        }
    if rt.supports("watch"):
        paths.update(_watch_paths(ops, rt, gvk, ns_seg, ns_params, suffix))
    return paths


def _sub_name_desc(rt: ResourceType, sub: str) -> str:
    return {BINDING: "name of the Binding", EVICTION: "name of the Eviction", SCALE: "name of the Scale",
            TOKEN: "name of the TokenRequest"}.get(sub, f"name of the {rt.kind}")


def _item_ops(ops: _GVOps, rt: ResourceType, gvk: tuple[str, str, str], obj: str, suffix: str) -> Doc:
    p = ops.op_prefix
    out: Doc = {}
    if rt.supports("get"):
        out["get"] = ops.op("get", f"read{p}{suffix}", f"read the specified {rt.kind}", "get", gvk,
                            responses=_responses(obj, [("200", "OK")]))
    if rt.supports("update"):
        out["put"] = ops.op("put", f"replace{p}{suffix}", f"replace the specified {rt.kind}", "put", gvk,
                            parameters=[P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION], requestBody=_body(obj),
                            responses=_responses(obj, [("200", "OK"), ("201", "Created")]))
    if rt.supports("patch"):
        out["patch"] = _patch_op(ops, f"patch{p}{suffix}", f"partially update the specified {rt.kind}", gvk, obj)
    if rt.supports("delete"):
        # what a DELETE of it answers; the namespace storage answers the object too, but its
        # REST wrapper does not tell the route builder so, and upstream documents a Status
        answer = obj if rt.returns_deleted_object and rt.kind != "Namespace" else STATUS
        out["delete"] = ops.op("delete", f"delete{p}{suffix}", f"delete{_article(rt.kind)}{rt.kind}", "delete", gvk,
                               parameters=[P_DRY_RUN, P_GRACE, P_IGNORE_READ_ERR, P_ORPHAN, P_PROPAGATION],
                               requestBody=_body(DELETE_OPTIONS),
                               responses=_responses(answer, [("200", "OK"), ("202", "Accepted")]))
    return out


def _patch_op(ops: _GVOps, op_id: str, description: str, gvk: tuple[str, str, str], obj: str) -> Doc:
    """PATCH with the fieldValidation parameter kubectl looks for, and every patch type."""
    return ops.op("patch", op_id, description, "patch", gvk,
                  parameters=[P_DRY_RUN, P_FIELD_MANAGER_PATCH, P_FIELD_VALIDATION, P_FORCE],
                  requestBody=_body(PATCH, PATCH_CONTENT_TYPES),
                  responses=_responses(obj, [("200", "OK"), ("201", "Created")]))


def _subresource_ops(ops: _GVOps, rt: ResourceType, sub: str, suffix: str) -> Doc:
    group, version, kind = subresource_kind(rt, sub)
    gvk = (group, version, kind) if group or version else (rt.group, rt.version, kind)
    obj = ops.schema_name(*gvk)
    p = ops.op_prefix
    title = sub[:1].upper() + sub[1:]
    if sub in (BINDING, EVICTION, TOKEN):
        return {"post": ops.op("post", f"create{p}{suffix}{title}", f"create {title.lower()} of{_article(rt.kind)}{rt.kind}", "post", gvk,
                               parameters=[P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION], requestBody=_body(obj),
                               responses=_responses(obj, [("200", "OK"), ("201", "Created"), ("202", "Accepted")]))}
    if sub == LOG:
        return {"get": ops.op("get", f"read{p}{suffix}Log", f"read log of the specified {rt.kind}", "get", gvk,
                              parameters=list(LOG_PARAMS),
                              # the route produces plain text and the serializers' types, each a string
                              responses={"200": {"content": {media: {"schema": {"type": "string"}}
                                                             for media in ("text/plain", *RESPONSE_CONTENT_TYPES)},
                                                 "description": "OK"},
                                         "401": {"description": "Unauthorized"}})}
    what = f"{sub} of the specified {rt.kind}"
    put = ops.op("put", f"replace{p}{suffix}{title}", f"replace {what}", "put", gvk,
                 parameters=[P_DRY_RUN, P_FIELD_MANAGER, P_FIELD_VALIDATION], requestBody=_body(obj),
                 responses=_responses(obj, [("200", "OK"), ("201", "Created")]))
    if sub == FINALIZE:  # upstream serves only PUT on namespaces/finalize
        return {"put": put}
    return {
        "get": ops.op("get", f"read{p}{suffix}{title}", f"read {what}", "get", gvk, responses=_responses(obj, [("200", "OK")])),
        "patch": _patch_op(ops, f"patch{p}{suffix}{title}", f"partially update {what}", gvk, obj),
        "put": put,
    }


_STREAM_PARAMS = {
    "stderr": _param("stderr", "query", "boolean", "Redirect the standard error stream of the pod for this call."),
    "stdin": _param("stdin", "query", "boolean", "Redirect the standard input stream of the pod for this call. Defaults to false."),
    "stdout": _param("stdout", "query", "boolean", "Redirect the standard output stream of the pod for this call."),
    "tty": _param("tty", "query", "boolean", "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false."),
}
_P_CONTAINER = _param("container", "query", "string", "Container in which to execute the command. Defaults to only container if there is only one container in the pod.")
#: Each connect subresource's query parameters (besides name and namespace), by name.
_CONNECT_PARAMS = {
    "attach": [
        _param("container", "query", "string", "The container in which to execute the command. Defaults to only container if there is only one container in the pod."),
        _param("stderr", "query", "boolean", "Stderr if true indicates that stderr is to be redirected for the attach call. Defaults to true."),
        _param("stdin", "query", "boolean", "Stdin if true, redirects the standard input stream of the pod for this call. Defaults to false."),
        _param("stdout", "query", "boolean", "Stdout if true indicates that stdout is to be redirected for the attach call. Defaults to true."),
        _param("tty", "query", "boolean", "TTY if true indicates that a tty will be allocated for the attach call. This is passed through the container runtime so the tty is allocated on the worker node by the container runtime. Defaults to false."),
    ],
    "exec": [_param("command", "query", "string", "Command is the remote command to execute. argv array. Not executed within a shell."),
             _P_CONTAINER, _STREAM_PARAMS["stderr"], _STREAM_PARAMS["stdin"], _STREAM_PARAMS["stdout"], _STREAM_PARAMS["tty"]],
    "portforward": [_param("ports", "query", "integer", "List of ports to forward Required when using WebSockets")],
    "proxy": [_param("path", "query", "string", "Path is the URL path to use for the current proxy request to pod.")],
}
#: The proxy's ``path`` query parameter as each kind's options type documents it.
_PROXY_PATH_PARAMS = {
    "Node": _param("path", "query", "string", "Path is the URL path to use for the current proxy request to node."),
    "Service": _param("path", "query", "string", "Path is the part of URLs that include service endpoints, suffixes, and parameters to use for the current proxy request to service. For example, the whole request URL is http://localhost/api/v1/namespaces/kube-system/services/elasticsearch-logging/_search?q=user:kimchy. Path is _search?q=user:kimchy."),
}
_CONNECT_METHODS = {"proxy": ("delete", "get", "head", "options", "patch", "post", "put")}


def _connect_paths(ops: _GVOps, rt: ResourceType, sub: str, sub_path: str, ns_params: list[Doc],
                   suffix: str) -> dict[str, Doc]:
    """exec/attach/portforward (GET, POST) and proxy (every method, also ``/proxy/{path}``):
    ``connect`` operations answering a string, as upstream documents them."""
    kind = subresource_kind(rt, sub)[2]
    gvk = (rt.group, rt.version, kind)
    title = {"portforward": "Portforward"}.get(sub, sub[:1].upper() + sub[1:])
    name_param = _param("name", "path", "string", f"name of the {kind}", True)
    responses = {"200": {"content": {"*/*": {"schema": {"type": "string"}}}, "description": "OK"},
                 "401": {"description": "Unauthorized"}}
    out: dict[str, Doc] = {}
    variants = [("", [name_param] + ns_params + _CONNECT_PARAMS.get(sub, []))]
    if sub == PROXY:
        path_param = _param("path", "path", "string", "path to the resource", True)
        query_path = _PROXY_PATH_PARAMS.get(rt.kind, _CONNECT_PARAMS["proxy"][0])
        variants = [("", [name_param] + ns_params + [query_path]),
                    ("/{path}", [name_param] + ns_params + [path_param, query_path])]
    for tail, params in variants:
        with_path = "WithPath" if tail else ""
        item: Doc = {"parameters": params}
        for method in _CONNECT_METHODS.get(sub, ("get", "post")):
            camel = method[:1].upper() + method[1:]
            item[method] = ops.op(method, f"connect{ops.op_prefix}{camel}{suffix}{title}{with_path}",
                                  f"connect {camel.upper()} requests to {sub} of {rt.kind}", "connect", gvk,
                                  responses=responses)
        out[sub_path + tail] = item
    return out


def _watch_paths(ops: _GVOps, rt: ResourceType, gvk: tuple[str, str, str], ns_seg: str,
                 ns_params: list[Doc], suffix: str) -> dict[str, Doc]:
    """The deprecated ``/watch/...`` paths upstream still documents."""
    p = ops.op_prefix
    resp = _responses(WATCH_EVENT, [("200", "OK")], WATCH_CONTENT_TYPES)
    base = f"{ops.prefix}/watch{ns_seg}/{rt.plural}"
    list_params = LIST_PARAMS[:5] + ns_params + [P_PRETTY] + LIST_PARAMS[5:]
    name_param = _param("name", "path", "string", f"name of the {rt.kind}", True)
    paths = {
        base: {"get": ops.op("get", f"watch{p}{suffix}List", f"watch individual changes to a list of {rt.kind}. deprecated: use the 'watch' parameter with a list operation instead.", "watchlist", gvk, responses=resp),
               "parameters": list_params},
        base + "/{name}": {"get": ops.op("get", f"watch{p}{suffix}", f"watch changes to an object of kind {rt.kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.", "watch", gvk, responses=resp),
                           "parameters": LIST_PARAMS[:5] + [name_param] + ns_params + [P_PRETTY] + LIST_PARAMS[5:]},
    }
    if rt.namespaced:
        paths[f"{ops.prefix}/watch/{rt.plural}"] = {
            "get": ops.op("get", f"watch{p}{rt.kind}ListForAllNamespaces", f"watch individual changes to a list of {rt.kind}. deprecated: use the 'watch' parameter with a list operation instead.", "watchlist", gvk, responses=resp),
            "parameters": LIST_PARAMS[:5] + [P_PRETTY] + LIST_PARAMS[5:],
        }
    return paths


# -------------------------------------------------------------------------- documents

def gv_path(group: str, version: str) -> str:
    """``api/v1`` or ``apis/apps/v1``: the key in the index and the URL suffix."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def build_document(registry: RegistryView, schema_set: SchemaSet, group: str, version: str,
                   kubernetes_version: str = "1.33") -> Doc | None:
    """The v3 document of one group-version as a dict, or None if it is not served."""
    resources = sorted((rt for rt in registry.group_version_types(group, version) if rt.custom is None),
                       key=lambda rt: rt.plural)
    if not resources:
        return None
    ops = _GVOps(schema_set, group, version)
    paths: dict[str, Doc] = {
        f"{ops.prefix}/": {"get": {
            "description": "get available resources",
            "operationId": f"get{ops.op_prefix}APIResources",
            "responses": _responses(API_RESOURCE_LIST, [("200", "OK")]),
            "tags": [ops.tag],
        }}
    }
    for rt in resources:
        paths.update(_resource_paths(ops, rt))
    shard_selector = versions.release(kubernetes_version).list_shard_selector
    paths = {path: _hoist_parameters(item, shard_selector) for path, item in paths.items()}
    schemas = {name: convert_definition(name, schema_set.definitions[name], schema_set.minor)
               for name in referenced_definitions(schema_set, _refs_in(paths))}
    return {
        "components": {"schemas": schemas, "securitySchemes": openapi_roots.SECURITY_SCHEMES},
        "info": {"title": "Kubernetes", "version": kubernetes_version},
        "openapi": "3.0.0",
        "paths": dict(sorted(paths.items())),
    }


_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def _hoist_parameters(item: Doc, shard_selector: bool) -> Doc:
    """One path item as upstream's builder lays it out: a parameter every operation has is
    the path's, and each list is sorted by (name, location); a release whose ListOptions
    has ``shardSelector`` lists it wherever ``sendInitialEvents`` is (list, watch,
    deletecollection)."""
    methods = [m for m in _METHODS if m in item]
    def key(param: Doc) -> tuple[str, str]:
        return param["name"], param["in"]
    def release_params(params: list[Doc]) -> list[Doc]:
        listing = shard_selector and any(p["name"] == "sendInitialEvents" for p in params)
        return params + [P_SHARD_SELECTOR] if listing else params
    own = {m: release_params(list(item[m].get("parameters", []))) for m in methods}
    shared = release_params(list(item.get("parameters", [])))
    common = set.intersection(*({key(p) for p in own[m]} for m in methods)) if methods else set()
    hoisted = {key(p): p for m in methods for p in own[m] if key(p) in common}
    out: Doc = {}
    for name, value in item.items():
        if name in own:
            params = sorted((p for p in own[name] if key(p) not in common), key=key)
            value = {k: v for k, v in value.items() if k != "parameters"}
            if params:
                value["parameters"] = params
        out[name] = value
    if shared or hoisted:
        out["parameters"] = sorted([*shared, *hoisted.values()], key=key)
    return out


def build_root_document(schema_set: SchemaSet, path: str, kubernetes_version: str = "1.33") -> Doc | None:
    """The v3 document of a non-group-version ``path`` (``api``, ``apis/apps``, ``version``,
    …: :mod:`.openapi_roots`), or None if ``path`` is not one."""
    found = openapi_roots.root_paths_item(path)
    if found is None:
        return None
    paths, answer = found
    components: Doc = {}
    if answer is not None:
        components["schemas"] = {name: convert_definition(name, schema_set.definitions[name], schema_set.minor)
                                 for name in referenced_definitions(schema_set, [answer])}
    components["securitySchemes"] = openapi_roots.SECURITY_SCHEMES
    return {"components": components, "info": {"title": "Kubernetes", "version": kubernetes_version},
            "openapi": "3.0.0", "paths": paths}


def _own_meta_kinds(document: Doc, group: str, version: str) -> Doc:
    """A group-version document as upstream serves it: DeleteOptions and WatchEvent list
    the group-version-kinds of the core group and of this group-version only (the schema
    source lists every group's, as upstream's /openapi/v2 does)."""
    schemas = dict(document["components"]["schemas"])
    for name, kind in ((DELETE_OPTIONS, "DeleteOptions"), (WATCH_EVENT, "WatchEvent")):
        if name in schemas:
            kinds = [{"group": "", "kind": kind, "version": "v1"}]
            if group:
                kinds.append({"group": group, "kind": kind, "version": version})
            schemas[name] = {**schemas[name], "x-kubernetes-group-version-kind": kinds}
    return {**document, "components": {**document["components"], "schemas": schemas}}


def encode(document: Doc) -> bytes:
    """Compact JSON with sorted keys: byte-stable across runs, like Go's map encoding."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def etag(data: bytes) -> str:
    """Upstream's OpenAPI v3 hash: uppercase hex sha512 of the served bytes (unquoted)."""
    return hashlib.sha512(data).hexdigest().upper()


def openapi_v3_document(registry: RegistryView, schema_set: SchemaSet, group: str, version: str) -> bytes | None:
    """The JSON bytes of one group-version document (None if not served)."""
    doc = build_document(registry, schema_set, group, version)
    return encode(doc) if doc is not None else None


def openapi_v3_index(registry: RegistryView, base_documents: Mapping[str, bytes]) -> Doc:
    """``/openapi/v3``: each served path with its ``?hash=`` URL.

    ``base_documents`` maps a path (``api/v1``) to its document bytes; the hash in the
    URL is :func:`etag` of those bytes, so a client's cache is busted exactly when the
    document changes. Paths are sorted for deterministic output.
    """
    del registry  # the documents already say everything; kept for a uniform signature
    return {"paths": {path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={etag(data)}"}
                      for path, data in sorted(base_documents.items())}}


class OpenAPIV3:
    """Lazily built, cached OpenAPI v3 documents of one registry.

    Building a document converts a few hundred schemas, so each is built once and shared
    by every request (two first requests at once may both build it; the first kept wins).

    Serving notes for the REST layer (what kube-openapi does):
    ``GET /openapi/v3`` → ``index()`` as ``application/json`` with ``ETag``.
    ``GET /openapi/v3/<path>`` → ``document(path)``; answer ``application/json`` when the
    Accept header allows it (else 406), set ``ETag: "<etag>"`` and ``Vary: Accept``; if a
    ``hash`` query parameter is given and differs, ``301`` to the current
    ``serverRelativeURL``; if it matches, add ``Cache-Control: public, immutable`` and an
    ``Expires`` one year ahead. Unknown paths are 404.
    """

    def __init__(self, registry: Registry, schema_set: SchemaSet, kubernetes_version: str = "1.33") -> None:
        self._registry = registry
        self._schema_set = schema_set
        self._kubernetes_version = kubernetes_version
        self._lock = threading.Lock()
        self._documents: dict[str, tuple[bytes, str]] = {}
        #: path → the bytes /openapi/v2 is made from (:meth:`v2_source`)
        self._v2_sources: dict[str, bytes] = {}
        self._index: Doc | None = None
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        """The built-in group-versions and the documents that are not a group-version's
        (``api``, ``apis``, ``apis/<group>``, ``version``, …: custom ones are per cluster,
        ``openapi_custom``). Built-in types never change, so they are listed once."""
        if self._paths is None:
            registry = self._registry.pinned()
            served = [(g, v) for g, v in registry.group_versions()
                      if any(rt.custom is None for rt in registry.group_version_types(g, v))]
            groups = sorted({g for g, _ in served if g})
            self._paths = sorted([gv_path(g, v) for g, v in served] + openapi_roots.root_paths(groups))
        return list(self._paths)

    def document(self, path: str) -> tuple[bytes, str] | None:
        """(JSON bytes, etag) of ``api/v1``-style ``path``, or None when not served."""
        path = path.strip("/")
        with self._lock:
            cached = self._documents.get(path)
        if cached is None:  # built outside the lock: another cluster's request never waits for it
            cached = self._build(path)
            if cached is None:
                return None
            with self._lock:
                cached = self._documents.setdefault(path, cached)
        return cached

    def v2_source(self, path: str) -> bytes | None:
        """The v3 document ``/openapi/v2`` is made of: sorted keys, and DeleteOptions' and
        WatchEvent's whole group-version-kind lists (upstream's v2 keeps them whole). Made
        from the served bytes on first use: only a ``/openapi/v2`` request pays for it."""
        path = path.strip("/")
        with self._lock:
            cached = self._v2_sources.get(path)
        if cached is None:
            built = self.document(path)
            if built is None:
                return None
            document = json.loads(built[0])
            schemas = document.get("components", {}).get("schemas", {})
            for name in (DELETE_OPTIONS, WATCH_EVENT):
                source = self._schema_set.definition(name)
                if name in schemas and source is not None:
                    schemas[name]["x-kubernetes-group-version-kind"] = source["x-kubernetes-group-version-kind"]
            with self._lock:
                cached = self._v2_sources.setdefault(path, encode(document))
        return cached

    def index(self) -> Doc:
        """The ``/openapi/v3`` document (builds every group-version document once)."""
        if self._index is None:
            docs = {}
            for path in self.paths():
                built = self.document(path)
                if built is not None:
                    docs[path] = built[0]
            self._index = openapi_v3_index(self._registry, docs)
        return self._index

    def _build(self, path: str) -> tuple[bytes, str] | None:
        if path not in self.paths():
            return None
        doc = build_root_document(self._schema_set, path, self._kubernetes_version)
        group = version = None
        if doc is None:
            parts = path.split("/")
            group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
            doc = build_document(self._registry.pinned(), self._schema_set, group, version, self._kubernetes_version)
        if doc is None:
            return None
        if group is not None and version is not None:
            doc = _own_meta_kinds(doc, group, version)
        data = openapi_json.encode_document(doc)
        return data, etag(data)
